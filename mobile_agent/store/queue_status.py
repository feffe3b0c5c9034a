"""What the task queue holds, read without changing it: a run's counts, its tasks and their attempts, the
pending tasks by requirement set (so idle workers know whether a claim could succeed), the workers holding claims.

    counts = run_counts(store, run.id)           # RunCounts(pending=3, claimed=1, done=5, failed=0)
    for task in list_tasks(store, run.id): ...   # QueuedTask, in file order
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import case, func, or_, select

from mobile_agent.store.convert import now_utc
from mobile_agent.store.outages import retried
from mobile_agent.store.queue import Failure, QueueAttemptRow, QueueTaskRow, TaskState, parse_requires_key
from mobile_agent.store.store import TrajectoryStore


# ------------------------------------------------------------------------------------------------------ records
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
class RunCounts:
    pending: int = 0
    claimed: int = 0
    done: int = 0
    failed: int = 0
    waiting: int = 0  # for a person's answer (needs_user)
    expired: int = 0  # nobody answered in time (needs_user:expired)

    @property
    def total(self) -> int:
        return self.pending + self.claimed + self.done + self.failed + self.waiting + self.expired

    @property
    def open(self) -> int:
        return self.pending + self.claimed


# ------------------------------------------------------------------------------------------------------ queries
@retried
def count_servable(
    store: TrajectoryStore, *, tags: Iterable[str], run_ids: Sequence[str] | None = None
) -> int:
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

    def requirement_sets(self) -> list[str]:
        """The requirement sets pending (due or not): what a claim passes as ``requires_keys``. A set enqueued
        after the snapshot is claimed from the next one."""
        return list(self.by_requirements)


@retried
def pending_snapshot(store: TrajectoryStore, run_ids: Sequence[str] | None = None) -> PendingSnapshot:
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


@retried
def claimed_workers(store: TrajectoryStore, run_ids: Sequence[str] | None = None) -> set[str]:
    """Workers that hold claims now (to find the dead ones among them)."""
    query = select(QueueTaskRow.worker).where(QueueTaskRow.state == TaskState.CLAIMED.value).distinct()
    if run_ids is not None:
        query = query.where(QueueTaskRow.run_id.in_(list(run_ids)))
    with store.read_session() as session:
        return {w for w in session.scalars(query) if w}


@retried
def run_counts(store: TrajectoryStore, run_id: str) -> RunCounts:
    query = (
        select(QueueTaskRow.state, func.count())
        .where(QueueTaskRow.run_id == run_id)
        .group_by(QueueTaskRow.state)
    )
    with store.read_session() as session:
        counts = dict(session.execute(query).all())
    return RunCounts(**{state.value: int(counts.get(state.value, 0)) for state in TaskState})


@retried
def open_run_ids(store: TrajectoryStore) -> list[str]:
    """Runs that still have pending or claimed tasks, oldest first."""
    query = (
        select(QueueTaskRow.run_id)
        .where(QueueTaskRow.state.in_([TaskState.PENDING.value, TaskState.CLAIMED.value]))
        .group_by(QueueTaskRow.run_id)
        .order_by(func.min(QueueTaskRow.id))
    )
    with store.read_session() as session:
        return list(session.scalars(query))


@retried
def list_tasks(store: TrajectoryStore, run_id: str) -> list[QueuedTask]:
    with store.read_session() as session:
        rows = session.scalars(
            select(QueueTaskRow).where(QueueTaskRow.run_id == run_id).order_by(QueueTaskRow.seq)
        )
        return [_queued(row) for row in rows]


@retried
def list_attempts(store: TrajectoryStore, run_id: str) -> list[AttemptInfo]:
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


__all__ = [
    "AttemptInfo",
    "PendingSnapshot",
    "QueuedTask",
    "RunCounts",
    "claimed_workers",
    "count_servable",
    "list_attempts",
    "list_tasks",
    "open_run_ids",
    "pending_snapshot",
    "run_counts",
]
