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
    asked = sum(n for kind, n in phone.requests.items() if "waitForIdle" in kind)
    assert asked == 1  # asked once (alone or in a batch), then frames are compared
    assert sum(n for kind, n in phone.requests.items() if "takeScreenshot" in kind) >= 1 + 3 * 2


def test_an_action_its_idle_wait_and_its_frame_are_one_request(sim_farm):
    farm = sim_farm(1, scenario="wechat_send")
    device, phone = _device(farm)
    device.observe(0.5)
    before = dict(phone.requests)
    result = device.perform(Action.launch("wechat"), package="com.tencent.mm")
    assert result.settled and result.settle_ms >= LONG.transition * 1000 * 0.8
    asked = {k: n - before.get(k, 0) for k, n in phone.requests.items() if n != before.get(k, 0)}
    assert asked == {"u2 batch[executeShellCommand,waitForIdle,takeScreenshot,deviceInfo]": 1}, asked
    capture = device.capture(0.5)  # the settled frame; its tree and foreground follow in one more request
    assert capture.screen().package == "com.tencent.mm"
    time.sleep(LONG.transition + 0.2)
    assert capture.screenshot == device.screenshot_jpeg(0.5)  # the frame of the idle screen
    assert capture.screen().hierarchy == device.hierarchy()  # and so is the tree


def test_with_the_dump_beside_the_frame_the_action_goes_alone_and_the_dump_runs_beside_the_idle_wait(
    sim_farm,
):
    farm = sim_farm(1, scenario="wechat_send")
    device, phone = _device(farm)
    device.prefetch_hierarchy = True
    device.observe(0.5)
    before = dict(phone.requests)
    result = device.perform(Action.launch("wechat"), package="com.tencent.mm")
    assert result.settled and result.settle_ms >= LONG.transition * 1000 * 0.8
    asked = {k: n - before.get(k, 0) for k, n in phone.requests.items() if n != before.get(k, 0)}
    assert asked.get("u2 batch[waitForIdle,takeScreenshot,deviceInfo]") == 1, asked
    assert asked.get("u2 batch[dumpWindowHierarchy,executeShellCommand]") == 1, asked
    assert asked.get("u2 executeShellCommand") == 1 and "u2 waitForIdle" not in asked, asked  # the launch
    tree = device.settled_hierarchy(0.5).result().hierarchy
    settled = device.observe(0.5).screenshot
    time.sleep(LONG.transition + 0.2)
    assert settled == device.screenshot_jpeg(0.5)  # the frame of the idle screen
    assert tree == device.hierarchy()  # and so is the tree


def test_a_server_without_batches_is_asked_one_call_at_a_time(sim_farm, monkeypatch):
    def no_batches(self, body):
        return U2Server._handle_call(self, __import__("json").loads(body))  # an array is an invalid request

    monkeypatch.setattr(U2Server, "handle_jsonrpc", no_batches)
    farm = sim_farm(1, scenario="wechat_send")
    device, phone = _device(farm)
    device.observe(0.5)
    for action, package in [(Action.launch("wechat"), "com.tencent.mm"), (Action.press("back"), None)]:
        result = device.perform(action, package=package)
        assert result.settled
        settled = device.observe(0.5).screenshot
        time.sleep(LONG.transition + 0.2)
        assert settled == device.screenshot_jpeg(0.5), f"settled mid-transition after {action.describe()}"
    assert sum(n for kind, n in phone.requests.items() if kind.startswith("u2 batch")) == 1  # tried once
    assert phone.requests["u2 waitForIdle"] == 2


def test_with_the_view_tree_wanted_the_dump_is_the_idle_signal_and_never_mid_transition(sim_farm):
    farm = sim_farm(1, scenario="wechat_send")
    device, phone = _device(farm)
    device.prefetch_hierarchy = True
    device.observe(0.5)
    assert phone.u2_idle_timeout_ms == device.settle_options.timeout * 1000  # set up on connect
    for action, package in [(Action.launch("wechat"), "com.tencent.mm"), (Action.press("back"), None)] * 2:
        result = device.perform(action, package=package)
        assert result.settled and result.settle_ms >= LONG.transition * 1000 * 0.8
        settled = device.observe(0.5).screenshot
        time.sleep(LONG.transition + 0.2)
        assert settled == device.screenshot_jpeg(0.5), f"settled mid-transition after {action.describe()}"
    assert phone.requests["u2 waitForIdle"] == 0  # asked inside the frame's batch only


def test_a_server_restarted_by_u2_is_set_up_again_before_a_dump_counts_as_idle(sim_farm):
    farm = sim_farm(1, scenario="wechat_send")
    device, phone = _device(farm)
    device.prefetch_hierarchy = True
    device.observe(0.5)
    phone.faults.u2_crash_next = True  # the next call finds UiAutomation gone; u2 restarts the server
    for action, package in [(Action.launch("wechat"), "com.tencent.mm"), (Action.press("back"), None)]:
        result = device.perform(action, package=package)
        assert result.settled
        settled = device.observe(0.5).screenshot
        time.sleep(LONG.transition + 0.2)
        assert settled == device.screenshot_jpeg(0.5), f"settled mid-transition after {action.describe()}"
    starts = [e for e in phone.events if e.kind == "u2" and e.detail["running"]]
    assert len(starts) == 2 and phone.u2_idle_timeout_ms > 0  # restarted, and its dumps wait again
