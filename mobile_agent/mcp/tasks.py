"""The task tools' side of the farm: phones as ``list_phones`` shows them, tasks put on the farm's own queue, and
the episodes that come of them.

Every ``run_task`` is one queue row of this server's run (created when the server starts). The phones are served
by a :class:`~mobile_agent.farm.scheduler.pool.WorkerPool` started when a task is queued and stopped when the run
has nothing open, so that a phone not serving a task can be driven by the device tools; ``mobile-agent worker`` on
any host serves the same queue. Leases, retries, quarantine, the safety policies and a task's check are the farm's.

``stop_episode`` stops a queued task before it starts, or a running episode after its current step: the episode
ends as ``interrupted`` and the task as ``error:stopped`` (a result: it is not run again).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, replace
from typing import Any

from mobile_agent.errors import UserError
from mobile_agent.farm.inventory import FarmPhone, Inventory, discover
from mobile_agent.farm.leases import describe_phones
from mobile_agent.farm.scheduler.jobs import Job, JobResult, SchedulerConfig, StopRequested
from mobile_agent.farm.scheduler.pool import WorkerPool
from mobile_agent.farm.scheduler.runner import AgentRunner
from mobile_agent.gate.policy import parse_policy
from mobile_agent.store import queue as q
from mobile_agent.store import queue_status as qs
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)
STOPPED = "error:stopped"


@dataclass(frozen=True)
class TaskRequest:
    """What ``run_task`` is asked (validated before anything is queued)."""

    task: str
    phone: str | None = None
    tags: tuple[str, ...] = ()
    app: str | None = None
    policy: tuple[str, ...] = ()
    max_steps: int | None = None
    check: dict[str, Any] | None = None

    def validated(self) -> TaskRequest:
        if not self.task.strip():
            raise UserError("the task is empty", 'say what the agent should do, e.g. "打开设置"')
        if self.max_steps is not None and not 1 <= self.max_steps <= 500:
            raise UserError(f"max_steps {self.max_steps} is out of range", "give 1 to 500")
        if self.policy:
            parse_policy(self.policy)  # UserError with the policy words' hint
        if self.check is not None:
            from mobile_agent.verify.checks import TaskCheck

            TaskCheck.parse(self.check)
        return replace(self, task=self.task.strip())

    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"task": self.task, "source": "mcp"}
        if self.max_steps is not None:
            spec["max_steps"] = self.max_steps
        if self.policy:
            spec["safety"] = {"policy": list(self.policy)}
        if self.check is not None:
            spec["check"] = self.check
        return spec

    def requires(self) -> tuple[str, ...]:
        pinned = (f"serial:{self.phone.lower()}",) if self.phone else ()
        return (*pinned, *self.tags)


class StoppableRunner:
    """The farm's agent runner, with a way to stop one task's episode from outside the pool: before it starts
    (the claim is answered at once) or at its next step."""

    def __init__(self, runner: AgentRunner) -> None:
        self.runner = runner
        self.stopped_tasks: set[int] = set()
        self.stopped_episodes: set[str] = set()
        self._lock = threading.Lock()

    def stop(self, *, task_id: int | None = None, episode_id: str | None = None) -> None:
        with self._lock:
            if task_id is not None:
                self.stopped_tasks.add(task_id)
            if episode_id is not None:
                self.stopped_episodes.add(episode_id)

    def _is_stopped(self, task_id: int, episode_id: str | None) -> bool:
        with self._lock:
            return task_id in self.stopped_tasks or (episode_id in self.stopped_episodes)

    def probe_endpoint(self) -> str | None:
        return self.runner.probe_endpoint()

    def run(self, job: Job) -> JobResult:
        task_id = job.claim.task_id
        if self._is_stopped(task_id, None):
            return JobResult(None, STOPPED, "stopped through MCP before it started")
        seen: list[str] = []

        def on_step(index: int, episode_id: str) -> None:
            seen[:] = [episode_id]
            if self._is_stopped(task_id, episode_id):
                raise StopRequested()
            job.on_step(index, episode_id)

        try:
            return self.runner.run(replace(job, on_step=on_step))
        except StopRequested:
            if not self._is_stopped(task_id, seen[0] if seen else None):
                raise  # the pool itself is stopping
            return JobResult(seen[0] if seen else None, STOPPED, "stopped through MCP")


class TaskService:
    """The farm as the task tools see it: one run of this server, its queue, its pool."""

    def __init__(
        self,
        store: TrajectoryStore,
        inventory: Inventory,
        runner: AgentRunner,
        *,
        config: SchedulerConfig | None = None,
        run_name: str = "mcp",
    ) -> None:
        self.store = store
        self.inventory = inventory
        self.runner = StoppableRunner(runner)
        self.config = config or SchedulerConfig(poll_s=0.2, stall_s=30.0)
        self.run_name = run_name
        self._run_id: str | None = None
        self._pool: WorkerPool | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._submit_lock = threading.Lock()
        self._closed = False

    # --- phones -------------------------------------------------------------------------------------------------
    def phones(self) -> list[FarmPhone]:
        return discover(self.inventory)

    def list_phones(self) -> list[dict[str, Any]]:
        """serial, model, tags, state and who holds it, for every phone of the inventory."""
        statuses = describe_phones(self.phones(), self.store, probe=False)
        out = []
        for status in statuses:
            entry = status.phone.entry
            holder = None
            if status.reserved_by:
                holder = f"a person (episode {status.reserved_by} waits for an answer)"
            elif status.worker:
                holder = status.worker
            out.append(
                {
                    "serial": entry.serial,
                    "adb": entry.adb,
                    "model": status.facts.model,
                    "tags": sorted(entry.tags),
                    "state": str(status.state),
                    "holder": holder,
                }
            )
        return out

    # --- tasks --------------------------------------------------------------------------------------------------
    @property
    def run_id(self) -> str:
        with self._lock:
            if self._run_id is None:
                self._run_id = self.store.create_run(self.run_name, {"source": "mcp"}).id
            return self._run_id

    def submit(self, request: TaskRequest) -> int:
        """Queue the task; returns its queue id. The pool is started when it is not running."""
        request = request.validated()
        known = {p.serial for p in self.phones()}
        if request.phone and request.phone not in known:
            raise UserError(f"no phone {request.phone!r} in the farm", "see the phones with list_phones")
        run_id = self.run_id
        with self._submit_lock:  # two calls at once must not pick the same seq (the second would be dropped)
            seq = qs.run_counts(self.store, run_id).total
            task = q.NewTask(
                seq=seq,
                label=f"mcp #{seq}",
                task=request.task,
                app=request.app,
                spec=request.spec(),
                requires=request.requires(),
            )
            q.enqueue_tasks(self.store, run_id, [task])
        row = next(t for t in qs.list_tasks(self.store, run_id) if t.seq == seq)
        self._ensure_pool()
        return row.id

    def task(self, task_id: int) -> qs.QueuedTask | None:
        if self._run_id is None:
            return None
        return next((t for t in qs.list_tasks(self.store, self._run_id) if t.id == task_id), None)

    def episode_of(self, task_id: int) -> str | None:
        """The episode a task's latest attempt runs or ran (None while it waits for a phone)."""
        row = self.task(task_id)
        if row is not None and row.episode_id:
            return row.episode_id
        for episode in self.store.list_episodes(run_id=self._run_id, limit=50):
            if (episode.meta or {}).get("queue_task") == task_id:
                return episode.id
        return None

    def wait_for_episode(self, task_id: int, timeout_s: float) -> str | None:
        deadline = time.monotonic() + timeout_s
        while True:
            found = self.episode_of(task_id)
            row = self.task(task_id)
            if found or time.monotonic() > deadline or (row is not None and row.state is q.TaskState.DONE):
                return found
            time.sleep(0.05)

    def task_of(self, episode_id: str) -> int | None:
        meta = self.store.episode(episode_id).meta or {}
        task_id = meta.get("queue_task")
        return int(task_id) if task_id is not None and self.task(int(task_id)) is not None else None

    def stop(self, task_id: int, episode_id: str | None) -> None:
        self.runner.stop(task_id=task_id, episode_id=episode_id)

    # --- the pool -----------------------------------------------------------------------------------------------
    def _ensure_pool(self) -> None:
        with self._lock:
            if self._closed or (self._thread is not None and self._thread.is_alive()):
                return
            pool = WorkerPool(
                self.store,
                self.phones(),
                self.runner,
                config=self.config,
                run_ids=[self._run_id] if self._run_id else None,
                endpoint_probe=self.runner.probe_endpoint,
            )
            pool.start()  # UserError when no phone is online
            self._pool = pool
            self._thread = threading.Thread(target=self._serve, args=(pool,), name="mcp-pool", daemon=True)
            self._thread.start()

    def _serve(self, pool: WorkerPool) -> None:
        try:
            pool.wait()
        except Exception:  # noqa: BLE001 - the next run_task starts a new pool
            log.exception("the task pool stopped unexpectedly")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            pool, thread = self._pool, self._thread
        if pool is not None:
            pool.stop(timeout=30)
        if thread is not None:
            thread.join(30)
        self.runner.runner.close()


__all__ = ["STOPPED", "StoppableRunner", "TaskRequest", "TaskService"]
