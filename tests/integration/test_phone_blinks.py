"""Phones that blink (issue 23): a phone that leaves the adb bus mid-episode is waited for within
``reconnect_wait_s`` (``--reconnect-wait``), asked back with ``adb connect`` (the simulated phones are network
phones, host:port), and the step starts again from a fresh frame; only past the bound is the episode
``error:device_lost``. Through the real adb server from the adbutils wheel, adbutils and uiautomator2 against a
simulated phone that really leaves the bus (its adbd cuts every connection and refuses new ones), and the model
client against the simulated model."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mobile_agent.actions import Outcome
from mobile_agent.agent.config import AgentConfig
from mobile_agent.agent.runtime import run_task
from mobile_agent.gate.policy import parse_policy
from mobile_agent.sim.scenario import load_scenario
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store.store import TrajectoryStore

CLI = [sys.executable, "-m", "mobile_agent.cli.app"]
SEND = parse_policy(allow=["send@com.tencent.mm"])


@pytest.fixture
def store(tmp_path):
    with TrajectoryStore.open(root=tmp_path / "replays") as s:
        yield s


def _run(farm, server, store, task, **kw):
    return run_task(
        task,
        device=farm.serials[0],
        adb=f"127.0.0.1:{farm.adb_port}",
        base_url=server.base_url,
        model=server.model_name,
        family="ui-venus-2",
        store=store,
        safety=SEND,
        **kw,
    )


@pytest.mark.parametrize(
    ("at_step", "forgotten"),
    [(1, False), (3, False), (1, True)],
    ids=["after-step-1", "after-step-3", "forgotten-by-adb"],
)
def test_a_phone_gone_for_three_seconds_comes_back_and_the_episode_completes(
    sim_farm, store, at_step, forgotten
):
    spec = load_scenario("wechat_send")
    farm = sim_farm(1, scenario="wechat_send")
    serial = farm.serials[0]
    dropped: list[float] = []

    def drop_while_the_model_thinks(server: SimModelServer) -> None:
        # Step at_step is done, the next question has reached the model and the phone goes; the model answers after
        # it is back. A drop in the middle of an action leaves it failed, as it must, and this scripted model
        # would not try it again (a real model would, from the fresh frame).
        server.turn_delays_ms[at_step + 1] = 4000
        limit = time.monotonic() + 30
        while time.monotonic() < limit:
            if at_step + 1 not in server.turn_delays_ms:  # that question is with the model, which waits
                dropped.append(time.monotonic())
                farm.drop(serial, 3.0)
                return
            time.sleep(0.002)

    def drop_after(event):  # a phone the adb server lets go of: only `adb connect` brings it back
        if event.index == at_step and not dropped:
            dropped.append(time.monotonic())
            farm.drop(serial, 3.0)
            farm.client.disconnect(serial)

    with SimModelServer(family="ui-venus-2", model_name="sim") as server:
        if forgotten:
            result = _run(
                farm, server, store, spec.task, on_step=drop_after, config=AgentConfig(timeout_s=120)
            )
        else:
            watcher = threading.Thread(target=drop_while_the_model_thinks, args=(server,), daemon=True)
            watcher.start()
            result = _run(farm, server, store, spec.task, config=AgentConfig(timeout_s=120))
            watcher.join(timeout=5)
    assert dropped, "the phone was never dropped"
    assert result.outcome == Outcome.FINISHED, result.detail
    phone = farm.phones[serial]
    check = spec.check(phone)
    assert check.ok, (
        check.detail,
        [(s.index, s.action, s.error_kind, s.error_text) for s in store.steps(result.episode_id)],
    )
    assert [m["text"] for m in phone.state.messages_sent] == ["晚上好"]  # sent once, not again after the drop
    steps = store.steps(result.episode_id)
    assert [s.index for s in steps] == list(range(len(steps)))  # no index skipped or written twice
    assert all(s.error_kind is None for s in steps), [(s.index, s.error_kind, s.error_text) for s in steps]
    assert store.check_integrity() == []
    assert farm.states()[serial] == "device"


def test_a_phone_that_stays_gone_past_the_bound_ends_device_lost(sim_farm, store):
    farm = sim_farm(1, scenario="wechat_send")
    serial = farm.serials[0]
    dropped: list[float] = []

    def drop_after(event):
        if event.index == 1 and not dropped:
            dropped.append(time.monotonic())
            farm.drop(serial, 30.0)

    with SimModelServer(family="ui-venus-2", model_name="sim") as server:
        task, config = load_scenario("wechat_send").task, AgentConfig(reconnect_wait_s=2.0)
        result = _run(farm, server, store, task, on_step=drop_after, config=config)
    ended = time.monotonic()
    assert result.outcome == "error:device_lost", result.detail
    assert 2.0 <= ended - dropped[0] < 2.0 + 8.0, ended - dropped[0]  # waited the bound, then gave up
    detail = result.detail or ""
    assert "\n" not in detail and f"phone {serial} left the adb bus and was not back within 2 s" in detail
    assert store.episode(result.episode_id).outcome == "error:device_lost"
    steps = store.steps(result.episode_id)
    assert [s.index for s in steps] == [0, 1] and all(s.error_kind is None for s in steps)
    assert store.check_integrity() == []


def _recorded_steps(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return conn.execute("SELECT count(*) FROM steps").fetchone()[0]
    except sqlite3.Error:  # not created yet, or busy: asked again
        return 0


@pytest.mark.parametrize(
    ("gone_s", "wait", "outcome", "code"),
    [(3.0, "60", "finished", 0), (30.0, "2", "error:device_lost", 1)],
    ids=["back-in-3-s", "gone-past-the-bound"],
)
def test_run_waits_for_the_phone_within_reconnect_wait(sim_farm, tmp_path, gone_s, wait, outcome, code):
    farm = sim_farm(1, scenario="wechat_send")
    serial, db = farm.serials[0], tmp_path / "store.db"
    env = {**os.environ, "HOME": str(tmp_path), "COLUMNS": "200"}
    env.pop("MOBILE_AGENT_DB", None)
    with SimModelServer(family="ui-venus-2", model_name="sim", latency_ms=400) as server:
        args = [
            "run",
            load_scenario("wechat_send").task,
            "--device",
            serial,
            "--adb",
            f"127.0.0.1:{farm.adb_port}",
        ]
        args += ["--base-url", server.base_url, "--model", "sim", "--family", "ui-venus-2"]
        args += ["--allow", "send@com.tencent.mm", "--non-interactive", "--db", f"sqlite:///{db}"]
        proc = subprocess.Popen(
            [*CLI, *args, "--reconnect-wait", wait],
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            # Dropped while the model thinks about step 2, and back before it answers: the scripted model goes on
            # with its script whatever the screen shows, so an action the drop cut off (recorded failed, as it must
            # be) would make it miss a step a real model would take again.
            if gone_s < float(wait):
                server.turn_delays_ms[2] = int(gone_s * 1000) + 1000
            limit = time.monotonic() + 60
            while proc.poll() is None and time.monotonic() < limit:
                if 2 not in server.turn_delays_ms if gone_s < float(wait) else _recorded_steps(db) >= 2:
                    break  # step 2's question is with the model, which waits
                time.sleep(0.002)
            assert proc.poll() is None, proc.communicate()
            farm.drop(serial, gone_s)
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == code, (out, err)
    assert "Traceback" not in err and "Traceback" not in out, err
    assert f"outcome: {outcome}" in out, out
    if outcome == "finished":
        assert [m["text"] for m in farm.phones[serial].state.messages_sent] == ["晚上好"], out
    else:
        lines = [line for line in out.splitlines() if line.startswith("detail:")]
        assert (
            len(lines) == 1 and f"phone {serial} left the adb bus and was not back within 2 s" in lines[0]
        ), out


def test_a_farm_phone_that_blinks_keeps_its_task(sim_farm, tmp_path):
    from mobile_agent.farm.scheduler.jobs import SchedulerConfig
    from mobile_agent.farm.scheduler.runner import ModelSettings
    from mobile_agent.store import phones as phone_db
    from mobile_agent.store import queue_status as qs
    from tests.integration.test_farm_faults import (
        result_episodes,
        run_library_batch,
        scripts,
        write_devices,
        write_tasks,
    )

    farm = sim_farm(2)
    devices = write_devices(tmp_path / "devices.yaml", farm)
    tasks = write_tasks(tmp_path / "tasks.jsonl", 6)
    victim, victim_task = farm.serials[0], []

    def on_event(event) -> None:
        if event.kind == "step" and event.phone == victim and event.step == 1 and not victim_task:
            victim_task.append(event.task_id)
            farm.drop(victim, 3.0)

    config = SchedulerConfig(poll_s=0.05, heartbeat_s=1, quarantine_after=1, probe_every_s=300, stall_s=30)
    with (
        TrajectoryStore.open(root=tmp_path / "replays") as store,
        SimModelServer(family="ui-venus-2", scripts=[scripts(tmp_path)], latency_ms=20) as server,
    ):
        model = ModelSettings((server.base_url,), server.served_model, max_retries=1, backoff_s=0.05)
        run_id, _ = run_library_batch(store, devices, tasks, model, config, on_event, reconnect_wait_s=30)
        assert victim_task, "the phone was never dropped"
        assert qs.run_counts(store, run_id) == qs.RunCounts(done=6)
        assert set(result_episodes(store, run_id).values()) == {1}
        [task] = [t for t in qs.list_tasks(store, run_id) if t.id == victim_task[0]]
        assert task.attempts == 1 and task.device_failures == 0 and task.outcome == "finished"
        assert not any(i.quarantined for i in phone_db.farm_devices(store))
        assert store.check_integrity() == []
