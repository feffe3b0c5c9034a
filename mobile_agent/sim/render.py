"""Pixels for the simulated phone: draws a view tree with Pillow, adds the system chrome, encodes and caches.

Photo-like content (avatars, product pictures, banners, wallpapers) is procedural — gradients, soft shapes and
grain, seeded by the element — so screenshots compress like real ones and stay byte-stable across runs. Encoded
PNG / JPEG bytes are cached per screen fingerprint, so a repeated screenshot costs a dictionary lookup.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import random
import shutil
import subprocess
import threading
from collections import OrderedDict
from functools import lru_cache
from typing import TYPE_CHECKING

from PIL import Image, ImageChops, ImageDraw, ImageFilter, ImageFont, ImageOps

from mobile_agent.sim.world.node import Node

if TYPE_CHECKING:
    from mobile_agent.sim.phone import _Built

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

ENCODED_CACHE_ENTRIES = 256
IMAGE_CACHE_ENTRIES = 8
PHOTO_CACHE_PIXELS = 40_000_000


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
    log.warning("no CJK font found; Chinese text renders as boxes (install fonts-wqy-microhei)")
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


def _seed(text: str) -> int:
    return int.from_bytes(hashlib.md5(text.encode()).digest()[:8], "big")


def _natural(seed: str) -> tuple[int, int, int]:
    """A muted colour like the ones photos are made of (sky, foliage, skin, wood), not a saturated primary."""
    rnd = random.Random(_seed(seed))
    base = rnd.randint(60, 210)
    return tuple(max(0, min(255, base + rnd.randint(-55, 55))) for _ in range(3))  # type: ignore[return-value]


def _color(seed: str, lo: int = 40, hi: int = 230) -> tuple[int, int, int]:
    rnd = random.Random(_seed(seed))
    return (rnd.randint(lo, hi), rnd.randint(lo, hi), rnd.randint(lo, hi))


BRAND_COLORS = {
    "com.tencent.mm": (7, 193, 96),
    "com.sankuai.meituan": (255, 209, 0),
    "com.eg.android.AlipayGphone": (22, 119, 255),
    "com.android.settings": (96, 125, 139),
}


class PhotoMaker:
    """Deterministic photo-like images: a colour gradient, blurred shapes (the scene), fine grain (the sensor)."""

    def __init__(self) -> None:
        self._cache: OrderedDict[tuple[str, int, int], Image.Image] = OrderedDict()
        self._pixels = 0
        self._lock = threading.Lock()

    def get(self, seed: str, width: int, height: int, grain: float = 14.0) -> Image.Image:
        key = (seed, width, height)
        with self._lock:
            img = self._cache.get(key)
            if img is not None:
                self._cache.move_to_end(key)
                return img
        img = self._make(seed, max(1, width), max(1, height), grain)
        with self._lock:
            self._cache[key] = img
            self._pixels += width * height
            while self._pixels > PHOTO_CACHE_PIXELS and len(self._cache) > 1:
                (_, w, h), _ = self._cache.popitem(last=False)
                self._pixels -= w * h
        return img

    def _make(self, seed: str, width: int, height: int, grain: float) -> Image.Image:
        rnd = random.Random(_seed(seed))
        small_w, small_h = max(8, width // 8), max(8, height // 8)
        top, bottom = _natural(seed + "a"), _natural(seed + "b")
        gradient = Image.linear_gradient("L").resize((small_w, small_h))
        scene = ImageOps.colorize(gradient, top, bottom)
        draw = ImageDraw.Draw(scene)
        for _ in range(rnd.randint(5, 11)):  # soft shapes: hills, fruit, buildings, bokeh
            cx, cy = rnd.uniform(0, small_w), rnd.uniform(0, small_h)
            rx, ry = rnd.uniform(0.08, 0.45) * small_w, rnd.uniform(0.05, 0.35) * small_h
            fill = _natural(f"{seed}{rnd.random()}")
            if rnd.random() < 0.6:
                draw.ellipse((cx - rx, cy - ry, cx + rx, cy + ry), fill=fill)
            else:
                draw.rectangle((cx - rx, cy - ry, cx + rx, cy + ry), fill=fill)
        scene = scene.filter(ImageFilter.GaussianBlur(max(1.0, small_w / 40)))
        img = scene.resize((width, height), Image.BICUBIC)
        # mid-frequency texture (leaves, fabric, food surface) then sensor grain
        texture = Image.effect_noise((max(1, width // 3), max(1, height // 3)), grain * 2).resize(
            (width, height), Image.BILINEAR
        )
        grain_layer = Image.effect_noise((width, height), grain)
        noise = ImageChops.add(
            ImageChops.subtract(texture, Image.new("L", (width, height), 128)), grain_layer, offset=0
        )
        img = ImageChops.add(img, Image.merge("RGB", (noise, noise, noise)), scale=1.0, offset=-128)
        return img


PHOTOS = PhotoMaker()  # shared by every phone in the process: the same seed always gives the same picture


class Renderer:
    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.photos = PHOTOS
        self._lock = threading.Lock()
        self._encoded: OrderedDict[tuple, bytes] = OrderedDict()
        self._images: OrderedDict[str, Image.Image] = OrderedDict()
        self.renders = 0  # how many full renders ran (cache misses), for tests and the bench

    # ------------------------------------------------------------------ public
    def encode(
        self,
        built: _Built,
        fmt: str = "png",
        quality: int = 80,
        scale: float = 1.0,
        transition: tuple[str, int] | None = None,
    ) -> bytes:
        fmt = "jpeg" if fmt in ("jpeg", "jpg") else "png"
        frame_key = (built.fingerprint, transition)
        key = (frame_key, fmt, int(quality) if fmt == "jpeg" else 0, round(float(scale), 3))
        with self._lock:
            data = self._encoded.get(key)
            if data is not None:
                self._encoded.move_to_end(key)
                return data
            image = self._frame(built, transition)
            if scale and abs(scale - 1.0) > 1e-3:
                image = image.resize(
                    (max(1, round(image.width * scale)), max(1, round(image.height * scale))), Image.BILINEAR
                )
            out = io.BytesIO()
            if fmt == "png":
                image.save(out, "PNG", compress_level=1)
            else:
                image.save(out, "JPEG", quality=max(1, min(100, int(quality))))
            data = out.getvalue()
            self._encoded[key] = data
            while len(self._encoded) > ENCODED_CACHE_ENTRIES:
                self._encoded.popitem(last=False)
            return data

    def image(self, built: _Built) -> Image.Image:
        with self._lock:
            return self._screen(built).copy()

    # ------------------------------------------------------------------ frames
    def _frame(self, built: _Built, transition: tuple[str, int] | None) -> Image.Image:
        current = self._screen(built)
        if transition is None:
            return current
        old = self._images.get(transition[0])
        if old is None:
            return current
        alpha = (transition[1] + 0.5) / 4
        # a short slide + cross-fade, as activity transitions look mid-way
        shift = round(self.width * 0.15 * (1 - alpha))
        moved = Image.new("RGB", current.size, (0, 0, 0))
        moved.paste(current, (shift, 0))
        return Image.blend(old, moved, alpha)

    def _screen(self, built: _Built) -> Image.Image:
        img = self._images.get(built.fingerprint)
        if img is not None:
            self._images.move_to_end(built.fingerprint)
            return img
        img = self.render(built.tree, built.chrome, black=built.black)
        self._images[built.fingerprint] = img
        while len(self._images) > IMAGE_CACHE_ENTRIES:
            self._images.popitem(last=False)
        return img

    def render(self, tree: Node, chrome: tuple, black: bool = False) -> Image.Image:
        self.renders += 1
        if black:
            return Image.new("RGB", (self.width, self.height), (0, 0, 0))
        clock, battery, wifi, dark, _screen_on, keyboard_top, ime, toast, _secure, on_launcher = chrome
        img = Image.new("RGB", (self.width, self.height), (17, 17, 17) if dark else (255, 255, 255))
        draw = ImageDraw.Draw(img)
        self._draw(img, draw, tree)
        if keyboard_top is not None:
            self._keyboard(img, draw, keyboard_top, ime, dark)
        if toast:
            self._toast(draw, toast)
        self._status_bar(img, draw, clock, battery, wifi, transparent=on_launcher)
        self._nav_bar(img, draw)
        return img

    # ------------------------------------------------------------------ nodes
    def _draw(self, img: Image.Image, draw: ImageDraw.ImageDraw, node: Node) -> None:
        style = node.style
        left, top, right, bottom = node.bounds
        if right > left and bottom > top:
            box = (left, top, right - 1, bottom - 1)
            if style.image == "dim":
                region = img.crop(node.bounds)
                img.paste(Image.blend(region, Image.new("RGB", region.size, (0, 0, 0)), 0.5), node.bounds[:2])
            elif style.bg is not None:
                if style.radius:
                    draw.rounded_rectangle(box, style.radius, fill=style.bg, outline=style.border)
                else:
                    draw.rectangle(box, fill=style.bg, outline=style.border)
            elif style.border is not None:
                draw.rounded_rectangle(box, style.radius, outline=style.border, width=3)
            if style.image and style.image != "dim":
                self._image(img, draw, node)
            if style.size and node.shown_text() and not (style.image or "").startswith("appicon:"):
                self._text(draw, node)
        for child in node.children:
            self._draw(img, draw, child)

    def _image(self, img: Image.Image, draw: ImageDraw.ImageDraw, node: Node) -> None:
        kind, _, arg = (node.style.image or "").partition(":")
        left, top, right, bottom = node.bounds
        w, h = right - left, bottom - top
        if kind in ("photo", "avatar", "wallpaper"):
            grain = 2.5 if kind == "wallpaper" else 7.0
            photo = self.photos.get(f"{kind}:{arg}", w, h, grain)
            self._paste(img, photo, (left, top), node.style.radius)
        elif kind == "icon":
            draw.rounded_rectangle(
                (left, top, right - 1, bottom - 1), max(4, w // 6), fill=_color("icon" + arg, 60, 200)
            )
        elif kind == "appicon":
            self._app_icon(img, draw, node, arg)
        elif kind == "glyph":
            self._glyph(draw, node.bounds, arg, node.style.fg)
        elif kind == "switch":
            on = arg == "1"
            cy, r = (top + bottom) // 2, min(h, w // 2) // 2
            draw.rounded_rectangle(
                (right - 4 * r, cy - r, right, cy + r), r, fill=(7, 193, 96) if on else (200, 200, 200)
            )
            kx = right - r if on else right - 3 * r
            draw.ellipse((kx - r + 4, cy - r + 4, kx + r - 4, cy + r - 4), fill=(255, 255, 255))
        elif kind == "seek":
            value = int(arg or 0)
            cy = (top + bottom) // 2
            draw.rounded_rectangle((left, cy - 6, right, cy + 6), 6, fill=(210, 210, 210))
            x = left + (right - left) * value // 100
            draw.rounded_rectangle((left, cy - 6, max(left + 12, x), cy + 6), 6, fill=(22, 119, 255))
            draw.ellipse(
                (x - 24, cy - 24, x + 24, cy + 24), fill=(255, 255, 255), outline=(22, 119, 255), width=4
            )
        elif kind == "black":
            draw.rectangle((left, top, right - 1, bottom - 1), fill=(0, 0, 0))

    def _paste(self, img: Image.Image, photo: Image.Image, at: tuple[int, int], radius: int) -> None:
        if radius:
            mask = Image.new("L", photo.size, 0)
            ImageDraw.Draw(mask).rounded_rectangle(
                (0, 0, photo.width - 1, photo.height - 1), radius, fill=255
            )
            img.paste(photo, at, mask)
        else:
            img.paste(photo, at)

    def _app_icon(self, img: Image.Image, draw: ImageDraw.ImageDraw, node: Node, pkg: str) -> None:
        left, top, right, bottom = node.bounds
        w = right - left
        size = min(w * 0.6, (bottom - top) * 0.62)
        x0 = left + (w - size) / 2
        y0 = top + (bottom - top) * 0.08
        color = BRAND_COLORS.get(pkg) or _color("app" + pkg, 50, 220)
        draw.rounded_rectangle((x0, y0, x0 + size, y0 + size), size * 0.24, fill=color)
        glyph = (node.desc or pkg)[:1]
        f = font(int(size * 0.5))
        draw.text((x0 + size / 2, y0 + size / 2), glyph, font=f, fill=(255, 255, 255), anchor="mm")
        if node.text and node.style.size:
            label_font = font(node.style.size)
            label = _fit(draw, node.text, label_font, w - 8)
            draw.text(
                (left + w / 2, y0 + size + node.style.size * 0.9),
                label,
                font=label_font,
                fill=node.style.fg,
                anchor="mm",
            )

    def _text(self, draw: ImageDraw.ImageDraw, node: Node) -> None:
        style = node.style
        left, top, right, bottom = node.bounds
        value = node.shown_text()
        if node.password and node.text:
            value = "•" * len(node.text)
        fg = style.fg if (node.text or not node.editable) else style.hint_fg
        if not node.enabled:
            fg = tuple((c + 255) // 2 for c in fg)
        f = font(style.size)
        pad = style.pad
        avail = max(1, right - left - 2 * pad)
        line_h = int(style.size * 1.3)
        lines = _wrap(draw, value, f, avail, max(1, (bottom - top) // line_h))
        block_h = line_h * len(lines)
        y = top + (bottom - top - block_h) / 2 + line_h / 2
        for line in lines:
            if style.align == "center":
                x, anchor = (left + right) / 2, "mm"
            elif style.align == "right":
                x, anchor = right - pad, "rm"
            else:
                x, anchor = left + pad, "lm"
            draw.text((x, y), line, font=f, fill=fg, anchor=anchor)
            y += line_h
        if node.focused and node.editable:
            width = max((draw.textlength(line, font=f) for line in node.text.split("\n")), default=0)
            cx = left + pad + width + 3
            draw.line(
                (cx, top + (bottom - top) * 0.25, cx, bottom - (bottom - top) * 0.25),
                fill=(7, 193, 96),
                width=3,
            )

    # ------------------------------------------------------------------ vector glyphs
    def _glyph(self, draw: ImageDraw.ImageDraw, bounds: tuple[int, int, int, int], name: str, fg) -> None:
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
            draw.rounded_rectangle(
                (cx - s, cy - s * 0.75, cx + s, cy + s * 0.55), s * 0.4, outline=fg, width=lw
            )
        elif name == "contacts":
            draw.rounded_rectangle(
                (cx - s * 0.8, cy - s, cx + s * 0.8, cy + s), s * 0.2, outline=fg, width=lw
            )
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
        else:  # "dot" and anything unknown: a filled circle keeps layouts readable
            r = s * 0.55
            draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fg)

    # ------------------------------------------------------------------ chrome
    def _status_bar(
        self,
        img: Image.Image,
        draw: ImageDraw.ImageDraw,
        clock: str,
        battery: int,
        wifi: bool,
        transparent: bool,
    ) -> None:
        h = round(self.height * 0.04)
        if transparent:
            fg = (255, 255, 255)
        else:
            bg = img.getpixel((self.width // 2, min(self.height - 1, h + 4)))
            draw.rectangle((0, 0, self.width, h - 1), fill=bg)
            fg = (255, 255, 255) if sum(bg[:3]) < 380 else (20, 20, 20)
        size = int(h * 0.42)
        f = font(size)
        draw.text((int(self.width * 0.06), h // 2), clock, font=f, fill=fg, anchor="lm")
        x = self.width - int(self.width * 0.05)
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

    def _nav_bar(self, img: Image.Image, draw: ImageDraw.ImageDraw) -> None:
        h = round(self.height * 0.02)
        bg = img.getpixel((self.width // 2, max(0, self.height - h - 2)))
        draw.rectangle((0, self.height - h, self.width, self.height), fill=bg)
        fg = (255, 255, 255) if sum(bg[:3]) < 380 else (30, 30, 30)
        pill_w = int(self.width * 0.3)
        y = self.height - h // 2
        draw.rounded_rectangle(
            (self.width // 2 - pill_w // 2, y - 5, self.width // 2 + pill_w // 2, y + 5), 5, fill=fg
        )

    def _keyboard(
        self, img: Image.Image, draw: ImageDraw.ImageDraw, top: int, ime: str | None, dark: bool
    ) -> None:
        bottom = self.height - round(self.height * 0.02)
        panel = (43, 43, 48) if dark else (214, 217, 222)
        key_bg = (80, 80, 86) if dark else (255, 255, 255)
        fg = (240, 240, 240) if dark else (20, 20, 20)
        draw.rectangle((0, top, self.width, bottom), fill=panel)
        if ime and ime.endswith("AdbKeyboard"):
            draw.text(
                (self.width / 2, (top + bottom) / 2),
                "ADB Keyboard {ON}",
                font=font(int((bottom - top) * 0.4)),
                fill=fg,
                anchor="mm",
            )
            return
        rows = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]
        row_h = (bottom - top) / 5
        key_w = self.width / 10
        f = font(int(row_h * 0.42))
        for r, letters in enumerate(rows):
            offset = (self.width - key_w * len(letters)) / 2
            y0 = top + row_h * (r + 0.3)
            for i, ch in enumerate(letters):
                x0 = offset + i * key_w
                draw.rounded_rectangle((x0 + 6, y0 + 6, x0 + key_w - 6, y0 + row_h - 6), 10, fill=key_bg)
                draw.text((x0 + key_w / 2, y0 + row_h / 2), ch, font=f, fill=fg, anchor="mm")
        y0 = top + row_h * 3.4
        draw.rounded_rectangle((key_w * 2.5, y0 + 6, key_w * 7.5, y0 + row_h - 6), 10, fill=key_bg)
        draw.text((self.width / 2, y0 + row_h / 2), "中文", font=f, fill=fg, anchor="mm")

    def _toast(self, draw: ImageDraw.ImageDraw, text: str) -> None:
        f = font(int(self.width * 0.036))
        width = draw.textlength(text, font=f) + self.width * 0.08
        cx, y = self.width / 2, self.height * 0.82
        h = self.width * 0.1
        draw.rounded_rectangle(
            (cx - width / 2, y - h / 2, cx + width / 2, y + h / 2), h / 2, fill=(60, 60, 60)
        )
        draw.text((cx, y), text, font=f, fill=(255, 255, 255), anchor="mm")


def _fit(draw: ImageDraw.ImageDraw, text: str, f, width: float) -> str:
    text = text.replace("\n", " ")  # Pillow cannot measure multiline text; one line shows them side by side
    if draw.textlength(text, font=f) <= width:
        return text
    while text and draw.textlength(text + "…", font=f) > width:
        text = text[:-1]
    return text + "…"


def _wrap(draw: ImageDraw.ImageDraw, text: str, f, width: float, max_lines: int) -> list[str]:
    if "\n" in text and max_lines > 1:
        lines: list[str] = []
        for paragraph in text.split("\n"):
            if len(lines) >= max_lines:
                break
            lines.extend(_wrap(draw, paragraph, f, width, max_lines - len(lines)))
        return lines[:max_lines]
    if max_lines <= 1 or draw.textlength(text, font=f) <= width:
        return [_fit(draw, text, f, width)]
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
        lines[-1] = _fit(draw, lines[-1] + "…", f, width)
    return lines
