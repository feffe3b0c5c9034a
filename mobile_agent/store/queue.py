"""The durable task queue of a batch: tasks and their attempts.

Every function here is one short transaction. Claims are atomic: on SQLite the write transaction starts with
BEGIN IMMEDIATE (the store's write session), on PostgreSQL the candidate row is locked with
``FOR UPDATE SKIP LOCKED`` so workers on several hosts never take the same task. A claim carries a random token;
finishing or retrying with a stale token (the lease expired and another worker took the task) changes nothing.

    ids = enqueue_tasks(store, run.id, [NewTask(seq=0, label="tasks.yaml:3", task="open settings")])
    claim = claim_task(store, worker="host:42:ab12", device="127.0.0.1:5037/emulator-5554", tags=set())
    finish_task(store, claim, episode_id=ep.id, outcome="finished")

What the queue holds (counts, listings) is read through mobile_agent.store.queue_status; the farm's phones
(leases, quarantine, holds for a person) are kept by mobile_agent.store.phones.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from sqlalchemy import (
    ForeignKey,
    Index,
    Integer,
    Select,
    String,
    Text,
    UniqueConstraint,
    func,
    insert,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.orm import Mapped, Session, mapped_column

from mobile_agent.actions import Outcome
from mobile_agent.store.convert import json_safe, now_utc
from mobile_agent.store.outages import retried
from mobile_agent.store.process import Owner
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.schema import Base, EpisodeRow, JSONType, UTCDateTime
from mobile_agent.store.store import TrajectoryStore


class TaskState(str, Enum):
    PENDING = "pending"
    CLAIMED = "claimed"
    DONE = "done"  # ended with a result (any outcome that is not an infrastructure failure nor a person's)
    FAILED = "failed"  # infrastructure failures used up the retry budget
    WAITING = "waiting"  # its episode ended needing a person (needs_user) and waits for an answer: never done
    EXPIRED = (
        "expired"  # nobody answered in time (needs_user:expired): never done; `batch --resume` requeues it
    )

    def __str__(self) -> str:
        return self.value


class Failure(str, Enum):
    """Why an attempt did not produce a result."""

    DEVICE = "device"  # the phone or its u2 server broke: retry on another phone, count against the budget
    ENDPOINT = "endpoint"  # the model endpoint was down: wait and retry, separate budget
    INTERRUPTED = "interrupted"  # Ctrl-C, or the worker process died: retry, not counted
    ABANDONED = "abandoned"  # the worker's lease expired without a word

    def __str__(self) -> str:
        return self.value


FINAL_STATES = (TaskState.DONE.value, TaskState.FAILED.value, TaskState.EXPIRED.value)


def result_state(outcome: str | None) -> TaskState:
    """The state of a task whose episode ended with ``outcome`` (a result): waiting or expired when it needs a
    person, else done."""
    if outcome == Outcome.NEEDS_USER:
        return TaskState.WAITING
    if outcome == Outcome.NEEDS_USER_EXPIRED:
        return TaskState.EXPIRED
    return TaskState.DONE


class QueueTaskRow(Base):
    __tablename__ = "queue_tasks"
    __table_args__ = (
        UniqueConstraint("run_id", "seq", name="uq_queue_tasks_run_seq"),
        Index("ix_queue_tasks_claim", "state", "run_id", "priority"),
        # Claims read pending rows in this order (claim_task): all runs, and one run's. Partial, so they hold the
        # backlog only (SQLite's "+state": see _pending_term); added to older databases by store.migrate.
        Index(
            "ix_queue_tasks_pending",
            text("priority DESC"),
            "id",
            sqlite_where=text("+state = 'pending'"),
            postgresql_where=text("state = 'pending'"),
        ),
        Index(
            "ix_queue_tasks_pending_run",
            "run_id",
            text("priority DESC"),
            "id",
            sqlite_where=text("+state = 'pending'"),
            postgresql_where=text("state = 'pending'"),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)  # position in the expanded task file; makes enqueue idempotent
    label: Mapped[str] = mapped_column(String(512))  # where it came from: "tasks.yaml:12 #2"
    task: Mapped[str] = mapped_column(Text)
    app: Mapped[str | None] = mapped_column(String(256))
    spec: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    priority: Mapped[int] = mapped_column(Integer, default=0)
    requires_key: Mapped[str] = mapped_column(String(1024), default="")
    state: Mapped[str] = mapped_column(String(16), default=TaskState.PENDING.value)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    device_failures: Mapped[int] = mapped_column(Integer, default=0)
    endpoint_failures: Mapped[int] = mapped_column(Integer, default=0)
    not_before: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_device: Mapped[str | None] = mapped_column(String(512))
    claim_token: Mapped[str | None] = mapped_column(String(32))
    worker: Mapped[str | None] = mapped_column(String(256))
    device: Mapped[str | None] = mapped_column(String(512))
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    episode_id: Mapped[str | None] = mapped_column(String(32))
    outcome: Mapped[str | None] = mapped_column(String(128))
    detail: Mapped[str | None] = mapped_column(Text)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class QueueAttemptRow(Base):
    __tablename__ = "queue_attempts"
    __table_args__ = (UniqueConstraint("task_id", "attempt", name="uq_queue_attempts_task_attempt"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("queue_tasks.id", ondelete="CASCADE"))
    attempt: Mapped[int] = mapped_column(Integer)
    worker: Mapped[str] = mapped_column(String(256))
    device: Mapped[str] = mapped_column(String(512))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    episode_id: Mapped[str | None] = mapped_column(String(32))
    outcome: Mapped[str | None] = mapped_column(String(128))
    failure: Mapped[str | None] = mapped_column(String(16))
    detail: Mapped[str | None] = mapped_column(Text)


# ------------------------------------------------------------------------------------------------------ records
@dataclass(frozen=True)
class NewTask:
    """One queue row to create (a task file entry expanded by its repeats)."""

    seq: int
    label: str
    task: str
    app: str | None = None
    spec: dict[str, Any] = field(default_factory=dict)
    priority: int = 0
    requires: tuple[str, ...] = ()


@dataclass(frozen=True)
class Claim:
    """A task a worker holds. ``token`` proves the hold when the worker reports back."""

    task_id: int
    run_id: str
    seq: int
    label: str
    task: str
    app: str | None
    spec: dict[str, Any]
    attempt: int
    token: str
    worker: str
    device: str


@dataclass(frozen=True)
class Reclaimed:
    """A claimed task taken back from a worker that is gone: requeued, or ``settled`` as done when its episode
    had already ended with a result."""

    task_id: int
    run_id: str
    attempt: int
    worker: str
    device: str
    settled: bool = False


def requires_key(tags: Iterable[str]) -> str:
    """The canonical text of a requirement set: sorted, deduplicated, newline-separated ("" for none)."""
    return "\n".join(sorted(set(tags)))


def parse_requires_key(key: str) -> frozenset[str]:
    return frozenset(part for part in key.split("\n") if part)


# -------------------------------------------------------------------------------------------------- the queue
@retried
def enqueue_tasks(store: TrajectoryStore, run_id: str, tasks: Sequence[NewTask]) -> int:
    """Add tasks to a run; a seq already present is skipped, so enqueuing the same file twice adds nothing.

    One Core executemany (no ORM objects, no RETURNING): 10,000 rows took 3.7 s on PostgreSQL through the ORM's
    multi-row VALUES statements, ~1 s this way (bench/task_files.py)."""
    with store.write_connection() as conn:
        present = set(conn.scalars(select(QueueTaskRow.seq).where(QueueTaskRow.run_id == run_id)))
        rows = []
        for item in tasks:
            if item.seq in present:
                continue
            rows.append(
                {
                    "run_id": run_id,
                    "seq": item.seq,
                    "label": item.label,
                    "task": item.task,
                    "app": item.app,
                    "spec": json_safe(item.spec),
                    "priority": item.priority,
                    "requires_key": requires_key(item.requires),
                    "state": TaskState.PENDING.value,
                    "attempts": 0,
                    "device_failures": 0,
                    "endpoint_failures": 0,
                }
            )
            present.add(item.seq)
        if rows:
            conn.execute(insert(QueueTaskRow.__table__), rows)
    return len(rows)


def _pending_in_index_order(
    ready: Sequence[Any], servable: Sequence[str], last_device: Any, *, postgres: bool
) -> Select[tuple[QueueTaskRow]]:
    """The next pending row in the order of the partial indexes on pending rows (priority, then id): an index
    scan that stops at the first row it can lock, with no sort of the backlog."""
    query = (
        select(QueueTaskRow)
        .where(_pending_term(postgres), *ready, QueueTaskRow.requires_key.in_(list(servable)), last_device)
        .order_by(QueueTaskRow.priority.desc(), QueueTaskRow.id)
        .limit(1)
    )
    return query.with_for_update(skip_locked=True) if postgres else query


def _pending_term(postgres: bool) -> Any:
    """The partial indexes' own predicate, word for word, so the planner knows they hold every row it wants (a
    bound parameter would not prove it to SQLite, nor to a PostgreSQL generic plan). On SQLite the state is
    written ``+state``, which no other index can search: without statistics its planner would take
    ix_queue_tasks_claim's equality on state and sort the backlog."""
    return text("queue_tasks.state = 'pending'" if postgres else "+queue_tasks.state = 'pending'")


