"""Batch scheduling: one worker thread per phone claims tasks from the durable queue, runs each as an episode and
reports back; infrastructure failures are retried on another phone, a phone that keeps failing is quarantined and
probed again later, a model endpoint that is down pauses everyone instead of failing every task, Ctrl-C ends every
in-flight episode as ``interrupted``, and a crashed batch is resumed without redoing or duplicating work.

    store = TrajectoryStore.open()
    run = submit(store, "tasks.yaml", name="nightly")
    pool = WorkerPool(store, phones, AgentRunner(store, ModelSettings(["http://gpu:8000/v1"], "ui-venus-2")),
                      run_ids=[run.id], on_event=print)
    pool.run()                                   # until the run has no open task (or Ctrl-C)
    print(summarize_run(store, run.id).to_dict())

Outcome classes: finished / answered / needs_user / blocked / max_steps / loop / timeout and the model's own
errors (parse, invalid_action, unknown_app, model) are results. error:model_unavailable is the endpoint being down;
interrupted is Ctrl-C or a dead worker; every other error:<kind> (device_lost, u2 crash, ...) is the phone's fault.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mobile_agent.actions import Outcome
from mobile_agent.device.farm import FarmPhone, PhoneEntry, PhoneState, probe_online
from mobile_agent.errors import DeviceError, MobileAgentError, ModelUnavailable, StoreError, UserError
from mobile_agent.store import EpisodeStatus, RunInfo, RunStatus, TrajectoryStore
from mobile_agent.store import queue as q
from mobile_agent.tasks import ResetMode, load_tasks, to_new_tasks

log = logging.getLogger(__name__)

MODEL_RESULT_ERRORS = frozenset({"parse", "invalid_action", "unknown_app", "model"})
ENDPOINT_ERRORS = frozenset({"model_unavailable"})


# --------------------------------------------------------------------------------------------------- config
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
    until_done: bool = True  # False: keep serving (a `worker` that waits for new submissions)


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


# --------------------------------------------------------------------------------------------------- events
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


# --------------------------------------------------------------------------------------------------- runner
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


# ---------------------------------------------------------------------------------------- endpoint gate
class EndpointGate:
    """Shared by the workers of a pool: after an endpoint failure nobody starts an episode until a probe passes.

    The first worker to arrive after the pause probes (``probe() -> str | None``, None = up); the others wait.
    """

    def __init__(
        self, probe: Callable[[], str | None] | None, *, backoff_s: float, max_backoff_s: float
    ) -> None:
        self._probe = probe
        self._backoff_s = backoff_s
        self._max_s = max_backoff_s
        self._cond = threading.Condition()
        self._paused_until = 0.0
        self._delay = 0.0
        self._probing = False

    @property
    def down(self) -> bool:
        return self._delay > 0

    def report_failure(self) -> float:
        """Pause everyone; returns the pause in seconds."""
        with self._cond:
            self._delay = min(self._max_s, self._delay * 2) if self._delay else self._backoff_s
            self._paused_until = max(self._paused_until, time.monotonic() + self._delay)
            return self._delay

    def report_success(self) -> None:
        with self._cond:
            self._delay = 0.0
            self._paused_until = 0.0
            self._cond.notify_all()

    def wait(self, stop: threading.Event) -> bool:
        """Block until the endpoint is believed up. False when ``stop`` was set while waiting."""
        while not stop.is_set():
            with self._cond:
                now = time.monotonic()
                if self._delay == 0:
                    return True
                if now < self._paused_until or self._probing:
                    self._cond.wait(timeout=min(0.25, max(0.01, self._paused_until - now)))
                    continue
                self._probing = True
            problem = self._probe() if self._probe is not None else None
            with self._cond:
                self._probing = False
                if problem is None:
                    self._delay = 0.0
                    self._paused_until = 0.0
                    self._cond.notify_all()
                    return True
                self._delay = min(self._max_s, self._delay * 2)
                self._paused_until = time.monotonic() + self._delay
                log.warning("model endpoint still down (%s); next probe in %.0f s", problem, self._delay)
        return False


# ---------------------------------------------------------------------------------------------- worker ids
def new_worker_id() -> str:
    """host:pid:random — the host and pid let `--resume` tell a dead batch process from a live one."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


