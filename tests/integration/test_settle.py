"""Settling after an action: the first frame after the phone says its screen is idle, never one taken mid-way
through a transition; frame comparison when the u2 server cannot tell."""

from __future__ import annotations

import time

from mobile_agent.actions import Action
from mobile_agent.device.android import AndroidDevice
from mobile_agent.sim.profiles import LatencyProfile
from mobile_agent.sim.wire.u2server import U2Server

LONG = LatencyProfile("long-transitions", u2_screenshot=0.03, transition=1.2)


def _device(farm) -> tuple[AndroidDevice, object]:
    serial = farm.serials[0]
    phone = farm.phones[serial]
    phone.profile = LONG
    return AndroidDevice(serial, adb=f"127.0.0.1:{farm.adb_port}"), phone


def test_settle_never_returns_a_frame_taken_mid_transition(sim_farm):
    farm = sim_farm(1, scenario="wechat_send")
    device, phone = _device(farm)
    device.observe(0.5)
    for action, package in [(Action.launch("wechat"), "com.tencent.mm"), (Action.press("back"), None)] * 2:
        result = device.perform(action, package=package)
        assert result.settled
        assert result.settle_ms >= LONG.transition * 1000 * 0.8  # it waited for the animation
        settled = device.observe(0.5).screenshot  # the frame settling ended on (reused)
        time.sleep(LONG.transition + 0.2)  # long after any animation
        assert phone.display.animating_for() == 0
        assert settled == device.screenshot_jpeg(0.5), f"settled mid-transition after {action.describe()}"


def test_without_an_idle_signal_settling_compares_frames_and_stops_asking(sim_farm, monkeypatch):
    monkeypatch.delattr(U2Server, "rpc_waitForIdle")
    farm = sim_farm(1, scenario="wechat_send")
    device, phone = _device(farm)
    phone.profile = LatencyProfile("plain", u2_screenshot=0.02)
    device.observe(0.5)
    for _ in range(3):
        result = device.perform(Action.launch("wechat"), package="com.tencent.mm")
        assert result.settled
    assert phone.requests["u2 waitForIdle"] == 1  # asked once, then frames are compared
    assert phone.requests["u2 takeScreenshot"] >= 1 + 3 * 2
