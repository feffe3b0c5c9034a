"""Screenshots resized to a family's working size and encoded as JPEG for the chat request.

Sending the device-resolution PNG costs megabytes of base64 per step while the serving stack resizes the picture
anyway; resizing on the client to the size the model works at and sending a JPEG gives the model the same pixels
for a fraction of the bytes. The working size follows the Qwen-VL "smart resize" rule (sides multiples of the
patch factor, pixel count within bounds), so a Qwen-style server leaves the image as it is and pixel-space
families see exactly the image whose size we record in ``Geometry.image``.
"""

from __future__ import annotations

import base64
import io
import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PIL import Image

from mobile_agent.actions import Size

if TYPE_CHECKING:
    from mobile_agent.model.base import ModelFamily

MAX_ASPECT_RATIO = 200


@dataclass(frozen=True)
class Geometry:
    """Device pixels, and the size of the image the model saw."""

    device: Size
    image: Size


@dataclass(frozen=True)
class ImagePolicy:
    """How a family wants its screenshots: patch factor, pixel budget and JPEG quality."""

    factor: int = 28
    min_pixels: int = 100 * 28 * 28
    max_pixels: int = 1280 * 28 * 28
    jpeg_quality: int = 80


def smart_resize(device: Size, policy: ImagePolicy) -> Size:
    """The Qwen-VL resize rule: keep the aspect ratio, sides multiples of ``factor``, pixels within bounds.

    Idempotent: a size it returns maps to itself, which is what lets the server leave our image alone.
    """
    width, height = device
    if width <= 0 or height <= 0:
        raise ValueError(f"image size must be positive, got {width}x{height}")
    if max(width, height) / min(width, height) > MAX_ASPECT_RATIO:
        raise ValueError(f"aspect ratio of {width}x{height} is above {MAX_ASPECT_RATIO}")
    f = policy.factor
    h_bar = max(f, round(height / f) * f)
    w_bar = max(f, round(width / f) * f)
    if h_bar * w_bar > policy.max_pixels:
        beta = math.sqrt((height * width) / policy.max_pixels)
        h_bar = max(f, math.floor(height / beta / f) * f)
        w_bar = max(f, math.floor(width / beta / f) * f)
    elif h_bar * w_bar < policy.min_pixels:
        beta = math.sqrt(policy.min_pixels / (height * width))
        h_bar = math.ceil(height * beta / f) * f
        w_bar = math.ceil(width * beta / f) * f
    return Size(w_bar, h_bar)


@dataclass(frozen=True)
class PreparedImage:
    """A screenshot as sent to the model: JPEG bytes at the working size, and the device size it came from."""

    jpeg: bytes
    size: Size
    device_size: Size

    def data_url(self) -> str:
        return jpeg_data_url(self.jpeg)

    @property
    def geometry(self) -> Geometry:
        return Geometry(device=self.device_size, image=self.size)


def jpeg_data_url(jpeg: bytes) -> str:
    return "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")


def prepare_image(image: Image.Image | bytes | PreparedImage, family: ModelFamily) -> PreparedImage:
    """Resize a device-resolution frame (PIL image or encoded bytes) to ``family``'s working size, as JPEG.

    A JPEG that already has the working size is passed through without re-encoding.
    """
    if isinstance(image, PreparedImage):
        return image
    policy = family.image_policy
    encoded: bytes | None = None
    if isinstance(image, (bytes, bytearray, memoryview)):
        encoded = bytes(image)
        try:
            image = Image.open(io.BytesIO(encoded))
        except (OSError, ValueError) as exc:
            raise ValueError(f"screenshot bytes are not an image Pillow can read: {exc}") from exc
    device = Size(*image.size)
    target = smart_resize(device, policy)
    if (
        encoded is not None
        and image.format == "JPEG"
        and (device == target or _within_budget(device, policy))
    ):
        # Already small enough (the phone scaled it): send it untouched. A Qwen-style server resizes it to
        # ``target`` itself — by at most a factor's worth of pixels per side — so that is the size the model sees.
        return PreparedImage(jpeg=encoded, size=target, device_size=device)
    if image.format == "JPEG" and target != device:
        # Lets libjpeg decode at a reduced scale: much cheaper than decoding the full frame and resizing.
        image.draft("RGB", (target.width, target.height))
    frame = image if image.mode == "RGB" else image.convert("RGB")
    if frame.size != (target.width, target.height):
        frame = frame.resize((target.width, target.height), Image.Resampling.BILINEAR, reducing_gap=2.0)
    out = io.BytesIO()
    frame.save(out, "JPEG", quality=policy.jpeg_quality, optimize=True)
    return PreparedImage(jpeg=out.getvalue(), size=target, device_size=device)