def worker_is_dead(worker: str) -> bool:
    """True only when the worker ran on this host and its process is gone. Other hosts: rely on lease expiry."""
    host, _, rest = worker.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


# ----------------------------------------------------------------------------------------------------- worker
class PhoneWorker(threading.Thread):
    """Serves one phone: lease it, then claim -> run -> report until the pool stops or the queue is drained."""

    def __init__(self, pool: WorkerPool, phone: FarmPhone) -> None:
        super().__init__(name=f"worker-{phone.serial}", daemon=True)
        self.pool = pool
        self.phone = phone
        self.entry = phone.entry
        self.status = "starting"  # starting, idle, starved, running, quarantined, stopped
        self.claim: q.Claim | None = None
        self.episode_id: str | None = None
        self.tags: frozenset[str] = phone.entry.all_tags(pool.extra_tags.get(phone.key, ()))

    # --- helpers --------------------------------------------------------------------------------------------
    def _emit(self, kind: str, claim: q.Claim | None = None, **fields: Any) -> None:
        if claim is not None:
            fields.setdefault("task_id", claim.task_id)
            fields.setdefault("label", claim.label)
            fields.setdefault("task", claim.task)
            fields.setdefault("attempt", claim.attempt)
        self.pool.emit(ProgressEvent(kind, self.entry.serial, **fields))

    @property
    def cfg(self) -> SchedulerConfig:
        return self.pool.config

    # --- the loop -------------------------------------------------------------------------------------------
    def run(self) -> None:
        pool = self.pool
        if not pool.lease_phone(self.entry):
            self.status = "stopped"
            self._emit("busy_elsewhere", detail="another worker holds this phone's lease")
            return
        try:
            while not pool.stopping.is_set():
                if not self._usable():
                    continue
                if not pool.gate.wait(pool.stopping):
                    break
                claim = q.claim_task(
                    pool.store,
                    worker=pool.worker_id,
                    device=self.entry.key,
                    tags=self.tags,
                    run_ids=pool.run_ids,
                    lease_s=self.cfg.lease_s,
                )
                if claim is None:
                    self.status = "starved" if not pool.servable(self.tags) else "idle"
                    pool.stopping.wait(self.cfg.poll_s)
                    continue
                self._execute(claim)
        except Exception:  # noqa: BLE001 - a worker must never die silently; the pool sees "stopped"
            log.exception("worker for %s crashed", self.entry.serial)
        finally:
            self.status = "stopped"
            pool.release_phone(self.entry)

    def _usable(self) -> bool:
        """False (after waiting a little) while the phone is quarantined and not yet due for a probe."""
        info = q.farm_device(self.pool.store, self.entry.key)
        if info is None or not info.quarantined:
            return True
        self.status = "quarantined"
        due = info.quarantined_until
        if due is not None and due > q.now_utc():
            self.pool.stopping.wait(min(self.cfg.poll_s * 4, (due - q.now_utc()).total_seconds()))
            return False
        problem = probe_online(self.entry)
        if problem is not None:
            q.postpone_probe(
                self.pool.store,
                self.entry.key,
                probe_after_s=self.cfg.probe_every_s,
                reason=f"probe failed: {problem}",
            )
            self._emit("probe_failed", detail=problem)
            return False
        self._record_device(ok=True)
        self._emit("restored", detail="probe passed; back in service")
        return True

    def _record_device(self, ok: bool, reason: str | None = None) -> q.FarmDeviceInfo:
        return q.record_device_result(
            self.pool.store,
            self.entry.key,
            self.entry.serial,
            self.entry.adb,
            ok=ok,
            reason=reason,
            quarantine_after=self.cfg.quarantine_after,
            probe_after_s=self.cfg.probe_every_s,
        )

    def _on_step(self, index: int, episode_id: str) -> None:
        self.episode_id = episode_id
        claim = self.claim
        self._emit("step", claim, step=index, episode_id=episode_id)
        if self.pool.stopping.is_set():
            raise StopRequested()

    def _execute(self, claim: q.Claim) -> None:
        self.claim, self.episode_id, self.status = claim, None, "running"
        self.pool.track(claim)
        self._emit("claimed", claim)
        job = Job(claim, self.entry, self.pool.worker_id, self._on_step)
        try:
            result = self.pool.runner.run(job)
        except StopRequested:
            result = JobResult(self.episode_id, Outcome.INTERRUPTED, "the batch was stopped")
        except ModelUnavailable as exc:
            result = JobResult(self.episode_id, Outcome.error("model_unavailable"), exc.one_line())
        except DeviceError as exc:
            result = JobResult(self.episode_id, Outcome.error(getattr(exc, "kind", "device")), exc.one_line())
        except Exception as exc:  # noqa: BLE001 - unknown trouble is the phone's until proven otherwise
            log.exception("task %s on %s failed unexpectedly", claim.label, self.entry.serial)
            result = JobResult(self.episode_id, Outcome.error("runtime"), f"{type(exc).__name__}: {exc}")
        finally:
            self.pool.untrack(claim)
        try:
            self._report(claim, result)
        finally:
            self.claim, self.episode_id = None, None

    def _report(self, claim: q.Claim, result: JobResult) -> None:
        store, cfg = self.pool.store, self.cfg
        failure = outcome_failure(result.outcome)
        common = dict(episode_id=result.episode_id, outcome=result.outcome, detail=result.detail)
        if failure is None:
            if not q.finish_task(store, claim, **common):
                self._emit("lost", claim, **common)
                return
            self._record_device(ok=True)
            self.pool.gate.report_success()
            self._emit("done", claim, **common)
            return
        delay = self.pool.gate.report_failure() if failure is q.Failure.ENDPOINT else 0.0
        state = q.retry_task(
            store,
            claim,
            failure=failure,
            max_device_failures=cfg.max_device_retries,
            max_endpoint_failures=cfg.max_endpoint_retries,
            delay_s=delay,
            **common,
        )
        if state is None:
            self._emit("lost", claim, **common)
        elif state is q.TaskState.FAILED:
            self._emit("failed", claim, **common)
        else:
            self._emit(
                "retry", claim, **{**common, "detail": f"{failure}: {result.detail or result.outcome}"}
            )
        if failure is q.Failure.ENDPOINT:
            self._emit("endpoint_down", detail=f"pausing {delay:.1f} s: {result.detail or ''}")
        if failure is q.Failure.DEVICE:
            self._device_failed(result)

    def _device_failed(self, result: JobResult) -> None:
        info = self._record_device(ok=False, reason=result.detail or result.outcome)
        if not info.quarantined:
            # One failure may be a hiccup; a phone that does not answer a probe now is not.
            problem = probe_online(self.entry)
            if problem is None:
                return
            info = self._record_device(ok=False, reason=f"probe after failure: {problem}")
        if info.quarantined:
            self.status = "quarantined"
            self._emit("quarantined", detail=info.quarantine_reason)


