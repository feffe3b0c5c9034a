"""Two `worker` processes on one PostgreSQL queue; one is killed with `kill -9` mid-run. The other takes over its
claimed tasks (and a restarted worker would too) without anyone running `batch --resume`: every task ends done,
exactly once, and the dead worker's episodes end as interrupted.

Server and private schema: the ``pg_url`` fixture of tests/conftest.py (skips, saying why, without a server)."""

from __future__ import annotations

import signal
import time
from collections import Counter

import pytest

from mobile_agent.farm.scheduler.jobs import outcome_failure
from mobile_agent.store import queue_status as qs
from mobile_agent.store.records import EpisodeStatus

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

SCRIPT = """\
task: takeover drill
turns:
  - action: {kind: key, key: home}
  - action: {kind: key, key: home}
  - action: {kind: finish, text: done}
"""


def test_a_live_worker_takes_over_the_tasks_of_a_killed_one(pg_url: str, worker_hosts) -> None:
    hosts = worker_hosts(phones_per_host=2, tasks=16, task="takeover drill", script=SCRIPT)

    with hosts.queue(pg_url, latency_ms=150) as (store, run):
        victim = hosts.worker(pg_url, hosts.inventories[0], run.id)
        survivor = hosts.worker(pg_url, hosts.inventories[1], run.id)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                running = store.list_episodes(run_id=run.id, status=EpisodeStatus.RUNNING, limit=None)
                if any(e.meta.get("worker", "").split(":")[1] == str(victim.pid) for e in running):
                    break
                time.sleep(0.05)
            else:
                pytest.fail("the first worker started no episode")
            victim.send_signal(signal.SIGKILL)
            victim.wait(10)
            out, err = survivor.communicate(timeout=120)
            assert survivor.returncode == 0, err[-3000:]
        finally:
            for proc in (victim, survivor):
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()

        assert qs.run_counts(store, run.id) == qs.RunCounts(done=16)
        results: Counter[int] = Counter()
        for episode in store.list_episodes(run_id=run.id, limit=None):
            assert episode.status is EpisodeStatus.ENDED
            if outcome_failure(episode.outcome) is None:
                results[episode.meta["queue_task"]] += 1
        assert len(results) == 16 and set(results.values()) == {1}  # every task exactly once
        killed = [
            e
            for e in store.list_episodes(run_id=run.id, limit=None)
            if e.meta.get("worker", "").split(":")[1] == str(victim.pid) and e.outcome == "interrupted"
        ]
        assert killed  # the dead worker's episode in flight was ended, with the reason
        assert store.check_integrity() == []