@retried
def claim_task(
    store: TrajectoryStore,
    *,
    worker: str,
    device: str,
    tags: Iterable[str],
    run_ids: Sequence[str] | None = None,
    lease_s: float = 60.0,
    requires_keys: Iterable[str] | None = None,
) -> Claim | None:
    """Take the best pending task this phone can serve, or None.

    Best = not last failed on this phone, then highest priority, then oldest run, then file order. A task whose
    requirements are not a subset of ``tags`` is never taken. ``requires_keys``: the requirement sets pending
    now (a pool passes them from its snapshot of the queue, mobile_agent.store.queue_status.PendingSnapshot);
    without them the claim reads them first.

    Two index-ordered looks rather than one sort: a task not last failed on this phone, and only when there is
    none, one that was (ix_queue_tasks_pending, ix_queue_tasks_pending_run).
    """
    have = frozenset(tags)
    with store.write_session() as session:
        now = now_utc()
        ready = [
            or_(QueueTaskRow.not_before.is_(None), QueueTaskRow.not_before <= now),
        ]
        if run_ids is not None:
            ready.append(QueueTaskRow.run_id.in_(list(run_ids)))
        if requires_keys is None:
            pending = [QueueTaskRow.state == TaskState.PENDING.value, *ready]
            requires_keys = session.scalars(
                select(QueueTaskRow.requires_key).where(*pending).distinct()
            ).all()
        servable = sorted({key for key in requires_keys if parse_requires_key(key) <= have})
        if not servable:
            return None
        postgres = session.get_bind().dialect.name == "postgresql"
        row = session.scalar(
            _pending_in_index_order(
                ready, servable, QueueTaskRow.last_device.is_distinct_from(device), postgres=postgres
            )
        )
        if row is None:  # only tasks last failed on this phone are left
            row = session.scalar(
                _pending_in_index_order(
                    ready, servable, QueueTaskRow.last_device == device, postgres=postgres
                )
            )
        if row is None:
            return None
        row.state = TaskState.CLAIMED.value
        row.claim_token = secrets.token_hex(8)
        row.worker = worker
        row.device = device
        row.claimed_at = now
        row.lease_until = now + timedelta(seconds=lease_s)
        row.attempts += 1
        session.add(
            QueueAttemptRow(
                task_id=row.id, attempt=row.attempts, worker=worker, device=device, started_at=now
            )
        )
        return Claim(
            task_id=row.id,
            run_id=row.run_id,
            seq=row.seq,
            label=row.label,
            task=row.task,
            app=row.app,
            spec=dict(row.spec or {}),
            attempt=row.attempts,
            token=row.claim_token,
            worker=worker,
            device=device,
        )


