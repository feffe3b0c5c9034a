import io
import random

import pytest
from PIL import Image, ImageDraw

from mobile_agent.actions import Action
from mobile_agent.agent.loops import LoopConfig, LoopDetector
from mobile_agent.screen.imagehash import dhash, distance


def frame(text="", box=None) -> bytes:
    img = Image.new("RGB", (1080, 2400), (240, 240, 240))
    draw = ImageDraw.Draw(img)
    draw.rectangle((0, 0, 1080, 200), fill=(7, 193, 96))
    if box:
        draw.rectangle(box, fill=(30, 30, 30))
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=80)
    return buf.getvalue()


def test_dhash_ignores_jpeg_noise_and_sees_real_change():
    a, b = frame(), frame()
    img = Image.open(io.BytesIO(a))
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=40)
    assert distance(dhash(a), dhash(buf.getvalue())) <= 3
    assert distance(dhash(a), dhash(frame(box=(100, 800, 900, 1400)))) > 10
    assert dhash(a) == dhash(b)


W, H = 1080, 2400


def test_repeat_hint_then_loop():
    d = LoopDetector(LoopConfig(hint_after=3, end_after=4))
    tap = Action.tap(300, 100)
    for _ in range(3):
        assert d.judge(1, tap, W, H) is None
        d.note(1, tap)
    assert "no visible effect" in d.hint(1, W, H)
    assert "4 times" in d.judge(1, Action.tap(305, 104), W, H)  # within the tolerance: the same tap
    assert d.judge(1, Action.tap(700, 900), W, H) is None  # another action is fine
    assert d.hint((1 << 256) - 1, W, H) is None  # the screen changed: no hint


def test_scrolling_that_changes_the_screen_is_not_a_loop():
    d = LoopDetector()
    swipe = Action.swipe(500, 1500, 500, 500)
    rng = random.Random(7)
    for _ in range(10):
        screen = rng.getrandbits(256)
        assert d.hint(screen, W, H) is None
        assert d.judge(screen, swipe, W, H) is None
        d.note(screen, swipe)


def test_oscillation_hint_then_loop():
    d = LoopDetector(LoopConfig(oscillation_hint=2, oscillation_end=3))
    a, b = Action.tap(500, 300), Action.press("back")
    s1, s2 = 0, (1 << 200) - 1
    for _ in range(2):
        d.note(s1, a)
        d.note(s2, b)
    assert "back and forth" in d.hint(s1, W, H)
    assert "round trips" in d.judge(s1, a, W, H)


def test_waits_are_never_loops():
    d = LoopDetector()
    for _ in range(10):
        assert d.judge(1, Action.wait(), W, H) is None
        d.note(1, Action.wait())


def test_thresholds_must_be_ordered():
    with pytest.raises(ValueError):
        LoopConfig(hint_after=4, end_after=4)
