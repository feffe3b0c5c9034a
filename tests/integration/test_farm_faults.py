"""The farm under faults, on simulated phones and the simulated model:

- a phone drops off the bus mid-episode: its task is retried on another phone, the phone is quarantined and the
  batch completes;
- the model endpoint goes down for a while: episodes wait and retry instead of failing en masse;
- the batch process is killed with SIGKILL mid-run: `batch --resume RUN` completes it with no duplicate episode
  and a store that passes its integrity check.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from mobile_agent.farm.inventory import discover, load_inventory
from mobile_agent.farm.scheduler.jobs import SchedulerConfig, outcome_failure
from mobile_agent.farm.scheduler.pool import WorkerPool
from mobile_agent.farm.scheduler.runner import AgentRunner, EpisodeDefaults, ModelSettings
from mobile_agent.farm.scheduler.summary import summarize_run
from mobile_agent.farm.tasks import ResetMode
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store import phones as phone_db
from mobile_agent.store import queue as q
from mobile_agent.store import queue_status as qs
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.store import TrajectoryStore

pytestmark = pytest.mark.slow

SCRIPT = """\
task: fault drill
turns:
  - action: {kind: key, key: home}
  - action: {kind: key, key: home}
  - action: {kind: key, key: home}
  - action: {kind: finish, text: done}
