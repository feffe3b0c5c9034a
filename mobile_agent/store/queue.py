"""The durable task queue of a batch: tasks, their attempts, and the farm's phones (leases and quarantine).

Every function here is one short transaction. Claims are atomic: on SQLite the write transaction starts with
BEGIN IMMEDIATE (the store's write session), on PostgreSQL the candidate row is locked with
``FOR UPDATE SKIP LOCKED`` so workers on several hosts never take the same task. A claim carries a random token;
finishing or retrying with a stale token (the lease expired and another worker took the task) changes nothing.

    ids = enqueue_tasks(store, run.id, [NewTask(seq=0, label="tasks.yaml:3", task="open settings")])
    claim = claim_task(store, worker="host:42:ab12", device="127.0.0.1:5037/emulator-5554", tags=set())
    finish_task(store, claim, episode_id=ep.id, outcome="finished")
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum
from pathlib import Path
from typing import Any

from sqlalchemy import (
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    case,
    func,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Mapped, Session, mapped_column

from mobile_agent.store.convert import json_safe, now_utc
from mobile_agent.store.files import TEMP_PREFIX
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.schema import Base, EpisodeRow, JSONType, StepRow, UTCDateTime


class TaskState(str, Enum):
    PENDING = "pending"
    CLAIMED = "claimed"
    DONE = "done"  # ended with a result (any outcome that is not an infrastructure failure)
    FAILED = "failed"  # infrastructure failures used up the retry budget

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


FINAL_STATES = (TaskState.DONE.value, TaskState.FAILED.value)


class QueueTaskRow(Base):
    __tablename__ = "queue_tasks"
    __table_args__ = (
        UniqueConstraint("run_id", "seq", name="uq_queue_tasks_run_seq"),
        Index("ix_queue_tasks_claim", "state", "run_id", "priority"),
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


class FarmDeviceRow(Base):
    """A phone as the farm sees it: who drives it now (lease) and whether it is quarantined."""

    __tablename__ = "farm_devices"

    key: Mapped[str] = mapped_column(String(512), primary_key=True)  # "<adb host:port>/<serial>"
    serial: Mapped[str] = mapped_column(String(256))
    adb_server: Mapped[str] = mapped_column(String(256))
    worker: Mapped[str | None] = mapped_column(String(256))
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0)
    quarantined_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    quarantine_reason: Mapped[str | None] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


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
class QueuedTask:
    id: int
    run_id: str
    seq: int
    label: str
    task: str
    app: str | None
    priority: int
    requires: tuple[str, ...]
    state: TaskState
    attempts: int
    device_failures: int
    endpoint_failures: int
    device: str | None
    worker: str | None
    episode_id: str | None
    outcome: str | None
    detail: str | None
    claimed_at: datetime | None
    finished_at: datetime | None
    spec: dict[str, Any]


@dataclass(frozen=True)
class AttemptInfo:
    task_id: int
    attempt: int
    worker: str
    device: str
    started_at: datetime
    ended_at: datetime | None
    episode_id: str | None
    outcome: str | None
    failure: Failure | None
    detail: str | None


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


@dataclass(frozen=True)
class FarmDeviceInfo:
    key: str
    serial: str
    adb_server: str
    worker: str | None
    lease_until: datetime | None
    consecutive_failures: int
    quarantined_until: datetime | None
    quarantine_reason: str | None

    def busy(self, now: datetime | None = None) -> bool:
        now = now or now_utc()
        return self.worker is not None and self.lease_until is not None and self.lease_until > now

    @property
    def quarantined(self) -> bool:
        """Quarantined until a probe succeeds; ``quarantined_until`` is when the next probe may happen."""
        return self.quarantine_reason is not None


@dataclass(frozen=True)
class RunCounts:
    pending: int = 0
    claimed: int = 0
    done: int = 0
    failed: int = 0

    @property
    def total(self) -> int:
        return self.pending + self.claimed + self.done + self.failed

    @property
    def open(self) -> int:
        return self.pending + self.claimed


def requires_key(tags: Iterable[str]) -> str:
    """The canonical text of a requirement set: sorted, deduplicated, newline-separated ("" for none)."""
    return "\n".join(sorted(set(tags)))


def parse_requires_key(key: str) -> frozenset[str]:
    return frozenset(part for part in key.split("\n") if part)


# -------------------------------------------------------------------------------------------------- the queue
def enqueue_tasks(store: Any, run_id: str, tasks: Sequence[NewTask]) -> int:
    """Add tasks to a run; a seq already present is skipped, so enqueuing the same file twice adds nothing."""
    with store.write_session() as session:
        present = set(session.scalars(select(QueueTaskRow.seq).where(QueueTaskRow.run_id == run_id)))
        added = 0
        for item in tasks:
            if item.seq in present:
                continue
            session.add(
                QueueTaskRow(
                    run_id=run_id,
                    seq=item.seq,
                    label=item.label,
                    task=item.task,
                    app=item.app,
                    spec=json_safe(item.spec),
                    priority=item.priority,
                    requires_key=requires_key(item.requires),
                    state=TaskState.PENDING.value,
                    attempts=0,
                    device_failures=0,
                    endpoint_failures=0,
                )
            )
            present.add(item.seq)
            added += 1
    return added


def claim_task(
    store: Any,
    *,
    worker: str,
    device: str,
    tags: Iterable[str],
    run_ids: Sequence[str] | None = None,
    lease_s: float = 60.0,
) -> Claim | None:
    """Take the best pending task this phone can serve, or None.

    Best = not last failed on this phone, then highest priority, then oldest run, then file order. A task whose
    requirements are not a subset of ``tags`` is never taken.
    """
    have = frozenset(tags)
    with store.write_session() as session:
        now = now_utc()
        ready = [
            QueueTaskRow.state == TaskState.PENDING.value,
            or_(QueueTaskRow.not_before.is_(None), QueueTaskRow.not_before <= now),
        ]
        if run_ids is not None:
            ready.append(QueueTaskRow.run_id.in_(list(run_ids)))
        keys = session.scalars(select(QueueTaskRow.requires_key).where(*ready).distinct()).all()
        servable = [key for key in keys if parse_requires_key(key) <= have]
        if not servable:
            return None
        query = (
            select(QueueTaskRow)
            .where(*ready, QueueTaskRow.requires_key.in_(servable))
            .order_by(
                case((QueueTaskRow.last_device == device, 1), else_=0),
                QueueTaskRow.priority.desc(),
                QueueTaskRow.id,
            )
            .limit(1)
        )
        if session.get_bind().dialect.name == "postgresql":
            query = query.with_for_update(skip_locked=True)
        row = session.scalar(query)
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


def finish_task(
    store: Any, claim: Claim, *, episode_id: str | None, outcome: str, detail: str | None = None
) -> bool:
    """The attempt produced a result: the task is done. False when the claim was lost (nothing changes)."""
    with store.write_session() as session:
        row = _held(session, claim)
        if row is None:
            return False
        _end_attempt(session, claim, episode_id=episode_id, outcome=outcome, failure=None, detail=detail)
        row.state = TaskState.DONE.value
        row.episode_id = episode_id
        row.outcome = outcome
        row.detail = detail
        row.finished_at = now_utc()
        _release(row)
        return True


def retry_task(
    store: Any,
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


def renew_claims(store: Any, claims: Sequence[Claim], lease_s: float) -> int:
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


def reclaim_tasks(
    store: Any,
    *,
    run_ids: Sequence[str] | None = None,
    dead_workers: Iterable[str] = (),
    expired: bool = True,
    results: Mapping[tuple[int, int], tuple[str, str, str | None]] | None = None,
) -> list[Reclaimed]:
    """Take back claimed tasks whose worker is known dead or whose lease expired. Not counted as failures.

    ``results`` maps (task id, attempt) -> (episode id, outcome, detail) for attempts whose episode had ended
    with a result before the worker died: those tasks are marked done with it instead of being run again.
    """
    dead = set(dead_workers)
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
            if not (gone or lapsed):
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
            _release(row)
            if result is not None:
                episode_id, outcome, detail = result
                session.execute(
                    attempt.values(ended_at=now, episode_id=episode_id, outcome=outcome, detail=detail)
                )
                row.state = TaskState.DONE.value
                row.episode_id, row.outcome, row.detail, row.finished_at = episode_id, outcome, detail, now
                continue
            failure = Failure.INTERRUPTED if gone else Failure.ABANDONED
            session.execute(attempt.values(ended_at=now, failure=failure.value, detail="the worker stopped"))
            row.state = TaskState.PENDING.value
            row.device = None
        return out


def count_servable(store: Any, *, tags: Iterable[str], run_ids: Sequence[str] | None = None) -> int:
    """Pending tasks (due now or later) whose requirements ``tags`` satisfy."""
    have = frozenset(tags)
    query = (
        select(QueueTaskRow.requires_key, func.count())
        .where(QueueTaskRow.state == TaskState.PENDING.value)
        .group_by(QueueTaskRow.requires_key)
    )
    if run_ids is not None:
        query = query.where(QueueTaskRow.run_id.in_(list(run_ids)))
    with store.read_session() as session:
        return sum(int(n) for key, n in session.execute(query) if parse_requires_key(key) <= have)


@dataclass(frozen=True)
class PendingSnapshot:
    """Pending tasks by requirement set: ``requires_key -> (due now, all)``. Lets idle workers tell whether a claim
    could succeed without each of them asking the database on every poll."""

    by_requirements: Mapping[str, tuple[int, int]] = field(default_factory=dict)

    def due_for(self, tags: Iterable[str]) -> bool:
        have = frozenset(tags)
        return any(due and parse_requires_key(key) <= have for key, (due, _) in self.by_requirements.items())

    def any_for(self, tags: Iterable[str]) -> bool:
        have = frozenset(tags)
        return any(parse_requires_key(key) <= have for key in self.by_requirements)


def pending_snapshot(store: Any, run_ids: Sequence[str] | None = None) -> PendingSnapshot:
    now = now_utc()
    due = case((or_(QueueTaskRow.not_before.is_(None), QueueTaskRow.not_before <= now), 1), else_=0)
    query = (
        select(QueueTaskRow.requires_key, func.sum(due), func.count())
        .where(QueueTaskRow.state == TaskState.PENDING.value)
        .group_by(QueueTaskRow.requires_key)
    )
    if run_ids is not None:
        query = query.where(QueueTaskRow.run_id.in_(list(run_ids)))
    with store.read_session() as session:
        return PendingSnapshot({key: (int(n_due or 0), int(n)) for key, n_due, n in session.execute(query)})


def claimed_workers(store: Any, run_ids: Sequence[str] | None = None) -> set[str]:
    """Workers that hold claims now (to find the dead ones among them)."""
    query = select(QueueTaskRow.worker).where(QueueTaskRow.state == TaskState.CLAIMED.value).distinct()
    if run_ids is not None:
        query = query.where(QueueTaskRow.run_id.in_(list(run_ids)))
    with store.read_session() as session:
        return {w for w in session.scalars(query) if w}


def run_counts(store: Any, run_id: str) -> RunCounts:
    query = (
        select(QueueTaskRow.state, func.count())
        .where(QueueTaskRow.run_id == run_id)
        .group_by(QueueTaskRow.state)
    )
    with store.read_session() as session:
        counts = dict(session.execute(query).all())
    return RunCounts(**{state.value: int(counts.get(state.value, 0)) for state in TaskState})


def open_run_ids(store: Any) -> list[str]:
    """Runs that still have pending or claimed tasks, oldest first."""
    query = (
        select(QueueTaskRow.run_id)
        .where(QueueTaskRow.state.in_([TaskState.PENDING.value, TaskState.CLAIMED.value]))
        .group_by(QueueTaskRow.run_id)
        .order_by(func.min(QueueTaskRow.id))
    )
    with store.read_session() as session:
        return list(session.scalars(query))


def list_tasks(store: Any, run_id: str) -> list[QueuedTask]:
    with store.read_session() as session:
        rows = session.scalars(
            select(QueueTaskRow).where(QueueTaskRow.run_id == run_id).order_by(QueueTaskRow.seq)
        )
        return [_queued(row) for row in rows]


def list_attempts(store: Any, run_id: str) -> list[AttemptInfo]:
    query = (
        select(QueueAttemptRow)
        .join(QueueTaskRow, QueueTaskRow.id == QueueAttemptRow.task_id)
        .where(QueueTaskRow.run_id == run_id)
        .order_by(QueueAttemptRow.task_id, QueueAttemptRow.attempt)
    )
    with store.read_session() as session:
        return [
            AttemptInfo(
                task_id=row.task_id,
                attempt=row.attempt,
                worker=row.worker,
                device=row.device,
                started_at=row.started_at,
                ended_at=row.ended_at,
                episode_id=row.episode_id,
                outcome=row.outcome,
                failure=Failure(row.failure) if row.failure else None,
                detail=row.detail,
            )
            for row in session.scalars(query)
        ]


def _queued(row: QueueTaskRow) -> QueuedTask:
    return QueuedTask(
        id=row.id,
        run_id=row.run_id,
        seq=row.seq,
        label=row.label,
        task=row.task,
        app=row.app,
        priority=row.priority,
        requires=tuple(sorted(parse_requires_key(row.requires_key))),
        state=TaskState(row.state),
        attempts=row.attempts,
        device_failures=row.device_failures,
        endpoint_failures=row.endpoint_failures,
        device=row.device,
        worker=row.worker,
        episode_id=row.episode_id,
        outcome=row.outcome,
        detail=row.detail,
        claimed_at=row.claimed_at,
        finished_at=row.finished_at,
        spec=dict(row.spec or {}),
    )


# ---------------------------------------------------------------------------------------------- farm devices
def _device_row(session: Session, key: str, serial: str, adb_server: str) -> FarmDeviceRow:
    query = select(FarmDeviceRow).where(FarmDeviceRow.key == key)
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update()
    row = session.scalar(query)
    if row is None:
        row = FarmDeviceRow(
            key=key, serial=serial, adb_server=adb_server, consecutive_failures=0, updated_at=now_utc()
        )
        session.add(row)
        session.flush()
    return row


def lease_device(
    store: Any,
    key: str,
    serial: str,
    adb_server: str,
    *,
    worker: str,
    lease_s: float,
    dead_workers: Iterable[str] = (),
) -> bool:
    """Take (or renew) the lease on a phone; False while another live worker holds it.

    A lease held by one of ``dead_workers`` (a crashed process on this host) is taken over at once.
    """
    from sqlalchemy.exc import IntegrityError

    dead = set(dead_workers)
    for attempt in range(2):
        try:
            with store.write_session() as session:
                row = _device_row(session, key, serial, adb_server)
                now = now_utc()
                held_by_other = (
                    row.worker not in (None, worker)
                    and row.worker not in dead
                    and row.lease_until is not None
                    and row.lease_until > now
                )
                if held_by_other:
                    return False
                row.worker = worker
                row.lease_until = now + timedelta(seconds=lease_s)
                row.updated_at = now
                return True
        except IntegrityError:
            if attempt:  # two hosts inserted the same phone at once; the second try sees the row
                raise
    return False


def lease_devices(
    store: Any,
    phones: Sequence[tuple[str, str, str]],
    *,
    worker: str,
    lease_s: float,
    is_dead: Callable[[str], bool] = lambda worker: False,
) -> set[str]:
    """``lease_device`` for many phones (key, serial, adb server) in one transaction: the keys now leased.

    A pool starting 32 workers takes one write lock instead of 32 (they would queue for it one by one)."""
    from sqlalchemy.exc import IntegrityError

    for attempt in range(2):
        try:
            with store.write_session() as session:
                now = now_utc()
                leased = set()
                for key, serial, adb_server in phones:
                    row = _device_row(session, key, serial, adb_server)
                    held_by_other = (
                        row.worker not in (None, worker)
                        and row.lease_until is not None
                        and row.lease_until > now
                        and not is_dead(row.worker)
                    )
                    if held_by_other:
                        continue
                    row.worker = worker
                    row.lease_until = now + timedelta(seconds=lease_s)
                    row.updated_at = now
                    leased.add(key)
                return leased
        except IntegrityError:
            if attempt:  # another host inserted one of these phones at the same moment; the retry sees it
                raise
    return set()


def release_devices(store: Any, keys: Sequence[str], *, worker: str) -> None:
    """Give back the leases ``worker`` holds on these phones (one transaction)."""
    if not keys:
        return
    with store.write_session() as session:
        session.execute(
            update(FarmDeviceRow)
            .where(FarmDeviceRow.key.in_(list(keys)), FarmDeviceRow.worker == worker)
            .values(worker=None, lease_until=None, updated_at=now_utc())
        )


def renew_device_leases(store: Any, keys: Sequence[str], *, worker: str, lease_s: float) -> int:
    """Extend the leases ``worker`` still holds on these phones; a lease released meanwhile stays released."""
    if not keys:
        return 0
    now = now_utc()
    with store.write_session() as session:
        result = session.execute(
            update(FarmDeviceRow)
            .where(FarmDeviceRow.key.in_(list(keys)), FarmDeviceRow.worker == worker)
            .values(lease_until=now + timedelta(seconds=lease_s), updated_at=now)
        )
        return result.rowcount


def release_device(store: Any, key: str, *, worker: str) -> None:
    with store.write_session() as session:
        session.execute(
            update(FarmDeviceRow)
            .where(FarmDeviceRow.key == key, FarmDeviceRow.worker == worker)
            .values(worker=None, lease_until=None, updated_at=now_utc())
        )


def record_device_result(
    store: Any,
    key: str,
    serial: str,
    adb_server: str,
    *,
    ok: bool,
    reason: str | None = None,
    quarantine_after: int = 2,
    probe_after_s: float = 60.0,
) -> FarmDeviceInfo:
    """Count consecutive infrastructure failures of a phone; quarantine it at ``quarantine_after``.

    A success (a result, or a passed probe) clears the count and lifts any quarantine.
    """
    with store.write_session() as session:
        row = _device_row(session, key, serial, adb_server)
        now = now_utc()
        if ok:
            row.consecutive_failures = 0
            row.quarantined_until = None
            row.quarantine_reason = None
        else:
            row.consecutive_failures += 1
            if row.consecutive_failures >= quarantine_after:
                row.quarantined_until = now + timedelta(seconds=probe_after_s)
                row.quarantine_reason = f"{row.consecutive_failures} infrastructure failures in a row; last: {reason or 'unknown'}"
        row.updated_at = now
        return _device_info(row)


def postpone_probe(store: Any, key: str, *, probe_after_s: float, reason: str) -> None:
    """A quarantined phone failed its probe: stay quarantined, try again later."""
    with store.write_session() as session:
        session.execute(
            update(FarmDeviceRow)
            .where(FarmDeviceRow.key == key)
            .values(
                quarantined_until=now_utc() + timedelta(seconds=probe_after_s),
                quarantine_reason=reason,
                updated_at=now_utc(),
            )
        )


def farm_devices(store: Any) -> list[FarmDeviceInfo]:
    with store.read_session() as session:
        return [
            _device_info(row) for row in session.scalars(select(FarmDeviceRow).order_by(FarmDeviceRow.key))
        ]


def farm_device(store: Any, key: str) -> FarmDeviceInfo | None:
    with store.read_session() as session:
        row = session.get(FarmDeviceRow, key)
        return _device_info(row) if row is not None else None


def _device_info(row: FarmDeviceRow) -> FarmDeviceInfo:
    return FarmDeviceInfo(
        key=row.key,
        serial=row.serial,
        adb_server=row.adb_server,
        worker=row.worker,
        lease_until=row.lease_until,
        consecutive_failures=row.consecutive_failures,
        quarantined_until=row.quarantined_until,
        quarantine_reason=row.quarantine_reason,
    )


# ------------------------------------------------------------------------------------------ held for a person
@dataclass(frozen=True)
class PersonHold:
    """A phone a person may be using: an episode paused on it (``paused``, until its reservation lapses), or a
    paused episode that ``mobile-agent resume`` is driving again (``resumed``, while that episode runs)."""

    serial: str
    adb_server: str | None  # as the episode recorded it; None when it ran on the default adb server
    episode_id: str
    until: datetime
    how: str  # paused | resumed


def person_holds(store: Any, now: datetime | None = None) -> list[PersonHold]:
    """Every phone held for a person right now. A resumed episode holds its phone at most as long again as its
    pause reserved it (so a resume process that died does not hold the phone forever)."""
    from mobile_agent.store.pauses import RESUMED, PauseRow, reserved_devices

    moment = now or now_utc()
    holds = [
        PersonHold(p.device, p.adb_server, p.episode_id, p.reserved_until, "paused")
        for p in reserved_devices(store, moment)
    ]
    query = (
        select(PauseRow)
        .join(EpisodeRow, EpisodeRow.id == PauseRow.episode_id)
        .where(
            PauseRow.status == RESUMED,
            PauseRow.resumed_at.is_not(None),
            EpisodeRow.status == EpisodeStatus.RUNNING.value,
        )
    )
    with store.read_session() as session:
        for row in session.scalars(query):
            until = row.resumed_at + (row.reserved_until - row.created_at)
            if until > moment:
                holds.append(PersonHold(row.device, row.adb_server, row.episode_id, until, "resumed"))
    return holds


# ------------------------------------------------------------------------------------------- crash clean-up
def discard_unrecorded_files(store: Any, episode_id: str) -> list[str]:
    """Delete the files of an episode that no step row refers to (a process killed between writing a step's
    screenshot and committing its row leaves one). Only for episodes that are no longer running.
    """
    directory: Path = store.root / episode_id
    if not directory.is_dir():
        return []
    with store.read_session() as session:
        referenced: set[str] = set()
        for shot, hierarchy in session.execute(
            select(StepRow.screenshot_path, StepRow.hierarchy_path).where(StepRow.episode_id == episode_id)
        ):
            referenced.update(p for p in (shot, hierarchy) if p)
    removed = []
    for path in sorted(directory.iterdir()):
        relative = f"{episode_id}/{path.name}"
        if path.is_file() and (relative not in referenced or path.name.startswith(TEMP_PREFIX)):
            path.unlink(missing_ok=True)
            removed.append(relative)
    return removed


__all__ = [
    "AttemptInfo",
    "Claim",
    "Failure",
    "FarmDeviceInfo",
    "FarmDeviceRow",
    "NewTask",
    "PendingSnapshot",
    "PersonHold",
    "QueueAttemptRow",
    "QueueTaskRow",
    "QueuedTask",
    "Reclaimed",
    "RunCounts",
    "TaskState",
    "claim_task",
    "claimed_workers",
    "count_servable",
    "discard_unrecorded_files",
    "enqueue_tasks",
    "farm_device",
    "farm_devices",
    "finish_task",
    "lease_device",
    "lease_devices",
    "list_attempts",
    "list_tasks",
    "now_utc",
    "open_run_ids",
    "pending_snapshot",
    "person_holds",
    "postpone_probe",
    "record_device_result",
    "reclaim_tasks",
    "release_device",
    "release_devices",
    "renew_claims",
    "renew_device_leases",
    "requires_key",
    "run_counts",
]
