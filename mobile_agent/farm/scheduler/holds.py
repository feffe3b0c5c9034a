"""People in the loop of a farm: an episode that paused keeps its phone for a bounded time, within a budget that
never starves the farm, and continues on that phone when a person answers.

- **The budget.** At most ``hold_share`` of the pool's phones (default 25 %) are held for people, and never all of
  them: one phone is always free for other work. A pause beyond the budget still waits in the inbox, its phone goes
  back to work, and the next free worker on that phone continues it once answered (the agent re-reads the screen
  then: an approval carries over only to the same action, and the model is asked again on a changed screen).
- **The window.** Every pause is answerable for ``hold_s`` seconds. Nobody answered: the episode ends as
  ``needs_user:expired`` (a result, never a success) and `batch --resume RUN` queues its task again.
- **The end.** A pool whose remaining work is only people's answers waits at most until the last window closes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from mobile_agent.actions import Outcome
from mobile_agent.errors import DeviceError, MobileAgentError, ModelUnavailable
from mobile_agent.farm.leases import hold_on
from mobile_agent.farm.scheduler.jobs import JobResult, StopRequested
from mobile_agent.store import answers as answer_db
from mobile_agent.store.convert import now_utc
from mobile_agent.store.pauses import open_pause
from mobile_agent.store.phones import PersonHold

if TYPE_CHECKING:
    from mobile_agent.farm.scheduler.pool import PhoneWorker, WorkerPool

log = logging.getLogger(__name__)


class HoldBudget:
    """How many of a pool's phones may be held for people at once: ``share`` of them, at least one when there are
    two or more phones, and always one phone fewer than the pool has."""

    def __init__(self, phones: int, share: float) -> None:
        share = min(1.0, max(0.0, share))
        self.cap = 0 if phones <= 1 or share == 0 else min(phones - 1, max(1, int(phones * share)))
        self._held = 0
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            if self._held >= self.cap:
                return False
            self._held += 1
            return True

    def give_back(self) -> None:
        with self._lock:
            self._held = max(0, self._held - 1)

    @property
    def held(self) -> int:
        with self._lock:
            return self._held


class WindowCache:
    """The open windows of a pool's runs, read at most every ``max_age_s`` and shared by its workers."""

    def __init__(self, pool: WorkerPool, max_age_s: float) -> None:
        self.pool = pool
        self.max_age_s = max_age_s
        self._windows: list[answer_db.Window] = []
        self._at: float | None = None
        self._lock = threading.Lock()

    def get(self, *, fresh: bool = False) -> list[answer_db.Window]:
        with self._lock:
            now = time.monotonic()
            if fresh or self._at is None or now - self._at >= self.max_age_s:
                self._windows = answer_db.open_windows(self.pool.store, self.pool.run_ids)
                self._at = now
            return self._windows


# ------------------------------------------------------------------------------------------------ a worker's side
def attend(worker: PhoneWorker, episode_id: str, spec: Mapping[str, Any]) -> None:
    """The episode just paused on this worker's phone: open its window; within the budget keep the phone and
    continue the episode as soon as a person answers (again and again, should it pause once more)."""
    try:
        while not worker.pool.stopping.is_set():
            result = _attend_once(worker, episode_id, spec)
            if result is None or result.outcome != Outcome.NEEDS_USER:
                return
    finally:
        worker.status = "idle"  # the worker's loop says what it does next


def _attend_once(worker: PhoneWorker, episode_id: str, spec: Mapping[str, Any]) -> JobResult | None:
    """One pause: its window, and the continued episode's result when a person answered while the phone was held."""
    pool = worker.pool
    pause = open_pause(pool.store, episode_id)
    if pause is None:
        return None
    held = pool.hold_budget.take()
    answer_by = now_utc() + timedelta(seconds=max(0.0, pool.config.hold_s))
    try:
        answer_db.open_window(
            pool.store, pause.id, episode_id, answer_by=answer_by, held_by=pool.worker_id if held else None
        )
        pool.windows.get(fresh=True)
        reply = "yes|no" if pause.kind == "confirm" else "TEXT"
        worker._emit(
            "waiting",
            episode_id=episode_id,
            outcome="held" if held else "waiting",
            detail=f"{_first_line(pause.question) or pause.kind} — answer: "
            f"mobile-agent inbox answer {episode_id} --reply {reply}",
        )
        if not held:
            return None
        worker.status = "holding"
        got = _wait_for_reply(worker, pause.id, answer_by)
    finally:
        if held:
            pool.hold_budget.give_back()
    if got is None:
        if pool.stopping.is_set():
            answer_db.let_go(pool.store, pause.id)  # still answerable; the phone is free
        elif answer_db.expire_window(pool.store, pause.id):
            worker._emit("expired", episode_id=episode_id, outcome=str(Outcome.NEEDS_USER_EXPIRED))
        return None
    return continue_episode(worker, episode_id, got, spec)


