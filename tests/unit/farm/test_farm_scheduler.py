"""The worker pool with fake phones and a fake runner: exactly-once completion, retries on another phone,
quarantine, endpoint outages, clean stop, recovery after a crash, and the run summary."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from farm_fakes import FakeRunner, make_phones

from mobile_agent.actions import Outcome
from mobile_agent.farm.scheduler.endpoint import EndpointGate
from mobile_agent.farm.scheduler.jobs import SchedulerConfig, outcome_failure
from mobile_agent.farm.scheduler.pool import WorkerPool
from mobile_agent.farm.scheduler.recovery import recover_run
from mobile_agent.farm.scheduler.summary import summarize_run
from mobile_agent.farm.scheduler.worker_ids import worker_is_dead
from mobile_agent.store import phones as phone_db
from mobile_agent.store import queue as q
from mobile_agent.store import queue_status as qs
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.store import TrajectoryStore

FAST = SchedulerConfig(poll_s=0.02, heartbeat_s=0.2, probe_every_s=60, endpoint_backoff_s=0.05, stall_s=2)


@pytest.fixture(autouse=True)
def phones_answer_probes(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Fake phones: probe_online says what ``broken[serial]`` says (nothing = healthy)."""
    broken: dict[str, str] = {}
    monkeypatch.setattr(
        "mobile_agent.farm.scheduler.pool.probe_online", lambda entry: broken.get(entry.serial)
    )
    return broken


def enqueue(store: TrajectoryStore, n: int, **kw) -> str:
    run = store.create_run("r")
    q.enqueue_tasks(
        store, run.id, [q.NewTask(i, f"t:{i}", f"task {i}", app=f"app{i % 2}", **kw) for i in range(n)]
    )
    return run.id


def run_pool(store, runner, phones, run_id, config=FAST, **kw) -> WorkerPool:
    events = []
    pool = WorkerPool(store, phones, runner, config=config, run_ids=[run_id], on_event=events.append, **kw)
    pool.events = events
    thread = threading.Thread(target=pool.run)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the pool did not finish"
    return pool


def final_episodes(store: TrajectoryStore, run_id: str) -> dict[int, list[str]]:
    """task id -> episodes that ended with a result (must be exactly one each)."""
    out: dict[int, list[str]] = {}
    for episode in store.list_episodes(run_id=run_id, limit=None):
        if episode.outcome is not None and outcome_failure(episode.outcome) is None:
            out.setdefault(episode.meta["queue_task"], []).append(episode.id)
    return out


def test_every_task_runs_exactly_once(store: TrajectoryStore) -> None:
    run_id = enqueue(store, 40)
    runner = FakeRunner(store)
    pool = run_pool(store, runner, make_phones(4), run_id)
    assert qs.run_counts(store, run_id) == qs.RunCounts(done=40)
    finals = final_episodes(store, run_id)
    assert len(finals) == 40 and all(len(v) == 1 for v in finals.values())
    assert len({job.phone.serial for job in runner.jobs}) == 4  # the work was spread
    summary = summarize_run(store, run_id)
    assert summary.by_outcome == {"finished": 40} and summary.retries == 0 and summary.episodes == 40
    assert summary.by_app == {"app0": {"finished": 20}, "app1": {"finished": 20}}
    assert sum(sum(v.values()) for v in summary.by_phone.values()) == 40
    assert summary.successes == 0 and summary.finished_unverified == 40  # nothing verified
    assert {e.kind for e in pool.events} >= {"claimed", "step", "done"}
    assert store.check_integrity() == []
    assert all(not info.busy() for info in phone_db.farm_devices(store))  # leases released


def test_a_lost_phone_is_retried_elsewhere_and_quarantined(store, phones_answer_probes) -> None:
    run_id = enqueue(store, 12)

    def decide(job):
        if job.phone.serial == "phone-0":
            phones_answer_probes["phone-0"] = "phone-0 is offline"
            return Outcome.error("device_lost")
        return Outcome.FINISHED

    runner = FakeRunner(store, decide)
    pool = run_pool(store, runner, make_phones(3), run_id)
    assert qs.run_counts(store, run_id) == qs.RunCounts(done=12)
    [lost] = [j for j in runner.jobs if j.phone.serial == "phone-0"]  # one failure, then quarantined
    retried = [j for j in runner.jobs if j.claim.task_id == lost.claim.task_id]
    assert [j.phone.serial for j in retried][0] == "phone-0" and retried[1].phone.serial != "phone-0"
    assert retried[1].claim.attempt == 2
    info = phone_db.farm_device(store, lost.phone.key)
    assert info.quarantined and "offline" in info.quarantine_reason
    assert any(e.kind == "quarantined" and e.phone == "phone-0" for e in pool.events)
    summary = summarize_run(store, run_id)
    assert summary.retries == 1 and summary.episodes == 13 and summary.quarantined == ["phone-0"]
    assert summary.by_outcome == {"finished": 12}