def _held(session: Session, claim: Claim) -> QueueTaskRow | None:
    query = select(QueueTaskRow).where(
        QueueTaskRow.id == claim.task_id,
        QueueTaskRow.state == TaskState.CLAIMED.value,
        QueueTaskRow.claim_token == claim.token,
    )
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update()
    return session.scalar(query)


def _end_attempt(
    session: Session,
    claim: Claim,
    *,
    episode_id: str | None,
    outcome: str | None,
    failure: Failure | None,
    detail: str | None,
) -> None:
    session.execute(
        update(QueueAttemptRow)
        .where(QueueAttemptRow.task_id == claim.task_id, QueueAttemptRow.attempt == claim.attempt)
        .values(
            ended_at=now_utc(),
            episode_id=episode_id,
            outcome=outcome,
            failure=failure.value if failure else None,
            detail=detail,
        )
    )


def _release(row: QueueTaskRow) -> None:
    row.claim_token = None
    row.worker = None
    row.lease_until = None


@retried
def finish_task(
    store: TrajectoryStore, claim: Claim, *, episode_id: str | None, outcome: str, detail: str | None = None
) -> bool:
    """The attempt produced a result: the task is done (waiting when it needs a person). False when the claim was
    lost (nothing changes)."""
    with store.write_session() as session:
        row = _held(session, claim)
        if row is None:
            return False
        _end_attempt(session, claim, episode_id=episode_id, outcome=outcome, failure=None, detail=detail)
        row.state = result_state(outcome).value
        row.episode_id = episode_id
        row.outcome = outcome
        row.detail = detail
        row.finished_at = now_utc()
        _release(row)
        return True


