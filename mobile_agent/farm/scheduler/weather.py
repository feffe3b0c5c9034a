"""A worker riding out an outage of the store (mobile_agent.store.outages).

While the store is away, an episode in flight waits at its next record (it never acts unrecorded) and keeps its
phone. Should the outage last until the worker's claim could lapse (``WorkerPool.lease_deadline``), the episode stops
before touching the phone again (``LeaseLapsing``): the worker keeps the task as *stranded* and, once the store is
back, ends that episode as ``interrupted`` and gives the task back to the queue (or finds that another worker took
it over meanwhile). An outage past the store's bound stops every worker cleanly (``WorkerPool.store_lost``): what
they held stays claimed and running in the database until its leases lapse, and live workers (or
``batch --resume``) take it over.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from mobile_agent.actions import Outcome
from mobile_agent.errors import StoreError
from mobile_agent.farm.scheduler.jobs import JobResult
from mobile_agent.store import queue as q
from mobile_agent.store.outages import LeaseLapsing, StoreUnavailable
from mobile_agent.store.records import EpisodeStatus

if TYPE_CHECKING:
    from mobile_agent.farm.scheduler.pool import PhoneWorker

log = logging.getLogger(__name__)


def ride_out(worker: PhoneWorker, exc: StoreUnavailable) -> bool:
    """What a worker does when a store call gave up: True to go on (the store may come back within its bound),
    False to stop (the bound is over: the whole pool stops)."""
    if isinstance(exc, LeaseLapsing):
        worker.status = "waiting_for_store"
        worker.claim, worker.episode_id = None, None  # from now on it waits by the store's own bound
        return True
    worker.pool.store_lost(exc)
    return False


def settle(worker: PhoneWorker) -> None:
    """The store is reachable again (this call waits for it): end the stranded task's episode as interrupted and
    give the task back to the queue; a task another worker took over meanwhile is left to it."""
    if worker.stranded is None:
        return
    claim, result = worker.stranded
    pool = worker.pool
    episode_id = result.episode_id or _episode_of(worker, claim)
    detail = f"the store was unreachable until the lease could lapse: {result.detail or ''}".strip()
    if episode_id is not None:
        try:
            pool.store.finish_episode(episode_id, Outcome.INTERRUPTED, detail=detail)
        except StoreUnavailable:
            raise
        except StoreError as exc:  # ended meanwhile by whoever took the task over
            log.debug("stranded episode %s: %s", episode_id, exc.one_line())
    worker._report(claim, JobResult(episode_id, str(Outcome.INTERRUPTED), detail))  # back to the queue
    worker.stranded = None
    pool.untrack(claim)


def _episode_of(worker: PhoneWorker, claim: q.Claim) -> str | None:
    """The episode a stranded claim had started before its first step was reported, if any."""
    for episode in worker.pool.store.list_episodes(
        run_id=claim.run_id, status=EpisodeStatus.RUNNING, limit=None
    ):
        meta = episode.meta
        if meta.get("queue_task") == claim.task_id and meta.get("attempt") == claim.attempt:
            return episode.id
    return None


__all__ = ["ride_out", "settle"]