# -------------------------------------------------------------------------------------------------- the pool
class WorkerPool:
    """The workers of one process: a thread per phone, a heartbeat thread, and the stop/stall logic."""

    def __init__(
        self,
        store: TrajectoryStore,
        phones: Sequence[FarmPhone],
        runner: EpisodeRunner,
        *,
        config: SchedulerConfig | None = None,
        run_ids: Sequence[str] | None = None,
        on_event: EventSink | None = None,
        endpoint_probe: Callable[[], str | None] | None = None,
        extra_tags: Mapping[str, Sequence[str]] | None = None,
        worker_id: str | None = None,
    ) -> None:
        self.store = store
        self.runner = runner
        self.config = config or SchedulerConfig()
        self.run_ids = list(run_ids) if run_ids is not None else None
        self.on_event = on_event
        self.extra_tags = dict(extra_tags or {})
        self.worker_id = worker_id or new_worker_id()
        self.gate = EndpointGate(
            endpoint_probe,
            backoff_s=self.config.endpoint_backoff_s,
            max_backoff_s=self.config.endpoint_backoff_max_s,
        )
        self.stopping = threading.Event()
        usable = [p for p in phones if p.state is PhoneState.ONLINE]
        self.skipped = [p for p in phones if p.state is not PhoneState.ONLINE]
        self.workers = [PhoneWorker(self, phone) for phone in usable]
        self._claims: dict[int, q.Claim] = {}
        self._leased: set[str] = set()
        self._lock = threading.Lock()
        self._events_lock = threading.Lock()
        self._heartbeat = threading.Thread(target=self._beat, name="heartbeat", daemon=True)
        self.interrupted = False

    # --- bookkeeping used by workers --------------------------------------------------------------------------
    def emit(self, event: ProgressEvent) -> None:
        if self.on_event is None:
            return
        with self._events_lock:
            try:
                self.on_event(event)
            except Exception:  # noqa: BLE001 - a broken display must not stop the farm
                log.exception("progress callback failed")

    def track(self, claim: q.Claim) -> None:
        with self._lock:
            self._claims[claim.task_id] = claim

    def untrack(self, claim: q.Claim) -> None:
        with self._lock:
            self._claims.pop(claim.task_id, None)

    def lease_phone(self, entry: PhoneEntry) -> bool:
        holder = q.farm_device(self.store, entry.key)
        dead = (
            [holder.worker] if holder is not None and holder.worker and worker_is_dead(holder.worker) else []
        )
        ok = q.lease_device(
            self.store,
            entry.key,
            entry.serial,
            entry.adb,
            worker=self.worker_id,
            lease_s=self.config.lease_s,
            dead_workers=dead,
        )
        if ok:
            with self._lock:
                self._leased.add(entry.key)
        return ok

    def release_phone(self, entry: PhoneEntry) -> None:
        with self._lock:
            self._leased.discard(entry.key)
        try:
            q.release_device(self.store, entry.key, worker=self.worker_id)
        except Exception:  # noqa: BLE001 - the lease lapses by itself
            log.warning("could not release the lease on %s", entry.serial, exc_info=True)

    def servable(self, tags: frozenset[str]) -> bool:
        return q.count_servable(self.store, tags=tags, run_ids=self.run_ids) > 0

    def _beat(self) -> None:
        while not self.stopping.wait(self.config.heartbeat_s):
            self._renew()

    def _renew(self) -> None:
        with self._lock:
            claims = list(self._claims.values())
            leased = list(self._leased)
        try:
            q.renew_claims(self.store, claims, self.config.lease_s)
            for worker in self.workers:
                if worker.entry.key in leased:
                    q.lease_device(
                        self.store,
                        worker.entry.key,
                        worker.entry.serial,
                        worker.entry.adb,
                        worker=self.worker_id,
                        lease_s=self.config.lease_s,
                    )
        except Exception:  # noqa: BLE001 - one missed heartbeat is harmless; the next one retries
            log.warning("heartbeat failed", exc_info=True)

    # --- lifecycle --------------------------------------------------------------------------------------------
    def start(self) -> WorkerPool:
        if not self.workers:
            raise UserError(
                "no phone is online to run tasks on",
                "check them with `mobile-agent devices`; fix or attach at least one",
            )
        self._heartbeat.start()
        for worker in self.workers:
            worker.start()
        return self

    def finished(self) -> bool:
        """No open task left in the pool's runs (or nothing more this pool can do)."""
        if not self.config.until_done:
            return False
        run_ids = self.run_ids if self.run_ids is not None else q.open_run_ids(self.store)
        return all(q.run_counts(self.store, run_id).open == 0 for run_id in run_ids)

    def stalled(self) -> bool:
        """Every worker is stopped, quarantined or has nothing it could ever serve, and nothing is claimed."""
        if not self.config.until_done:
            return False
        with self._lock:
            if self._claims:
                return False
        return all(w.status in ("stopped", "quarantined", "starved") for w in self.workers)

    def wait(self) -> None:
        """Block until the runs are drained, the pool stalls, or stop() was called. Ctrl-C stops cleanly."""
        stalled_since: float | None = None
        try:
            while not self.stopping.is_set():
                if self.finished():
                    break
                if self.stalled():
                    stalled_since = stalled_since or time.monotonic()
                    if time.monotonic() - stalled_since > self.config.stall_s:
                        log.warning("no phone can make progress; stopping with tasks left")
                        break
                else:
                    stalled_since = None
                self.stopping.wait(self.config.poll_s)
        except KeyboardInterrupt:
            self.interrupted = True
            log.warning("interrupted: ending the episodes in flight as 'interrupted'")
        self.stop()

    def stop(self, timeout: float | None = None) -> None:
        """Ask every worker to stop after its current step, and wait for them."""
        self.stopping.set()
        for worker in self.workers:
            if worker.is_alive():
                worker.join(timeout)
        if self._heartbeat.is_alive():
            self._heartbeat.join(timeout)

    def run(self) -> None:
        self.start()
        self.wait()


