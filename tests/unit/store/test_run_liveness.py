"""A run recorded as running that no live worker serves reads as stalled (store/run_liveness), from the phones'
leases and the tasks' claims the store keeps; nothing is written to tell it."""

from __future__ import annotations

from datetime import timedelta

from mobile_agent.store import phones as phone_db
from mobile_agent.store import queue as q
from mobile_agent.store.convert import now_utc
from mobile_agent.store.run_liveness import shown_status, stalled_runs
from mobile_agent.store.store import TrajectoryStore


def _run(store: TrajectoryStore, n: int = 3) -> str:
    run = store.create_run("liveness", {})
    q.enqueue_tasks(store, run.id, [q.NewTask(i, f"t:{i}", f"task {i}") for i in range(n)])
    return run.id


def _lease(store: TrajectoryStore, serial: str, worker: str) -> str:
    key = f"127.0.0.1:15037/{serial}"
    assert phone_db.lease_device(store, key, serial, "127.0.0.1:15037", worker=worker, lease_s=60)
    return key


def test_a_run_nobody_serves_is_stalled_until_a_worker_leases_a_phone(store: TrajectoryStore) -> None:
    run_id = _run(store)
    assert stalled_runs(store, [run_id]) == {run_id}  # submitted, no worker anywhere
    _lease(store, "p1", "host:1:aa")
    assert stalled_runs(store, [run_id]) == set()  # a live worker serves every open run
    assert stalled_runs(store, [run_id], now_utc() + timedelta(seconds=120)) == {run_id}  # its lease lapsed


def test_the_runs_own_workers_decide_once_they_claimed_its_tasks(store: TrajectoryStore) -> None:
    run_id = _run(store)
    key = _lease(store, "p1", "host:1:aa")
    claim = q.claim_task(store, worker="host:1:aa", device=key, tags=(), run_ids=[run_id], lease_s=60)
    assert claim is not None
    assert q.finish_task(store, claim, episode_id=None, outcome="finished")
    assert stalled_runs(store, [run_id]) == set()  # its worker still holds its phone
    phone_db.release_device(store, key, worker="host:1:aa")  # the batch stopped with tasks left
    _lease(store, "p2", "host:2:bb")  # another worker, serving another run
    assert stalled_runs(store, [run_id]) == {run_id}
    assert shown_status("running", True) == "stalled" and shown_status("running", False) == "running"

    other = q.claim_task(store, worker="host:2:bb", device="k2", tags=(), run_ids=[run_id], lease_s=60)
    assert other is not None  # a live claim on the run: served
    assert stalled_runs(store, [run_id]) == set()
    later = now_utc() + timedelta(seconds=120)  # the claim and every lease lapsed: the workers are gone
    assert stalled_runs(store, [run_id], later) == {run_id}


def test_an_ended_run_or_one_without_open_tasks_is_never_stalled(store: TrajectoryStore) -> None:
    ended = _run(store)
    store.finish_run(ended, "ended")
    empty = store.create_run("no tasks", {}).id
    assert stalled_runs(store, [ended, empty]) == set()
    assert shown_status("ended", True) == "ended"
