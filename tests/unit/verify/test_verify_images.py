"""dHash, unchanged-screen detection and the action marker."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw

from mobile_agent.actions import Action
from mobile_agent.verify.images import dhash, hamming, mark_action, same_screen, shrink_jpeg


def _screen(text: str = "", clock: str = "10:24", fmt: str = "JPEG") -> bytes:
    image = Image.new("RGB", (1080, 2400), (240, 240, 240))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 1080, 90), fill=(30, 30, 30))
    draw.text((40, 30), clock, fill=(255, 255, 255))
    draw.rectangle((100, 300, 980, 700), fill=(60, 160, 60))
    draw.rectangle((0, 2200, 1080, 2400), fill=(255, 255, 255))
    if text:
        draw.rectangle((140, 2240, 140 + 60 * len(text), 2320), fill=(0, 0, 0))
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


def test_identical_screens_have_equal_hashes():
    assert hamming(dhash(_screen()), dhash(_screen())) == 0
    assert dhash(_screen()).bit_length() <= 256


def test_a_changed_status_bar_is_still_the_same_screen():
    assert same_screen(_screen(clock="10:24"), _screen(clock="10:25"))


def test_typed_text_is_a_different_screen():
    assert not same_screen(_screen(), _screen(text="abc"))


def test_a_different_page_is_far_away():
    other = Image.new("RGB", (1080, 2400), (240, 240, 240))
    draw = ImageDraw.Draw(other)
    for row in range(8):
        draw.rectangle((60 * row, 200 + 250 * row, 60 * row + 500, 300 + 250 * row), fill=(20, 20, 200))
    assert hamming(dhash(_screen()), dhash(other)) > 20


def test_shrink_keeps_aspect_and_bounds_the_side():
    small = Image.open(io.BytesIO(shrink_jpeg(_screen(fmt="PNG"), 600)))
    assert small.format == "JPEG" and max(small.size) == 600 and small.size[0] == 270


def test_mark_action_draws_red_at_the_point():
    marked = mark_action(_screen(), Action.tap(540, 1200))
    r, g, b = marked.getpixel((540 + max(12, 1080 // 30), 1200))
    assert r > 200 and g < 80 and b < 80
    unchanged = mark_action(_screen(), Action.press("back"))
    assert unchanged.getpixel((540, 1200)) == Image.open(io.BytesIO(_screen())).convert("RGB").getpixel(
        (540, 1200)
    )
