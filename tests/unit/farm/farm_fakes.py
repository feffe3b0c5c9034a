"""Fakes for the farm's unit tests: phones that exist only as inventory entries, and an episode runner that
writes real episodes and steps into the store (so recovery, summaries and integrity checks see what a real run
leaves) but talks to no phone and no model."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from mobile_agent.actions import Action, Outcome
from mobile_agent.farm.inventory import FarmPhone, PhoneEntry, PhoneState
from mobile_agent.farm.scheduler.jobs import Job, JobResult
from mobile_agent.store.records import StepRecord
from mobile_agent.store.store import TrajectoryStore


def make_phones(n: int, tags: tuple[str, ...] = ()) -> list[FarmPhone]:
    return [
        FarmPhone(PhoneEntry(serial=f"phone-{i}", adb="127.0.0.1:1", tags=tags), PhoneState.ONLINE)
        for i in range(n)
    ]


class FakeRunner:
    """Runs a job as a short recorded episode. ``decide(job) -> outcome`` picks how it ends (default finished)."""

    def __init__(
        self,
        store: TrajectoryStore,
        decide: Callable[[Job], str] | None = None,
        *,
        steps: int = 2,
        step_s: float = 0.0,
    ) -> None:
        self.store = store
        self.decide = decide or (lambda job: Outcome.FINISHED)
        self.steps = steps
        self.step_s = step_s
        self.jobs: list[Job] = []
        self._lock = threading.Lock()

    def run(self, job: Job) -> JobResult:
        with self._lock:
            self.jobs.append(job)
        claim = job.claim
        episode = self.store.start_episode(
            claim.task,
            device=job.phone.serial,
            family="fake",
            model="fake",
            run_id=claim.run_id,
            app=claim.app,
            meta={"queue_task": claim.task_id, "attempt": claim.attempt, "worker": job.worker},
        )
        outcome = self.decide(job)
        try:
            for index in range(self.steps):
                if self.step_s:
                    time.sleep(self.step_s)
                self.store.record_step(episode.id, StepRecord(index=index, action=Action.wait(10)))
                job.on_step(index, episode.id)
        except KeyboardInterrupt:
            self.store.finish_episode(episode.id, Outcome.INTERRUPTED, detail="stopped")
            raise
        self.store.finish_episode(episode.id, outcome)
        return JobResult(episode.id, str(outcome), None, self.steps)