def test_a_quarantined_phone_comes_back_after_a_good_probe(store, phones_answer_probes) -> None:
    run_id = enqueue(store, 6)
    phone = make_phones(1)[0]
    phone_db.record_device_result(
        store, phone.key, phone.serial, phone.entry.adb, ok=False, quarantine_after=1, probe_after_s=0
    )
    pool = run_pool(store, FakeRunner(store), [phone], run_id)
    assert qs.run_counts(store, run_id).done == 6
    assert not phone_db.farm_device(store, phone.key).quarantined
    assert any(e.kind == "restored" for e in pool.events)


def test_model_results_are_not_retried_and_infrastructure_budget_ends(store) -> None:
    run_id = enqueue(store, 4)
    config = SchedulerConfig(**{**FAST.__dict__, "max_device_retries": 1, "quarantine_after": 99})

    def decide(job):
        return {0: Outcome.error("parse"), 1: Outcome.NEEDS_USER, 2: Outcome.error("u2_crash")}.get(
            job.claim.seq, Outcome.FINISHED
        )

    runner = FakeRunner(store, decide)
    run_pool(store, runner, make_phones(2), run_id, config=config)
    by_seq = {t.seq: t for t in qs.list_tasks(store, run_id)}
    assert (
        by_seq[0].state is q.TaskState.DONE and by_seq[0].outcome == "error:parse" and by_seq[0].attempts == 1
    )
    assert by_seq[1].outcome == "needs_user" and by_seq[1].attempts == 1
    assert by_seq[2].state is q.TaskState.FAILED and by_seq[2].attempts == 2  # N=1 retry, then given up
    assert by_seq[3].outcome == "finished"


def test_endpoint_outage_pauses_instead_of_failing(store) -> None:
    run_id = enqueue(store, 30)
    down_until = time.monotonic() + 0.6
    calls = []

    def decide(job):
        calls.append(time.monotonic())
        return Outcome.error("model_unavailable") if time.monotonic() < down_until else Outcome.FINISHED

    def probe():
        return "connection refused" if time.monotonic() < down_until else None

    runner = FakeRunner(store, decide, step_s=0.01)
    pool = run_pool(store, runner, make_phones(4), run_id, endpoint_probe=probe)
    tasks = qs.list_tasks(store, run_id)
    assert all(t.state is q.TaskState.DONE and t.outcome == "finished" for t in tasks)
    failed_attempts = sum(t.endpoint_failures for t in tasks)
    assert 1 <= failed_attempts <= 8, "the gate should stop phones from burning tasks during the outage"
    assert any(e.kind == "endpoint_down" for e in pool.events)
    assert all(t.device_failures == 0 for t in tasks)
    assert not any(info.quarantined for info in phone_db.farm_devices(store))  # not the phones' fault


def test_stop_interrupts_in_flight_episodes_and_a_new_pool_finishes(store) -> None:
    run_id = enqueue(store, 20)
    runner = FakeRunner(store, steps=50, step_s=0.01)
    pool = WorkerPool(store, make_phones(3), runner, config=FAST, run_ids=[run_id])
    pool.start()
    while len(runner.jobs) < 4:
        time.sleep(0.01)
    pool.stop(timeout=30)
    counts = qs.run_counts(store, run_id)
    assert counts.claimed == 0 and counts.done + counts.pending == 20
    interrupted = store.list_episodes(run_id=run_id, outcome="interrupted", limit=None)
    assert 1 <= len(interrupted) == len(runner.jobs) - counts.done  # every episode in flight, none other
    assert not store.list_episodes(run_id=run_id, status=EpisodeStatus.RUNNING, limit=None)

    run_pool(store, FakeRunner(store, steps=1), make_phones(3), run_id)
    assert qs.run_counts(store, run_id) == qs.RunCounts(done=20)
    finals = final_episodes(store, run_id)
    assert len(finals) == 20 and all(len(v) == 1 for v in finals.values())
    assert store.check_integrity() == []


