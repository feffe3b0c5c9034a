"""People in the loop of a farm, without phones: the hold budget, answer windows that expire as
needs_user:expired, answers recorded with who and when, and the worker continuing the same episode."""

from __future__ import annotations

import threading
import time

import pytest
from farm_fakes import FakeRunner, make_phones
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobile_agent.actions import Outcome
from mobile_agent.errors import UserError
from mobile_agent.farm.inbox import answer, list_waiting, os_user
from mobile_agent.farm.scheduler.holds import HoldBudget
from mobile_agent.farm.scheduler.jobs import JobResult, SchedulerConfig
from mobile_agent.farm.scheduler.pool import WorkerPool
from mobile_agent.farm.scheduler.summary import summarize_run
from mobile_agent.store import answers as answer_db
from mobile_agent.store import pauses
from mobile_agent.store import queue as q
from mobile_agent.store import queue_status as qs
from mobile_agent.store.records import StepRecord
from mobile_agent.store.store import TrajectoryStore


def config(hold_s: float, share: float = 0.25) -> SchedulerConfig:
    return SchedulerConfig(poll_s=0.02, heartbeat_s=0.2, stall_s=5, hold_s=hold_s, hold_share=share)


class AskingRunner(FakeRunner):
    """Tasks whose seq is in ``ask`` pause on a confirmation; resume does what the reply says (yes: finished,
    no: blocked) and remembers on which phone it continued."""

    def __init__(self, store: TrajectoryStore, ask: set[int]) -> None:
        super().__init__(
            store, lambda job: Outcome.NEEDS_USER if job.claim.seq in ask else Outcome.FINISHED, steps=1
        )
        self.paused: dict[str, str] = {}  # episode -> phone serial
        self.continued: list[tuple[str, str, str | None]] = []  # (episode, phone, reply)

    def run(self, job):
        result = super().run(job)
        if result.outcome == Outcome.NEEDS_USER:
            pauses.create_pause(
                self.store,
                pauses.PauseRecord(
                    episode_id=result.episode_id,
                    step_index=0,
                    kind="confirm",
                    question="Pay 12.00 to the shop?\n  action: tap(1, 2)",
                    device=job.phone.serial,
                    adb_server=job.phone.adb,
                    reserve_s=600,
                ),
            )
            self.paused[result.episode_id] = job.phone.serial
        return result

    def resume(self, phone, episode_id, reply, on_step, *, check=None):
        pause = pauses.open_pause(self.store, episode_id)
        pauses.reopen_episode(self.store, episode_id)
        pauses.mark_resumed(self.store, pause.id, reply)
        self.store.record_step(episode_id, StepRecord(index=1, thought=f"the person said {reply}"))
        on_step(1, episode_id)
        outcome = Outcome.FINISHED if reply == "yes" else Outcome.BLOCKED
        self.store.finish_episode(episode_id, outcome)
        self.continued.append((episode_id, phone.serial, reply))
        return JobResult(episode_id, str(outcome), None, 2)


def enqueue(store: TrajectoryStore, n: int) -> str:
    run = store.create_run("people")
    q.enqueue_tasks(store, run.id, [q.NewTask(i, f"t:{i}", f"task {i}", priority=n - i) for i in range(n)])
    return run.id


def start_pool(store, runner, phones, run_id, cfg) -> tuple[WorkerPool, threading.Thread, list]:
    events: list = []
    pool = WorkerPool(store, phones, runner, config=cfg, run_ids=[run_id], on_event=events.append)
    thread = threading.Thread(target=pool.run)
    thread.start()
    return pool, thread, events


