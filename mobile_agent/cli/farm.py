"""The farm's commands: devices, devices check, batch, submit, worker, runs, runs show.

A thin skin over mobile_agent.farm.inventory and mobile_agent.farm.scheduler: parse options, call the library, render.
``mobile_agent.cli.app`` mounts these; ``python -m mobile_agent.cli.farm`` runs them on their own.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer
from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from mobile_agent.errors import UserError
from mobile_agent.cli.safety import ALLOW_HELP, DENY_HELP, POLICY_HELP, policy_from_options

log = logging.getLogger(__name__)
console = Console()
err_console = Console(stderr=True)

DEVICES_FILE = "devices.yaml"
DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
DEFAULT_MODEL = "ui-venus-2"
DEFAULT_FAMILY = "ui-venus-2"

# ----- shared options -----------------------------------------------------------------------------------------
DevicesOpt = typer.Option(
    None,
    "--devices",
    envvar="MOBILE_AGENT_DEVICES",
    help="Inventory file (default: ./devices.yaml if present).",
)
AdbOpt = typer.Option(None, "--adb", envvar="MOBILE_AGENT_ADB", help="Default adb server HOST:PORT.")
DbOpt = typer.Option(None, "--db", envvar="MOBILE_AGENT_DB", help="SQLAlchemy URL of the store.")
JsonOpt = typer.Option(False, "--json", help="Print JSON for machines instead of tables.")
QuietOpt = typer.Option(False, "--quiet", "-q", help="No live progress display.")
PolicyOpt = typer.Option([], "--policy", help=POLICY_HELP)
AllowOpt = typer.Option([], "--allow", help=ALLOW_HELP)
DenyOpt = typer.Option([], "--deny", help=DENY_HELP)

# ----- options of batch and worker: each parameter is named after the setting it overrides (see _overrides)
BaseUrlOpt = typer.Option(
    [], "--base-url", envvar="MOBILE_AGENT_BASE_URL", help="OpenAI-compatible endpoint(s) (repeatable)."
)
ModelOpt = typer.Option(None, "--model", envvar="MOBILE_AGENT_MODEL", help="Served model name.")
FamilyOpt = typer.Option(None, "--family", envvar="MOBILE_AGENT_FAMILY", help="Output format family.")
MaxInFlightOpt = typer.Option(None, "--max-in-flight", min=1, help="Model requests in flight, total.")
EndpointMaxInFlightOpt = typer.Option(
    None, "--endpoint-max-in-flight", min=1, help="Model requests in flight per endpoint (default 4)."
)
RetriesOpt = typer.Option(
    None, "--retries", min=0, help="Retries of a task after infrastructure failures (default 2)."
)
QuarantineAfterOpt = typer.Option(
    None, "--quarantine-after", min=1, help="Consecutive infrastructure failures that quarantine a phone (2)."
)
ProbeEveryOpt = typer.Option(
    None, "--probe-every", min=0, help="Seconds before a quarantined phone is probed again (60)."
)
ReserveOpt = typer.Option(
    None,
    "--reserve",
    min=0,
    help="Seconds a phone stays reserved for a person after an episode pauses as needs_user (1800).",
)
ResetOpt = typer.Option(
    None,
    "--reset",
    help="Before each episode: none, home, force-stop or clear (the task's app). Default home.",
)


def _inventory_path(devices: Path | None) -> Path | None:
    if devices is not None:
        return devices
    default = Path(DEVICES_FILE)
    return default if default.is_file() else None


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")
    sys.stdout.flush()


# ======================================================================================================= devices
devices_app = typer.Typer(
    help="The farm's phones: state, model, Android version, battery, screen, u2; health checks.",
    invoke_without_command=True,
    no_args_is_help=False,
)


@devices_app.callback()
def devices_list(
    ctx: typer.Context,
    devices: Path | None = DevicesOpt,
    adb: str | None = AdbOpt,
    db: str | None = DbOpt,
    no_probe: bool = typer.Option(False, "--no-probe", help="Do not start the u2 server to test it."),
    as_json: bool = JsonOpt,
) -> None:
    """List the phones of the inventory and the attached ones, with their state."""
    if ctx.invoked_subcommand is not None:
        return
    from mobile_agent.farm.inventory import describe_phones, discover, load_inventory
    from mobile_agent.store.store import TrajectoryStore

    phones = discover(load_inventory(_inventory_path(devices), adb=adb))
    store = TrajectoryStore.open(db) if db else None
    try:
        statuses = describe_phones(phones, store, probe=not no_probe)
    finally:
        if store is not None:
            store.close()
    if as_json:
        _print_json([_status_dict(s) for s in statuses])
        return
    table = Table("serial", "adb", "state", "model", "android", "battery", "screen", "u2", "tags", "notes")
    colours = {"online": "green", "busy": "cyan", "quarantined": "yellow", "reserved": "magenta"}
    for s in statuses:
        entry, facts = s.phone.entry, s.facts
        state = str(s.state)
        if s.reserved_by:
            state += f" for episode {s.reserved_by} until {s.reserved_until.astimezone():%H:%M:%S}"
        elif s.worker:
            state += f" ({s.worker})"
        if s.quarantine_reason:
            state += f": {s.quarantine_reason}"
        table.add_row(
            escape(entry.serial) + ("" if entry.listed else " [dim](discovered)[/]"),
            entry.adb,
            f"[{colours.get(str(s.state), 'red')}]{escape(state)}[/]",
            escape(facts.model or ""),
            escape(facts.android_version or ""),
            f"{facts.battery}%" if facts.battery is not None else "",
            facts.screen if s.state.value in ("online", "busy", "quarantined", "reserved") else "",
            escape(s.u2),
            escape(" ".join(entry.tags)),
            escape(entry.notes or ""),
        )
    console.print(table)


def _status_dict(s: Any) -> dict[str, Any]:
    entry, facts = s.phone.entry, s.facts
    return {
        "serial": entry.serial,
        "adb": entry.adb,
        "listed": entry.listed,
        "state": str(s.state),
        "model": facts.model,
        "android_version": facts.android_version,
        "battery": facts.battery,
        "screen": facts.screen,
        "free_mb": facts.free_mb,
        "u2": None if not s.u2_checked else (s.u2_error is None),
        "u2_error": s.u2_error,
        "worker": s.worker,
        "quarantine_reason": s.quarantine_reason,
        "reserved_by": s.reserved_by,
        "reserved_until": s.reserved_until.isoformat() if s.reserved_until else None,
        "tags": list(entry.tags),
        "notes": entry.notes,
    }


@devices_app.command("check")
def devices_check(
    devices: Path | None = DevicesOpt,
    adb: str | None = AdbOpt,
    prepare: bool = typer.Option(
        False, "--prepare", help="Wake the phones, dismiss a keyguard without PIN and go home first."
    ),
    min_battery: int = typer.Option(20, "--min-battery", min=0, max=100, help="Lowest acceptable battery %."),
    min_free_mb: int = typer.Option(500, "--min-free-mb", min=0, help="Least free storage on /data, MiB."),
    serial: list[str] = typer.Option([], "--device", "-d", help="Only these serials (repeatable)."),
    as_json: bool = JsonOpt,
) -> None:
    """Health checks: screen on and unlocked, battery, free storage, u2 server starts, text input works."""
    from mobile_agent.farm.inventory import HealthThresholds, check_phones, discover, load_inventory

    phones = discover(load_inventory(_inventory_path(devices), adb=adb))
    if serial:
        phones = [p for p in phones if p.serial in set(serial)]
        if not phones:
            raise UserError(
                f"none of {', '.join(serial)} is in the farm", "list the phones with `mobile-agent devices`"
            )
    reports = check_phones(phones, prepare=prepare, thresholds=HealthThresholds(min_battery, min_free_mb))
    if as_json:
        _print_json(
            [
                {
                    "serial": r.phone.serial,
                    "adb": r.phone.entry.adb,
                    "ok": r.ok,
                    "prepared": list(r.prepared),
                    "checks": [
                        {"name": c.name, "status": str(c.status), "detail": c.detail, "fix": c.fix}
                        for c in r.checks
                    ],
                }
                for r in reports
            ]
        )
    else:
        marks = {"ok": "[green]✓[/]", "fail": "[red]✗[/]", "warn": "[yellow]![/]", "skip": "[dim]-[/]"}
        for r in reports:
            verdict = "[green]healthy[/]" if r.ok else "[red]not ready[/]"
            console.print(f"[bold]{escape(r.phone.serial)}[/] ({r.phone.entry.adb}): {verdict}")
            if r.prepared:
                console.print(f"  [dim]prepared: {escape(', '.join(r.prepared))}[/]")
            for c in r.checks:
                console.print(f"  {marks[str(c.status)]} {c.name}: {escape(c.detail)}")
                if c.fix and c.status.value == "fail":
                    console.print(f"      [dim]fix: {escape(c.fix)}[/]")
    raise typer.Exit(0 if all(r.ok for r in reports) else 1)


# ========================================================================================= progress display
@dataclass
class _PhoneRow:
    task: str = ""
    step: int | None = None
    started: float | None = None
    outcome: str = ""


@dataclass
class ProgressView:
    """Keeps what the live table shows, fed by the pool's progress events (thread-safe)."""

    total: int
    done: int = 0
    rows: dict[str, _PhoneRow] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def on_event(self, event: Any) -> None:
        with self._lock:
            row = self.rows.setdefault(event.phone, _PhoneRow())
            kind = event.kind
            if kind == "claimed":
                row.task, row.step, row.started, row.outcome = (
                    event.task or "",
                    None,
                    time.monotonic(),
                    "running",
                )
            elif kind == "step":
                row.step = event.step
            elif kind in ("done", "failed", "retry", "lost"):
                row.outcome = event.outcome or kind
                row.started = None
                if kind in ("done", "failed"):
                    self.done += 1
            elif kind in (
                "quarantined",
                "probe_failed",
                "restored",
                "endpoint_down",
                "busy_elsewhere",
                "reserved",
            ):
                row.outcome = kind
            if kind in (
                "retry",
                "failed",
                "quarantined",
                "restored",
                "endpoint_down",
                "busy_elsewhere",
                "lost",
                "reserved",
            ) or (kind == "done" and event.outcome == "needs_user"):
                self.lines.append(
                    f"{event.phone}: {kind} {event.label or ''} {event.detail or event.outcome or ''}"
                )

    def table(self) -> Table:
        table = Table("phone", "task", "step", "elapsed", "outcome", expand=False)
        with self._lock:
            for phone, row in sorted(self.rows.items()):
                elapsed = f"{time.monotonic() - row.started:.0f}s" if row.started is not None else ""
                colour = "green" if row.outcome in ("finished", "answered") else "yellow"
                table.add_row(
                    escape(phone),
                    escape(row.task[:50]),
                    "" if row.step is None else str(row.step + 1),
                    elapsed,
                    f"[{colour}]{escape(row.outcome)}[/]",
                )
        return table