@retried
def retry_task(
    store: TrajectoryStore,
    claim: Claim,
    *,
    failure: Failure,
    episode_id: str | None,
    outcome: str | None,
    detail: str | None = None,
    max_device_failures: int = 2,
    max_endpoint_failures: int = 20,
    delay_s: float = 0.0,
) -> TaskState | None:
    """The attempt failed for an infrastructure reason: back to pending, or FAILED when its budget is spent.

    Returns the task's new state, or None when the claim was lost.
    """
    with store.write_session() as session:
        row = _held(session, claim)
        if row is None:
            return None
        _end_attempt(session, claim, episode_id=episode_id, outcome=outcome, failure=failure, detail=detail)
        spent = False
        if failure is Failure.DEVICE:
            row.device_failures += 1
            spent = row.device_failures > max_device_failures
        elif failure is Failure.ENDPOINT:
            row.endpoint_failures += 1
            spent = row.endpoint_failures > max_endpoint_failures
        _release(row)
        row.last_device = claim.device
        if spent:
            row.state = TaskState.FAILED.value
            row.episode_id = episode_id
            row.outcome = outcome or f"error:{failure.value}"
            row.detail = detail
            row.finished_at = now_utc()
        else:
            row.state = TaskState.PENDING.value
            row.device = None
            row.not_before = now_utc() + timedelta(seconds=delay_s) if delay_s > 0 else None
        return TaskState(row.state)


@retried
def renew_claims(store: TrajectoryStore, claims: Sequence[Claim], lease_s: float) -> int:
    """Extend the leases of claims still held; returns how many were renewed."""
    if not claims:
        return 0
    until = now_utc() + timedelta(seconds=lease_s)
    renewed = 0
    with store.write_session() as session:
        for claim in claims:
            result = session.execute(
                update(QueueTaskRow)
                .where(
                    QueueTaskRow.id == claim.task_id,
                    QueueTaskRow.state == TaskState.CLAIMED.value,
                    QueueTaskRow.claim_token == claim.token,
                )
                .values(lease_until=until)
            )
            renewed += result.rowcount
    return renewed


