"""Resume after a crash: give back the tasks of dead workers and end their episodes as ``interrupted``."""

from __future__ import annotations

from dataclasses import dataclass, field

from mobile_agent.actions import Outcome
from mobile_agent.errors import StoreError
from mobile_agent.farm.scheduler.jobs import outcome_failure
from mobile_agent.farm.scheduler.worker_ids import worker_is_dead
from mobile_agent.store import queue as q
from mobile_agent.store import queue_status as qs
from mobile_agent.store.integrity import discard_unrecorded_files
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.store import TrajectoryStore


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
    run_ids = [run_id]
    dead = {w for w in qs.claimed_workers(store, run_ids) if worker_is_dead(w)}
    episodes = store.list_episodes(run_id=run_id, limit=None)
    by_attempt = {}
    for episode in episodes:
        key = (episode.meta.get("queue_task"), episode.meta.get("attempt"))
        if key[0] is not None:
            by_attempt[key] = episode
    results: dict[tuple[int, int], tuple[str, str, str | None]] = {}
    for (task_id, attempt), episode in by_attempt.items():
        ended = episode.status is EpisodeStatus.ENDED and episode.outcome is not None
        if ended and outcome_failure(episode.outcome) is None:
            results[(int(task_id), int(attempt))] = (episode.id, str(episode.outcome), episode.outcome_detail)
    reclaimed = q.reclaim_tasks(store, run_ids=run_ids, dead_workers=dead, expired=True, results=results)
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
            continue  # ended meanwhile
        interrupted.append(episode.id)
    for episode_id in interrupted:
        discarded.extend(discard_unrecorded_files(store, episode_id))
    return Recovery(
        requeued=[r.task_id for r in reclaimed if not r.settled],
        settled=[r.task_id for r in reclaimed if r.settled],
        interrupted_episodes=interrupted,
        discarded_files=discarded,
    )
