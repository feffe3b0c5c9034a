"""Text for the simulated screens: a font with Chinese glyphs, and fitting or wrapping a string into a width."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from functools import lru_cache

from PIL import ImageDraw, ImageFont

log = logging.getLogger(__name__)

FONT_CANDIDATES = [
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc",
    "/System/Library/Fonts/PingFang.ttc",
    "C:/Windows/Fonts/msyh.ttc",
]
FONT_HINT = (
    "install a CJK font: on Debian/Ubuntu `sudo apt install fonts-wqy-microhei` (or fonts-noto-cjk), "
    "on Fedora `sudo dnf install google-noto-sans-cjk-fonts`; macOS and Windows ship one"
)


@lru_cache(maxsize=1)
def cjk_font_path() -> str | None:
    """A font with Chinese glyphs: common paths first, then fontconfig; None means Pillow's default font."""
    for path in FONT_CANDIDATES:
        if os.path.exists(path):
            return path
    if shutil.which("fc-list"):
        try:
            out = subprocess.run(
                ["fc-list", ":lang=zh", "file"], capture_output=True, text=True, timeout=5
            ).stdout
            for line in out.splitlines():
                path = line.split(":")[0].strip()
                if path and os.path.exists(path):
                    return path
        except (OSError, subprocess.SubprocessError):
            pass
    log.warning("no CJK font found; Chinese text renders as boxes (%s)", FONT_HINT)
    return None


@lru_cache(maxsize=64)
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    path = cjk_font_path()
    size = max(6, int(size))
    if path:
        try:
            return ImageFont.truetype(path, size)
        except OSError:
            pass
    try:
        return ImageFont.load_default(size)
    except TypeError:  # Pillow < 10.1 has no sized default font
        return ImageFont.load_default()


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