def test_recover_run_after_a_crash(store) -> None:
    run_id = enqueue(store, 4)
    dead = f"{socket.gethostname()}:999999:abcdef"  # no such process
    assert worker_is_dead(dead) and not worker_is_dead("elsewhere:1:x")
    finished = q.claim_task(store, worker=dead, device="d1", tags=set())
    running = q.claim_task(store, worker=dead, device="d2", tags=set())

    def episode(c, end):
        e = store.start_episode(
            c.task,
            device=c.device,
            family="f",
            model="m",
            run_id=run_id,
            meta={"queue_task": c.task_id, "attempt": c.attempt, "worker": dead},
        )
        if end:
            store.finish_episode(e.id, Outcome.FINISHED)
        return e.id

    done_episode = episode(finished, True)
    left_running = episode(running, False)
    recovery = recover_run(store, run_id)
    assert recovery.settled == [finished.task_id] and recovery.requeued == [running.task_id]
    assert recovery.interrupted_episodes == [left_running]
    assert store.episode(left_running).outcome == "interrupted"
    by_id = {t.id: t for t in qs.list_tasks(store, run_id)}
    assert (
        by_id[finished.task_id].episode_id == done_episode
        and by_id[finished.task_id].state is q.TaskState.DONE
    )

    run_pool(store, FakeRunner(store), make_phones(2), run_id)
    finals = final_episodes(store, run_id)
    assert sorted(finals) == sorted(by_id) and all(len(v) == 1 for v in finals.values())
    assert store.check_integrity() == []


def test_unservable_tasks_stall_and_stop(store) -> None:
    run_id = enqueue(store, 2, requires=("vendor:nobody",))
    config = SchedulerConfig(**{**FAST.__dict__, "stall_s": 0.2})
    run_pool(store, FakeRunner(store), make_phones(2), run_id, config=config)
    assert qs.run_counts(store, run_id) == qs.RunCounts(pending=2)


@pytest.mark.parametrize(
    ("outcome", "failure"),
    [
        ("finished", None),
        ("max_steps", None),
        ("timeout", None),
        ("error:parse", None),
        ("error:unknown_app", None),
        ("interrupted", q.Failure.INTERRUPTED),
        ("error:model_unavailable", q.Failure.ENDPOINT),
        ("error:device_lost", q.Failure.DEVICE),
        ("error:u2_already_registered", q.Failure.DEVICE),
    ],
)
def test_outcome_classes(outcome: str, failure) -> None:
    assert outcome_failure(outcome) == failure


def test_endpoint_gate_probes_once_and_backs_off() -> None:
    probes = []
    answers = iter(["down", None])
    gate = EndpointGate(lambda: probes.append(1) or next(answers), backoff_s=0.02, max_backoff_s=0.1)
    stop = threading.Event()
    assert gate.wait(stop) and not probes  # up: no probe
    assert gate.report_failure() == 0.02 and gate.report_failure() == 0.04
    results = []
    threads = [threading.Thread(target=lambda: results.append(gate.wait(stop))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert results == [True] * 4 and len(probes) == 2 and not gate.down
    gate.report_failure()
    stop.set()
    assert gate.wait(stop) is False


def test_a_dead_workers_phone_lease_is_taken_over(store) -> None:
    phone = make_phones(1)[0]
    dead = f"{socket.gethostname()}:999999:dead00"
    assert phone_db.lease_device(store, phone.key, phone.serial, phone.entry.adb, worker=dead, lease_s=600)
    live_other = "elsewhere:1:abc"
    other_phone = make_phones(2)[1]
    assert phone_db.lease_device(
        store, other_phone.key, other_phone.serial, other_phone.entry.adb, worker=live_other, lease_s=600
    )
    run_id = enqueue(store, 3)
    pool = run_pool(store, FakeRunner(store), [phone, other_phone], run_id)
    assert qs.run_counts(store, run_id).done == 3
    assert {j for j in (e.phone for e in pool.events if e.kind == "done")} == {phone.serial}
    assert any(e.kind == "busy_elsewhere" and e.phone == other_phone.serial for e in pool.events)
    assert phone_db.farm_device(store, other_phone.key).worker == live_other  # a live holder keeps its phone


def test_the_pool_ends_when_its_last_task_is_reported_not_a_poll_later(store: TrajectoryStore) -> None:
    """Workers wake the pool when they report, so a drained run ends at once however long the poll is, and the
    pool does not count the run's open tasks while its own workers hold claims."""
    run_id = enqueue(store, 6)
    slow_poll = SchedulerConfig(poll_s=30, heartbeat_s=30, stall_s=60)
    counted_while_claimed = []
    real_counts = qs.run_counts

    def counting(store_, run_id_):
        counted_while_claimed.append(bool(pool._claims))
        return real_counts(store_, run_id_)

    pool = WorkerPool(
        store, make_phones(1), FakeRunner(store, step_s=0.05), config=slow_poll, run_ids=[run_id]
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("mobile_agent.farm.scheduler.pool.qs.run_counts", counting)
        thread = threading.Thread(target=pool.run)
        thread.start()
        thread.join(15)  # half the poll: only a wake-up from the workers can end it in time
    assert not thread.is_alive(), "the pool waited for its poll instead of noticing the drained run"
    assert qs.run_counts(store, run_id) == qs.RunCounts(done=6)
    assert counted_while_claimed and not any(counted_while_claimed)