class _LiveDisplay:
    """The rich live table and an overall bar with ETA; plain event lines when stdout is not a terminal."""

    def __init__(self, view: ProgressView, enabled: bool) -> None:
        self.view = view
        self.enabled = enabled and console.is_terminal
        self.plain = enabled and not console.is_terminal
        self.progress = Progress(
            TextColumn("tasks"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
        )
        self.bar = self.progress.add_task("tasks", total=view.total, completed=view.done)
        self.live: Live | None = None

    def on_event(self, event: Any) -> None:
        self.view.on_event(event)
        self.progress.update(self.bar, completed=self.view.done)
        if self.plain and event.kind in (
            "done",
            "failed",
            "retry",
            "quarantined",
            "restored",
            "endpoint_down",
            "reserved",
        ):
            what = event.outcome or event.detail or ""
            console.print(f"{event.phone} {event.kind} {event.label or ''} {what}", highlight=False)

    def __enter__(self) -> _LiveDisplay:
        if self.enabled:
            self.live = Live(
                console=console,
                refresh_per_second=4,
                get_renderable=lambda: Group(self.view.table(), self.progress),
            )
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(None, None, None)


# ========================================================================================================= batch
SETTING_DEFAULTS: dict[str, Any] = {
    "devices": None,
    "adb": None,
    "base_url": [DEFAULT_BASE_URL],
    "model": DEFAULT_MODEL,
    "family": DEFAULT_FAMILY,
    "max_in_flight": None,
    "endpoint_max_in_flight": 4,
    "retries": 2,
    "quarantine_after": 2,
    "probe_every": 60.0,
    "endpoint_backoff": 2.0,
    "stall": 120.0,
    "reset": "home",
    "max_steps": 30,
    "timeout": 600.0,
    "apps_dir": None,
    "model_retries": 4,
    "reserve": 1800.0,
    # the safety words, stored with the run as given (see mobile_agent.farm.scheduler.policy)
    "policy": [],
    "allow": [],
    "deny": [],
}


@dataclass(frozen=True)
class _Overrides:
    """Options a user gave explicitly; on --resume the rest come from the run's stored configuration."""

    values: dict[str, Any]

    def pick(self, stored: dict[str, Any], key: str, default: Any) -> Any:
        value = self.values.get(key)
        if value is not None and value != []:
            return value
        return stored.get(key, default)


def _overrides(params: dict[str, Any]) -> _Overrides:
    """The settings a command was given: its parameters named like a setting, the inventory file found."""
    from mobile_agent.farm.tasks import ResetMode

    reset = params.get("reset")
    if reset is not None and reset not in {m.value for m in ResetMode}:
        raise UserError(f"unknown --reset {reset!r}", f"use one of: {', '.join(m.value for m in ResetMode)}")
    policy_from_options(params.get("policy"), params.get("allow"), params.get("deny"))  # UserError if bad
    values = {key: params[key] for key in SETTING_DEFAULTS if key in params}
    path = _inventory_path(params.get("devices"))
    values["devices"] = str(path) if path else None
    return _Overrides(values)


def _build_pool(
    store: Any,
    settings: dict[str, Any],
    run_ids: list[str] | None,
    *,
    on_event: Any,
    until_done: bool = True,
    safety: Any = None,
) -> tuple[Any, Any]:
    from mobile_agent.farm.inventory import PhoneState, discover, load_inventory, read_facts
    from mobile_agent.farm.scheduler.runner import AgentRunner, EpisodeDefaults, ModelSettings
    from mobile_agent.farm.scheduler.jobs import SchedulerConfig
    from mobile_agent.farm.scheduler.pool import WorkerPool
    from mobile_agent.farm.tasks import ResetMode

    devices_path = settings.get("devices")
    inventory = load_inventory(Path(devices_path) if devices_path else None, adb=settings.get("adb"))
    phones = discover(inventory)
    model = ModelSettings(
        base_urls=tuple(settings["base_url"]),
        model=settings["model"],
        family=settings["family"],
        per_endpoint_in_flight=settings["endpoint_max_in_flight"],
        global_in_flight=settings.get("max_in_flight"),
        max_retries=settings.get("model_retries", 4),
    )
    runner = AgentRunner(
        store,
        model,
        defaults=EpisodeDefaults(
            max_steps=settings["max_steps"],
            timeout_s=settings["timeout"],
            reset=ResetMode(settings["reset"]),
            reserve_s=settings["reserve"],
        ),
        apps_dir=settings.get("apps_dir"),
        safety=safety,
    )
    config = SchedulerConfig(
        max_device_retries=settings["retries"],
        quarantine_after=settings["quarantine_after"],
        probe_every_s=settings["probe_every"],
        endpoint_backoff_s=settings["endpoint_backoff"],
        stall_s=settings["stall"],
        until_done=until_done,
    )
    online = [p for p in phones if p.state is PhoneState.ONLINE]
    extra_tags = _discovered_tags(online, read_facts)
    pool = WorkerPool(
        store,
        phones,
        runner,
        config=config,
        run_ids=run_ids,
        on_event=on_event,
        endpoint_probe=runner.probe_endpoint,
        extra_tags=extra_tags,
    )
    return pool, runner


def _discovered_tags(phones: Sequence[Any], read_facts: Any) -> dict[str, tuple[str, ...]]:
    """android:<version> and model:<model> for each online phone, read in parallel."""
    from concurrent.futures import ThreadPoolExecutor

    if not phones:
        return {}
    with ThreadPoolExecutor(max_workers=min(16, len(phones))) as pool:
        facts = list(pool.map(lambda p: read_facts(p.entry), phones))
    return {p.key: f.tags() for p, f in zip(phones, facts, strict=True)}


def _settings(overrides: _Overrides, stored: dict[str, Any]) -> dict[str, Any]:
    out = {key: overrides.pick(stored, key, default) for key, default in SETTING_DEFAULTS.items()}
    if out["devices"] is not None:
        out["devices"] = str(Path(out["devices"]).resolve())
    return out


def _run_pool(pool: Any, runner: Any, store: Any, run_id: str | None, *, show: bool) -> None:
    from mobile_agent.store import queue as q

    total = q.run_counts(store, run_id).total if run_id else 0
    done = 0
    if run_id:
        counts = q.run_counts(store, run_id)
        done = counts.done + counts.failed
    view = ProgressView(total=total, done=done)
    display = _LiveDisplay(view, enabled=show)
    sink = pool.on_event
    pool.on_event = display.on_event if sink is None else (lambda e: (display.on_event(e), sink(e)))
    try:
        with display:
            pool.run()
    finally:
        runner.close()


def batch_command(
    ctx: typer.Context,
    tasks: Path | None = typer.Argument(None, help="Task file (.yaml or .jsonl). Not needed with --resume."),
    devices: Path | None = DevicesOpt,
    adb: str | None = AdbOpt,
    db: str | None = DbOpt,
    base_url: list[str] = BaseUrlOpt,
    model: str | None = ModelOpt,
    family: str | None = FamilyOpt,
    max_in_flight: int | None = MaxInFlightOpt,
    endpoint_max_in_flight: int | None = EndpointMaxInFlightOpt,
    retries: int | None = RetriesOpt,
    quarantine_after: int | None = QuarantineAfterOpt,
    probe_every: float | None = ProbeEveryOpt,
    endpoint_backoff: float | None = typer.Option(
        None,
        "--endpoint-backoff",
        min=0.01,
        help="First pause in seconds after the model endpoint fails (2).",
    ),
    stall: float | None = typer.Option(
        None, "--stall", min=0, help="Stop when no phone can make progress for this many seconds (120)."
    ),
    reset: str | None = ResetOpt,
    max_steps: int | None = typer.Option(
        None, "--max-steps", min=1, help="Default step limit per episode (30)."
    ),
    timeout: float | None = typer.Option(
        None, "--timeout", min=1, help="Default episode timeout, seconds (600)."
    ),
    apps_dir: str | None = typer.Option(
        None, "--apps-dir", envvar="MOBILE_AGENT_APPS", help="Extra manifests."
    ),
    policy: list[str] = PolicyOpt,
    allow: list[str] = AllowOpt,
    deny: list[str] = DenyOpt,
    reserve: float | None = ReserveOpt,
    resume: str | None = typer.Option(None, "--resume", help="Finish the run RUN (after a crash or Ctrl-C)."),
    name: str | None = typer.Option(None, "--name", help="Name of the new run (default: the file name)."),
    as_json: bool = JsonOpt,
    quiet: bool = QuietOpt,
) -> None:
    """Run every task of a task file over the farm's phones; --resume RUN finishes an interrupted run."""
    from mobile_agent.farm.scheduler.runs import finish_run_status, submit
    from mobile_agent.farm.scheduler.recovery import recover_run
    from mobile_agent.farm.scheduler.summary import summarize_run
    from mobile_agent.store.store import TrajectoryStore

    if (tasks is None) == (resume is None):
        raise UserError(
            "give either a task file or --resume RUN",
            "mobile-agent batch tasks.yaml, or mobile-agent batch --resume RUN",
        )
    overrides = _overrides(ctx.params)
    with TrajectoryStore.open(db) as store:
        if resume is not None:
            run = store.run(resume)
            settings = _settings(overrides, dict(run.config))
            recovery = recover_run(store, run.id)
            if not as_json:
                console.print(
                    f"resuming run {run.id}: {len(recovery.requeued)} task(s) back in the queue, "
                    f"{len(recovery.settled)} already finished, {len(recovery.interrupted_episodes)} episode(s) "
                    "marked interrupted"
                )
            if run.status.value != "running":
                store.finish_run(run.id, "running")
        else:
            settings = _settings(overrides, {})
            run = submit(store, tasks, name=name, config=settings)
            if not as_json:
                console.print(f"run {run.id}: tasks from {escape(str(tasks))}")
        # The run's policy comes with its stored words (policy_from_words); explicit options win on --resume.
        pool, runner = _build_pool(store, settings, [run.id], on_event=None, safety=_safety(settings))
        _run_pool(pool, runner, store, run.id, show=not (as_json or quiet))
        finish_run_status(store, run.id, interrupted=pool.interrupted)
        summary = summarize_run(store, run.id)
    if as_json:
        _print_json(summary.to_dict())
    else:
        render_summary(summary)
    if pool.interrupted:
        console.print(f"interrupted; finish it with: mobile-agent batch --resume {summary.run_id}")
        raise typer.Exit(130)
    raise typer.Exit(0 if summary.counts.open == 0 and summary.counts.failed == 0 else 1)


def _safety(settings: dict[str, Any]) -> Any:
    return policy_from_options(settings.get("policy"), settings.get("allow"), settings.get("deny"))


def render_summary(summary: Any) -> None:
    counts = summary.counts
    console.print(
        f"[bold]run {summary.run_id}[/] ({escape(summary.name)}, {summary.status}): {counts.total} task(s): "
        f"{counts.done} with a result, {counts.failed} failed on infrastructure, {counts.pending} pending, "
        f"{counts.claimed} running; {summary.episodes} episode(s), {summary.retries} retr"
        f"{'y' if summary.retries == 1 else 'ies'}"
    )
    if summary.successes is None:
        console.print(f"success: not verified; finished (unverified): {summary.finished_unverified}")
    else:
        verified = " ".join(f"{k} {v}" for k, v in sorted(summary.verdicts.items()))
        console.print(
            f"success (verified complete): [bold]{summary.successes}[/]"
            + (f"  [dim]verdicts: {verified}[/]" if verified else "")
            + f"; finished (unverified): {summary.finished_unverified}"
        )
    for title, groups in (("outcome by app", summary.by_app), ("outcome by phone", summary.by_phone)):
        if not groups:
            continue
        outcomes = sorted({o for g in groups.values() for o in g})
        table = Table(title.split()[-1], *outcomes, title=title, title_justify="left")
        for key, group in sorted(groups.items()):
            table.add_row(escape(key), *[str(group.get(o, 0)) for o in outcomes])
        console.print(table)
    if summary.quarantined:
        console.print(f"[yellow]quarantined:[/] {', '.join(summary.quarantined)}")
    if summary.waiting:
        console.print(
            f"[magenta]waiting for a person:[/] {len(summary.waiting)} episode(s); their phones stay reserved. "
            f"Continue one with: mobile-agent resume {summary.waiting[0]} --reply yes (or --reply no)"
        )


# ======================================================================================================= submit
def submit_command(
    tasks: Path = typer.Argument(..., help="Task file (.yaml or .jsonl)."),
    db: str | None = DbOpt,
    name: str | None = typer.Option(None, "--name", help="Name of the run (default: the file name)."),
    base_url: list[str] = typer.Option(
        [], "--base-url", help="Endpoint(s) workers use unless they say otherwise."
    ),
    model: str | None = typer.Option(
        None, "--model", help="Model name workers use unless they say otherwise."
    ),
    family: str | None = typer.Option(None, "--family", help="Family workers use unless they say otherwise."),
    policy: list[str] = PolicyOpt,
    allow: list[str] = AllowOpt,
    deny: list[str] = DenyOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Enqueue a task file as a new run in the (shared) database; `mobile-agent worker` on each host serves it.

    The safety options are stored with the run: every worker applies them to its tasks unless it is given its own.
    """
    from mobile_agent.farm.scheduler.runs import submit
    from mobile_agent.store.store import TrajectoryStore
    from mobile_agent.store import queue as q

    policy_from_options(policy, allow, deny)  # a bad word is a UserError before anything is stored
    given = {"base_url": base_url, "model": model, "family": family, "policy": policy, "allow": allow}
    config = {k: v for k, v in {**given, "deny": deny}.items() if v}
    with TrajectoryStore.open(db) as store:
        run = submit(store, tasks, name=name, config=config)
        total = q.run_counts(store, run.id).total
    if as_json:
        _print_json({"run_id": run.id, "name": run.name, "tasks": total})
    else:
        console.print(f"run {run.id}: {total} task(s) enqueued; serve them with `mobile-agent worker`")


# ======================================================================================================= worker
def worker_command(
    ctx: typer.Context,
    db: str | None = DbOpt,
    devices: Path | None = DevicesOpt,
    adb: str | None = AdbOpt,
    run: list[str] = typer.Option([], "--run", help="Only these runs (repeatable; default: every open run)."),
    base_url: list[str] = BaseUrlOpt,
    model: str | None = ModelOpt,
    family: str | None = FamilyOpt,
    max_in_flight: int | None = MaxInFlightOpt,
    endpoint_max_in_flight: int | None = EndpointMaxInFlightOpt,
    retries: int | None = RetriesOpt,
    quarantine_after: int | None = QuarantineAfterOpt,
    probe_every: float | None = ProbeEveryOpt,
    reset: str | None = ResetOpt,
    policy: list[str] = PolicyOpt,
    allow: list[str] = AllowOpt,
    deny: list[str] = DenyOpt,
    reserve: float | None = ReserveOpt,
    forever: bool = typer.Option(False, "--forever", help="Keep waiting for new runs instead of exiting."),
    as_json: bool = JsonOpt,
    quiet: bool = QuietOpt,
) -> None:
    """Serve this host's phones from the shared queue until the runs are done (or forever).

    Each task runs under the safety policy stored with its run, unless --policy/--allow/--deny are given here.
    """
    from mobile_agent.store.store import TrajectoryStore
    from mobile_agent.store import queue as q

    overrides = _overrides(ctx.params)
    with TrajectoryStore.open(db) as store:
        run_ids = [store.run(r).id for r in run] or None
        first = (run_ids or q.open_run_ids(store) or [None])[0]
        stored = dict(store.run(first).config) if first else {}
        stored.pop("devices", None)  # the submitting host's inventory is not this host's
        for key in ("policy", "allow", "deny"):
            stored.pop(key, None)  # each run's own words apply to its tasks (mobile_agent.farm.scheduler.policy)
        settings = _settings(overrides, stored)
        pool, runner = _build_pool(
            store, settings, run_ids, on_event=None, until_done=not forever, safety=_safety(settings)
        )
        _run_pool(
            pool,
            runner,
            store,
            run_ids[0] if run_ids and len(run_ids) == 1 else None,
            show=not (as_json or quiet),
        )
        done = {"worker": pool.worker_id, "interrupted": pool.interrupted}
    if as_json:
        _print_json(done)
    else:
        console.print(f"worker {pool.worker_id} stopped" + (" (interrupted)" if pool.interrupted else ""))
    if pool.interrupted:
        raise typer.Exit(130)


# ========================================================================================================= runs
runs_app = typer.Typer(help="Runs in the (shared) database and their progress.", invoke_without_command=True)


@runs_app.callback()
def runs_list(
    ctx: typer.Context,
    db: str | None = DbOpt,
    limit: int = typer.Option(20, "--limit", "-n", min=1),
    as_json: bool = JsonOpt,
) -> None:
    """List recent runs with their task counts."""
    if ctx.invoked_subcommand is not None:
        return
    from mobile_agent.store.store import TrajectoryStore
    from mobile_agent.store import queue as q

    with TrajectoryStore.open(db) as store:
        rows = [(r, q.run_counts(store, r.id)) for r in store.list_runs(limit=limit)]
    if as_json:
        _print_json(
            [
                {
                    "run_id": r.id,
                    "name": r.name,
                    "status": str(r.status),
                    "created_at": r.created_at.isoformat(),
                    "tasks": c.total,
                    "done": c.done,
                    "failed": c.failed,
                    "pending": c.pending,
                    "running": c.claimed,
                }
                for r, c in rows
            ]
        )
        return
    table = Table("run", "name", "status", "created", "tasks", "done", "failed", "pending", "running")
    for r, c in rows:
        table.add_row(
            r.id,
            escape(r.name),
            str(r.status),
            f"{r.created_at:%Y-%m-%d %H:%M}",
            str(c.total),
            str(c.done),
            str(c.failed),
            str(c.pending),
            str(c.claimed),
        )
    console.print(table)


@runs_app.command("show")
def runs_show(
    run_id: str = typer.Argument(..., help="Run id (a unique prefix is enough)."),
    db: str | None = DbOpt,
    tasks: bool = typer.Option(False, "--tasks", help="Also list every task."),
    as_json: bool = JsonOpt,
) -> None:
    """A run's progress and summary: outcomes by app and phone, retries, quarantined phones."""
    from mobile_agent.farm.scheduler.summary import summarize_run
    from mobile_agent.store.store import TrajectoryStore
    from mobile_agent.store import queue as q

    with TrajectoryStore.open(db) as store:
        summary = summarize_run(store, run_id)
        rows = q.list_tasks(store, summary.run_id) if (tasks or as_json) else []
    if as_json:
        data = summary.to_dict()
        data["task_list"] = [
            {
                "label": t.label,
                "task": t.task,
                "app": t.app,
                "state": str(t.state),
                "outcome": t.outcome,
                "attempts": t.attempts,
                "episode_id": t.episode_id,
                "device": t.device,
            }
            for t in rows
        ]
        _print_json(data)
        return
    render_summary(summary)
    if rows:
        table = Table("task", "state", "outcome", "attempts", "episode")
        for t in rows:
            table.add_row(
                escape(t.label), str(t.state), escape(t.outcome or ""), str(t.attempts), t.episode_id or ""
            )
        console.print(table)


# ================================================================================================ standalone
def standalone_app() -> typer.Typer:
    """These commands on their own (what mobile_agent.cli.app mounts)."""
    app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)
    app.add_typer(devices_app, name="devices")
    app.command("batch")(batch_command)
    app.command("submit")(submit_command)
    app.command("worker")(worker_command)
    app.add_typer(runs_app, name="runs")
    return app


def main(argv: list[str] | None = None) -> None:
    """Like mobile_agent.cli.app.main: user errors as one line + hint, exit code 2; Ctrl-C exit 130."""
    import click

    from mobile_agent.errors import MobileAgentError

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        code = standalone_app()(args=argv, standalone_mode=False)
    except MobileAgentError as exc:
        err_console.print(f"[bold red]error:[/] {escape(exc.message)}", highlight=False)
        if exc.hint:
            err_console.print(f"[dim]hint: {escape(exc.hint)}[/]", highlight=False)
        sys.exit(exc.exit_code)
    except (KeyboardInterrupt, click.exceptions.Abort):
        err_console.print("interrupted")
        sys.exit(130)
    except click.exceptions.ClickException as exc:
        err_console.print(f"[bold red]error:[/] {escape(exc.format_message())}", highlight=False)
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


__all__ = [
    "batch_command",
    "devices_app",
    "main",
    "render_summary",
    "runs_app",
    "standalone_app",
    "submit_command",
    "worker_command",
]

if __name__ == "__main__":
    main()
