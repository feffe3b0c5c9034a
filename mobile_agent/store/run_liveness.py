"""Whether anyone still serves a run, read from what the store already keeps (nothing is written): a run recorded
as ``running`` whose open tasks no live worker serves is *stalled* — its batch stopped with tasks left (no phone
could take them), or its workers died and their leases lapsed. ``runs``, ``runs show`` and the console show it so.

A worker is live while it holds a phone's lease (renewed by its heartbeat, every 10 s; it lapses 60 s after the
last renewal, and a worker that stops releases it at once) or a claim whose lease has not lapsed. A run is served
while one of its tasks holds a live claim, or one of the workers that claimed its tasks is live; a run none of
whose tasks was ever claimed is served while any worker is live (a worker serves every open run unless told
otherwise).

    stalled = stalled_runs(store, [run.id for run in runs])   # {run id, ...}
    status = shown_status(run.status, run.id in stalled)       # "stalled" instead of "running"
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select

from mobile_agent.store.convert import now_utc
from mobile_agent.store.outages import retried
from mobile_agent.store.phones import FarmDeviceRow
from mobile_agent.store.queue import QueueAttemptRow, QueueTaskRow, TaskState
from mobile_agent.store.records import RunStatus
from mobile_agent.store.schema import RunRow
from mobile_agent.store.store import TrajectoryStore

STALLED = "stalled"
_OPEN = (TaskState.PENDING.value, TaskState.CLAIMED.value)


@retried
def stalled_runs(store: TrajectoryStore, run_ids: Sequence[str], now: datetime | None = None) -> set[str]:
    """The runs among ``run_ids`` recorded as running, with open tasks, that no live worker serves now."""
    now = now or now_utc()
    ids = list(dict.fromkeys(run_ids))
    if not ids:
        return set()
    with store.read_session() as session:
        running = set(
            session.scalars(
                select(RunRow.id).where(RunRow.id.in_(ids), RunRow.status == RunStatus.RUNNING.value)
            )
        )
        if not running:
            return set()
        open_runs: set[str] = set()
        claimed_live: set[str] = set()
        for run_id, state, lease_until in session.execute(
            select(QueueTaskRow.run_id, QueueTaskRow.state, QueueTaskRow.lease_until).where(
                QueueTaskRow.run_id.in_(list(running)), QueueTaskRow.state.in_(_OPEN)
            )
        ):
            open_runs.add(run_id)
            if state == TaskState.CLAIMED.value and lease_until is not None and lease_until > now:
                claimed_live.add(run_id)
        workers: dict[str, set[str]] = defaultdict(set)
        for run_id, worker in session.execute(
            select(QueueTaskRow.run_id, QueueAttemptRow.worker)
            .join(QueueAttemptRow, QueueAttemptRow.task_id == QueueTaskRow.id)
            .where(QueueTaskRow.run_id.in_(list(open_runs)))
            .distinct()
        ):
            workers[run_id].add(worker)
        live = set(
            session.scalars(
                select(FarmDeviceRow.worker).where(
                    FarmDeviceRow.worker.is_not(None), FarmDeviceRow.lease_until > now
                )
            )
        )
    return {
        run_id
        for run_id in open_runs - claimed_live
        if not (workers[run_id] & live if workers[run_id] else live)
    }


def shown_status(status: str, stalled: bool) -> str:
    """The status to show: ``stalled`` for a running run that no live worker serves."""
    return STALLED if stalled and str(status) == RunStatus.RUNNING.value else str(status)


__all__ = ["STALLED", "shown_status", "stalled_runs"]
