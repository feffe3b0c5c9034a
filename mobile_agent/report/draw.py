"""Screenshots with the step's action drawn on them: tap rings, swipe arrows, typed text, key and app labels.

Action coordinates are device pixels; the picture is shrunk to a thumbnail first and the coordinates scaled onto it.
Line widths and label sizes follow the picture's size so the marks stay visible at any size.
"""

from __future__ import annotations

import base64
import io
import logging
import math
from dataclasses import replace
from pathlib import Path

from PIL import Image, ImageDraw

from mobile_agent.actions import POINT_KINDS, Action, ActionKind, Point
from mobile_agent.screen.fonts import cjk_font

log = logging.getLogger(__name__)

MARK = (255, 45, 85)  # a red that stands out on light and dark app screens
MARK_END = (255, 176, 0)
LABEL_BG = (0, 0, 0, 190)
LABEL_FG = (255, 255, 255, 255)
THUMB_WIDTH = 360
THUMB_QUALITY = 72


def draw_action(image: Image.Image, action: Action | None, scale: float = 1.0) -> Image.Image:
    """A copy of ``image`` with ``action`` drawn on it; unchanged copy when there is no action.

    ``scale`` maps the action's device pixels onto the image (the image's width / the device's width).
    """
    canvas = image.convert("RGBA")
    if action is None:
        return canvas.convert("RGB")
    if scale != 1.0:
        action = _scaled(action, scale)
    overlay = Image.new("RGBA", canvas.size, (0, 0, 0, 0))
    pen = ImageDraw.Draw(overlay)
    unit = max(2, round(min(canvas.size) / 90))  # stroke width: about 12 px on a 1080-wide screen
    kind = action.kind
    if kind in POINT_KINDS and action.point is not None:
        _draw_point(pen, action, unit)
    elif action.point is not None and action.end is not None:
        _draw_arrow(pen, (action.point.x, action.point.y), (action.end.x, action.end.y), unit)
    label = _label(action)
    if label:
        _draw_label(pen, canvas.size, label, unit, at_top=kind is not ActionKind.TYPE)
    return Image.alpha_composite(canvas, overlay).convert("RGB")


def _scaled(action: Action, scale: float) -> Action:
    def move(point: Point | None) -> Point | None:
        return None if point is None else Point(round(point.x * scale), round(point.y * scale))

    return replace(action, point=move(action.point), end=move(action.end))


def _draw_point(pen: ImageDraw.ImageDraw, action: Action, unit: int) -> None:
    x, y = action.point.x, action.point.y  # type: ignore[union-attr]
    radius = unit * 5
    rings = 2 if action.kind is ActionKind.DOUBLE_TAP else 1
    for ring in range(rings):
        r = radius + ring * unit * 3
        pen.ellipse((x - r, y - r, x + r, y + r), outline=MARK + (255,), width=unit)
    if action.kind is ActionKind.LONG_PRESS:
        pen.ellipse((x - radius, y - radius, x + radius, y + radius), fill=MARK + (110,))
    dot = max(2, unit)
    pen.ellipse((x - dot, y - dot, x + dot, y + dot), fill=MARK + (255,))


def _draw_arrow(pen: ImageDraw.ImageDraw, start: tuple[int, int], end: tuple[int, int], unit: int) -> None:
    pen.line([start, end], fill=MARK + (255,), width=unit)
    r = unit * 2
    pen.ellipse((start[0] - r, start[1] - r, start[0] + r, start[1] + r), fill=MARK + (255,))
    angle = math.atan2(end[1] - start[1], end[0] - start[0])
    head = unit * 6
    left = (end[0] - head * math.cos(angle - 0.45), end[1] - head * math.sin(angle - 0.45))
    right = (end[0] - head * math.cos(angle + 0.45), end[1] - head * math.sin(angle + 0.45))
    pen.polygon([end, left, right], fill=MARK_END + (255,))


def _label(action: Action) -> str:
    kind = action.kind
    if kind is ActionKind.TYPE:
        return f"type: {action.text}"
    if kind is ActionKind.KEY:
        return f"key: {action.key.value}"  # type: ignore[union-attr]
    if kind is ActionKind.LAUNCH:
        return f"launch: {action.app}"
    if kind is ActionKind.WAIT:
        return "wait"
    if kind in (ActionKind.ANSWER, ActionKind.FINISH, ActionKind.CALL_USER):
        return f"{kind.value}: {action.text}" if action.text else kind.value
    return ""


def _draw_label(
    pen: ImageDraw.ImageDraw, size: tuple[int, int], text: str, unit: int, *, at_top: bool
) -> None:
    width, height = size
    font = cjk_font(unit * 5)
    text = text if len(text) <= 60 else text[:57] + "..."
    box = pen.textbbox((0, 0), text, font=font)
    pad = unit * 2
    text_w, text_h = box[2] - box[0], box[3] - box[1]
    left = max(0, (width - text_w) // 2 - pad)
    top = height // 9 if at_top else height * 2 // 3
    pen.rounded_rectangle(
        (left, top, min(width, left + text_w + 2 * pad), top + text_h + 2 * pad), radius=pad, fill=LABEL_BG
    )
    pen.text((left + pad - box[0], top + pad - box[1]), text, font=font, fill=LABEL_FG)


def thumbnail_jpeg(image: Image.Image, width: int = THUMB_WIDTH, quality: int = THUMB_QUALITY) -> bytes:
    """The picture shrunk to ``width`` pixels wide (never enlarged), as JPEG bytes."""
    frame = image.convert("RGB")
    if frame.width > width:
        height = max(1, round(frame.height * width / frame.width))
        frame = frame.resize((width, height), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    frame.save(out, "JPEG", quality=quality, optimize=True)
    return out.getvalue()


def jpeg_data_uri(jpeg: bytes) -> str:
    return "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")


def annotated_thumbnail(
    screenshot: Path | bytes, action: Action | None, width: int = THUMB_WIDTH, device_width: int | None = None
) -> bytes:
    """Read a screenshot (file or bytes), shrink it, draw the action: the picture a report shows for a step.

    ``device_width`` is the screen width the action's pixels refer to (the recorded frame may have been scaled
    down by the phone); it defaults to the image's own width. Shrinking first (with JPEG draft decoding) keeps a
    report of hundreds of steps fast.
    """
    source = io.BytesIO(screenshot) if isinstance(screenshot, bytes) else screenshot
    with Image.open(source) as img:
        device_width = device_width or img.width
        if img.format == "JPEG" and img.width > width:
            img.draft(
                "RGB", (width, width * img.height // img.width)
            )  # decodes at the smallest scale >= width
        frame = img.convert("RGB")
    if frame.width > width:
        frame = frame.resize(
            (width, max(1, round(frame.height * width / frame.width))), Image.Resampling.LANCZOS
        )
    return thumbnail_jpeg(draw_action(frame, action, scale=frame.width / device_width), width)


__all__ = ["annotated_thumbnail", "draw_action", "jpeg_data_uri", "thumbnail_jpeg"]
