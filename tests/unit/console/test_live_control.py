"""The live page's rules without a phone: one controller at a time, a controller whose page closed keeps control
for the grace time and then loses it, and the page's input turned into device actions (or refused with a reason)."""

from __future__ import annotations

import asyncio
import io
import threading
import time

import pytest
from PIL import Image

from mobile_agent.actions import ActionKind, Key
from mobile_agent.console.live import ControlRefused, LivePhone
from mobile_agent.console.live_routes import to_action


def phone(grace_s: float = 5.0) -> LivePhone:
    def no_device(serial, adb):
        raise AssertionError("no phone is asked in these tests")

    return LivePhone("k", "SIM1", None, grace_s=grace_s, device_factory=no_device)


def test_one_controller_at_a_time() -> None:
    p = phone()
    control, lapsed = p.take("a", "alice")
    assert lapsed is None and p.require("a") is control
    assert p.take("a", "alice")[0] is control  # taking again is a no-op
    with pytest.raises(ControlRefused, match="alice holds control"):
        p.take("b", "bob")
    with pytest.raises(ControlRefused, match="alice holds control"):
        p.require("b")
    with pytest.raises(ControlRefused, match="does not hold"):
        p.release("b")
    assert p.release("a") is control
    with pytest.raises(ControlRefused, match="nobody holds control"):
        p.require("a")
    assert p.take("b", "bob")[0].who == "bob"


def test_a_closed_page_loses_control_after_the_grace() -> None:
    p = phone(grace_s=0.2)
    p.take("a", "alice")
    p._viewers[1] = ("a", None, None)  # the controller's stream, then it closes
    p.unsubscribe(1)
    assert p.holder() is not None and p.lapsed() is None  # a reload keeps it
    time.sleep(0.3)
    assert p.holder() is None
    new, lapsed = p.take("b", "bob")
    assert lapsed is not None and lapsed.who == "alice" and new.who == "bob"


def test_input_as_actions() -> None:
    tap = to_action({"kind": "tap", "x": 0.5, "y": 0.25}, 1080, 2400)
    assert tap.kind is ActionKind.TAP and (tap.point.x, tap.point.y) == (540, 600)
    edge = to_action({"kind": "tap", "x": 1, "y": 1}, 1080, 2400)
    assert (edge.point.x, edge.point.y) == (1079, 2399)
    swipe = to_action(
        {"kind": "swipe", "x": 0.5, "y": 0.8, "x2": 0.5, "y2": 0.2, "duration_ms": 300}, 1080, 2400
    )
    assert (swipe.end.y, swipe.duration_ms) == (480, 300)
    assert to_action({"kind": "key", "key": "recents"}, 1, 1).key is Key.RECENT
    assert to_action({"kind": "type", "text": "晚上好"}, 1, 1).text == "晚上好"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"kind": "tap", "x": 1.5, "y": 0}, "fraction"),
        ({"kind": "tap", "x": "0.5", "y": 0}, "fraction"),
        ({"kind": "tap", "x": True, "y": 0}, "fraction"),
        ({"kind": "swipe", "x": 0, "y": 0, "x2": 0, "y2": 0, "duration_ms": 0}, "duration_ms"),
        ({"kind": "type", "text": ""}, "text"),
        ({"kind": "type", "text": "x" * 501}, "text"),
        ({"kind": "key", "key": "power"}, "key is one of"),
        ({"kind": "launch"}, "kind is"),
    ],
)
def test_bad_input_is_refused(data: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        to_action(data, 1080, 2400)


class CountingScreen:
    """Stands in for the phone's screenshot call only: counts frames (the device layer has its own tests)."""

    def __init__(self) -> None:
        out = io.BytesIO()
        Image.new("RGB", (54, 120), (90, 120, 200)).save(out, "JPEG")
        self.jpeg = out.getvalue()
        self.taken = 0

    def screenshot_jpeg(self, scale: float, quality: int) -> bytes:
        self.taken += 1
        return self.jpeg


def test_frames_only_while_watched_and_a_reload_keeps_them_coming() -> None:
    screen = CountingScreen()
    p = LivePhone("k", "SIM1", None, fps=20, device_factory=lambda serial, adb: screen)

    async def scenario() -> None:
        handle, queue = p.subscribe("a")
        first = await asyncio.wait_for(queue.get(), 2)
        p.unsubscribe(handle)  # a reload: the stream closes and the next opens at once
        handle, queue = p.subscribe("a")
        seqs = [(await asyncio.wait_for(queue.get(), 2)).seq for _ in range(3)]
        assert seqs[-1] > first.seq + 1  # new frames, not only the cached one
        p.unsubscribe(handle)

    asyncio.run(scenario())
    time.sleep(0.3)  # the pump ends after its current frame
    assert not any(t.name == "live-SIM1" and t.is_alive() for t in threading.enumerate())
    taken = screen.taken
    time.sleep(0.3)
    assert screen.taken == taken and p.watching() == 0
