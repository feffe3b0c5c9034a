"""What people answer to paused episodes, and how long a farm waits for them.

A ``pauses`` row says an episode waits for a person. In a farm, the worker that ran it opens a *window* for it: the
time the question stays answerable (``answer_by``) and whether the worker keeps the phone meanwhile (``held_by``,
within the run's hold budget). A person's reply (from ``mobile-agent inbox answer`` or the console) is written here
with who gave it and when; the worker holding the phone (or the next free worker on that phone) *takes* it and
continues the same episode. A window nobody answered ends the episode as ``needs_user:expired``.

    open_window(store, pause.id, pause.episode_id, answer_by=deadline, held_by="host:42:ab")
    record_reply(store, pause.id, "yes", who="alice")     # UserError when someone answered first
    take_reply(store, pause.id, worker="host:42:ab")      # the reply, once, to the one worker that continues
    expire_window(store, pause.id)                        # nobody answered: needs_user:expired
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text, and_, or_, select, update
from sqlalchemy.orm import Mapped, mapped_column

from mobile_agent.actions import Outcome
from mobile_agent.errors import UserError
from mobile_agent.store.convert import now_utc
from mobile_agent.store.outages import retried
from mobile_agent.store.pauses import OPEN, PauseRow
from mobile_agent.store.phones import FarmDeviceRow
from mobile_agent.store.queue import QueueTaskRow, TaskState, result_state
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.schema import Base, EpisodeRow, UTCDateTime
from mobile_agent.store.store import TrajectoryStore

EXPIRED = "expired"  # a pauses.status: nobody answered in time
# The queue states of a task whose episode paused (done: as written before the waiting state existed).
_ANSWERED_STATES = (TaskState.WAITING.value, TaskState.DONE.value)


class PauseAnswerRow(Base):
    __tablename__ = "pause_answers"
    __table_args__ = (Index("ix_pause_answers_episode", "episode_id"),)

    pause_id: Mapped[int] = mapped_column(ForeignKey("pauses.id", ondelete="CASCADE"), primary_key=True)
    episode_id: Mapped[str] = mapped_column(String(32))
    answer_by: Mapped[datetime | None] = mapped_column(UTCDateTime)  # None: no farm window (a single run)
    held_by: Mapped[str | None] = mapped_column(String(256))  # the worker keeping the phone for the person
    reply: Mapped[str | None] = mapped_column(Text)
    replied_by: Mapped[str | None] = mapped_column(String(256))
    replied_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    taken_by: Mapped[str | None] = mapped_column(String(256))  # the worker (or command) that continued it
    taken_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


@dataclass(frozen=True)
class PauseAnswer:
    pause_id: int
    episode_id: str
    answer_by: datetime | None
    held_by: str | None
    reply: str | None
    replied_by: str | None
    replied_at: datetime | None
    taken_by: str | None
    taken_at: datetime | None

    @property
    def answered(self) -> bool:
        return self.replied_at is not None


def _answer(row: PauseAnswerRow) -> PauseAnswer:
    return PauseAnswer(
        row.pause_id,
        row.episode_id,
        row.answer_by,
        row.held_by,
        row.reply,
        row.replied_by,
        row.replied_at,
        row.taken_by,
        row.taken_at,
    )


@retried
def open_window(
    store: TrajectoryStore, pause_id: int, episode_id: str, *, answer_by: datetime, held_by: str | None
) -> None:
    """The farm waits for an answer until ``answer_by``; the phone stays reserved only while ``held_by`` keeps
    it (otherwise other work may use it at once: the pause's reservation ends now)."""
    with store.write_session() as session:
        row = session.get(PauseAnswerRow, pause_id)
        if row is None:
            row = PauseAnswerRow(pause_id=pause_id, episode_id=episode_id)
            session.add(row)
        row.answer_by, row.held_by = answer_by, held_by
        session.execute(
            update(PauseRow)
            .where(PauseRow.id == pause_id)
            .values(reserved_until=answer_by if held_by else now_utc())
        )


@retried
def let_go(store: TrajectoryStore, pause_id: int) -> None:
    """The worker stops keeping the phone (the batch stopped); the question stays answerable."""
    with store.write_session() as session:
        session.execute(
            update(PauseAnswerRow).where(PauseAnswerRow.pause_id == pause_id).values(held_by=None)
        )
        session.execute(
            update(PauseRow)
            .where(PauseRow.id == pause_id, PauseRow.status == OPEN)
            .values(reserved_until=now_utc())
        )


@retried
def release_gone_holds(store: TrajectoryStore, is_gone: Callable[[str], bool]) -> list[int]:
    """The windows whose phone is kept by a worker that is gone (``is_gone(worker)``; a worker keeping a phone
    renews its lease, so one without a live phone lease is gone too) let their phone go: the question stays
    answerable and the next worker on that phone continues it once answered. Returns the pause ids."""
    now = now_utc()
    with store.read_session() as session:
        held = session.execute(
            select(PauseAnswerRow.pause_id, PauseAnswerRow.held_by)
            .join(PauseRow, PauseRow.id == PauseAnswerRow.pause_id)
            .where(PauseRow.status == OPEN, PauseAnswerRow.held_by.is_not(None))
        ).all()
        if not held:
            return []
        leased = set(
            session.scalars(
                select(FarmDeviceRow.worker).where(
                    FarmDeviceRow.worker.is_not(None), FarmDeviceRow.lease_until > now
                )
            )
        )
    gone = [pause_id for pause_id, worker in held if worker not in leased or is_gone(worker)]
    for pause_id in gone:
        let_go(store, pause_id)
    return gone


@retried
def record_reply(store: TrajectoryStore, pause_id: int, episode_id: str, reply: str, *, who: str) -> datetime:
    """Write a person's reply (first one wins). UserError when the pause is no longer open or already answered."""
    now = now_utc()
    with store.write_session() as session:
        pause = session.get(PauseRow, pause_id, with_for_update=True)
        if pause is None or pause.status != OPEN:
            raise UserError(
                f"episode {episode_id} no longer waits for a person ({pause.status if pause else 'no pause'})",
                "see what waits with `mobile-agent inbox`",
            )
        row = session.get(PauseAnswerRow, pause_id, with_for_update=True)
        if row is None:
            row = PauseAnswerRow(pause_id=pause_id, episode_id=episode_id)
            session.add(row)
        elif row.replied_at is not None:
            raise UserError(
                f"episode {episode_id} was already answered ({row.reply!r} by {row.replied_by} at "
                f"{row.replied_at:%H:%M:%S} UTC)",
                "one answer per question; the episode continues with that one",
            )
        row.reply, row.replied_by, row.replied_at = reply, who, now
    return now


@retried
def take_reply(store: TrajectoryStore, pause_id: int, *, worker: str) -> PauseAnswer | None:
    """The reply, handed once to the one worker (or command) that continues the episode; None when there is none
    yet or another took it."""
    with store.write_session() as session:
        done = session.execute(
            update(PauseAnswerRow)
            .where(
                PauseAnswerRow.pause_id == pause_id,
                PauseAnswerRow.replied_at.is_not(None),
                PauseAnswerRow.taken_at.is_(None),
            )
            .values(taken_by=worker, taken_at=now_utc())
        )
        if done.rowcount != 1:
            return None
        return _answer(session.get(PauseAnswerRow, pause_id))


@retried
def answers(store: TrajectoryStore, pause_ids: Sequence[int]) -> dict[int, PauseAnswer]:
    if not pause_ids:
        return {}
    with store.read_session() as session:
        rows = session.scalars(select(PauseAnswerRow).where(PauseAnswerRow.pause_id.in_(list(pause_ids))))
        return {row.pause_id: _answer(row) for row in rows}


@retried
def answers_of_episode(store: TrajectoryStore, episode_id: str) -> list[PauseAnswer]:
    with store.read_session() as session:
        rows = session.scalars(
            select(PauseAnswerRow)
            .where(PauseAnswerRow.episode_id == episode_id)
            .order_by(PauseAnswerRow.pause_id)
        )
        return [_answer(row) for row in rows]


@retried
def expire_window(store: TrajectoryStore, pause_id: int, detail: str | None = None) -> bool:
    """Nobody answered in time: the pause closes as expired and its episode (still ended as needs_user) becomes
    ``needs_user:expired``, a result that is never a success; its queue task says the same. False when someone
    answered or resumed it meanwhile (nothing changes)."""
    now = now_utc()
    with store.write_session() as session:
        pause = session.get(PauseRow, pause_id, with_for_update=True)
        if pause is None or pause.status != OPEN:
            return False
        answer = session.get(PauseAnswerRow, pause_id)
        if answer is not None and answer.replied_at is not None:
            return False
        pause.status, pause.resumed_at, pause.reserved_until = EXPIRED, now, now
        episode = session.get(EpisodeRow, pause.episode_id, with_for_update=True)
        if episode is None or episode.outcome != Outcome.NEEDS_USER:
            return True
        why = detail or f"nobody answered within the hold: {pause.question.strip().splitlines()[0][:200]}"
        episode.outcome, episode.outcome_detail = Outcome.NEEDS_USER_EXPIRED, why
        session.execute(
            update(QueueTaskRow)
            .where(QueueTaskRow.episode_id == pause.episode_id, QueueTaskRow.state.in_(_ANSWERED_STATES))
            .values(state=TaskState.EXPIRED.value, outcome=str(Outcome.NEEDS_USER_EXPIRED), detail=why)
        )
        return True


@dataclass(frozen=True)
class Window:
    """An open farm window: the pause, its episode's run and phone, until when, and whether it was answered."""

    pause_id: int
    episode_id: str
    run_id: str | None
    device: str
    adb_server: str | None
    answer_by: datetime
    held_by: str | None
    answered: bool
    taken: bool


@retried
def open_windows(store: TrajectoryStore, run_ids: Sequence[str] | None = None) -> list[Window]:
    """The farm windows whose pause is still open (answered or not), oldest first."""
    query = (
        select(PauseAnswerRow, PauseRow, EpisodeRow.run_id)
        .join(PauseRow, PauseRow.id == PauseAnswerRow.pause_id)
        .join(EpisodeRow, EpisodeRow.id == PauseAnswerRow.episode_id)
        .where(PauseRow.status == OPEN, PauseAnswerRow.answer_by.is_not(None))
        .order_by(PauseAnswerRow.pause_id)
    )
    if run_ids is not None:
        query = query.where(EpisodeRow.run_id.in_(list(run_ids)))
    with store.read_session() as session:
        return [
            Window(
                a.pause_id,
                a.episode_id,
                run_id,
                p.device,
                p.adb_server,
                a.answer_by,
                a.held_by,
                a.replied_at is not None,
                a.taken_at is not None,
            )
            for a, p, run_id in session.execute(query)
        ]


@retried
def requeue_expired(store: TrajectoryStore, run_id: str) -> int:
    """Tasks whose final episode expired waiting for a person go back to the queue (a fresh attempt)."""
    with store.write_session() as session:
        done = session.execute(
            update(QueueTaskRow)
            .where(
                QueueTaskRow.run_id == run_id,
                or_(
                    QueueTaskRow.state == TaskState.EXPIRED.value,
                    and_(  # as written before the expired state existed
                        QueueTaskRow.state == TaskState.DONE.value,
                        QueueTaskRow.outcome == str(Outcome.NEEDS_USER_EXPIRED),
                    ),
                ),
            )
            .values(state=TaskState.PENDING.value, device=None, not_before=None, finished_at=None)
        )
        return done.rowcount


@retried
def set_task_outcome(store: TrajectoryStore, episode_id: str, outcome: str, detail: str | None) -> None:
    """A continued episode ended: its queue task (waiting since the pause) says how it ended now: done, or waiting
    again when it paused once more."""
    with store.write_session() as session:
        session.execute(
            update(QueueTaskRow)
            .where(QueueTaskRow.episode_id == episode_id, QueueTaskRow.state.in_(_ANSWERED_STATES))
            .values(
                state=result_state(str(outcome)).value,
                outcome=str(outcome),
                detail=detail,
                finished_at=now_utc(),
            )
        )


@retried
def task_spec(store: TrajectoryStore, episode_id: str) -> dict[str, Any]:
    """The queue task spec of the task an episode ran for ({} outside a farm)."""
    with store.read_session() as session:
        row = session.scalar(select(QueueTaskRow).where(QueueTaskRow.episode_id == episode_id).limit(1))
        return dict(row.spec or {}) if row is not None else {}


@retried
def episode_running(store: TrajectoryStore, episode_id: str) -> bool:
    with store.read_session() as session:
        row = session.get(EpisodeRow, episode_id)
        return row is not None and row.status == EpisodeStatus.RUNNING.value


__all__ = [
    "EXPIRED",
    "PauseAnswer",
    "PauseAnswerRow",
    "Window",
    "answers",
    "answers_of_episode",
    "episode_running",
    "expire_window",
    "let_go",
    "open_window",
    "open_windows",
    "record_reply",
    "release_gone_holds",
    "requeue_expired",
    "set_task_outcome",
    "take_reply",
    "task_spec",
]