def wait_for(predicate, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError("timed out")


@pytest.mark.parametrize(
    ("phones", "share", "cap"),
    [
        (1, 0.25, 0),
        (2, 0.25, 1),
        (4, 0.25, 1),
        (8, 0.25, 2),
        (3, 0.25, 1),
        (4, 1.0, 3),
        (4, 0.0, 0),
        (10, 0.5, 5),
    ],
)
def test_the_hold_budget_never_takes_every_phone(phones: int, share: float, cap: int) -> None:
    budget = HoldBudget(phones, share)
    assert budget.cap == cap
    assert [budget.take() for _ in range(phones)].count(True) == cap
    budget.give_back()
    assert budget.take() is (cap > 0)


def test_a_batch_whose_tasks_all_wait_for_people_ends_within_the_hold_time(store: TrajectoryStore) -> None:
    run_id = enqueue(store, 4)
    runner = AskingRunner(store, {0, 1, 2, 3})
    t0 = time.monotonic()
    pool, thread, events = start_pool(store, runner, make_phones(4), run_id, config(hold_s=1.0))
    thread.join(30)
    took = time.monotonic() - t0
    assert not thread.is_alive()
    assert took < 1.0 + 3.0, took  # the hold time, plus a little: no stall timeout
    held = [e for e in events if e.kind == "waiting" and e.outcome == "held"]
    assert len(held) == 1  # 25 % of 4 phones
    assert len([e for e in events if e.kind == "waiting"]) == 4  # every question was announced
    assert all("mobile-agent inbox answer" in e.detail for e in events if e.kind == "waiting")
    summary = summarize_run(store, run_id)
    assert summary.by_outcome == {"needs_user:expired": 4}
    assert sorted(summary.expired) == sorted(runner.paused) and summary.successes == 0
    assert summary.waiting == [] and list_waiting(store) == []
    assert {t.outcome for t in qs.list_tasks(store, run_id)} == {"needs_user:expired"}
    # and they can be queued again
    assert answer_db.requeue_expired(store, run_id) == 4
    assert qs.run_counts(store, run_id).pending == 4


def test_an_answer_within_the_hold_continues_the_same_episode_on_its_phone(store: TrajectoryStore) -> None:
    run_id = enqueue(store, 6)
    runner = AskingRunner(store, {0})
    pool, thread, events = start_pool(store, runner, make_phones(2), run_id, config(hold_s=30))
    wait_for(lambda: [q for q in list_waiting(store) if q.answer_by is not None])
    [question] = list_waiting(store)
    assert question.held and question.kind == "confirm" and question.question_line == "Pay 12.00 to the shop?"
    assert question.answer_command == f"mobile-agent inbox answer {question.episode_id} --reply yes|no"
    phone = runner.paused[question.episode_id]
    [done] = answer(store, [question.episode_id[:8]], "yes", who="alice@console")
    assert done.continues == "worker" and done.who == "alice@console"
    thread.join(30)
    assert not thread.is_alive()
    assert runner.continued == [(question.episode_id, phone, "yes")]
    summary = summarize_run(store, run_id)
    assert summary.by_outcome == {"finished": 6} and summary.waiting == [] and summary.expired == []
    [got] = answer_db.answers_of_episode(store, question.episode_id)
    assert (got.reply, got.replied_by, got.taken_by) == ("yes", "alice@console", pool.worker_id)
    assert got.replied_at is not None and got.taken_at >= got.replied_at
    # the held phone got no other task while it waited
    others = [job for job in runner.jobs if job.phone.serial == phone and job.claim.seq != 0]
    assert all(job.claim.seq > 0 for job in others)
    assert any(e.kind == "continued" and e.outcome == "finished" for e in events)


def test_an_unheld_question_waits_and_the_next_free_worker_on_its_phone_continues_it(
    store: TrajectoryStore,
) -> None:
    run_id = enqueue(store, 3)
    runner = AskingRunner(store, {0})
    pool, thread, events = start_pool(store, runner, make_phones(1), run_id, config(hold_s=30))
    wait_for(
        lambda: [q for q in list_waiting(store) if q.answer_by] and qs.run_counts(store, run_id).open == 0
    )
    [question] = list_waiting(store)
    assert not question.held  # one phone: never held, the other tasks ran at once
    answer(store, [question.episode_id], "no", who="bob")
    thread.join(30)
    assert not thread.is_alive()
    assert runner.continued == [(question.episode_id, "phone-0", "no")]
    assert summarize_run(store, run_id).by_outcome == {"finished": 2, "blocked": 1}


def test_answers_are_checked_before_any_is_recorded(store: TrajectoryStore) -> None:
    def paused(kind: str) -> str:
        episode = store.start_episode("pay", device="phone-0", family="f", model="m")
        store.finish_episode(episode.id, Outcome.NEEDS_USER)
        pauses.create_pause(
            store, pauses.PauseRecord(episode.id, 0, kind, "Pay?", device="phone-0", reserve_s=60)
        )
        return episode.id

    confirm, call = paused("confirm"), paused("call_user")
    finished = store.start_episode("x", device="phone-1", family="f", model="m")
    store.finish_episode(finished.id, Outcome.FINISHED)
    for bad, reply, words in [
        ([confirm], "maybe", "yes or no"),
        ([confirm, finished.id], "yes", "not waiting"),
        ([call], "  ", "question"),
        (["nosuchepisode"], "yes", "nosuchepisode"),
        ([], "yes", "no episode"),
        ([confirm], "y" * 5000, "characters"),
    ]:
        with pytest.raises(UserError, match=words):
            answer(store, bad, reply, who="me")
    assert all(q.reply is None for q in list_waiting(store))  # nothing was recorded
    with pytest.raises(UserError, match="who"):
        answer(store, [confirm], "yes", who=" ")
    [one] = answer(store, [confirm, confirm], "YES", who="me")  # a repeat is answered once
    assert one.continues == "none"  # no farm waits for it: the CLI continues it itself
    with pytest.raises(UserError, match="already answered"):
        answer(store, [confirm], "no", who="someone else")
    assert [q.reply for q in list_waiting(store) if q.episode_id == confirm] == ["YES"]
    assert answer_db.expire_window(store, pauses.open_pause(store, confirm).id) is False  # answered: kept
    assert "@" in os_user()


def test_an_expired_question_is_a_result_and_cannot_be_answered(store: TrajectoryStore) -> None:
    episode = store.start_episode("pay", device="phone-0", family="f", model="m")
    store.finish_episode(episode.id, Outcome.NEEDS_USER)
    pause = pauses.create_pause(
        store, pauses.PauseRecord(episode.id, 0, "confirm", "Pay?", device="phone-0", reserve_s=60)
    )
    assert answer_db.expire_window(store, pause.id) is True
    info = store.episode(episode.id)
    assert info.outcome == Outcome.NEEDS_USER_EXPIRED and not info.outcome.ended_by_agent
    with pytest.raises(UserError, match="not waiting"):
        answer(store, [episode.id], "yes", who="me")
    with pytest.raises(UserError):
        pauses.reopen_episode(store, episode.id)  # `resume` refuses it too
    assert Outcome("needs_user:expired") == Outcome.NEEDS_USER_EXPIRED
    with pytest.raises(ValueError):
        Outcome("needs_user:whenever")


def test_the_live_view_says_who_waits_for_a_person() -> None:
    from mobile_agent.cli.farm_progress import ProgressView
    from mobile_agent.farm.scheduler.jobs import ProgressEvent

    view = ProgressView(total=3)
    detail = "Pay 12.00? — answer: mobile-agent inbox answer e1 --reply yes|no"
    view.on_event(ProgressEvent("waiting", "phone-0", episode_id="e1", outcome="held", detail=detail))
    view.on_event(
        ProgressEvent("waiting", "phone-1", episode_id="e2", outcome="waiting", detail="Send? \x1b[2J")
    )
    lines = view.waiting_lines()
    assert lines[0] == "waiting for a person: 2"
    assert "phone-0: Pay 12.00? — answer: mobile-agent inbox answer e1 --reply yes|no" in lines[1]
    assert "\x1b" not in lines[2]  # phone and model text never reach the terminal as escape sequences
    view.on_event(ProgressEvent("answered", "phone-0", episode_id="e1", detail="'yes' by me"))
    view.on_event(ProgressEvent("expired", "-", episode_id="e2"))
    assert view.waiting_lines() == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(reply=st.text(max_size=60))
def test_any_reply_is_recorded_or_refused_in_one_line(store: TrajectoryStore, reply: str) -> None:
    from mobile_agent.agent.takeover import approval_from_reply

    episode = store.start_episode("pay", device="phone-0", family="f", model="m")
    store.finish_episode(episode.id, Outcome.NEEDS_USER)
    pauses.create_pause(store, pauses.PauseRecord(episode.id, 0, "confirm", "Pay?", device="p", reserve_s=60))
    try:
        [done] = answer(store, [episode.id], reply, who="me")
    except UserError as exc:
        assert "\n" not in exc.message and exc.hint
        assert approval_from_reply(reply.strip()) is None
    else:
        assert approval_from_reply(done.reply) is not None and done.reply == reply.strip()
