"""What a step asks of the phone, counted on the simulated phone's side: a tap step is the tap, one request that
waits for idle and takes the frame, and the view-tree dump beside it (which waits for idle too); the foreground is read again only when the screen's windows
changed, and the activity recorded is the phone's; a second run finds the u2 server running and reuses it."""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
from collections import Counter

import pytest

from mobile_agent.actions import Action, ActionKind, Outcome
from mobile_agent.agent.runtime import run_task
from mobile_agent.agent.step import StepScreen
from mobile_agent.apps.registry import load_registry
from mobile_agent.device.android import AndroidDevice
from mobile_agent.gate.policy import parse_policy
from mobile_agent.model.families import get_family
from mobile_agent.sim.scenario import load_scenario
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store.store import TrajectoryStore

SEND = parse_policy(allow=["send@com.tencent.mm"])
TAP_KINDS = {"u2 click", "u2 dumpWindowHierarchy", "u2 batch[waitForIdle,takeScreenshot]"}


@pytest.fixture
def store(tmp_path):
    with TrajectoryStore.open(root=tmp_path / "replays") as s:
        yield s


def test_a_tap_step_is_the_tap_one_dump_and_one_frame(sim_farm, store):
    farm = sim_farm(1, scenario="wechat_send")
    serial = farm.serials[0]
    phone = farm.phones[serial]
    per_step: list[tuple[str, Counter]] = []
    seen = Counter()

    def on_step(event):
        now = Counter(phone.requests)
        per_step.append((event.action.kind.value if event.action else "none", now - seen))
        seen.clear()
        seen.update(now)

    with SimModelServer(family="ui-venus-2", model_name="sim") as server:
        result = run_task(
            load_scenario("wechat_send").task,
            device=serial,
            adb=f"127.0.0.1:{farm.adb_port}",
            base_url=server.base_url,
            model=server.model_name,
            family="ui-venus-2",
            store=store,
            safety=SEND,
            on_step=on_step,
        )
    assert result.outcome == Outcome.FINISHED, result.detail
    taps = [counts for kind, counts in per_step[1:] if kind == ActionKind.TAP.value]
    assert len(taps) >= 2
    for counts in taps:
        extra = counts - Counter(dict.fromkeys(TAP_KINDS, 1))
        assert set(counts) >= TAP_KINDS and all(counts[k] == 1 for k in TAP_KINDS), counts
        assert not extra or extra == Counter({"shell dumpsys": 1}), counts  # a new activity is read once
    assert any(sum(c.values()) == 3 for c in taps)
    assert "u2 waitForIdle" not in seen  # asked only inside the frame's batch
    assert statistics.median(sum(c.values()) for _, c in per_step[1:]) <= 3


def _center(xml: str, text: str) -> tuple[int, int]:
    found = re.search(rf'text="{text}"[^>]*bounds="\[(\d+),(\d+)\]\[(\d+),(\d+)\]"', xml)
    assert found, f"no {text} on screen"
    left, top, right, bottom = map(int, found.groups())
    return (left + right) // 2, (top + bottom) // 2


def test_the_recorded_activity_is_the_phones_and_is_read_only_when_the_windows_change(sim_farm):
    farm = sim_farm(1, scenario="wechat_send")
    serial = farm.serials[0]
    phone = farm.phones[serial]
    device = AndroidDevice(serial, adb=f"127.0.0.1:{farm.adb_port}")
    device.prefetch_hierarchy = True

    def observe():
        obs = device.observe(0.5)
        assert (obs.package, obs.activity) == phone.current()
        return obs

    observe()
    device.perform(Action.launch("wechat"), package="com.tencent.mm")
    home = observe()
    assert home.activity == "com.tencent.mm.ui.LauncherUI" and home.foreground_read
    device.perform(Action.tap(*_center(device.hierarchy(), "张三")))
    chat = observe()  # one app, another activity: its windows changed
    assert chat.activity == "com.tencent.mm.ui.chatting.ChattingUI" and chat.foreground_read
    reads = phone.requests["shell dumpsys"]
    device.perform(Action.type("晚上好"))
    typed = observe()  # the same windows: the last read holds
    assert typed.activity == chat.activity and not typed.foreground_read
    assert phone.requests["shell dumpsys"] == reads
    device.perform(Action.press("back"))
    back = observe()
    assert back.activity == "com.tencent.mm.ui.LauncherUI"


def test_apps_whose_popup_rules_name_activities_have_the_activity_read_every_step(sim_farm):
    registry = load_registry()
    farm = sim_farm(1, scenario="wechat_send")
    serial = farm.serials[0]
    phone = farm.phones[serial]
    device = AndroidDevice(serial, adb=f"127.0.0.1:{farm.adb_port}")
    screen = StepScreen(device, get_family("ui-venus-2"), registry)
    screen.start_step(prefetch=True)
    assert device.needs_activity("com.sdu.didi.psnger")  # apps/didi.yaml: update_ignore names MainActivity
    assert not device.needs_activity("com.tencent.mm")
    device.needs_activity = lambda package: True  # as for such an app: every observation reads it
    device.observe(0.5)
    for _ in range(2):
        reads = phone.requests["shell dumpsys"]
        device.perform(Action.swipe(540, 1800, 540, 1700))
        obs = device.observe(0.5)
        assert obs.foreground_read and phone.requests["shell dumpsys"] == reads + 1


def _cli_run(farm, server, tmp_path, n: int, *extra: str) -> None:
    serial = farm.serials[0]
    data = tmp_path / f"run{n}"
    done = subprocess.run(
        [sys.executable, "-m", "mobile_agent.cli.app", "run", load_scenario("wechat_send").task]
        + ["--device", serial, "--adb", f"127.0.0.1:{farm.adb_port}", "--base-url", server.base_url]
        + ["--model", server.model_name, "--family", "ui-venus-2", "--db", f"sqlite:///{data}.db"]
        + ["--allow", "send@com.tencent.mm", "--non-interactive", *extra],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, MOBILE_AGENT_DATA=str(data)),
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_second_run_reuses_the_u2_server_the_first_started_until_asked_to_stop_it(sim_farm, tmp_path):
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]

    def starts() -> int:
        return len([e for e in phone.events if e.kind == "u2" and e.detail["running"]])

    with SimModelServer(family="ui-venus-2", model_name="sim") as server:
        _cli_run(farm, server, tmp_path, 1)
        assert phone.u2_running  # the run's process has exited; the server it started has not
        phone.apply_scenario("wechat_send")
        _cli_run(farm, server, tmp_path, 2, "--stop-u2-server")
        assert starts() == 1 and not phone.u2_running  # reused, then stopped as asked
        phone.apply_scenario("wechat_send")
        _cli_run(farm, server, tmp_path, 3)
    assert starts() == 2 and phone.u2_running
