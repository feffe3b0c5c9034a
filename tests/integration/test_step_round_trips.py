"""What a step asks of the phone, counted on the simulated phone's side: with a model slower than a dump, a tap
step is two requests (the tap with its idle wait and frame; the next tree with the foreground app, while the model
thinks); with an instant model the tree is dumped beside the idle wait instead. The activity recorded is the
phone's, read with every tree; a second run finds the u2 server running and reuses it without checking it."""

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
from mobile_agent.device.android import AndroidDevice
from mobile_agent.gate.policy import parse_policy
from mobile_agent.sim.scenario import load_scenario
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store.store import TrajectoryStore

SEND = parse_policy(allow=["send@com.tencent.mm"])
TAP = "u2 batch[click,waitForIdle,takeScreenshot,deviceInfo]"
TREE = "u2 batch[dumpWindowHierarchy,executeShellCommand]"  # the view tree and the focused window


@pytest.fixture
def store(tmp_path):
    with TrajectoryStore.open(root=tmp_path / "replays") as s:
        yield s


RECHECK = "u2 dumpWindowHierarchy"  # the screen read again right before a consequential action (issue 22)


def _per_step(farm, store, latency_ms: int) -> list[tuple[str, Counter]]:
    """Per step: the action's kind and the requests it made, the re-check before acting taken out (and asserted:
    exactly one, and only where the gate saw something that could matter)."""
    serial = farm.serials[0]
    phone = farm.phones[serial]
    per_step: list[tuple[str, Counter]] = []
    seen = Counter()

    def on_step(event):
        now = Counter(phone.requests)
        per_step.append((event.action.kind.value if event.action else "none", now - seen))
        seen.clear()
        seen.update(now)

    with SimModelServer(family="ui-venus-2", model_name="sim", latency_ms=latency_ms) as server:
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
    rechecked = {
        s.index for s in store.steps(result.episode_id) if any(d.get("recheck") for d in s.guard_decisions)
    }
    assert rechecked, "the send is re-checked before it is performed"
    extra = [index for index, (_, counts) in enumerate(per_step) for _ in range(counts[RECHECK])]
    assert extra == sorted(rechecked), (extra, rechecked)  # one extra request, on those steps only
    return [(kind, counts - Counter({RECHECK: counts[RECHECK]})) for kind, counts in per_step]


def test_with_a_model_slower_than_the_dump_a_tap_step_is_two_requests(sim_farm, store):
    """The tap, its idle wait and its frame in one request; the next frame's tree and foreground in another, while
    the model thinks. No shell command of its own, no separate idle wait."""
    farm = sim_farm(1, scenario="wechat_send")
    per_step = _per_step(farm, store, latency_ms=150)
    taps = [counts for kind, counts in per_step[1:] if kind == ActionKind.TAP.value]
    assert len(taps) >= 2
    for counts in taps:  # (the tap after typing also puts the user's clipboard back, in front of the tree)
        trees = counts[TREE] + counts["u2 batch[setClipboard,dumpWindowHierarchy,executeShellCommand]"]
        assert counts[TAP] == 1 and trees == 1 and sum(counts.values()) == 2, counts
    after_start = sum((c for _, c in per_step[1:]), Counter())  # (the first step started the u2 server)
    assert not any(kind.startswith("shell") for kind in after_start), after_start
    assert "u2 waitForIdle" not in after_start and "u2 GET /ping" not in after_start


def test_with_an_instant_model_the_tree_is_dumped_beside_the_frame(sim_farm, store):
    """Nothing hides a dump behind an instant model: the tap goes alone and the tree is dumped beside the idle
    wait (it waits for idle itself), so both are in when the model has answered."""
    farm = sim_farm(1, scenario="wechat_send", profile="phone")
    per_step = _per_step(farm, store, latency_ms=0)
    taps = [counts for kind, counts in per_step[2:] if kind == ActionKind.TAP.value]
    assert taps
    for counts in taps:
        assert counts == Counter(
            {"u2 click": 1, "u2 batch[waitForIdle,takeScreenshot,deviceInfo]": 1, TREE: 1}
        )
    assert statistics.median(sum(c.values()) for _, c in per_step[1:]) <= 3


def _center(xml: str, text: str) -> tuple[int, int]:
    found = re.search(rf'text="{text}"[^>]*bounds="\[(\d+),(\d+)\]\[(\d+),(\d+)\]"', xml)
    assert found, f"no {text} on screen"
    left, top, right, bottom = map(int, found.groups())
    return (left + right) // 2, (top + bottom) // 2


def test_the_recorded_activity_is_the_phones_read_with_every_tree(sim_farm):
    farm = sim_farm(1, scenario="wechat_send")
    serial = farm.serials[0]
    phone = farm.phones[serial]
    device = AndroidDevice(serial, adb=f"127.0.0.1:{farm.adb_port}")

    def observe():
        before = Counter(phone.requests)
        obs = device.observe(0.5)
        assert (obs.package, obs.activity) == phone.current()
        return Counter(phone.requests) - before

    observe()
    device.perform(Action.launch("wechat"), package="com.tencent.mm")
    assert observe() == Counter({TREE: 1})  # the frame is the settled one; the foreground comes with the tree
    device.perform(Action.tap(*_center(device.hierarchy(), "张三")))
    assert observe() == Counter({TREE: 1})  # one app, another activity
    device.perform(Action.type("晚上好"))
    device.perform(Action.press("back"))
    assert observe()[TREE] == 1
    assert not any(kind.startswith("shell dumpsys") for kind in phone.requests)


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


def test_a_second_run_reuses_the_u2_server_the_first_started_without_checking_it(sim_farm, tmp_path):
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]

    def starts() -> int:
        return len([e for e in phone.events if e.kind == "u2" and e.detail["running"]])

    with SimModelServer(family="ui-venus-2", model_name="sim") as server:
        _cli_run(farm, server, tmp_path, 1)
        assert phone.u2_running  # the run's process has exited; the server it started has not
        checks = {k: phone.requests[k] for k in ("shell toybox", "u2 GET /ping", "shell wm", "shell pm")}
        phone.apply_scenario("wechat_send")
        _cli_run(farm, server, tmp_path, 2, "--stop-u2-server")
        assert starts() == 1 and not phone.u2_running  # reused, then stopped as asked
        assert {k: phone.requests[k] for k in checks} == checks  # no jar md5, no ping, no `wm size`, no `pm`
        phone.apply_scenario("wechat_send")
        _cli_run(farm, server, tmp_path, 3)
    assert starts() == 2 and phone.u2_running