# ------------------------------------------------------------------------------------------------ submitting
def submit(
    store: TrajectoryStore, tasks_path: str | Path, *, name: str | None = None, config: Mapping[str, Any] = ()
) -> RunInfo:
    """Create a run and enqueue every task of the file (times its repeats). Returns the run."""
    loaded = load_tasks(tasks_path)
    rows = to_new_tasks(loaded)
    run = store.create_run(
        name or Path(tasks_path).name, {"tasks_file": str(Path(tasks_path).resolve()), **dict(config)}
    )
    q.enqueue_tasks(store, run.id, rows)
    log.info("run %s: %d task(s) enqueued from %s", run.id, len(rows), tasks_path)
    return run


# ---------------------------------------------------------------------------------------------------- resume
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
    dead = {w for w in q.claimed_workers(store, run_ids) if worker_is_dead(w)}
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
        discarded.extend(q.discard_unrecorded_files(store, episode_id))
    return Recovery(
        requeued=[r.task_id for r in reclaimed if not r.settled],
        settled=[r.task_id for r in reclaimed if r.settled],
        interrupted_episodes=interrupted,
        discarded_files=discarded,
    )


# ---------------------------------------------------------------------------------------------------- summary
@dataclass(frozen=True)
class RunSummary:
    run_id: str
    name: str
    status: str
    counts: q.RunCounts
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
        }


