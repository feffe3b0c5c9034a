"""A replay suite over the farm: the source episodes become a run of replay tasks in the farm's queue, served by
the farm's workers (one per phone: leases, retries on another phone, quarantine) with :class:`ReplayRunner` as
their episode runner, then summed up per episode (mobile_agent.replay.suite) as a table, JSON and an HTML report.

The CLI holds this glue because it is the one part that may use both the farm and replay.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

from mobile_agent.cli.farm_options import console, inventory_path, print_json
from mobile_agent.errors import UserError

if TYPE_CHECKING:
    from mobile_agent.farm.inventory import FarmPhone, PhoneEntry
    from mobile_agent.farm.scheduler.jobs import Job, JobResult
    from mobile_agent.gate.policy import SafetyPolicy
    from mobile_agent.replay.results import ReplayOptions
    from mobile_agent.replay.suite import SuiteSummary
    from mobile_agent.store.records import RunInfo
    from mobile_agent.store.store import TrajectoryStore

PhoneState = Callable[["PhoneEntry"], Mapping[str, Any] | None]
_COLOURS = {
    "replayed": "green",
    "stopped": "red",
    "needs_person": "yellow",
    "failed": "red",
    "pending": "dim",
}


class ReplayRunner:
    """The farm's episode runner for replay tasks: the task's source episode replayed on the job's phone under the
    suite's options and the task's policy, then the source task's check on the phone as the replay left it."""

    def __init__(
        self,
        store: TrajectoryStore,
        *,
        safety: SafetyPolicy | None = None,
        registry: Any = None,
        phone_state: PhoneState | None = None,
    ) -> None:
        from mobile_agent.farm.scheduler.policy import EpisodePolicies

        self.store = store
        self.registry = registry
        self.phone_state = phone_state
        self.policies = EpisodePolicies(store, safety)
        self._runs: dict[str, RunInfo] = {}
        self._lock = threading.Lock()

    def _run(self, run_id: str) -> RunInfo:
        with self._lock:
            if run_id not in self._runs:
                self._runs[run_id] = self.store.run(run_id)
            return self._runs[run_id]

    def run(self, job: Job) -> JobResult:
        from mobile_agent.agent.config import NoUser
        from mobile_agent.farm.scheduler.jobs import JobResult, outcome_failure
        from mobile_agent.replay.replayer import replay_episode
        from mobile_agent.replay.suite import check_replay, suite_options

        claim = job.claim
        started: dict[str, str] = {}
        result = replay_episode(
            self.store,
            claim.spec["replay"]["episode"],
            device=job.phone.serial,
            adb=job.phone.adb,
            options=suite_options(self._run(claim.run_id), claim.spec),
            registry=self.registry,
            safety=self.policies.for_task(claim.run_id, claim.spec),
            user=NoUser(),
            run_id=claim.run_id,
            meta={
                "queue_task": claim.task_id,
                "attempt": claim.attempt,
                "worker": job.worker,
                "phone": job.phone.key,
            },
            on_start=lambda episode_id: started.update(id=episode_id),
            on_step=lambda step: job.on_step(step.index, started.get("id", "")),
        )
        outcome = str(result.outcome)
        if claim.spec.get("check") and result.episode_id and outcome_failure(outcome) is None:
            state = self.phone_state(job.phone) if self.phone_state is not None else None
            check_replay(
                self.store, job.phone.serial, job.phone.adb, result.episode_id, claim.spec["check"], state
            )
        return JobResult(result.episode_id, outcome, result.detail, len(result.steps))

    def close(self) -> None:
        """Nothing is held between jobs (each replay opens its own phone connection)."""


def suite_phones(devices: Path | None, device: str | None, adb: str | None) -> list[FarmPhone]:
    """The farm's phones (the inventory, else every phone on the adb server), or only ``device``."""
    from mobile_agent.farm.inventory import PhoneState as State
    from mobile_agent.farm.inventory import discover, load_inventory

    path = inventory_path(devices)
    phones = discover(load_inventory(path, adb=adb))
    if device is not None:
        phones = [p for p in phones if p.serial == device]
    if not any(p.state is State.ONLINE for p in phones):
        where = f"phone {device}" if device else "no phone"
        raise UserError(
            f"{where} is online to replay on" + (f" ({path})" if path else ""),
            hint="check them with `mobile-agent devices`; --device SERIAL, --devices devices.yaml or --adb HOST:PORT",
        )
    return phones