def history_frame(jpeg: bytes, policy: ImagePolicy, scale: float = 1.0, quality: int | None = None) -> bytes:
    """An earlier screenshot made cheaper to send again: its sides times ``scale`` (never below the family's pixel
    floor), re-encoded at JPEG ``quality`` (None: the family's).

    ``scale`` 1 without a ``quality`` is the frame unchanged (each family's trained default), and so is a result
    that would not be smaller than the frame itself, or bytes that are not an image. Like a frame the phone scaled,
    its sides need not be multiples of the patch factor: a Qwen-style server fits it to its grid, and no coordinate
    is ever read off a history frame. A scale of 1/2, 1/4 or 1/8 costs only a reduced decode and an encode.
    """
    if scale >= 1.0 and quality is None:
        return jpeg
    try:
        image = Image.open(io.BytesIO(jpeg))
        size = Size(*image.size)
    except (OSError, ValueError):
        return jpeg  # not a picture (a report's marker): nothing to shrink
    floor = min(1.0, math.sqrt(policy.min_pixels / (size.width * size.height)))
    scale = max(scale, floor)
    target = Size(max(1, round(size.width * scale)), max(1, round(size.height * scale)))
    if target == size and quality is None:
        return jpeg
    if image.format == "JPEG" and target != size:
        image.draft("RGB", (target.width, target.height))  # libjpeg decodes at 1/2, 1/4 or 1/8 directly
    frame = image if image.mode == "RGB" else image.convert("RGB")
    if abs(frame.width - target.width) > 1 or abs(frame.height - target.height) > 1:
        frame = frame.resize((target.width, target.height), Image.Resampling.BILINEAR, reducing_gap=2.0)
    out = io.BytesIO()
    frame.save(out, "JPEG", quality=quality or policy.jpeg_quality, optimize=True)
    cheaper = out.getvalue()
    return cheaper if len(cheaper) < len(jpeg) else jpeg


def request_body(body: dict[str, Any], dumps: Callable[[Any], bytes]) -> bytes:
    """``dumps(body)`` byte for byte, without having ``dumps`` scan the screenshots' base64 again: each image URL
    that JSON leaves as it is (ASCII without control characters, quotes or backslashes) is written as a short
    random tag and spliced back in as bytes. Any surprise (a tag not found exactly once, in order) falls back to
    ``dumps(body)``."""
    tag = uuid.uuid4().hex
    urls: list[str] = []
    messages = []
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            parts = []
            for part in content:
                image = part.get("image_url") if isinstance(part, dict) else None
                url = image.get("url") if isinstance(image, dict) else None
                if isinstance(url, str) and _json_plain(url):
                    part = {**part, "image_url": {**image, "url": f"{tag}{len(urls)}"}}
                    urls.append(url)
                parts.append(part)
            message = {**message, "content": parts}
        messages.append(message)
    if not urls:
        return dumps(body)
    chunks = dumps({**body, "messages": messages}).split(b'"' + tag.encode())
    if len(chunks) != len(urls) + 1:
        return dumps(body)
    out = [chunks[0]]
    for i, (chunk, url) in enumerate(zip(chunks[1:], urls, strict=True)):
        number = b"%d" % i
        if chunk[: len(number) + 1] != number + b'"':
            return dumps(body)
        out += (b'"', url.encode("ascii"), chunk[len(number) :])
    return b"".join(out)


def _json_plain(text: str) -> bool:
    """JSON writes ``text`` as it is between its quotes (a data URL always is). One memchr per character JSON
    escapes: ``str.isprintable`` or a regex would scan a screenshot's base64 a few times slower."""
    return text.isascii() and not any(c in text for c in _JSON_ESCAPED)


_JSON_ESCAPED = tuple(chr(i) for i in range(32)) + ('"', "\\")


def _within_budget(size: Size, policy: ImagePolicy) -> bool:
    pixels = size.width * size.height
    return policy.min_pixels <= pixels <= policy.max_pixels


def image_size_of(data: bytes) -> Size:
    """The pixel size of an encoded image, reading only its header."""
    with Image.open(io.BytesIO(data)) as img:
        return Size(*img.size)


__all__ = [
    "Geometry",
    "ImagePolicy",
    "PreparedImage",
    "history_frame",
    "image_size_of",
    "jpeg_data_url",
    "prepare_image",
    "request_body",
    "smart_resize",
]
