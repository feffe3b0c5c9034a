"""The workers of one process: a thread per phone that leases it and runs claim -> episode -> report, a heartbeat
that renews claims and leases, and the stop / stall logic."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mobile_agent.actions import Outcome
from mobile_agent.errors import DeviceError, MobileAgentError, ModelUnavailable, UserError
from mobile_agent.farm.health import probe_online
from mobile_agent.farm.inventory import FarmPhone, PhoneEntry, PhoneState
from mobile_agent.farm.leases import hold_on
from mobile_agent.farm.scheduler import unmet, weather
from mobile_agent.farm.scheduler.endpoint import EndpointGate
from mobile_agent.farm.scheduler.holds import (
    HoldBudget,
    WindowCache,
    attend,
    continue_answered,
    keeps_waiting,
    sweep,
)
from mobile_agent.farm.scheduler.jobs import (
    CONFIG_ERROR,
    EpisodeRunner,
    EventSink,
    Job,
    JobResult,
    ProgressEvent,
    SchedulerConfig,
    StopRequested,
    outcome_failure,
)
from mobile_agent.farm.scheduler.recovery import take_over
from mobile_agent.farm.scheduler.worker_ids import new_worker_id, worker_is_dead
from mobile_agent.store import phones as phone_db
from mobile_agent.store import queue as q
from mobile_agent.store import queue_status as qs
from mobile_agent.store.convert import now_utc
from mobile_agent.store.outages import StoreUnavailable, wait_bound
from mobile_agent.store.step_writes import FencedOut
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)


# ----------------------------------------------------------------------------------------------------- worker
class PhoneWorker(threading.Thread):
    """Serves one phone: lease it, then claim -> run -> report until the pool stops or the queue is drained."""

    def __init__(self, pool: WorkerPool, phone: FarmPhone) -> None:
        super().__init__(name=f"worker-{phone.serial}", daemon=True)
        self.pool = pool
        self.phone = phone
        self.entry = phone.entry
        # starting, idle, starved, running, quarantined, reserved, attending / holding (for a person), continuing,
        # stopped
        self.status = "starting"
        self.claim: q.Claim | None = None
        self.episode_id: str | None = None
        self._hold_seen: tuple[str, str] | None = None  # the hold last reported, so it is reported once
        self._fresh_holds = False  # True: look at the pauses table now, not at the pool's snapshot
        # This worker leases the phone, so only it changes the phone's farm row: it is read once, then kept.
        self._device: phone_db.FarmDeviceInfo | None = None
        self.tags: frozenset[str] = phone.entry.all_tags(pool.extra_tags.get(phone.key, ()))
        self.stranded: tuple[q.Claim, JobResult] | None = None  # a task an outage left unreported

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
        if not pool.holds_lease(self.entry):
            self.status = "stopped"
            self._emit("busy_elsewhere", detail="another worker holds this phone's lease")
            return
        try:
            with wait_bound(self._lease_deadline):
                while not pool.stopping.is_set():
                    try:
                        self._serve()
                    except StoreUnavailable as exc:
                        if not weather.ride_out(self, exc):
                            break
        except Exception:  # noqa: BLE001 - a worker must never die silently; the pool sees "stopped"
            log.exception("worker for %s crashed", self.entry.serial)
        finally:
            self.status = "stopped"
            if (
                not pool.stopping.is_set()
            ):  # this worker died alone; a stopping pool releases every phone at once
                pool.release_phone(self.entry)
            pool.nudge()

    def _lease_deadline(self) -> float | None:
        """While this worker runs a task, its store waits end before the claim's lease could lapse."""
        return self.pool.lease_deadline() if self.claim is not None else None

    def _serve(self) -> None:
        """One turn of the worker's loop: settle what an outage left, then a person's answer or a task."""
        pool = self.pool
        if self.stranded is not None:
            weather.settle(self)
        if not self._usable() or self._held_for_person():
            return
        if continue_answered(self):  # a person answered an episode that paused on this phone
            return
        if not pool.gate.wait(pool.stopping):
            return
        pending = pool.pending()
        claim = None
        if pending.due_for(self.tags):
            claim = q.claim_task(
                pool.store,
                worker=pool.worker_id,
                device=self.entry.key,
                tags=self.tags,
                run_ids=pool.run_ids,
                lease_s=self.cfg.lease_s,
                requires_keys=pending.requirement_sets(),  # no look of the claim's own at every claim
            )
        if claim is None:
            self.status = "idle" if pending.any_for(self.tags) else "starved"
            pool.stopping.wait(self.cfg.poll_s)
            return
        self._execute(claim)

    def _usable(self) -> bool:
        """False (after waiting a little) while the phone is quarantined and not yet due for a probe."""
        if self._device is None:
            self._device = phone_db.farm_device(self.pool.store, self.entry.key)
        info = self._device
        if info is None or not info.quarantined:
            return True
        self.status = "quarantined"
        due = info.quarantined_until
        if due is not None and due > now_utc():
            self.pool.stopping.wait(min(self.cfg.poll_s * 4, (due - now_utc()).total_seconds()))
            return False
        problem = probe_online(self.entry)
        if problem is not None:
            phone_db.postpone_probe(
                self.pool.store,
                self.entry.key,
                probe_after_s=self.cfg.probe_every_s,
                reason=f"probe failed: {problem}",
            )
            self._device = None  # read the postponed probe time back
            self._emit("probe_failed", detail=problem)
            return False
        self._record_device(ok=True)
        self._emit("restored", detail="probe passed; back in service")
        return True

    def _held_for_person(self) -> bool:
        """True (after waiting a little) while a person holds the phone: an episode paused on it as needs_user
        and its reservation has not lapsed, or a paused episode is being resumed on it."""
        now = now_utc()
        holds = self.pool.person_holds(fresh=self._fresh_holds)
        self._fresh_holds = False
        hold = hold_on(self.entry, [h for h in holds if h.until > now])
        if hold is None:
            self._hold_seen = None
            return False
        self.status = "reserved"
        if self._hold_seen != (hold.episode_id, hold.how):
            self._hold_seen = (hold.episode_id, hold.how)
            self._emit(
                "reserved",
                episode_id=hold.episode_id,
                detail=f"{hold.how} episode {hold.episode_id} holds it until {hold.until:%H:%M:%S} UTC",
            )
        left = (hold.until - now).total_seconds()
        self.pool.stopping.wait(min(self.cfg.poll_s * 4, max(0.01, left)))
        self._fresh_holds = True  # the person may have resumed or let go meanwhile
        return True

    def _record_device(self, ok: bool, reason: str | None = None) -> phone_db.FarmDeviceInfo:
        known = self._device
        if ok and known is not None and known.consecutive_failures == 0 and not known.quarantined:
            return known  # nothing to clear: no write
        self._device = phone_db.record_device_result(
            self.pool.store,
            self.entry.key,
            self.entry.serial,
            self.entry.adb,
            ok=ok,
            reason=reason,
            quarantine_after=self.cfg.quarantine_after,
            probe_after_s=self.cfg.probe_every_s,
        )
        return self._device

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
        except UserError as exc:  # the task is wrong (unknown family, app, ...): its error, never the phone's
            result = JobResult(self.episode_id, Outcome.error(CONFIG_ERROR), exc.one_line())
        except StoreUnavailable as exc:  # the store is gone: the task is settled once it is back
            self.stranded = (claim, JobResult(self.episode_id, Outcome.INTERRUPTED, exc.one_line()))
            raise
        except FencedOut as exc:  # the task's lease passed to another worker: nothing more on this phone
            result = JobResult(self.episode_id, Outcome.INTERRUPTED, exc.one_line())
        except Exception as exc:  # noqa: BLE001 - unknown trouble is the phone's until proven otherwise
            log.exception("task %s on %s failed unexpectedly", claim.label, self.entry.serial)
            result = JobResult(self.episode_id, Outcome.error("runtime"), f"{type(exc).__name__}: {exc}")
        finally:
            if self.stranded is None:
                self.pool.untrack(claim)  # a stranded claim is still renewed until it is settled
        if result.outcome == Outcome.NEEDS_USER:
            self.status = "attending"  # the pool waits for this worker to open the question's window
        try:
            self._report(claim, result)
        finally:
            self.claim, self.episode_id = None, None
            self.pool.nudge()
        if result.outcome == Outcome.NEEDS_USER and result.episode_id:
            attend(self, result.episode_id, claim.spec)  # keep the phone for a person, within the budget

    def _report(self, claim: q.Claim, result: JobResult) -> None:
        store, cfg = self.pool.store, self.cfg
        failure = outcome_failure(result.outcome)
        common = dict(episode_id=result.episode_id, outcome=result.outcome, detail=result.detail)
        if result.outcome == Outcome.NEEDS_USER:
            self._fresh_holds = True  # the episode paused: its phone is now held for a person
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
        if state is q.TaskState.PENDING:
            self.pool.pending_changed()
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
        # Set when a worker reported a task or stopped: the pool looks at its runs at once, so the end of a run is
        # noticed when it happens rather than up to poll_s later.
        self._wake = threading.Event()
        usable = [p for p in phones if p.state is PhoneState.ONLINE]
        self.skipped = [p for p in phones if p.state is not PhoneState.ONLINE]
        self.workers = [PhoneWorker(self, phone) for phone in usable]
        self._claims: dict[int, q.Claim] = {}
        self._leased: set[str] = set()
        self._lock = threading.Lock()
        self._events_lock = threading.Lock()
        self._heartbeat = threading.Thread(target=self._beat, name="heartbeat", daemon=True)
        self.interrupted = False
        self._holds: list[phone_db.PersonHold] = []
        self._holds_at: float | None = None
        self._holds_lock = threading.Lock()
        self._pending = qs.PendingSnapshot()
        self._pending_at: float | None = None
        self._pending_lock = threading.Lock()
        self.hold_budget = HoldBudget(len(self.workers), self.config.hold_share)
        self._renewed_at = time.monotonic()  # the last heartbeat that renewed the claims and leases
        self.store_failure: StoreUnavailable | None = None  # the outage that outlasted its bound
        self.windows = WindowCache(self, self.config.poll_s)
        self.unmet: dict[tuple[str, ...], unmet.Unmet] = {}  # requires: no phone here meets (scheduler/unmet)

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

    def lease_phones(self) -> None:
        """Lease every phone of the pool in one transaction; a phone another live worker holds is left alone."""
        leased = phone_db.lease_devices(
            self.store,
            [(w.entry.key, w.entry.serial, w.entry.adb) for w in self.workers],
            worker=self.worker_id,
            lease_s=self.config.lease_s,
            is_dead=worker_is_dead,
        )
        with self._lock:
            self._leased |= leased

    def holds_lease(self, entry: PhoneEntry) -> bool:
        with self._lock:
            return entry.key in self._leased

    def release_phones(self) -> None:
        """Release the phones of the workers that have stopped (one transaction). A worker still stuck in a step
        keeps its phone: its lease lapses by itself after ``lease_s`` once nobody renews it."""
        with self._lock:
            keys = sorted(
                w.entry.key for w in self.workers if not w.is_alive() and w.entry.key in self._leased
            )
            self._leased -= set(keys)
        try:
            phone_db.release_devices(self.store, keys, worker=self.worker_id)
        except MobileAgentError as exc:  # the leases lapse by themselves
            log.warning("could not release the phones' leases: %s", exc.one_line())
        except Exception:  # noqa: BLE001 - the leases lapse by themselves
            log.warning("could not release the phones' leases", exc_info=True)

    def release_phone(self, entry: PhoneEntry) -> None:
        with self._lock:
            self._leased.discard(entry.key)
        try:
            phone_db.release_device(self.store, entry.key, worker=self.worker_id)
        except MobileAgentError as exc:  # the lease lapses by itself
            log.warning("could not release the lease on %s: %s", entry.serial, exc.one_line())
        except Exception:  # noqa: BLE001 - the lease lapses by itself
            log.warning("could not release the lease on %s", entry.serial, exc_info=True)

    def person_holds(self, *, fresh: bool = False) -> list[phone_db.PersonHold]:
        """The phones held for people, as one snapshot shared by the workers (at most ``holds_max_age_s`` old, or
        read now with ``fresh``), so that idle workers do not each query the pauses on every poll."""
        with self._holds_lock:
            age = None if self._holds_at is None else time.monotonic() - self._holds_at
            if fresh or age is None or age > self.config.holds_max_age_s:
                self._holds = phone_db.person_holds(self.store)
                self._holds_at = time.monotonic()
            return self._holds

    def pending(self) -> qs.PendingSnapshot:
        """The pending tasks of the pool's runs, as one snapshot at most ``poll_s`` old shared by the workers:
        idle workers do not each query the queue on every poll (at the end of a run that steals the CPU, and the
        database, from the last episodes)."""
        with self._pending_lock:
            now = time.monotonic()
            if self._pending_at is None or now - self._pending_at >= self.config.poll_s:
                self._pending = qs.pending_snapshot(self.store, self.run_ids)
                self._pending_at = now
            return self._pending

    def pending_changed(self) -> None:
        """A task of the pool went back to the queue: the next look reads the queue again."""
        with self._pending_lock:
            self._pending_at = None

    def nudge(self) -> None:
        """Something the pool's watch depends on changed (a task was reported, a worker stopped)."""
        self._wake.set()

    def emit_expired(self, episode_id: str) -> None:
        self.emit(
            ProgressEvent("expired", "-", episode_id=episode_id, outcome=str(Outcome.NEEDS_USER_EXPIRED))
        )

    def _beat(self) -> None:
        while not self.stopping.wait(self.config.heartbeat_s):
            self._renew()

    def lease_deadline(self) -> float:
        """Until when (monotonic) this pool's claims surely hold: the last renewal plus the lease, less a margin
        for an action in flight. Past it, an episode that cannot reach the store stops touching its phone."""
        lease = self.config.lease_s
        return self._renewed_at + lease - min(10.0, lease / 4)

    def store_lost(self, exc: StoreUnavailable) -> None:
        """The store stayed away past its bound: every worker stops; what they held is recovered by others."""
        with self._lock:
            first = self.store_failure is None
            self.store_failure = self.store_failure or exc
        if first:
            log.warning("workers stop: %s", exc.one_line())
        self.stopping.set()
        self._wake.set()

    def _renew(self) -> None:
        with self._lock:
            claims = list(self._claims.values())
            leased = list(self._leased)
        started = time.monotonic()
        try:
            q.renew_claims(self.store, claims, self.config.lease_s)
            phone_db.renew_device_leases(
                self.store, leased, worker=self.worker_id, lease_s=self.config.lease_s
            )
            self._renewed_at = started
        except StoreUnavailable as exc:
            self.store_lost(exc)
            return
        except MobileAgentError as exc:  # one missed heartbeat is harmless; the next one retries
            log.warning("heartbeat failed: %s", exc.one_line())
        except Exception:  # noqa: BLE001 - one missed heartbeat is harmless; the next one retries
            log.warning("heartbeat failed", exc_info=True)
        self._take_over()

    def _take_over(self) -> None:
        """The tasks of workers that are gone (this host: dead; any host: lease lapsed) come back to the queue."""
        try:
            recovery = take_over(self.store, self.run_ids, me=self.worker_id)
        except MobileAgentError as exc:  # the next heartbeat tries again
            log.warning("could not take over the tasks of stopped workers: %s", exc.one_line())
            return
        except Exception:  # noqa: BLE001 - the next heartbeat tries again
            log.warning("could not take over the tasks of stopped workers", exc_info=True)
            return
        if recovery.requeued or recovery.settled:
            self.pending_changed()
            self.emit(
                ProgressEvent(
                    "taken_over",
                    "-",
                    detail=f"{len(recovery.requeued)} task(s) of stopped workers back in the queue",
                )
            )

    # --- lifecycle --------------------------------------------------------------------------------------------
    def start(self) -> WorkerPool:
        if not self.workers:
            raise UserError(
                "no phone is online to run tasks on",
                "check them with `mobile-agent devices`; fix or attach at least one",
            )
        self._take_over()  # a restarted worker picks up what the dead one held
        self.lease_phones()
        self._renewed_at = time.monotonic()
        self._heartbeat.start()
        for worker in self.workers:
            worker.start()
        return self

    def finished(self) -> bool:
        """No open task left in the pool's runs (or nothing more this pool can do)."""
        if not self.config.until_done:
            return False
        with self._lock:
            if self._claims:  # a task claimed here is open: no need to ask the database
                return False
        run_ids = self.run_ids if self.run_ids is not None else qs.open_run_ids(self.store)
        if not all(qs.run_counts(self.store, run_id).open == 0 for run_id in run_ids):
            return False
        return not keeps_waiting(self)  # people's answers are work too, for at most the hold time

    def stalled(self) -> bool:
        """Every worker is stopped, quarantined, reserved for a person or has nothing it could ever serve, and
        nothing is claimed."""
        if not self.config.until_done:
            return False
        with self._lock:
            if self._claims:
                return False
        return all(w.status in ("stopped", "quarantined", "reserved", "starved") for w in self.workers)

    def wait(self) -> None:
        """Block until the runs are drained, the pool stalls, or stop() was called. Ctrl-C stops cleanly."""
        stalled_since: float | None = None
        try:
            while not self.stopping.is_set():
                self._wake.clear()
                sweep(self)
                unmet.watch(self)
                if self.finished():
                    break
                if self.stalled():
                    stalled_since = stalled_since or time.monotonic()
                    if time.monotonic() - stalled_since > self.config.stall_s:
                        log.warning("no phone can make progress; stopping with tasks left")
                        break
                else:
                    stalled_since = None
                self._wake.wait(self.config.poll_s)
        except KeyboardInterrupt:
            self.interrupted = True
            log.warning("interrupted: ending the episodes in flight as 'interrupted'")
        except StoreUnavailable as exc:  # the store stayed away past its bound: everyone stops
            self.store_lost(exc)
        self.stop()

    def stop(self, timeout: float | None = None) -> None:
        """Ask every worker to stop after its current step, and wait for them."""
        self.stopping.set()
        self._wake.set()
        for worker in self.workers:
            if worker.is_alive():
                worker.join(timeout)
        if self._heartbeat.is_alive():
            self._heartbeat.join(timeout)
        self.release_phones()

    def run(self) -> None:
        self.start()
        self.wait()
