"""Photo-like content (avatars, product pictures, banners, wallpapers): gradients, soft shapes and grain, seeded by
the element, so screenshots compress like real ones and stay byte-stable across runs."""

from __future__ import annotations

import hashlib
import random
import threading
from collections import OrderedDict

from PIL import Image, ImageChops, ImageDraw, ImageFilter, ImageOps

PHOTO_CACHE_PIXELS = 40_000_000


def seed_of(text: str) -> int:
    return int.from_bytes(hashlib.md5(text.encode()).digest()[:8], "big")


def natural(seed: str) -> tuple[int, int, int]:
    """A muted colour like the ones photos are made of (sky, foliage, skin, wood), not a saturated primary."""
    rnd = random.Random(seed_of(seed))
    base = rnd.randint(60, 210)
    return tuple(max(0, min(255, base + rnd.randint(-55, 55))) for _ in range(3))  # type: ignore[return-value]


def color(seed: str, lo: int = 40, hi: int = 230) -> tuple[int, int, int]:
    rnd = random.Random(seed_of(seed))
    return (rnd.randint(lo, hi), rnd.randint(lo, hi), rnd.randint(lo, hi))


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
        rnd = random.Random(seed_of(seed))
        small_w, small_h = max(8, width // 8), max(8, height // 8)
        top, bottom = natural(seed + "a"), natural(seed + "b")
        gradient = Image.linear_gradient("L").resize((small_w, small_h))
        scene = ImageOps.colorize(gradient, top, bottom)
        draw = ImageDraw.Draw(scene)
        for _ in range(rnd.randint(5, 11)):  # soft shapes: hills, fruit, buildings, bokeh
            cx, cy = rnd.uniform(0, small_w), rnd.uniform(0, small_h)
            rx, ry = rnd.uniform(0.08, 0.45) * small_w, rnd.uniform(0.05, 0.35) * small_h
            fill = natural(f"{seed}{rnd.random()}")
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
