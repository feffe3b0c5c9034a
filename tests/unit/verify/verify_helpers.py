"""Small helpers shared by the verify unit tests."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw


def screenshot(mark: int = 0) -> bytes:
    """A small phone-shaped JPEG; different ``mark`` values give visibly different screens."""
    image = Image.new("RGB", (540, 1200), (235, 235, 235))
    draw = ImageDraw.Draw(image)
    for row in range(mark + 1):
        draw.rectangle((30, 100 + 120 * row, 300 + 20 * mark, 180 + 120 * row), fill=(40, 90, 200))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=85)
    return out.getvalue()
