"""The dHash and the brightness check read one cached grey decode of a frame: the answers are those of decoding the
frame afresh, and a frame whose bytes changed is never answered from the cache."""

from __future__ import annotations

import io

from PIL import Image

from mobile_agent.device.frames import is_black
from mobile_agent.screen import imagehash
from mobile_agent.screen.imagehash import brightest, dhash, distance


def jpeg(size=(672, 1493), colour=(0, 0, 0), spot=None) -> bytes:
    img = Image.new("RGB", size, colour)
    if spot is not None:
        img.paste((255, 255, 255), spot)
    for y in range(0, size[1], 150) if colour != (0, 0, 0) else ():
        img.paste((20, 90, 200), (size[0] // 2, y, size[0], y + 40))  # left brighter than right: bits set
    out = io.BytesIO()
    img.save(out, "JPEG", quality=80)
    return out.getvalue()


def fresh_dhash(data: bytes, size: int = 16) -> int:
    return imagehash._dhash(Image.open(io.BytesIO(data)), size)


def test_cached_answers_are_those_of_a_fresh_decode() -> None:
    for frame in (jpeg(colour=(240, 240, 240)), jpeg((1080, 2400), (200, 200, 200)), jpeg((720, 1600))):
        assert dhash(frame) == fresh_dhash(frame) and dhash(frame) == dhash(frame)
        assert dhash(frame, 8) == fresh_dhash(frame, 8)


def test_a_secure_black_frame_is_black_and_a_small_bright_spot_is_not() -> None:
    assert brightest(jpeg()) <= 8 and is_black(jpeg())
    assert brightest(jpeg((1080, 2400))) <= 8 and is_black(jpeg((1080, 2400)))
    assert not is_black(jpeg(spot=(10, 10, 18, 18)))
    assert not is_black(jpeg(colour=(240, 240, 240)))


def test_a_frame_whose_bytes_changed_is_never_answered_from_the_cache() -> None:
    dark, light = jpeg(), jpeg(colour=(240, 240, 240))
    buffer = bytearray(dark)
    first = dhash(buffer)
    buffer[:] = light  # the same buffer, other bytes
    assert dhash(buffer) == fresh_dhash(light) != first
    assert distance(dhash(dark), dhash(light)) > 0
    assert is_black(dark) and not is_black(light)