def summarize_run(store: TrajectoryStore, run_id: str) -> RunSummary:
    """Outcomes by task (the final episode of each), by app and by phone; successes only when verified."""
    run = store.run(run_id)
    tasks = q.list_tasks(store, run.id)
    attempts = q.list_attempts(store, run.id)
    by_outcome: Counter[str] = Counter()
    by_app: dict[str, Counter[str]] = {}
    by_phone: dict[str, Counter[str]] = {}
    phone_of = {(a.task_id, a.attempt): a.device for a in attempts}
    final_episodes: list[str] = []
    for task in tasks:
        outcome = task.outcome or str(task.state)
        by_outcome[outcome] += 1
        by_app.setdefault(task.app or "-", Counter())[outcome] += 1
        if task.state in (q.TaskState.DONE, q.TaskState.FAILED):
            phone = phone_of.get((task.id, task.attempts), "-").rpartition("/")[2]
            by_phone.setdefault(phone, Counter())[outcome] += 1
        if task.state is q.TaskState.DONE and task.episode_id:
            final_episodes.append(task.episode_id)
    successes, verdicts, unverified = _verdicts(store, final_episodes, tasks)
    episodes = store.list_episodes(run_id=run.id, limit=None)
    quarantined = [
        info.serial
        for info in q.farm_devices(store)
        if info.quarantined and any(a.device == info.key for a in attempts)
    ]
    return RunSummary(
        run_id=run.id,
        name=run.name,
        status=str(run.status),
        counts=q.run_counts(store, run.id),
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
    )


def _verdicts(
    store: TrajectoryStore, episode_ids: list[str], tasks: list[q.QueuedTask]
) -> tuple[int | None, dict[str, int], int]:
    ended_by_agent = {t.episode_id for t in tasks if t.outcome in ("finished", "answered")}
    try:
        from mobile_agent.verify import episode_verdict, summarize
    except ImportError:
        return None, {}, len(ended_by_agent)
    found = {}
    for episode_id in episode_ids:
        try:
            found[episode_id] = episode_verdict(store, episode_id)
        except MobileAgentError as exc:
            log.warning("no verdict for episode %s: %s", episode_id, exc.one_line())
            found[episode_id] = None
    summary = summarize(found.values())
    unverified = sum(1 for e in ended_by_agent if found.get(e) is None)
    return summary.successes, dict(summary.counts), unverified


