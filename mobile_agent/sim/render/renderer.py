"""Pixels for the simulated phone: draws a view tree with Pillow, adds the system chrome, encodes and caches.

Layout lives here (each node's box, image, text and focus caret, in tree order); the drawing primitives are in
fonts.py (text), photos.py (photo-like content), glyphs.py (line icons) and chrome.py (status bar, navigation bar,
keyboard, toast). Encoded PNG / JPEG bytes are cached per screen fingerprint, so a repeated screenshot costs a
dictionary lookup. The phones of one process share a renderer per screen size (``shared_renderer``): phones that
show the same screen — a farm running one task on many phones — draw it once between them, as real phones would
each draw it on their own hardware without costing the host anything.
"""

from __future__ import annotations

import io
import threading
import weakref
from collections import OrderedDict
from typing import TYPE_CHECKING

from PIL import Image, ImageDraw

from mobile_agent.sim.render import chrome as chrome_parts
from mobile_agent.sim.render.fonts import fit, font, wrap
from mobile_agent.sim.render.glyphs import draw_glyph
from mobile_agent.sim.render.photos import PHOTOS, color
from mobile_agent.sim.world.node import Node

if TYPE_CHECKING:
    from mobile_agent.sim.phone.display import Built

ENCODED_CACHE_ENTRIES = 256
IMAGE_CACHE_ENTRIES = 8
MAX_SHARED_USERS = 16

BRAND_COLORS = {
    "com.tencent.mm": (7, 193, 96),
    "com.sankuai.meituan": (255, 209, 0),
    "com.eg.android.AlipayGphone": (22, 119, 255),
    "com.android.settings": (96, 125, 139),
}


class Renderer:
    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.photos = PHOTOS
        # Reentrant: a phone collected while this thread draws runs remove_user (its finaliser) under the lock.
        self._lock = threading.RLock()
        self._encoded: OrderedDict[tuple, bytes] = OrderedDict()
        self._images: OrderedDict[str, Image.Image] = OrderedDict()
        self.renders = 0  # how many full renders ran (cache misses), for tests and the bench
        self.users = (
            1  # phones drawing with it: the caches hold as much for each as a renderer of its own would
        )

    def add_user(self) -> None:
        with self._lock:
            self.users += 1

    def remove_user(self) -> None:
        with self._lock:
            self.users = max(1, self.users - 1)

    @property
    def _share(self) -> int:
        return min(self.users, MAX_SHARED_USERS)  # memory stays bounded however many phones a process makes

    # ------------------------------------------------------------------ public
    def encode(
        self,
        built: Built,
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
            while len(self._encoded) > ENCODED_CACHE_ENTRIES * self._share:
                self._encoded.popitem(last=False)
            return data

    def image(self, built: Built) -> Image.Image:
        with self._lock:
            return self._screen(built).copy()

    # ------------------------------------------------------------------ frames
    def _frame(self, built: Built, transition: tuple[str, int] | None) -> Image.Image:
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

    def _screen(self, built: Built) -> Image.Image:
        img = self._images.get(built.fingerprint)
        if img is not None:
            self._images.move_to_end(built.fingerprint)
            return img
        img = self.render(built.tree, built.chrome, black=built.black)
        self._images[built.fingerprint] = img
        while len(self._images) > IMAGE_CACHE_ENTRIES * self._share:
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
            chrome_parts.keyboard(img, draw, self.width, self.height, keyboard_top, ime, dark)
        if toast:
            chrome_parts.toast(draw, self.width, self.height, toast)
        chrome_parts.status_bar(
            img, draw, self.width, self.height, clock, battery, wifi, transparent=on_launcher
        )
        chrome_parts.nav_bar(img, draw, self.width, self.height)
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
                (left, top, right - 1, bottom - 1), max(4, w // 6), fill=color("icon" + arg, 60, 200)
            )
        elif kind == "appicon":
            self._app_icon(img, draw, node, arg)
        elif kind == "glyph":
            draw_glyph(draw, node.bounds, arg, node.style.fg)
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
        fill = BRAND_COLORS.get(pkg) or color("app" + pkg, 50, 220)
        draw.rounded_rectangle((x0, y0, x0 + size, y0 + size), size * 0.24, fill=fill)
        glyph = (node.desc or pkg)[:1]
        f = font(int(size * 0.5))
        draw.text((x0 + size / 2, y0 + size / 2), glyph, font=f, fill=(255, 255, 255), anchor="mm")
        if node.text and node.style.size:
            label_font = font(node.style.size)
            label = fit(draw, node.text, label_font, w - 8)
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
        lines = wrap(draw, value, f, avail, max(1, (bottom - top) // line_h))
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


_shared: dict[tuple[int, int], Renderer] = {}
_shared_lock = threading.Lock()


def shared_renderer(width: int, height: int, user: object) -> Renderer:
    """The renderer the phones of this process with a ``width`` x ``height`` screen draw with (one per size);
    ``user`` (a phone's display) counts as one of its users until it is garbage."""
    with _shared_lock:
        renderer = _shared.get((width, height))
        if renderer is None:
            renderer = _shared[(width, height)] = Renderer(width, height)
        else:
            renderer.add_user()
    weakref.finalize(user, renderer.remove_user)
    return renderer
