"""The task queue on a real PostgreSQL server: claims with FOR UPDATE SKIP LOCKED from many connections, and two
`worker` processes serving their own simulated phones from one shared queue, each task exactly once.

Server and private schema: the ``pg_url`` fixture of tests/conftest.py (env MOBILE_AGENT_TEST_PG; skips, saying
why, when the server cannot be reached).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

import pytest

from mobile_agent.farm.scheduler.jobs import outcome_failure
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


def test_two_worker_processes_share_the_queue(pg_url: str, worker_hosts) -> None:
    hosts = worker_hosts(phones_per_host=3, tasks=30, task="pg drill", script=SCRIPT)

    with hosts.queue(pg_url, latency_ms=30) as (store, run):
        workers = [hosts.worker(pg_url, path, run.id) for path in hosts.inventories]
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