def finish_run_status(store: TrajectoryStore, run_id: str, *, interrupted: bool) -> RunInfo:
    counts = q.run_counts(store, run_id)
    if interrupted:
        status = RunStatus.INTERRUPTED
    elif counts.open == 0:
        status = RunStatus.ENDED
    else:
        status = RunStatus.RUNNING  # tasks left (stalled); `--resume` or a worker can finish them
    if status is RunStatus.RUNNING:
        return store.run(run_id)
    return store.finish_run(run_id, status)


# ------------------------------------------------------------------------------------------ the agent runner
@dataclass(frozen=True)
class ModelSettings:
    """The model endpoint(s) a pool uses. A task may override ``model`` and ``family``."""

    base_urls: tuple[str, ...]
    model: str
    family: str = "ui-venus-2"
    api_key: str | None = None
    per_endpoint_in_flight: int = 4
    global_in_flight: int | None = None  # across every endpoint and model of this process
    timeout_s: float = 120.0
    max_retries: int = 4
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0


@dataclass(frozen=True)
class EpisodeDefaults:
    max_steps: int = 30
    timeout_s: float = 600.0
    reset: ResetMode = ResetMode.HOME


class CappedClient:
    """A ModelClient behind a process-wide cap on requests in flight (the per-endpoint cap is the client's)."""

    def __init__(self, client: Any, cap: threading.Semaphore | None) -> None:
        self._client = client
        self._cap = cap

    @property
    def model(self) -> str:
        return self._client.model

    @property
    def base_urls(self) -> list[str]:
        return list(self._client.endpoints)

    @property
    def endpoints(self) -> list[str]:
        return list(self._client.endpoints)

    def complete(self, messages: list[dict[str, Any]], *, episode_id: str | None = None) -> Any:
        if self._cap is None:
            return self._client.complete(messages, episode_id=episode_id)
        with self._cap:
            return self._client.complete(messages, episode_id=episode_id)

    def probe(self) -> list[Any]:
        return self._client.probe()

    def close(self) -> None:
        self._client.close()


PhoneStateSource = Callable[[PhoneEntry], Mapping[str, Any] | None]


