"""Image helpers for verification: smaller JPEGs for judges, the action drawn on a screenshot, and a dHash.

The dHash (difference hash) shrinks a grey frame to (size+1) x size pixels and keeps one bit per horizontal
neighbour pair: 1 when the left pixel is brighter. Two frames whose hashes differ in few bits look the same.
"""

from __future__ import annotations

import base64
import io

from PIL import Image, ImageDraw

from mobile_agent.actions import Action

JUDGE_IMAGE_SIDE = 896
JUDGE_JPEG_QUALITY = 75
# The status bar (clock, battery, signal) changes on its own; hashing it would make every screen look "changed".
STATUS_BAR_SHARE = 0.04


def open_image(data: bytes | Image.Image) -> Image.Image:
    if isinstance(data, Image.Image):
        return data
    return Image.open(io.BytesIO(data))


def shrink_jpeg(data: bytes | Image.Image, max_side: int = JUDGE_IMAGE_SIDE) -> bytes:
    """A JPEG whose longer side is at most ``max_side`` pixels."""
    image = open_image(data)
    image = image if image.mode == "RGB" else image.convert("RGB")
    if max(image.size) > max_side:
        scale = max_side / max(image.size)
        image = image.resize(
            (max(1, round(image.width * scale)), max(1, round(image.height * scale))),
            Image.Resampling.BILINEAR,
        )
    out = io.BytesIO()
    image.save(out, "JPEG", quality=JUDGE_JPEG_QUALITY)
    return out.getvalue()


def data_url(jpeg: bytes) -> str:
    return "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")


def mark_action(data: bytes | Image.Image, action: Action) -> Image.Image:
    """A copy of the screenshot with the action's point (and gesture end) drawn in red, so a judge sees where."""
    image = open_image(data).convert("RGB")
    if action.point is None:
        return image
    draw = ImageDraw.Draw(image)
    radius = max(12, image.width // 30)
    width = max(3, image.width // 200)
    x, y = action.point
    draw.ellipse((x - radius, y - radius, x + radius, y + radius), outline=(255, 0, 0), width=width)
    if action.end is not None:
        draw.line((x, y, action.end.x, action.end.y), fill=(255, 0, 0), width=width)
        ex, ey = action.end
        draw.ellipse(
            (ex - radius // 2, ey - radius // 2, ex + radius // 2, ey + radius // 2), fill=(255, 0, 0)
        )
    return image


def dhash(data: bytes | Image.Image, size: int = 16) -> int:
    """Difference hash of a screenshot (status bar left out) as a ``size*size``-bit integer."""
    image = open_image(data)
    top = int(image.height * STATUS_BAR_SHARE)
    grey = image.crop((0, top, image.width, image.height)).convert("L")
    small = grey.resize((size + 1, size), Image.Resampling.BOX)
    pixels = small.tobytes()  # one byte per pixel in mode L
    bits = 0
    for row in range(size):
        offset = row * (size + 1)
        for col in range(size):
            bits = (bits << 1) | (pixels[offset + col] > pixels[offset + col + 1])
    return bits


def hamming(a: int, b: int) -> int:
    return (a ^ b).bit_count()


def same_screen(
    a: bytes | Image.Image, b: bytes | Image.Image, *, max_distance: int = 0, size: int = 16
) -> bool:
    """Whether two screenshots show the same screen: identical bytes, or dHashes at most ``max_distance`` apart."""
    if isinstance(a, bytes) and isinstance(b, bytes) and a == b:
        return True
    return hamming(dhash(a, size), dhash(b, size)) <= max_distance


__all__ = ["data_url", "dhash", "hamming", "mark_action", "open_image", "same_screen", "shrink_jpeg"]