def run_suite(
    db: str | None,
    *,
    run: str | None,
    episodes: list[str],
    episodes_file: Path | None,
    options: ReplayOptions,
    reset_given: bool,
    safety: SafetyPolicy | None,
    safety_words: Mapping[str, list[str]],
    devices: Path | None,
    device: str | None,
    adb: str | None,
    apps_dir: str | None,
    report: str | None,
    name: str | None,
    show: bool,
    as_json: bool,
    phone_state: PhoneState | None = None,
) -> bool:
    """Replay the episodes as a suite over the farm's phones; print (and write) what came of each. True: passed."""
    from mobile_agent.agent.runtime import load_registry
    from mobile_agent.replay.suite import read_episode_file, submit_suite, suite_sources, suite_summary
    from mobile_agent.store.store import TrajectoryStore

    wanted = [*episodes, *(read_episode_file(episodes_file) if episodes_file is not None else [])]
    if report is not None:  # a bad output path is refused before any phone is touched
        from mobile_agent.report.layout import report_layout

        report_layout(report, "replay-suite")
    with TrajectoryStore.open(db) as store:
        sources = suite_sources(store, run=run, episodes=wanted)
        phones = suite_phones(devices, device, adb)
        suite = submit_suite(
            store,
            sources,
            options=options,
            reset_given=reset_given,
            name=name or (f"replay of run {run}" if run else None),
            safety_words=safety_words,
        )
        if show:
            console.print(
                f"replay suite [bold]{suite.id}[/]: {len(sources)} episode(s) on {len(phones)} phone(s)"
            )
        registry = load_registry(apps_dir)
        runner = ReplayRunner(store, safety=safety, registry=registry, phone_state=phone_state)
        _serve(store, phones, runner, suite.id, show=show)
        summary = suite_summary(store, suite.id)
        written = None
        if report is not None:
            from mobile_agent.replay.suite_report import write_suite_report

            written = write_suite_report(store, summary, report)
    if as_json:
        print_json({**summary.to_dict(), "report": str(written) if written else None})
    else:
        render_suite(summary)
        if written is not None:
            console.print(f"report: {escape(str(written))}")
    return summary.passed


def _serve(
    store: TrajectoryStore, phones: list[FarmPhone], runner: ReplayRunner, run_id: str, *, show: bool
) -> None:
    from mobile_agent.cli.farm_progress import LiveDisplay, ProgressView
    from mobile_agent.farm.scheduler.pool import WorkerPool
    from mobile_agent.farm.scheduler.runs import finish_run_status
    from mobile_agent.store import queue_status as qs

    pool = WorkerPool(store, phones, runner, run_ids=[run_id])
    display = LiveDisplay(ProgressView(total=qs.run_counts(store, run_id).total), enabled=show)
    pool.on_event = display.on_event
    try:
        with display:
            pool.run()
    finally:
        runner.close()
        finish_run_status(store, run_id, interrupted=pool.interrupted)
    if pool.interrupted:
        console.print(f"interrupted: the replays left are still queued in run {escape(run_id)}")
        raise KeyboardInterrupt


def render_suite(summary: SuiteSummary) -> None:
    table = Table("episode", "task", "result", "step", "why / notes", "verdict")
    for e in summary.entries:
        colour = _COLOURS.get(e.status, "white")
        notes = e.why or ", ".join(
            p
            for p in (
                f"{e.popups} popup(s) dismissed" if e.popups else "",
                f"{e.noted} step(s) noted" if e.noted else "",
            )
            if p
        )
        verdict = (
            f"{e.verdict or '-'} (recorded {e.source_verdict or '-'})"
            if e.verdict or e.source_verdict
            else ""
        )
        table.add_row(
            escape(e.source_id),
            escape(e.task[:40]),
            f"[{colour}]{e.status}[/]",
            "" if e.step is None else str(e.step),
            escape((notes or "")[:160]),
            escape(verdict),
        )
    console.print(table)
    counts = ", ".join(f"{n} {status}" for status, n in summary.counts.items() if n)
    verdict = "[green]passed[/]" if summary.passed else "[red]failed[/]"
    console.print(f"replay suite {escape(summary.run_id)}: {verdict}: {counts}")


__all__ = ["ReplayRunner", "render_suite", "run_suite", "suite_phones"]
