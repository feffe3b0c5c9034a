"""The durable queue on SQLite: idempotent enqueue, claim order and requirements, exactly-once claims under
concurrency, retry budgets, stale claims, recovery of dead workers' tasks, phone leases and quarantine."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from sqlalchemy import update

from mobile_agent.store import phones as phone_db
from mobile_agent.store import queue as q
from mobile_agent.store import queue_status as qs
from mobile_agent.store.convert import now_utc
from mobile_agent.store.integrity import discard_unrecorded_files
from mobile_agent.store.store import TrajectoryStore


def tasks(n: int, **kw) -> list[q.NewTask]:
    return [q.NewTask(seq=i, label=f"t:{i}", task=f"task {i}", **kw) for i in range(n)]


def claim(store: TrajectoryStore, device: str = "dev-a", tags=(), **kw) -> q.Claim | None:
    return q.claim_task(store, worker="w1", device=device, tags=set(tags), **kw)


def test_enqueue_is_idempotent_per_seq(store: TrajectoryStore) -> None:
    run = store.create_run("r")
    assert q.enqueue_tasks(store, run.id, tasks(3)) == 3
    assert q.enqueue_tasks(store, run.id, tasks(5)) == 2
    assert qs.run_counts(store, run.id) == qs.RunCounts(pending=5)


def test_claim_order_priority_then_file_order_and_runs(store: TrajectoryStore) -> None:
    run = store.create_run("r")
    q.enqueue_tasks(
        store,
        run.id,
        [
            q.NewTask(0, "a", "low"),
            q.NewTask(1, "b", "high", priority=5),
            q.NewTask(2, "c", "low too"),
        ],
    )
    other = store.create_run("other")
    q.enqueue_tasks(store, other.id, [q.NewTask(0, "z", "elsewhere", priority=99)])
    got = [claim(store, run_ids=[run.id]).task for _ in range(3)]
    assert got == ["high", "low", "low too"]
    assert claim(store, run_ids=[run.id]) is None
    assert claim(store).task == "elsewhere"  # no run filter: every run


def test_requirements_are_a_subset_of_the_phone_tags(store: TrajectoryStore) -> None:
    run = store.create_run("r")
    q.enqueue_tasks(
        store,
        run.id,
        [
            q.NewTask(0, "a", "needs wechat", requires=("apps:com.tencent.mm",)),
            q.NewTask(1, "b", "needs xiaomi+wechat", requires=("apps:com.tencent.mm", "vendor:xiaomi")),
        ],
    )
    assert claim(store, tags={"vendor:xiaomi"}) is None
    assert qs.count_servable(store, tags={"vendor:xiaomi"}) == 0
    assert qs.count_servable(store, tags={"apps:com.tencent.mm", "vendor:xiaomi"}) == 2
    first = claim(store, tags={"apps:com.tencent.mm"})
    assert first.task == "needs wechat"
    assert claim(store, tags={"apps:com.tencent.mm"}) is None
    assert claim(store, tags={"apps:com.tencent.mm", "vendor:xiaomi", "x"}).task == "needs xiaomi+wechat"


def test_concurrent_claims_take_each_task_exactly_once(tmp_path) -> None:
    with TrajectoryStore.open(root=tmp_path / "db") as store:
        run = store.create_run("r")
        q.enqueue_tasks(store, run.id, tasks(120))
        taken: list[int] = []
        lock = threading.Lock()

        def worker(name: str) -> None:
            # A second store on the same file: like another process, it has its own engine and connections.
            with TrajectoryStore.open(root=tmp_path / "db") as mine:
                while True:
                    c = q.claim_task(mine, worker=name, device=name, tags=set())
                    if c is None:
                        return
                    assert q.finish_task(mine, c, episode_id=None, outcome="finished")
                    with lock:
                        taken.append(c.task_id)

        threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert sorted(taken) == sorted(set(taken)) and len(taken) == 120
        assert qs.run_counts(store, run.id) == qs.RunCounts(done=120)


def test_device_failures_retry_elsewhere_until_the_budget_is_spent(store: TrajectoryStore) -> None:
    run = store.create_run("r")
    q.enqueue_tasks(store, run.id, tasks(2))
    first = claim(store, device="dev-a")
    state = q.retry_task(
        store,
        first,
        failure=q.Failure.DEVICE,
        episode_id=None,
        outcome="error:device_lost",
        max_device_failures=1,
    )
    assert state is q.TaskState.PENDING
    # The phone that failed it gets the other task first; another phone gets the failed one.
    assert claim(store, device="dev-a").task_id != first.task_id
    again = claim(store, device="dev-b")
    assert again.task_id == first.task_id and again.attempt == 2
    state = q.retry_task(
        store,
        again,
        failure=q.Failure.DEVICE,
        episode_id="e2",
        outcome="error:device_lost",
        max_device_failures=1,
    )
    assert state is q.TaskState.FAILED
    [row] = [t for t in qs.list_tasks(store, run.id) if t.id == first.task_id]
    assert row.outcome == "error:device_lost" and row.device_failures == 2 and row.attempts == 2
    attempts = [a for a in qs.list_attempts(store, run.id) if a.task_id == first.task_id]
    assert [a.failure for a in attempts] == [q.Failure.DEVICE, q.Failure.DEVICE]
    assert [a.device for a in attempts] == ["dev-a", "dev-b"]


def test_endpoint_and_interrupt_failures_have_their_own_budgets(store: TrajectoryStore) -> None:
    run = store.create_run("r")
    q.enqueue_tasks(store, run.id, tasks(1))
    for _ in range(5):
        c = claim(store)
        assert q.retry_task(
            store, c, failure=q.Failure.INTERRUPTED, episode_id=None, outcome="interrupted"
        ) is (q.TaskState.PENDING)
    c = claim(store)
    assert (
        q.retry_task(
            store,
            c,
            failure=q.Failure.ENDPOINT,
            episode_id=None,
            outcome="error:model_unavailable",
            delay_s=60,
        )
        is q.TaskState.PENDING
    )
    assert claim(store) is None  # not before the endpoint pause is over
    [row] = qs.list_tasks(store, run.id)
    assert row.endpoint_failures == 1 and row.device_failures == 0 and row.attempts == 6


def test_a_stale_claim_changes_nothing(store: TrajectoryStore) -> None:
    run = store.create_run("r")
    q.enqueue_tasks(store, run.id, tasks(1))
    old = claim(store, device="dev-a", lease_s=60)
    with store.write_session() as session:  # the lease lapses
        session.execute(update(q.QueueTaskRow).values(lease_until=now_utc() - timedelta(seconds=1)))
    [back] = q.reclaim_tasks(store, run_ids=[run.id])
    assert back.task_id == old.task_id and not back.settled
    new = claim(store, device="dev-b")
    assert not q.finish_task(store, old, episode_id="late", outcome="finished")
    assert q.retry_task(store, old, failure=q.Failure.DEVICE, episode_id=None, outcome="x") is None
    assert q.renew_claims(store, [old], 60) == 0 and q.renew_claims(store, [new], 60) == 1
    assert q.finish_task(store, new, episode_id="e", outcome="finished")
    [row] = qs.list_tasks(store, run.id)
    assert row.episode_id == "e" and row.state is q.TaskState.DONE


def test_reclaim_dead_workers_and_settle_finished_attempts(store: TrajectoryStore) -> None:
    run = store.create_run("r")
    q.enqueue_tasks(store, run.id, tasks(3))
    a = q.claim_task(store, worker="dead", device="d1", tags=set())
    b = q.claim_task(store, worker="dead", device="d2", tags=set())
    c = q.claim_task(store, worker="alive", device="d3", tags=set())
    assert qs.claimed_workers(store, [run.id]) == {"dead", "alive"}
    back = q.reclaim_tasks(
        store,
        run_ids=[run.id],
        dead_workers={"dead"},
        results={(b.task_id, b.attempt): ("ep-b", "finished", None)},
    )
    assert {(r.task_id, r.settled) for r in back} == {(a.task_id, False), (b.task_id, True)}
    states = {t.id: t for t in qs.list_tasks(store, run.id)}
    assert states[a.task_id].state is q.TaskState.PENDING
    assert states[b.task_id].state is q.TaskState.DONE and states[b.task_id].episode_id == "ep-b"
    assert states[c.task_id].state is q.TaskState.CLAIMED
    assert qs.open_run_ids(store) == [run.id]


def test_phone_leases(store: TrajectoryStore) -> None:
    assert phone_db.lease_device(store, "s/p1", "p1", "s", worker="w1", lease_s=60)
    assert phone_db.lease_device(store, "s/p1", "p1", "s", worker="w1", lease_s=60)  # renewal
    assert not phone_db.lease_device(store, "s/p1", "p1", "s", worker="w2", lease_s=60)
    [info] = phone_db.farm_devices(store)
    assert info.busy() and info.worker == "w1"
    phone_db.release_device(store, "s/p1", worker="w2")  # not the holder: no effect
    assert phone_db.farm_device(store, "s/p1").worker == "w1"
    phone_db.release_device(store, "s/p1", worker="w1")
    assert phone_db.lease_device(store, "s/p1", "p1", "s", worker="w2", lease_s=0.0)
    # w2's lease already lapsed
    assert phone_db.lease_device(store, "s/p1", "p1", "s", worker="w3", lease_s=60)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_quarantine_after_k_consecutive_failures(store: TrajectoryStore, k: int) -> None:
    def record(ok: bool) -> phone_db.FarmDeviceInfo:
        return phone_db.record_device_result(store, "s/p", "p", "s", ok=ok, reason="lost", quarantine_after=k)

    record(False)
    record(True)  # a success resets the count
    for _ in range(k - 1):
        assert not record(False).quarantined
    info = record(False)
    assert info.quarantined and "lost" in info.quarantine_reason and info.consecutive_failures == k
    phone_db.postpone_probe(store, "s/p", probe_after_s=5, reason="probe failed: offline")
    assert phone_db.farm_device(store, "s/p").quarantine_reason == "probe failed: offline"
    assert not record(True).quarantined


def test_discard_unrecorded_files(store: TrajectoryStore) -> None:
    from mobile_agent.actions import Action, Outcome
    from mobile_agent.store.records import StepRecord

    episode = store.start_episode("t", device="d", family="f", model="m")
    store.record_step(episode.id, StepRecord(index=0, action=Action.wait()), screenshot=_jpeg())
    folder = store.root / episode.id
    (folder / "001.jpg").write_bytes(_jpeg())  # written, row never committed (killed)
    (folder / ".tmp-abc").write_bytes(b"half")
    store.finish_episode(episode.id, Outcome.INTERRUPTED)
    assert len(store.check_integrity()) == 2
    assert discard_unrecorded_files(store, episode.id) == [
        f"{episode.id}/.tmp-abc",
        f"{episode.id}/001.jpg",
    ]
    assert store.check_integrity() == []


def _jpeg() -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (8, 8), (1, 2, 3)).save(out, format="JPEG")
    return out.getvalue()
