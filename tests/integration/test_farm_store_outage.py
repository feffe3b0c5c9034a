"""The farm survives its database: a PostgreSQL restart (`pg_ctl restart -m fast`, every connection cut), or the
server down for a few seconds, in the middle of a batch served by two `worker` processes. Both keep running: episodes in flight wait at their next record
and continue, every task ends done exactly once, nothing stays claimed or running, no traceback is printed, and
each worker says in one line that the store went and in one that it came back.

The database is a private PostgreSQL cluster this test starts itself (tests/integration/pg_cluster.py; skips,
saying why, without the server binaries)."""

from __future__ import annotations

import time
from collections import Counter

import pytest
from pg_cluster import private_cluster

from mobile_agent.farm.scheduler.jobs import outcome_failure
from mobile_agent.store import queue_status as qs
from mobile_agent.store.records import EpisodeStatus

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

SCRIPT = """\
task: outage drill
turns:
  - action: {kind: key, key: back}
  - action: {kind: key, key: home}
  - action: {kind: finish, text: done}
"""


def _restart(pg) -> None:
    pg.restart_fast()


def _down_for_a_while(pg) -> None:
    pg.stop()
    time.sleep(6)  # connections refused meanwhile; well within the workers' bound and their leases
    pg.start()


@pytest.mark.parametrize("outage", [_restart, _down_for_a_while], ids=["restart", "down-6s"])
def test_a_postgres_outage_mid_batch_ends_with_every_task_done_once(worker_hosts, outage) -> None:
    hosts = worker_hosts(phones_per_host=2, tasks=16, task="outage drill", script=SCRIPT)
    with private_cluster() as pg, hosts.queue(pg.url, latency_ms=150) as (store, run):
        workers = [hosts.worker(pg.url, inventory, run.id) for inventory in hosts.inventories]
        try:
            deadline = time.monotonic() + 60
            while qs.run_counts(store, run.id).done < 3:  # mid-batch: some done, most to do
                assert time.monotonic() < deadline, "the workers finished no task"
                time.sleep(0.1)
            outage(pg)
            outputs = [w.communicate(timeout=120) for w in workers]
        finally:
            for proc in workers:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()

        for proc, (_out, err) in zip(workers, outputs, strict=True):
            assert proc.returncode == 0, err[-3000:]
            assert "Traceback" not in err, err[-3000:]
            # One line when the store went and one when it returned. A restart is over in well under a second:
            # a worker that had nothing in flight then reconnects without noticing, and says nothing.
            went = err.count("store unreachable")
            assert went == 1 or (went == 0 and outage is _restart), err[-3000:]
            assert err.count("store back after") == went, err[-3000:]

        store.outage.back()  # this test's own store saw the restart too
        assert qs.run_counts(store, run.id) == qs.RunCounts(done=16)
        ended = store.list_episodes(run_id=run.id, limit=None)
        assert all(e.status is EpisodeStatus.ENDED for e in ended)  # nothing left running
        finished = Counter(e.meta["queue_task"] for e in ended if outcome_failure(e.outcome) is None)
        assert len(finished) == 16 and max(finished.values()) == 1  # every task exactly once
        assert store.check_integrity() == []


def test_past_its_bound_an_outage_stops_the_worker_cleanly_and_others_recover_its_tasks(worker_hosts) -> None:
    hosts = worker_hosts(phones_per_host=2, tasks=8, task="outage drill", script=SCRIPT)
    hosts.env["MOBILE_AGENT_STORE_OUTAGE_S"] = "3"
    with private_cluster() as pg, hosts.queue(pg.url, latency_ms=150) as (store, run):
        first = hosts.worker(pg.url, hosts.inventories[0], run.id)
        try:
            deadline = time.monotonic() + 60
            while qs.run_counts(store, run.id).done < 2:
                assert time.monotonic() < deadline, "the worker finished no task"
                time.sleep(0.1)
            pg.stop()  # and it stays down past the workers' bound of 3 s
            _out, err = first.communicate(timeout=60)
        finally:
            if first.poll() is None:
                first.kill()
                first.wait()
        assert first.returncode == 1, err[-3000:]  # stopped by itself, saying why in one line
        assert "Traceback" not in err and "was unreachable for 3 s" in err, err[-3000:]
        assert err.count("store unreachable") == 1, err[-3000:]

        pg.start()
        second = hosts.worker(pg.url, hosts.inventories[1], run.id)  # the first one's tasks are recoverable
        out, err = second.communicate(timeout=120)
        assert second.returncode == 0, err[-3000:]
        store.outage.back()
        assert qs.run_counts(store, run.id) == qs.RunCounts(done=8)
        ended = store.list_episodes(run_id=run.id, limit=None)
        assert all(e.status is EpisodeStatus.ENDED for e in ended)
        finished = Counter(e.meta["queue_task"] for e in ended if outcome_failure(e.outcome) is None)
        assert len(finished) == 8 and max(finished.values()) == 1
