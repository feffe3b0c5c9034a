"""What a worker hands an episode runner and what comes back, the progress events, and how an episode outcome is
classed: a result, or an infrastructure failure (the phone's, the endpoint's, or an interruption)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from mobile_agent.actions import Outcome
from mobile_agent.farm.inventory import PhoneEntry
from mobile_agent.store import queue as q

CONFIG_ERROR = "config"  # the task itself is wrong: a result for the task, never a failure of the phone
# A replay that stopped where the phone differs from its recording (divergence) is a result too, not the phone's fault;
# so is a task its caller stopped (``stopped``: the MCP server's stop_episode), which is not run again.
MODEL_RESULT_ERRORS = frozenset(
    {"parse", "invalid_action", "unknown_app", "model", "divergence", "stopped", CONFIG_ERROR}
)
ENDPOINT_ERRORS = frozenset({"model_unavailable"})


@dataclass(frozen=True)
class SchedulerConfig:
    max_device_retries: int = 2  # N: infrastructure failures of one task before it is given up
    max_endpoint_retries: int = 20  # endpoint-down failures of one task before it is given up
    quarantine_after: int = 2  # K: consecutive infrastructure failures that quarantine a phone
    probe_every_s: float = 60.0  # a quarantined phone is probed again after this long
    lease_s: float = 60.0  # a claim (and a phone lease) lapses this long after the last heartbeat
    heartbeat_s: float = 10.0
    poll_s: float = 0.5  # idle workers look at the queue this often
    endpoint_backoff_s: float = 2.0  # first pause after the endpoint failed; doubles up to the max
    endpoint_backoff_max_s: float = 30.0
    stall_s: float = 120.0  # stop when no phone can make progress for this long
    holds_max_age_s: float = 2.0  # a phone a person took outside this pool is noticed within this long
    until_done: bool = True  # False: keep serving (a `worker` that waits for new submissions)
    hold_s: float = 300.0  # a paused episode is answerable (and may keep its phone) this long
    hold_share: float = 0.25  # at most this share of the phones are held for people (never all of them)


def outcome_failure(outcome: str) -> q.Failure | None:
    """None for a result; else the infrastructure failure class of an episode outcome."""
    if outcome == Outcome.INTERRUPTED:
        return q.Failure.INTERRUPTED
    if not outcome.startswith("error:"):
        return None
    kind = outcome.removeprefix("error:")
    if kind in MODEL_RESULT_ERRORS:
        return None
    if kind in ENDPOINT_ERRORS:
        return q.Failure.ENDPOINT
    return q.Failure.DEVICE


@dataclass(frozen=True)
class ProgressEvent:
    """What the live display and --json consumers see. ``kind``: claimed, step, done, retry, failed,
    quarantined, probe_failed, restored, endpoint_down, endpoint_up, idle, busy_elsewhere, stopped."""

    kind: str
    phone: str
    task_id: int | None = None
    label: str | None = None
    task: str | None = None
    attempt: int | None = None
    step: int | None = None
    outcome: str | None = None
    episode_id: str | None = None
    detail: str | None = None
    at: float = field(default_factory=time.time)


EventSink = Callable[[ProgressEvent], None]


class StopRequested(KeyboardInterrupt):
    """Raised inside a worker's episode (from the step callback) when the batch is stopping.

    A KeyboardInterrupt so the agent loop records the episode as ``interrupted`` exactly as for Ctrl-C.
    """


@dataclass(frozen=True)
class Job:
    """One attempt of one task on one phone, as handed to a runner."""

    claim: q.Claim
    phone: PhoneEntry
    worker: str
    on_step: Callable[[int, str], None]  # (step index, episode id); raises StopRequested when stopping


@dataclass(frozen=True)
class JobResult:
    """What came of a job. ``episode_id`` is None when no episode was started (the reset failed)."""

    episode_id: str | None
    outcome: str
    detail: str | None = None
    steps: int = 0


class EpisodeRunner(Protocol):
    def run(self, job: Job) -> JobResult: ...
