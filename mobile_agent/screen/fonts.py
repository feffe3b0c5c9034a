"""The font with Chinese glyphs that pictures are drawn with: the simulated screens (sim/render) and the action
labels of reports and the console (report/draw.py) use this one lookup, so they never disagree.

The lookup tries the usual paths, then asks fontconfig for a font that *covers* Chinese (``fc-list :lang=zh``).
``fc-match :lang=zh`` is not asked: it always names its best match, a font without a single CJK glyph (DejaVuSans)
when nothing better is configured, and text drawn with it is boxes ("launch: □□").

    font = cjk_font(24)                 # a Pillow font; Pillow's own when no CJK font is installed
    note = missing_font_notice()        # the hint, the first time it is asked in this process; then None
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from functools import lru_cache

from PIL import ImageFont

FONT_CANDIDATES = (
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc",
    "/System/Library/Fonts/PingFang.ttc",
    "C:/Windows/Fonts/msyh.ttc",
)
FONT_HINT = (
    "install a CJK font: on Debian/Ubuntu `sudo apt install fonts-wqy-microhei` (or fonts-noto-cjk), "
    "on Fedora `sudo dnf install google-noto-sans-cjk-fonts`; macOS and Windows ship one"
)
_notice_lock = threading.Lock()
_notice_given = False


@lru_cache(maxsize=1)
def cjk_font_path() -> str | None:
    """A font file with Chinese glyphs: the usual paths first, then fontconfig's fonts that cover Chinese; None
    when there is none (Pillow's default font is drawn, Chinese as boxes). Asked once per process."""
    for path in FONT_CANDIDATES:
        if os.path.isfile(path):
            return path
    if shutil.which("fc-list"):
        try:
            out = subprocess.run(
                ["fc-list", ":lang=zh", "file"], capture_output=True, text=True, timeout=5
            ).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        for line in sorted(out.splitlines()):  # one answer whatever order fontconfig lists them in
            path = line.split(":")[0].strip()
            if path and os.path.isfile(path):
                return path
    return None


@lru_cache(maxsize=64)
def cjk_font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """The CJK font at ``size`` pixels (at least 6); Pillow's own font when there is none or it cannot be read."""
    size = max(6, int(size))
    path = cjk_font_path()
    if path:
        try:
            return ImageFont.truetype(path, size)
        except OSError:
            pass
    try:
        return ImageFont.load_default(size)
    except TypeError:  # Pillow < 10.1 has no sized default font
        return ImageFont.load_default()


def missing_font_notice() -> str | None:
    """What to tell a person when no CJK font is installed, the first time anyone asks in this process; None when
    there is a font or it was already said (the demo prints it, and the renderer then says nothing more)."""
    global _notice_given
    if cjk_font_path() is not None:
        return None
    with _notice_lock:
        if _notice_given:
            return None
        _notice_given = True
    return f"no CJK font found: Chinese text is drawn as boxes ({FONT_HINT})"


__all__ = ["FONT_CANDIDATES", "FONT_HINT", "cjk_font", "cjk_font_path", "missing_font_notice"]
