"""Text for the simulated screens: the font with Chinese glyphs (looked up in screen/fonts.py, which the reports
share), and fitting or wrapping a string into a width."""

from __future__ import annotations

import logging
from functools import lru_cache

from PIL import ImageDraw, ImageFont

from mobile_agent.screen.fonts import cjk_font, missing_font_notice

log = logging.getLogger(__name__)


@lru_cache(maxsize=64)
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """The shared CJK font (screen/fonts.py) at ``size``; without one, says so once per process."""
    notice = missing_font_notice()
    if notice:
        log.warning("%s", notice)
    return cjk_font(size)


def fit(draw: ImageDraw.ImageDraw, text: str, f, width: float) -> str:
    text = text.replace("\n", " ")  # Pillow cannot measure multiline text; one line shows them side by side
    if draw.textlength(text, font=f) <= width:
        return text
    while text and draw.textlength(text + "…", font=f) > width:
        text = text[:-1]
    return text + "…"


def wrap(draw: ImageDraw.ImageDraw, text: str, f, width: float, max_lines: int) -> list[str]:
    if "\n" in text and max_lines > 1:
        lines: list[str] = []
        for paragraph in text.split("\n"):
            if len(lines) >= max_lines:
                break
            lines.extend(wrap(draw, paragraph, f, width, max_lines - len(lines)))
        return lines[:max_lines]
    if max_lines <= 1 or draw.textlength(text, font=f) <= width:
        return [fit(draw, text, f, width)]
    lines: list[str] = []
    current = ""
    for ch in text:
        if draw.textlength(current + ch, font=f) > width:
            lines.append(current)
            current = ch
            if len(lines) == max_lines:
                break
        else:
            current += ch
    else:
        lines.append(current)
    if len(lines) > max_lines or (len(lines) == max_lines and current and lines[-1] != current):
        lines = lines[:max_lines]
        lines[-1] = fit(draw, lines[-1] + "…", f, width)
    return lines
