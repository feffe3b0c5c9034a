"""A run's summary: outcomes by task (the final episode of each), by app and by phone; successes only when
verified."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mobile_agent.actions import Outcome
from mobile_agent.errors import MobileAgentError
from mobile_agent.store import phones as phone_db
from mobile_agent.store import queue as q
from mobile_agent.store import queue_status as qs
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.run_liveness import shown_status, stalled_runs
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)

AGENT_ENDED = frozenset({Outcome.FINISHED, Outcome.ANSWERED})


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    name: str
    status: str
    counts: qs.RunCounts
    by_outcome: dict[str, int]
    by_app: dict[str, dict[str, int]]
    by_phone: dict[str, dict[str, int]]
    episodes: int  # every episode recorded for the run, retries included
    attempts: int
    retries: int
    successes: int | None  # verified complete; None when verification is not available
    finished_unverified: int  # finished/answered without a verdict
    verdicts: dict[str, int]
    quarantined: list[str]
    waiting: list[str] = field(default_factory=list)  # needs_user episodes still waiting for a person
    questions: list[dict[str, Any]] = field(
        default_factory=list
    )  # what each waiting episode asks (farm/inbox)
    expired: list[str] = field(default_factory=list)  # nobody answered in time (needs_user:expired)
    # pending tasks no phone of the pool could take (Unmet.to_dict), as the pool that ran them saw them
    unmet: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "name": self.name,
            "status": self.status,
            "tasks": {
                "total": self.counts.total,
                "pending": self.counts.pending,
                "claimed": self.counts.claimed,
                "done": self.counts.done,
                "failed": self.counts.failed,
                "waiting": self.counts.waiting,
                "expired": self.counts.expired,
            },
            "by_outcome": self.by_outcome,
            "by_app": self.by_app,
            "by_phone": self.by_phone,
            "episodes": self.episodes,
            "attempts": self.attempts,
            "retries": self.retries,
            "successes": self.successes,
            "finished_unverified": self.finished_unverified,
            "verdicts": self.verdicts,
            "quarantined": self.quarantined,
            "waiting": self.waiting,
            "questions": self.questions,
            "expired": self.expired,
            "unmet": self.unmet,
        }


def summarize_run(store: TrajectoryStore, run_id: str) -> RunSummary:
    """Outcomes by task (the final episode of each), by app and by phone; successes only when verified.

    A task's outcome is its final episode's as it stands now: a needs_user episode that a person resumed counts with
    the outcome it reached after the resume. needs_user is a result, never a success; ``waiting`` lists the
    episodes still paused.
    """
    from mobile_agent.farm.inbox import list_waiting
    from mobile_agent.store.pauses import open_pause

    run = store.run(run_id)
    tasks = qs.list_tasks(store, run.id)
    attempts = qs.list_attempts(store, run.id)
    episodes = store.list_episodes(run_id=run.id, limit=None)
    now_outcome = {e.id: str(e.outcome) for e in episodes if e.status is EpisodeStatus.ENDED and e.outcome}
    by_outcome: Counter[str] = Counter()
    by_app: dict[str, Counter[str]] = {}
    by_phone: dict[str, Counter[str]] = {}
    phone_of = {(a.task_id, a.attempt): a.device for a in attempts}
    final: dict[str, str] = {}  # final episode -> its outcome now
    for task in tasks:
        outcome = now_outcome.get(task.episode_id or "", task.outcome) or str(task.state)
        by_outcome[outcome] += 1
        by_app.setdefault(task.app or "-", Counter())[outcome] += 1
        if task.state in _ENDED:
            phone = phone_of.get((task.id, task.attempts), "-").rpartition("/")[2]
            by_phone.setdefault(phone, Counter())[outcome] += 1
        if task.state in _RESULTS and task.episode_id:
            final[task.episode_id] = outcome
    successes, verdicts, unverified = _verdicts(store, final)
    waiting = [e for e, outcome in final.items() if outcome == Outcome.NEEDS_USER and open_pause(store, e)]
    asked = {q.episode_id: q for q in list_waiting(store, run_ids=[run.id])}
    questions = [asked[e].to_dict() for e in waiting if e in asked]
    expired = [e for e, outcome in final.items() if outcome == Outcome.NEEDS_USER_EXPIRED]
    quarantined = [
        info.serial
        for info in phone_db.farm_devices(store)
        if info.quarantined and any(a.device == info.key for a in attempts)
    ]
    return RunSummary(
        run_id=run.id,
        name=run.name,
        status=shown_status(run.status, run.id in stalled_runs(store, [run.id])),
        counts=qs.run_counts(store, run.id),
        by_outcome=dict(by_outcome),
        by_app={k: dict(v) for k, v in by_app.items()},
        by_phone={k: dict(v) for k, v in sorted(by_phone.items())},
        episodes=len(episodes),
        attempts=len(attempts),
        retries=sum(max(0, t.attempts - 1) for t in tasks),
        successes=successes,
        finished_unverified=unverified,
        verdicts=verdicts,
        quarantined=quarantined,
        waiting=waiting,
        questions=questions,
        expired=expired,
    )


_RESULTS = (q.TaskState.DONE, q.TaskState.WAITING, q.TaskState.EXPIRED)  # a final episode with a result
_ENDED = (*_RESULTS, q.TaskState.FAILED)


def _verdicts(store: TrajectoryStore, final: dict[str, str]) -> tuple[int | None, dict[str, int], int]:
    """(successes, verdict counts, finished-but-unverified) over the final episodes. Only an episode the agent
    ended (finished / answered) can be a success: a check that happens to pass on a paused or blocked episode's
    phone does not make it one."""
    ended_by_agent = {e for e, outcome in final.items() if outcome in AGENT_ENDED}
    try:
        from mobile_agent.verify.service import episode_verdict
        from mobile_agent.verify.verdict import Verdict, summarize
    except ImportError:
        return None, {}, len(ended_by_agent)
    found = {}
    for episode_id in final:
        try:
            found[episode_id] = episode_verdict(store, episode_id)
        except MobileAgentError as exc:
            log.warning("no verdict for episode %s: %s", episode_id, exc.one_line())
            found[episode_id] = None
    counts = dict(summarize(found.values()).counts)
    successes = sum(
        1
        for episode_id, verdict in found.items()
        if episode_id in ended_by_agent and verdict is not None and verdict.verdict is Verdict.COMPLETE
    )
    unverified = sum(1 for e in ended_by_agent if found.get(e) is None)
    return successes, counts, unverified