"""


def write_devices(path: Path, farm) -> Path:
    data = {
        "adb": f"127.0.0.1:{farm.adb_port}",
        "discover": False,
        "devices": [{"serial": s} for s in farm.serials],
    }
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def write_tasks(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"task": f"fault drill #{i}"}) + "\n" for i in range(n)), "utf-8")
    return path


def scripts(tmp_path: Path) -> Path:
    path = tmp_path / "script.yaml"
    path.write_text(SCRIPT, encoding="utf-8")
    return path


def result_episodes(store: TrajectoryStore, run_id: str) -> Counter[int]:
    counts: Counter[int] = Counter()
    for episode in store.list_episodes(run_id=run_id, limit=None):
        if episode.outcome is not None and outcome_failure(episode.outcome) is None:
            counts[episode.meta["queue_task"]] += 1
    return counts


def run_library_batch(
    store,
    devices: Path,
    tasks: Path,
    model: ModelSettings,
    config: SchedulerConfig,
    on_event,
    reconnect_wait_s: float = 2,
):
    from mobile_agent.farm.scheduler.runs import submit

    run = submit(store, tasks)
    phones = discover(load_inventory(devices))
    runner = AgentRunner(
        store,
        model,
        # a phone that left the bus is waited for 2 s by default (not 60): these tests drop one for good
        defaults=EpisodeDefaults(
            max_steps=8, timeout_s=60, reset=ResetMode.NONE, reconnect_wait_s=reconnect_wait_s
        ),
    )
    pool = WorkerPool(
        store,
        phones,
        runner,
        config=config,
        run_ids=[run.id],
        on_event=on_event,
        endpoint_probe=runner.probe_endpoint,
    )
    worker = threading.Thread(target=pool.run)
    worker.start()
    worker.join(120)
    runner.close()
    assert not worker.is_alive(), "the batch did not finish"
    return run.id, pool


def test_a_phone_dropped_mid_episode_is_retried_elsewhere_and_quarantined(sim_farm, tmp_path: Path) -> None:
    farm = sim_farm(4)
    devices = write_devices(tmp_path / "devices.yaml", farm)
    tasks = write_tasks(tmp_path / "tasks.jsonl", 16)
    victim = farm.serials[0]
    dropped = threading.Event()
    victim_task: list[int] = []

    def on_event(event) -> None:
        if event.kind == "step" and event.phone == victim and event.step == 1 and not dropped.is_set():
            dropped.set()
            victim_task.append(event.task_id)
            farm.drop(victim, 60)  # off the bus for the rest of the test

    config = SchedulerConfig(poll_s=0.05, heartbeat_s=1, quarantine_after=2, probe_every_s=300, stall_s=10)
    with (
        TrajectoryStore.open(root=tmp_path / "replays") as store,
        SimModelServer(family="ui-venus-2", scripts=[scripts(tmp_path)], latency_ms=20) as server,
    ):
        model = ModelSettings((server.base_url,), server.served_model, max_retries=1, backoff_s=0.05)
        run_id, pool = run_library_batch(store, devices, tasks, model, config, on_event)
        assert dropped.is_set()
        counts = qs.run_counts(store, run_id)
        assert counts == qs.RunCounts(done=16), counts
        per_task = result_episodes(store, run_id)
        assert len(per_task) == 16 and set(per_task.values()) == {1}

        [task] = [t for t in qs.list_tasks(store, run_id) if t.id == victim_task[0]]
        assert task.attempts == 2 and task.device_failures == 1 and task.outcome == "finished"
        attempts = [a for a in qs.list_attempts(store, run_id) if a.task_id == task.id]
        assert attempts[0].failure is q.Failure.DEVICE and attempts[0].device.endswith(victim)
        assert not attempts[1].device.endswith(victim) and attempts[1].failure is None
        lost = store.episode(attempts[0].episode_id)
        assert lost.outcome.startswith("error:") and lost.device == victim

        info = next(i for i in phone_db.farm_devices(store) if i.serial == victim)
        assert info.quarantined, info
        assert all(not i.quarantined for i in phone_db.farm_devices(store) if i.serial != victim)
        summary = summarize_run(store, run_id)
        assert summary.quarantined == [victim] and summary.retries == 1
        assert victim not in summary.by_phone or sum(summary.by_phone[victim].values()) < 16
        assert store.check_integrity() == []


def test_model_endpoint_outage_waits_and_retries(sim_farm, tmp_path: Path, free_tcp_port: int) -> None:
    farm = sim_farm(4)
    devices = write_devices(tmp_path / "devices.yaml", farm)
    tasks = write_tasks(tmp_path / "tasks.jsonl", 20)
    outage_s = 3.0
    script = scripts(tmp_path)
    servers = [
        SimModelServer(family="ui-venus-2", scripts=[script], port=free_tcp_port, latency_ms=20).start()
    ]
    outage = {"started": 0.0, "ended": 0.0}

    def take_down() -> None:
        servers[0].close()
        outage["started"] = time.monotonic()
        time.sleep(outage_s)
        servers.append(SimModelServer(family="ui-venus-2", scripts=[script], port=free_tcp_port).start())
        outage["ended"] = time.monotonic()
        outage["ended_wall"] = time.time()

    done = []
    outage_thread = threading.Thread(target=take_down)

    def on_event(event) -> None:
        if event.kind == "done":
            done.append(event)
            if len(done) == 4:
                outage_thread.start()

    config = SchedulerConfig(poll_s=0.05, heartbeat_s=1, endpoint_backoff_s=0.3, endpoint_backoff_max_s=1.0)
    try:
        with TrajectoryStore.open(root=tmp_path / "replays") as store:
            model = ModelSettings(
                (servers[0].base_url,),
                servers[0].served_model,
                max_retries=1,
                backoff_s=0.05,
                max_backoff_s=0.1,
            )
            run_id, pool = run_library_batch(store, devices, tasks, model, config, on_event)
            outage_thread.join(10)
            assert outage["ended"] > outage["started"] > 0
            all_tasks = qs.list_tasks(store, run_id)
            assert [t.state for t in all_tasks] == [q.TaskState.DONE] * 20
            assert {t.outcome for t in all_tasks} == {"finished"}
            per_task = result_episodes(store, run_id)
            assert len(per_task) == 20 and set(per_task.values()) == {1}
            endpoint_failures = sum(t.endpoint_failures for t in all_tasks)
            assert 1 <= endpoint_failures <= 8, "phones must pause while the endpoint is down, not burn tasks"
            assert all(t.device_failures == 0 for t in all_tasks)
            unavailable = store.list_episodes(run_id=run_id, outcome="error:model_unavailable", limit=None)
            assert len(unavailable) == endpoint_failures
            assert not any(i.quarantined for i in phone_db.farm_devices(store))  # not the phones' fault
            # Nothing finished while the endpoint was down (beyond episodes past their last model call); the rest
            # finished after it came back.
            assert sum(e.at >= outage["ended_wall"] for e in done) >= 10
            assert store.check_integrity() == []
    finally:
        for server in servers:
            server.close()


def test_kill_9_mid_batch_then_resume(sim_farm, tmp_path: Path) -> None:
    farm = sim_farm(6)
    devices = write_devices(tmp_path / "devices.yaml", farm)
    tasks = write_tasks(tmp_path / "tasks.jsonl", 24)
    db = f"sqlite:///{tmp_path / 'replays' / 'farm.db'}"
    with SimModelServer(family="ui-venus-2", scripts=[scripts(tmp_path)], latency_ms=60) as server:
        common = ["--devices", str(devices), "--db", db, "--reset", "home", "--json"]
        batch = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mobile_agent.cli.farm",
                "batch",
                str(tasks),
                "--base-url",
                server.base_url,
                *common,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        try:
            with TrajectoryStore.open(db) as store:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    runs = store.list_runs()
                    if runs:
                        counts = qs.run_counts(store, runs[0].id)
                        if counts.done >= 8 and counts.claimed >= 3:
                            break
                    time.sleep(0.05)
                else:
                    pytest.fail("the batch made no progress")
                os.kill(batch.pid, signal.SIGKILL)
                batch.wait(10)
                run_id = runs[0].id
                before = qs.run_counts(store, run_id)
                assert before.claimed >= 1 and before.open >= 1  # killed with work in flight
                left_running = store.list_episodes(run_id=run_id, status=EpisodeStatus.RUNNING, limit=None)
                assert left_running
        finally:
            if batch.poll() is None:
                batch.kill()
                batch.wait()

        resumed = subprocess.run(
            [sys.executable, "-m", "mobile_agent.cli.farm", "batch", "--resume", run_id, *common],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    summary = json.loads(resumed.stdout)
    assert summary["tasks"]["done"] == 24 and summary["by_outcome"] == {"finished": 24}
    with TrajectoryStore.open(db) as store:
        per_task = result_episodes(store, run_id)
        assert len(per_task) == 24 and set(per_task.values()) == {1}  # nothing redone, nothing duplicated
        episodes = store.list_episodes(run_id=run_id, limit=None)
        assert all(e.status is EpisodeStatus.ENDED for e in episodes)
        interrupted = [e for e in episodes if e.outcome == "interrupted"]
        assert {e.id for e in interrupted} >= {e.id for e in left_running}
        assert len(episodes) == 24 + len(interrupted)
        assert store.run(run_id).status.value == "ended"
        assert store.check_integrity() == []
        assert all(not info.busy() for info in phone_db.farm_devices(store))