FENCED_DETAIL = "interrupted: the worker that ran it stopped (or lost its lease) and the task was taken back"


def _fence_episodes(session: Session, row: QueueTaskRow, now: datetime) -> None:
    """In the transaction that takes a claim back: end the episodes its worker still runs for it (same process,
    run and phone) and move their lease epoch on, so that worker can record no step once the task can pass to
    another (fencing; the worker, should it come back, finds its writes refused)."""
    owner = Owner.parse(row.worker or "")
    if owner is None or not row.device:
        return
    serial = row.device.rsplit("/", 1)[-1]
    session.execute(
        update(EpisodeRow)
        .where(
            EpisodeRow.status == EpisodeStatus.RUNNING.value,
            EpisodeRow.run_id == row.run_id,
            EpisodeRow.device == serial,
            EpisodeRow.owner.startswith(f"{owner.host}:{owner.pid}:", autoescape=True),
        )
        .values(
            status=EpisodeStatus.ENDED.value,
            outcome=str(Outcome.INTERRUPTED),
            outcome_detail=FENCED_DETAIL,
            ended_at=now,
            lease_epoch=func.coalesce(EpisodeRow.lease_epoch, 1) + 1,
        )
    )


@retried
def reclaim_tasks(
    store: TrajectoryStore,
    *,
    run_ids: Sequence[str] | None = None,
    dead_workers: Iterable[str] = (),
    expired: bool = True,
    results: Mapping[tuple[int, int], tuple[str, str, str | None]] | None = None,
    live_workers: Iterable[str] = (),
) -> list[Reclaimed]:
    """Take back claimed tasks whose worker is known dead or whose lease expired. Not counted as failures.

    ``results`` maps (task id, attempt) -> (episode id, outcome, detail) for attempts whose episode had ended
    with a result before the worker died: those tasks are marked done with it instead of being run again.
    """
    dead = set(dead_workers)
    live = set(live_workers)  # never taken back from these (the caller itself), even with a lapsed lease
    ended = dict(results or {})
    with store.write_session() as session:
        now = now_utc()
        query = select(QueueTaskRow).where(QueueTaskRow.state == TaskState.CLAIMED.value)
        if run_ids is not None:
            query = query.where(QueueTaskRow.run_id.in_(list(run_ids)))
        if session.get_bind().dialect.name == "postgresql":
            query = query.with_for_update(skip_locked=True)
        out: list[Reclaimed] = []
        for row in session.scalars(query).all():
            gone = row.worker in dead
            lapsed = expired and row.lease_until is not None and row.lease_until < now
            if not (gone or lapsed) or row.worker in live:
                continue
            result = ended.get((row.id, row.attempts))
            attempt = update(QueueAttemptRow).where(
                QueueAttemptRow.task_id == row.id, QueueAttemptRow.attempt == row.attempts
            )
            out.append(
                Reclaimed(
                    row.id, row.run_id, row.attempts, row.worker or "", row.device or "", result is not None
                )
            )
            _fence_episodes(session, row, now)
            _release(row)
            if result is not None:
                episode_id, outcome, detail = result
                session.execute(
                    attempt.values(ended_at=now, episode_id=episode_id, outcome=outcome, detail=detail)
                )
                row.state = result_state(outcome).value
                row.episode_id, row.outcome, row.detail, row.finished_at = episode_id, outcome, detail, now
                continue
            failure = Failure.INTERRUPTED if gone else Failure.ABANDONED
            session.execute(attempt.values(ended_at=now, failure=failure.value, detail="the worker stopped"))
            row.state = TaskState.PENDING.value
            row.device = None
        return out


__all__ = [
    "FENCED_DETAIL",
    "Claim",
    "Failure",
    "NewTask",
    "QueueAttemptRow",
    "QueueTaskRow",
    "Reclaimed",
    "TaskState",
    "claim_task",
    "enqueue_tasks",
    "finish_task",
    "parse_requires_key",
    "reclaim_tasks",
    "renew_claims",
    "result_state",
    "requires_key",
    "retry_task",
]
