"""The task queue on a real PostgreSQL server: claims with FOR UPDATE SKIP LOCKED from many connections, and two
`worker` processes serving their own simulated phones from one shared queue, each task exactly once.

Server and private schema: the ``pg_url`` fixture of tests/conftest.py (env MOBILE_AGENT_TEST_PG; skips, saying
why, when the server cannot be reached).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest
import yaml

from mobile_agent.farm.scheduler.jobs import outcome_failure
from mobile_agent.farm.scheduler.runs import submit
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store import queue as q
from mobile_agent.store import queue_status as qs
from mobile_agent.store.store import TrajectoryStore

pytestmark = pytest.mark.postgres

SCRIPT = """\
task: pg drill
turns:
  - action: {kind: key, key: home}
  - action: {kind: finish, text: done}
"""


def test_skip_locked_claims_are_exactly_once(pg_url: str, tmp_path: Path) -> None:
    with TrajectoryStore.open(pg_url, root=tmp_path) as store:
        run = store.create_run("pg")
        q.enqueue_tasks(store, run.id, [q.NewTask(i, f"t:{i}", f"task {i}") for i in range(150)])
        taken: list[int] = []
        lock = threading.Lock()

        def worker(name: str) -> None:
            with TrajectoryStore.open(pg_url, root=tmp_path) as mine:
                while (claim := q.claim_task(mine, worker=name, device=name, tags=set())) is not None:
                    assert q.finish_task(mine, claim, episode_id=None, outcome="finished")
                    with lock:
                        taken.append(claim.task_id)

        threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert len(taken) == 150 and len(set(taken)) == 150
        assert qs.run_counts(store, run.id) == qs.RunCounts(done=150)
        attempts = qs.list_attempts(store, run.id)
        assert len(attempts) == 150 and len({a.worker for a in attempts}) > 1


def test_two_worker_processes_share_the_queue(pg_url: str, sim_farm, tmp_path: Path) -> None:
    farm = sim_farm(6)
    inventories = []
    for index, serials in enumerate((farm.serials[:3], farm.serials[3:])):
        path = tmp_path / f"host{index}.yaml"
        data = {
            "adb": f"127.0.0.1:{farm.adb_port}",
            "discover": False,
            "devices": [{"serial": s} for s in serials],
        }
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        inventories.append(path)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"task": f"pg drill #{i}"}) + "\n" for i in range(30)), "utf-8")
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    env = {**os.environ, "MOBILE_AGENT_DATA": str(tmp_path / "shots")}

    with (
        TrajectoryStore.open(pg_url, root=tmp_path / "shots") as store,
        SimModelServer(family="ui-venus-2", scripts=[script], latency_ms=30) as model,
    ):
        run = submit(store, tasks, config={"base_url": [model.base_url], "model": model.served_model})
        workers = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "mobile_agent.cli.farm",
                    "worker",
                    "--db",
                    pg_url,
                    "--devices",
                    str(path),
                    "--run",
                    run.id,
                    "--reset",
                    "none",
                    "--json",
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                text=True,
                env=env,
            )
            for path in inventories
        ]
        outputs = []
        try:
            for worker in workers:
                out, err = worker.communicate(timeout=120)
                assert worker.returncode == 0, err[-3000:]
                outputs.append(json.loads(out))
        finally:
            for worker in workers:
                if worker.poll() is None:
                    worker.kill()
                    worker.wait()

        assert qs.run_counts(store, run.id) == qs.RunCounts(done=30)
        tasks_done = qs.list_tasks(store, run.id)
        assert all(t.attempts == 1 and t.outcome == "finished" for t in tasks_done)
        results: Counter[int] = Counter()
        by_worker: Counter[str] = Counter()
        for episode in store.list_episodes(run_id=run.id, limit=None):
            if outcome_failure(episode.outcome) is None:
                results[episode.meta["queue_task"]] += 1
                by_worker[episode.meta["worker"]] += 1
        assert len(results) == 30 and set(results.values()) == {1}
        assert set(by_worker) == {o["worker"] for o in outputs} and min(by_worker.values()) >= 3
        assert store.check_integrity() == []
