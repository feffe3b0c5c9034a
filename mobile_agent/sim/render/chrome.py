"""The system chrome drawn over an app: the status bar, the navigation bar, the input method and a toast."""

from __future__ import annotations

from PIL import Image, ImageDraw

from mobile_agent.sim.render.fonts import font


def status_bar(
    img: Image.Image,
    draw: ImageDraw.ImageDraw,
    screen_w: int,
    screen_h: int,
    clock: str,
    battery: int,
    wifi: bool,
    transparent: bool,
) -> None:
    h = round(screen_h * 0.04)
    if transparent:
        fg = (255, 255, 255)
    else:
        bg = img.getpixel((screen_w // 2, min(screen_h - 1, h + 4)))
        draw.rectangle((0, 0, screen_w, h - 1), fill=bg)
        fg = (255, 255, 255) if sum(bg[:3]) < 380 else (20, 20, 20)
    size = int(h * 0.42)
    f = font(size)
    draw.text((int(screen_w * 0.06), h // 2), clock, font=f, fill=fg, anchor="lm")
    x = screen_w - int(screen_w * 0.05)
    bw, bh = int(h * 0.5), int(h * 0.28)
    draw.rounded_rectangle((x - bw, h // 2 - bh // 2, x, h // 2 + bh // 2), 4, outline=fg, width=2)
    draw.rectangle(
        (x - bw + 4, h // 2 - bh // 2 + 4, x - bw + 4 + (bw - 8) * battery // 100, h // 2 + bh // 2 - 4),
        fill=fg,
    )
    draw.text((x - bw - 8, h // 2), f"{battery}", font=font(int(size * 0.8)), fill=fg, anchor="rm")
    sx = x - bw - int(h * 1.3)
    for i in range(4):  # signal bars
        bar_h = int(bh * (i + 1) / 4 * 1.4)
        draw.rectangle((sx + i * 9, h // 2 + bh // 2 - bar_h, sx + i * 9 + 5, h // 2 + bh // 2), fill=fg)
    if wifi:
        wx = sx - int(h * 0.6)
        for r in (0.5, 0.32, 0.14):
            rr = int(h * r)
            draw.arc(
                (wx - rr, h // 2 + bh // 2 - rr, wx + rr, h // 2 + bh // 2 + rr),
                225,
                315,
                fill=fg,
                width=3,
            )


def nav_bar(img: Image.Image, draw: ImageDraw.ImageDraw, screen_w: int, screen_h: int) -> None:
    h = round(screen_h * 0.02)
    bg = img.getpixel((screen_w // 2, max(0, screen_h - h - 2)))
    draw.rectangle((0, screen_h - h, screen_w, screen_h), fill=bg)
    fg = (255, 255, 255) if sum(bg[:3]) < 380 else (30, 30, 30)
    pill_w = int(screen_w * 0.3)
    y = screen_h - h // 2
    draw.rounded_rectangle(
        (screen_w // 2 - pill_w // 2, y - 5, screen_w // 2 + pill_w // 2, y + 5), 5, fill=fg
    )


def keyboard(
    img: Image.Image,
    draw: ImageDraw.ImageDraw,
    screen_w: int,
    screen_h: int,
    top: int,
    ime: str | None,
    dark: bool,
) -> None:
    bottom = screen_h - round(screen_h * 0.02)
    panel = (43, 43, 48) if dark else (214, 217, 222)
    key_bg = (80, 80, 86) if dark else (255, 255, 255)
    fg = (240, 240, 240) if dark else (20, 20, 20)
    draw.rectangle((0, top, screen_w, bottom), fill=panel)
    if ime and ime.endswith("AdbKeyboard"):
        draw.text(
            (screen_w / 2, (top + bottom) / 2),
            "ADB Keyboard {ON}",
            font=font(int((bottom - top) * 0.4)),
            fill=fg,
            anchor="mm",
        )
        return
    rows = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]
    row_h = (bottom - top) / 5
    key_w = screen_w / 10
    f = font(int(row_h * 0.42))
    for r, letters in enumerate(rows):
        offset = (screen_w - key_w * len(letters)) / 2
        y0 = top + row_h * (r + 0.3)
        for i, ch in enumerate(letters):
            x0 = offset + i * key_w
            draw.rounded_rectangle((x0 + 6, y0 + 6, x0 + key_w - 6, y0 + row_h - 6), 10, fill=key_bg)
            draw.text((x0 + key_w / 2, y0 + row_h / 2), ch, font=f, fill=fg, anchor="mm")
    y0 = top + row_h * 3.4
    draw.rounded_rectangle((key_w * 2.5, y0 + 6, key_w * 7.5, y0 + row_h - 6), 10, fill=key_bg)
    draw.text((screen_w / 2, y0 + row_h / 2), "中文", font=f, fill=fg, anchor="mm")


def toast(draw: ImageDraw.ImageDraw, screen_w: int, screen_h: int, text: str) -> None:
    f = font(int(screen_w * 0.036))
    width = draw.textlength(text, font=f) + screen_w * 0.08
    cx, y = screen_w / 2, screen_h * 0.82
    h = screen_w * 0.1
    draw.rounded_rectangle((cx - width / 2, y - h / 2, cx + width / 2, y + h / 2), h / 2, fill=(60, 60, 60))
    draw.text((cx, y), text, font=f, fill=(255, 255, 255), anchor="mm")
