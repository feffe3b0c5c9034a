"""A perceptual hash of screenshots: are two frames the same screen, whatever their size or JPEG noise?

Used to see whether the screen settled (device), whether an action had any effect (loops), whether a replayed
screen matches the recording (replay) and whether a step was ineffective (verification). ``brightest`` (is the
frame all black, as a secure window is?) reads the same small grey decode as the hash, so a new frame is decoded
once for both.
"""

from __future__ import annotations

import functools
import io

from PIL import Image


def dhash(image: bytes | Image.Image, size: int = 16) -> int:
    """Difference hash: ``size`` x ``size`` bits, one per horizontally adjacent pair of a grey thumbnail."""
    if isinstance(image, (bytes, bytearray)):
        return _dhash_of_bytes(bytes(image), size)
    return _dhash(image, size)


def brightest(image: bytes) -> int:
    """The brightest grey level (0-255) of the frame, read off the reduced-scale decode ``dhash`` uses."""
    _, high = _grey(image, 16 * 8).getextrema()
    return int(high)


@functools.lru_cache(maxsize=16)
def _dhash_of_bytes(data: bytes, size: int) -> int:
    # A frame is hashed by several readers in one step (settling, the loop detector, pauses): decode it once.
    return _hash_bits(_grey(data, size * 8), size)


@functools.lru_cache(maxsize=16)
def _grey(data: bytes, side: int) -> Image.Image:
    """The frame decoded in grey at a reduced scale (at least ``side`` pixels a side, when it is that big); keyed by
    the bytes themselves, so a changed frame is never answered from the cache. Callers must not modify it."""
    img = Image.open(io.BytesIO(data))
    if img.format == "JPEG":
        img.draft("L", (side, side))  # decode at a fraction of the size; enough for a thumbnail
    grey = img.convert("L")
    grey.load()
    return grey


def _dhash(img: Image.Image, size: int) -> int:
    if img.format == "JPEG":
        img.draft("L", (size * 8, size * 8))
    return _hash_bits(img.convert("L"), size)


def _hash_bits(grey: Image.Image, size: int) -> int:
    pixels = grey.resize((size + 1, size), Image.Resampling.BILINEAR).tobytes()
    bits = 0
    for row in range(size):
        offset = row * (size + 1)
        for col in range(size):
            bits = (bits << 1) | (pixels[offset + col] > pixels[offset + col + 1])
    return bits


def distance(a: int, b: int) -> int:
    """How many bits differ."""
    return (a ^ b).bit_count()
