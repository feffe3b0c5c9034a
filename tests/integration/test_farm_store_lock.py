"""A SQLite store locked by another process for longer than a worker's lease (but within the outage bound): the
episode in flight waits at its next record, and once its claim could lapse it stops without touching the phone
again; when the lock goes, the worker ends that episode as interrupted, gives the task back and runs it again to
the end: the task done exactly once, nothing left claimed or running."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from mobile_agent.farm.inventory import discover, load_inventory
from mobile_agent.farm.scheduler.jobs import SchedulerConfig
from mobile_agent.farm.scheduler.pool import WorkerPool
from mobile_agent.farm.scheduler.runner import AgentRunner, EpisodeDefaults, ModelSettings
from mobile_agent.farm.scheduler.runs import submit
from mobile_agent.farm.tasks import ResetMode
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store import engine as store_engine
from mobile_agent.store import queue_status as qs
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.store import TrajectoryStore
from tests.integration.inventory import inventory_file

SCRIPT = """\
task: lock drill
turns:
  - action: {kind: key, key: home}
  - action: {kind: key, key: back}
  - action: {kind: finish, text: done}
"""


def test_a_lock_longer_than_the_lease_stops_the_episode_and_the_task_runs_again(
    sim_farm, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(store_engine, "SQLITE_BUSY_TIMEOUT_MS", 100)
    monkeypatch.setenv("MOBILE_AGENT_STORE_OUTAGE_S", "60")
    farm = sim_farm(1)
    devices = inventory_file(tmp_path / "devices.yaml", farm.adb_port, farm.serials[:1])
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"task": "lock drill"}\n', encoding="utf-8")
    (tmp_path / "script.yaml").write_text(SCRIPT, encoding="utf-8")
    path = tmp_path / "replays" / "mobile_agent.db"
    locked: list[float] = []

    def lock_for(seconds: float) -> None:
        holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        holder.execute("BEGIN EXCLUSIVE")
        locked.append(time.time())
        threading.Timer(seconds, lambda: (holder.execute("ROLLBACK"), holder.close())).start()

    def on_event(event) -> None:
        if event.kind == "step" and event.step == 0 and not locked:
            lock_for(6.0)  # the lease below is 4 s: the claim could lapse while the store is locked

    config = SchedulerConfig(lease_s=4, heartbeat_s=0.5, poll_s=0.05, stall_s=30)
    with (
        TrajectoryStore.open(f"sqlite:///{path}") as store,
        SimModelServer(family="ui-venus-2", scripts=[tmp_path / "script.yaml"], latency_ms=20) as model,
    ):
        run = submit(store, tasks)
        runner = AgentRunner(
            store,
            ModelSettings((model.base_url,), model.served_model),
            defaults=EpisodeDefaults(max_steps=6, timeout_s=60, reset=ResetMode.NONE),
        )
        pool = WorkerPool(
            store,
            discover(load_inventory(devices)),
            runner,
            config=config,
            run_ids=[run.id],
            on_event=on_event,
        )
        thread = threading.Thread(target=pool.run)
        thread.start()
        thread.join(90)
        runner.close()
        assert not thread.is_alive(), "the pool did not finish"
        assert locked and pool.store_failure is None

        assert qs.run_counts(store, run.id) == qs.RunCounts(done=1)
        first, second = sorted(store.list_episodes(run_id=run.id, limit=None), key=lambda e: e.started_at)
        assert first.outcome == "interrupted" and "unreachable" in (first.outcome_detail or ""), first
        # Nothing was recorded, so nothing was done, in the first episode once the store was locked.
        assert [s.index for s in store.steps(first.id)] == [0]
        assert second.status is EpisodeStatus.ENDED and second.outcome == "finished"
        assert [s.index for s in store.steps(second.id)] == [0, 1, 2]