def _wait_for_reply(worker: PhoneWorker, pause_id: int, answer_by) -> answer_db.PauseAnswer | None:
    pool = worker.pool
    while not pool.stopping.is_set():
        got = answer_db.take_reply(pool.store, pause_id, worker=pool.worker_id)
        if got is not None:
            return got
        left = (answer_by - now_utc()).total_seconds()
        if left <= 0:
            # the last look: an answer given in the final moment still counts
            return answer_db.take_reply(pool.store, pause_id, worker=pool.worker_id)
        pool.stopping.wait(min(pool.config.poll_s, left))
    return None


def continue_answered(worker: PhoneWorker) -> bool:
    """An answered question waits for this worker's phone (it was not held): continue that episode now. True when
    the worker did something."""
    pool = worker.pool
    windows = [w for w in pool.windows.get() if w.answered and not w.taken]
    if not windows:
        return False
    holds = [PersonHold(w.device, w.adb_server, w.episode_id, w.answer_by, "answered") for w in windows]
    mine = hold_on(worker.entry, holds)
    if mine is None:
        return False
    window = next(w for w in windows if w.episode_id == mine.episode_id)
    worker.status = "continuing"  # before taking the reply: the pool must not end in between
    got = answer_db.take_reply(pool.store, window.pause_id, worker=pool.worker_id)
    pool.windows.get(fresh=True)
    if got is None:
        worker.status = "idle"
        return False
    spec = answer_db.task_spec(pool.store, window.episode_id)
    result = continue_episode(worker, window.episode_id, got, spec)
    if result is not None and result.outcome == Outcome.NEEDS_USER:
        attend(worker, window.episode_id, spec)
    return True


def continue_episode(
    worker: PhoneWorker, episode_id: str, got: answer_db.PauseAnswer, spec: Mapping[str, Any]
) -> JobResult | None:
    """Continue the same episode on this phone with the person's reply; the task's outcome follows it."""
    pool = worker.pool
    resume = getattr(pool.runner, "resume", None)
    worker.status = "continuing"
    worker.episode_id = episode_id
    worker._emit("answered", episode_id=episode_id, detail=f"{got.reply!r} by {got.replied_by}")
    if resume is None:
        log.warning("this runner cannot continue paused episodes; %s stays waiting", episode_id)
        return None
    try:
        result = resume(worker.entry, episode_id, got.reply, worker._on_step, check=spec.get("check"))
    except StopRequested:
        result = JobResult(episode_id, Outcome.INTERRUPTED, "the batch was stopped")
    except ModelUnavailable as exc:
        result = JobResult(episode_id, Outcome.error("model_unavailable"), exc.one_line())
    except DeviceError as exc:
        result = JobResult(episode_id, Outcome.error(getattr(exc, "kind", "device")), exc.one_line())
    except MobileAgentError as exc:  # it was resumed elsewhere meanwhile, or its pause is gone
        log.warning("could not continue episode %s: %s", episode_id, exc.one_line())
        return None
    except Exception as exc:  # noqa: BLE001 - a worker must not die of one episode
        log.exception("continuing episode %s failed unexpectedly", episode_id)
        result = JobResult(episode_id, Outcome.error("runtime"), f"{type(exc).__name__}: {exc}")
    finally:
        worker.episode_id = None
    answer_db.set_task_outcome(pool.store, episode_id, result.outcome, result.detail)
    worker._emit("continued", episode_id=episode_id, outcome=result.outcome, detail=result.detail)
    return result


# ------------------------------------------------------------------------------------------------- the pool's side
def sweep(pool: WorkerPool) -> None:
    """Close the windows of the pool's runs nobody answered in time (any host's: the holder may be gone)."""
    now = now_utc()
    due = [w for w in pool.windows.get() if not w.answered and w.answer_by <= now]
    for window in due:
        if answer_db.expire_window(pool.store, window.pause_id):
            pool.emit_expired(window.episode_id)
    if due:
        pool.windows.get(fresh=True)


def keeps_waiting(pool: WorkerPool) -> bool:
    """True while people's answers are the pool's work: a worker holds or continues an episode, a window of its
    runs is still answerable, or an answered question waits for one of its phones."""
    if any(w.status in ("attending", "holding", "continuing") for w in pool.workers if w.is_alive()):
        return True
    alive = [w.entry for w in pool.workers if w.is_alive()]
    for window in pool.windows.get():
        if not window.answered:
            return True  # answerable until sweep() closes it (answer_by is at most hold_s away)
        if window.answered and not window.taken:
            hold = PersonHold(
                window.device, window.adb_server, window.episode_id, window.answer_by, "answered"
            )
            if any(hold_on(entry, [hold]) for entry in alive):
                return True
    return False


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0][:200] if lines else ""


__all__ = [
    "HoldBudget",
    "WindowCache",
    "attend",
    "continue_answered",
    "continue_episode",
    "keeps_waiting",
    "sweep",
]