class AgentRunner:
    """Runs a claimed task as an agent episode on a real (or simulated) phone, with the shared model clients."""

    def __init__(
        self,
        store: TrajectoryStore,
        model: ModelSettings,
        *,
        defaults: EpisodeDefaults | None = None,
        apps_dir: str | Path | None = None,
        registry: Any = None,
        phone_state: PhoneStateSource | None = None,
    ) -> None:
        self.store = store
        self.model = model
        self.defaults = defaults or EpisodeDefaults()
        self.apps_dir = apps_dir
        self._registry = registry
        self.phone_state = phone_state
        self._cap = threading.BoundedSemaphore(model.global_in_flight) if model.global_in_flight else None
        self._clients: dict[str, CappedClient] = {}
        self._devices: dict[str, Any] = {}
        self._lock = threading.RLock()

    @property
    def registry(self) -> Any:
        with self._lock:
            if self._registry is None:
                from mobile_agent.runtime import load_registry

                self._registry = load_registry(self.apps_dir)
            return self._registry

    def client(self, model_name: str | None = None) -> CappedClient:
        from mobile_agent.model.client import ModelClient

        name = model_name or self.model.model
        with self._lock:
            if name not in self._clients:
                m = self.model
                raw = ModelClient(
                    list(m.base_urls),
                    name,
                    api_key=m.api_key,
                    timeout=m.timeout_s,
                    max_retries=m.max_retries,
                    max_in_flight=m.per_endpoint_in_flight,
                    backoff_s=m.backoff_s,
                    max_backoff_s=m.max_backoff_s,
                )
                self._clients[name] = CappedClient(raw, self._cap)
            return self._clients[name]

    def probe_endpoint(self) -> str | None:
        """None when at least one endpoint answers GET /models; else what went wrong."""
        statuses = self.client().probe()
        if any(status.ok for status in statuses):
            return None
        return "; ".join(f"{s.base_url}: {s.error}" for s in statuses) or "no endpoint"

    def close(self) -> None:
        for client in self._clients.values():
            client.close()

    def run(self, job: Job) -> JobResult:
        from mobile_agent.agent import Agent, AgentConfig, NoUser
        from mobile_agent.device.android import AndroidDevice
        from mobile_agent.model import get_family

        claim, spec = job.claim, job.claim.spec
        family = get_family(spec.get("family") or self.model.family)
        client = self.client(spec.get("model"))
        # One device object per phone across episodes: its u2 connection is set up once, not per episode.
        with self._lock:
            device = self._devices.pop(job.phone.key, None) or AndroidDevice(
                job.phone.serial, adb=job.phone.adb
            )
        self._reset(device, ResetMode(spec.get("reset") or self.defaults.reset), claim.app)
        config = AgentConfig(
            max_steps=int(spec.get("max_steps") or self.defaults.max_steps),
            timeout_s=float(spec.get("timeout") or self.defaults.timeout_s),
        )
        meta: dict[str, Any] = {
            "queue_task": claim.task_id,
            "attempt": claim.attempt,
            "worker": job.worker,
            "label": claim.label,
            "phone": job.phone.key,
        }
        if spec.get("check"):
            meta["check"] = spec["check"]
        agent = Agent(
            device,
            family,
            client,
            self.store,
            registry=self.registry,
            config=config,
            user=NoUser(),
            on_step=lambda event: job.on_step(event.index, event.episode_id),
        )
        result = agent.run(claim.task, run_id=claim.run_id, app=claim.app, meta=meta)
        if outcome_failure(result.outcome) is None:
            if spec.get("check"):
                self._verify(device, job.phone, result.episode_id, spec["check"])
            with self._lock:
                self._devices[job.phone.key] = device  # kept only while the phone behaves
        return JobResult(result.episode_id, str(result.outcome), result.detail, result.steps)

    def _reset(self, device: Any, mode: ResetMode, app: str | None) -> None:
        if mode is ResetMode.NONE:
            return
        package = self._package(device, app) if app and mode is not ResetMode.HOME else None
        if package and mode is ResetMode.FORCE_STOP:
            _adb_shell(device, ["am", "force-stop", package])
        elif package and mode is ResetMode.CLEAR:
            _adb_shell(device, ["pm", "clear", package])
        _adb_shell(device, ["input", "keyevent", "KEYCODE_HOME"])

    def _package(self, device: Any, app: str) -> str | None:
        try:
            return self.registry.resolve_launch(app, device.installed_packages())
        except DeviceError:
            raise
        except MobileAgentError as exc:
            log.warning("reset: cannot tell the package of %r (%s); only going home", app, exc.one_line())
            return None

    def _verify(self, device: Any, phone: PhoneEntry, episode_id: str, check: Mapping[str, Any]) -> None:
        """Run the task's check while the phone still shows the end of the episode. Never fails the task."""
        try:
            from mobile_agent.verify import TaskCheck, run_and_record_checks
        except ImportError:
            return
        try:
            package, activity = device.foreground()
            state = self.phone_state(phone) if self.phone_state is not None else None
            run_and_record_checks(
                self.store,
                episode_id,
                TaskCheck.parse(dict(check)),
                final_hierarchy=device.hierarchy(),
                final_package=package,
                final_activity=activity,
                phone_state=state,
            )
        except Exception as exc:  # noqa: BLE001 - an unverified episode is reported as such, not lost
            log.warning("check of episode %s could not run: %s", episode_id, exc)


def _adb_shell(device: Any, args: list[str]) -> str:
    """A shell command on the phone (argument list, never a string built from text); adb trouble -> DeviceLost."""
    import adbutils

    from mobile_agent.errors import DeviceLost

    try:
        return device.adb.shell(args, timeout=30)
    except (adbutils.AdbError, adbutils.AdbTimeout, OSError) as exc:
        raise DeviceLost(
            f"phone {device.serial}: {' '.join(args[:2])} failed: {exc}", "reconnect it"
        ) from None


__all__ = [
    "AgentRunner",
    "CappedClient",
    "EndpointGate",
    "EpisodeDefaults",
    "EpisodeRunner",
    "Job",
    "JobResult",
    "ModelSettings",
    "PhoneWorker",
    "ProgressEvent",
    "Recovery",
    "RunSummary",
    "SchedulerConfig",
    "StopRequested",
    "WorkerPool",
    "finish_run_status",
    "new_worker_id",
    "outcome_failure",
    "recover_run",
    "submit",
    "summarize_run",
    "worker_is_dead",
]
