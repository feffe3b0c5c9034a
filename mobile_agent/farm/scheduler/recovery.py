"""Resume after a crash, and live workers taking over from dead ones: give back the tasks of workers that are gone
and end their episodes as ``interrupted``."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import select

from mobile_agent.actions import Outcome
from mobile_agent.errors import StoreError
from mobile_agent.farm.scheduler.jobs import outcome_failure
from mobile_agent.farm.scheduler.worker_ids import worker_is_dead
from mobile_agent.store import answers as answer_db
from mobile_agent.store import queue as q
from mobile_agent.store import queue_status as qs
from mobile_agent.store.convert import now_utc
from mobile_agent.store.integrity import discard_unrecorded_files
from mobile_agent.store.owners import end_gone_episodes
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Recovery:
    """What ``recover_run`` found and did."""

    requeued: list[int] = field(default_factory=list)  # task ids back to pending
    settled: list[int] = field(default_factory=list)  # task ids whose episode had ended with a result
    interrupted_episodes: list[str] = field(default_factory=list)  # episodes left running, now ended
    discarded_files: list[str] = field(default_factory=list)


def recover_run(store: TrajectoryStore, run_id: str) -> Recovery:
    """After a crash or `kill -9`: give back the tasks of dead workers, end their episodes as ``interrupted``.

    A task whose episode had already ended with a result (the process died between finishing the episode and
    marking the task) is marked done with that episode instead of being run again. Claims of live workers, and
    of workers on other hosts whose lease has not lapsed, are left alone.
    """
    return take_over(store, [run_id], always=True)


def take_over(
    store: TrajectoryStore,
    run_ids: Sequence[str] | None,
    *,
    always: bool = False,
    me: str | None = None,
) -> Recovery:
    """What a live worker does when it starts and on every heartbeat (and `batch --resume` once): episodes whose
    process is gone end as ``interrupted``; the claims of workers that are gone (dead on this host, or whose lease
    lapsed) go back to the queue, exactly once (the claim rows are locked, a claim taken back is no longer
    ``claimed``), or are settled as done when their episode had ended with a result.

    Without ``always`` it returns at once (two cheap reads) when no claim is held by a gone worker. The claims of
    ``me`` (the calling worker) are never taken back.
    """
    end_gone_episodes(store)
    freed = answer_db.release_gone_holds(store, lambda worker: worker != me and worker_is_dead(worker))
    if freed:
        log.warning(
            "%d question(s) kept a phone for a worker that is gone: the phone is free again", len(freed)
        )
    dead = {w for w in qs.claimed_workers(store, run_ids) if worker_is_dead(w)}
    if not always and not dead and not _lapsed_claims(store, run_ids):
        return Recovery()
    wanted = list(run_ids) if run_ids is not None else _claimed_runs(store)
    episodes = [e for run in wanted for e in store.list_episodes(run_id=run, limit=None)]
    results: dict[tuple[int, int], tuple[str, str, str | None]] = {}
    for episode in episodes:
        task_id, attempt = episode.meta.get("queue_task"), episode.meta.get("attempt")
        ended = episode.status is EpisodeStatus.ENDED and episode.outcome is not None
        if task_id is not None and ended and outcome_failure(episode.outcome) is None:
            results[(int(task_id), int(attempt))] = (episode.id, str(episode.outcome), episode.outcome_detail)
    reclaimed = q.reclaim_tasks(
        store,
        run_ids=run_ids,
        dead_workers=dead,
        expired=True,
        results=results,
        live_workers=[me] if me else (),
    )
    gone_workers = dead | {r.worker for r in reclaimed}
    interrupted: list[str] = []
    discarded: list[str] = []
    for episode in episodes:
        if episode.status is not EpisodeStatus.RUNNING or episode.meta.get("worker") not in gone_workers:
            continue
        try:
            store.finish_episode(
                episode.id, Outcome.INTERRUPTED, detail="the batch process stopped during this episode"
            )
        except StoreError:
            if store.episode(episode.id).outcome_detail != q.FENCED_DETAIL:
                continue  # ended meanwhile by its own process
        interrupted.append(episode.id)  # ended here, or when its claim was taken back
    for episode_id in interrupted:
        discarded.extend(discard_unrecorded_files(store, episode_id))
    if reclaimed:
        log.warning("took back %d task(s) from stopped workers: %s", len(reclaimed), sorted(gone_workers))
    return Recovery(
        requeued=[r.task_id for r in reclaimed if not r.settled],
        settled=[r.task_id for r in reclaimed if r.settled],
        interrupted_episodes=interrupted,
        discarded_files=discarded,
    )


def _lapsed_claims(store: TrajectoryStore, run_ids: Sequence[str] | None) -> bool:
    query = select(q.QueueTaskRow.id).where(
        q.QueueTaskRow.state == q.TaskState.CLAIMED.value, q.QueueTaskRow.lease_until < now_utc()
    )
    if run_ids is not None:
        query = query.where(q.QueueTaskRow.run_id.in_(list(run_ids)))
    with store.read_session() as session:
        return session.scalar(query.limit(1)) is not None


def _claimed_runs(store: TrajectoryStore) -> list[str]:
    query = select(q.QueueTaskRow.run_id).where(q.QueueTaskRow.state == q.TaskState.CLAIMED.value).distinct()
    with store.read_session() as session:
        return list(session.scalars(query))
