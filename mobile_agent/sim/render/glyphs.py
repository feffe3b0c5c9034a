"""Vector icons drawn with lines and arcs: the back arrow, search, plus, cart, location and the rest."""

from __future__ import annotations

from PIL import ImageDraw


def draw_glyph(draw: ImageDraw.ImageDraw, bounds: tuple[int, int, int, int], name: str, fg) -> None:
    """A line icon (back, search, cart, ...) in ``fg`` centred in ``bounds``; unknown names draw a dot."""
    left, top, right, bottom = bounds
    w, h = right - left, bottom - top
    cx, cy = left + w / 2, top + h / 2
    s = min(w, h) / 2 * 0.8
    lw = max(3, int(s / 7))
    if name == "back":
        draw.line(
            (cx + s * 0.3, cy - s * 0.7, cx - s * 0.4, cy, cx + s * 0.3, cy + s * 0.7),
            fill=fg,
            width=lw,
            joint="curve",
        )
    elif name == "chevron":
        draw.line(
            (cx - s * 0.3, cy - s * 0.7, cx + s * 0.4, cy, cx - s * 0.3, cy + s * 0.7), fill=fg, width=lw
        )
    elif name == "search":
        r = s * 0.6
        draw.ellipse(
            (cx - r - s * 0.15, cy - r - s * 0.15, cx + r - s * 0.15, cy + r - s * 0.15),
            outline=fg,
            width=lw,
        )
        draw.line((cx + s * 0.3, cy + s * 0.3, cx + s * 0.85, cy + s * 0.85), fill=fg, width=lw)
    elif name in ("plus", "plus_circle"):
        if name == "plus_circle":
            draw.ellipse((cx - s, cy - s, cx + s, cy + s), outline=fg, width=lw)
        k = s * (0.55 if name == "plus_circle" else 0.8)
        draw.line((cx - k, cy, cx + k, cy), fill=fg, width=lw)
        draw.line((cx, cy - k, cx, cy + k), fill=fg, width=lw)
    elif name == "more":
        for dx in (-0.6, 0, 0.6):
            r = s * 0.14
            draw.ellipse((cx + dx * s - r, cy - r, cx + dx * s + r, cy + r), fill=fg)
    elif name == "close":
        draw.line((cx - s * 0.6, cy - s * 0.6, cx + s * 0.6, cy + s * 0.6), fill=fg, width=lw)
        draw.line((cx - s * 0.6, cy + s * 0.6, cx + s * 0.6, cy - s * 0.6), fill=fg, width=lw)
    elif name == "mic":
        draw.ellipse((cx - s, cy - s, cx + s, cy + s), outline=fg, width=lw)
        draw.rounded_rectangle(
            (cx - s * 0.25, cy - s * 0.55, cx + s * 0.25, cy + s * 0.2),
            s * 0.25,
            outline=fg,
            width=max(2, lw - 1),
        )
    elif name == "emoji":
        draw.ellipse((cx - s, cy - s, cx + s, cy + s), outline=fg, width=lw)
        draw.arc((cx - s * 0.5, cy - s * 0.4, cx + s * 0.5, cy + s * 0.5), 20, 160, fill=fg, width=lw)
    elif name == "arrows":
        for dx in (-0.35, 0.25):
            draw.line(
                (
                    cx + dx * s - s * 0.2,
                    cy - s * 0.45,
                    cx + dx * s + s * 0.25,
                    cy,
                    cx + dx * s - s * 0.2,
                    cy + s * 0.45,
                ),
                fill=fg,
                width=lw,
            )
    elif name == "check":
        draw.line(
            (cx - s * 0.6, cy, cx - s * 0.1, cy + s * 0.5, cx + s * 0.7, cy - s * 0.5), fill=fg, width=lw
        )
    elif name == "user":
        draw.ellipse((cx - s * 0.35, cy - s * 0.8, cx + s * 0.35, cy - s * 0.1), outline=fg, width=lw)
        draw.arc((cx - s * 0.8, cy, cx + s * 0.8, cy + s * 1.4), 180, 360, fill=fg, width=lw)
    elif name == "chat":
        draw.rounded_rectangle((cx - s, cy - s * 0.75, cx + s, cy + s * 0.55), s * 0.4, outline=fg, width=lw)
    elif name == "contacts":
        draw.rounded_rectangle((cx - s * 0.8, cy - s, cx + s * 0.8, cy + s), s * 0.2, outline=fg, width=lw)
        draw.ellipse((cx - s * 0.3, cy - s * 0.55, cx + s * 0.3, cy + s * 0.05), outline=fg, width=lw)
    elif name == "compass":
        draw.ellipse((cx - s, cy - s, cx + s, cy + s), outline=fg, width=lw)
        draw.polygon(
            [
                (cx + s * 0.45, cy - s * 0.45),
                (cx + s * 0.1, cy + s * 0.1),
                (cx - s * 0.45, cy + s * 0.45),
                (cx - s * 0.1, cy - s * 0.1),
            ],
            fill=fg,
        )
    elif name == "home":
        draw.line((cx - s, cy - s * 0.05, cx, cy - s * 0.9, cx + s, cy - s * 0.05), fill=fg, width=lw)
        draw.rectangle((cx - s * 0.7, cy - s * 0.05, cx + s * 0.7, cy + s * 0.8), outline=fg, width=lw)
    elif name == "cart":
        draw.line(
            (
                cx - s,
                cy - s * 0.7,
                cx - s * 0.6,
                cy - s * 0.7,
                cx - s * 0.3,
                cy + s * 0.4,
                cx + s * 0.8,
                cy + s * 0.4,
                cx + s * 0.95,
                cy - s * 0.4,
                cx - s * 0.45,
                cy - s * 0.4,
            ),
            fill=fg,
            width=lw,
        )
        for dx in (-0.15, 0.6):
            draw.ellipse(
                (cx + dx * s - s * 0.15, cy + s * 0.6, cx + dx * s + s * 0.15, cy + s * 0.9), fill=fg
            )
    elif name == "location":
        draw.ellipse((cx - s * 0.6, cy - s, cx + s * 0.6, cy + s * 0.2), outline=fg, width=lw)
        draw.line((cx - s * 0.5, cy - s * 0.1, cx, cy + s, cx + s * 0.5, cy - s * 0.1), fill=fg, width=lw)
    elif name == "scan":
        for sx, sy in ((-1, -1), (1, -1), (-1, 1), (1, 1)):
            x, y = cx + sx * s, cy + sy * s
            draw.line((x, y - sy * s * 0.45, x, y, x - sx * s * 0.45, y), fill=fg, width=lw)
        draw.line((cx - s * 0.7, cy, cx + s * 0.7, cy), fill=fg, width=lw)
    elif name == "trash":
        draw.line((cx - s * 0.8, cy - s * 0.6, cx + s * 0.8, cy - s * 0.6), fill=fg, width=lw)
        draw.line(
            (
                cx - s * 0.25,
                cy - s * 0.6,
                cx - s * 0.25,
                cy - s * 0.85,
                cx + s * 0.25,
                cy - s * 0.85,
                cx + s * 0.25,
                cy - s * 0.6,
            ),
            fill=fg,
            width=lw,
        )
        draw.line(
            (
                cx - s * 0.6,
                cy - s * 0.6,
                cx - s * 0.45,
                cy + s,
                cx + s * 0.45,
                cy + s,
                cx + s * 0.6,
                cy - s * 0.6,
            ),
            fill=fg,
            width=lw,
        )
    else:  # "dot" and anything unknown: a filled circle keeps layouts readable
        r = s * 0.55
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fg)
