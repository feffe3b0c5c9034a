"""``mobile-agent batch`` (a task file over this host's phones, or --resume a run), ``mobile-agent submit`` (enqueue
a task file in the shared database) and ``mobile-agent worker`` (serve the shared queue with this host's phones).

Their settings come from the options given, then the run's stored configuration (on --resume, for a worker), then
SETTING_DEFAULTS.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from mobile_agent.cli.completion import complete_family, complete_run
from mobile_agent.cli.farm_options import (
    AdbOpt,
    DbOpt,
    DevicesOpt,
    JsonOpt,
    console,
    inventory_path,
    print_json,
)
from mobile_agent.cli.farm_progress import LiveDisplay, ProgressView, render_summary
from mobile_agent.cli.safety import ALLOW_HELP, DENY_HELP, POLICY_HELP, policy_from_options
from mobile_agent.errors import UserError

if TYPE_CHECKING:  # the commands import the library when they run, so `mobile-agent --help` stays quick
    from mobile_agent.farm.health import PhoneFacts
    from mobile_agent.farm.inventory import FarmPhone, PhoneEntry
    from mobile_agent.farm.scheduler.jobs import EventSink
    from mobile_agent.farm.scheduler.pool import WorkerPool
    from mobile_agent.farm.scheduler.runner import AgentRunner
    from mobile_agent.gate.policy import SafetyPolicy
    from mobile_agent.store.store import TrajectoryStore

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
DEFAULT_MODEL = "ui-venus-2"
DEFAULT_FAMILY = "ui-venus-2"

QuietOpt = typer.Option(False, "--quiet", "-q", help="No live progress display.")
PolicyOpt = typer.Option([], "--policy", help=POLICY_HELP)
AllowOpt = typer.Option([], "--allow", help=ALLOW_HELP)
DenyOpt = typer.Option([], "--deny", help=DENY_HELP)

# ----- options of batch and worker: each parameter is named after the setting it overrides (see _overrides)
BaseUrlOpt = typer.Option(
    [], "--base-url", envvar="MOBILE_AGENT_BASE_URL", help="OpenAI-compatible endpoint(s) (repeatable)."
)
ModelOpt = typer.Option(None, "--model", envvar="MOBILE_AGENT_MODEL", help="Served model name.")
FamilyOpt = typer.Option(
    None,
    "--family",
    envvar="MOBILE_AGENT_FAMILY",
    autocompletion=complete_family,
    help="Output format family.",
)
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
    "--hold",
    "--reserve",
    min=0,
    help="Seconds a paused (needs_user) episode waits for a person's answer, keeping its phone within the "
    "--hold-share budget; then it ends as needs_user:expired (300).",
)
HoldShareOpt = typer.Option(
    None,
    "--hold-share",
    min=0.0,
    max=1.0,
    help="Share of the phones that may be held for people at once; one phone always stays free (0.25).",
)
ReconnectWaitOpt = typer.Option(
    None,
    "--reconnect-wait",
    min=0,
    help="Seconds an episode waits for a phone that left the adb bus (network phones are asked back with adb "
    "connect) before it ends error:device_lost and the task is retried on another phone (60).",
)
ResetOpt = typer.Option(
    None,
    "--reset",
    help="Before each episode: none, home, force-stop or clear (the task's app). Default home.",
)


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
    "reserve": 300.0,
    "hold_share": 0.25,
    "reconnect_wait": 60.0,
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
    path = inventory_path(params.get("devices"))
    values["devices"] = str(path) if path else None
    return _Overrides(values)


def _build_pool(
    store: TrajectoryStore,
    settings: dict[str, Any],
    run_ids: list[str] | None,
    *,
    on_event: EventSink | None,
    until_done: bool = True,
    safety: SafetyPolicy | None = None,
) -> tuple[WorkerPool, AgentRunner]:
    from mobile_agent.farm.health import read_facts
    from mobile_agent.farm.inventory import PhoneState, discover, load_inventory
    from mobile_agent.farm.scheduler.jobs import SchedulerConfig
    from mobile_agent.farm.scheduler.pool import WorkerPool
    from mobile_agent.farm.scheduler.runner import AgentRunner, EpisodeDefaults, ModelSettings
    from mobile_agent.farm.tasks import ResetMode
    from mobile_agent.verify.phone_state import read_phone_state

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
            reconnect_wait_s=settings["reconnect_wait"],
        ),
        apps_dir=settings.get("apps_dir"),
        safety=safety,
        # a task's state: check reads a simulated phone's world over adb (`sim-state`); a real phone has none
        phone_state=lambda phone: read_phone_state(phone.serial, phone.adb),
    )
    config = SchedulerConfig(
        max_device_retries=settings["retries"],
        quarantine_after=settings["quarantine_after"],
        probe_every_s=settings["probe_every"],
        endpoint_backoff_s=settings["endpoint_backoff"],
        stall_s=settings["stall"],
        until_done=until_done,
        hold_s=settings["reserve"],
        hold_share=settings["hold_share"],
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


def _discovered_tags(
    phones: Sequence[FarmPhone], read_facts: Callable[[PhoneEntry], PhoneFacts]
) -> dict[str, tuple[str, ...]]:
    """android:<version> and model:<model> for each online phone, read in parallel."""
    from concurrent.futures import ThreadPoolExecutor

    if not phones:
        return {}
    with ThreadPoolExecutor(max_workers=min(16, len(phones))) as pool:
        facts = list(pool.map(lambda p: read_facts(p.entry), phones))
    return {p.key: f.tags() for p, f in zip(phones, facts, strict=True)}


def _settings(overrides: _Overrides, stored: dict[str, Any]) -> dict[str, Any]:
    """Flags and environment, then what a resumed run stored, then the config file, then the defaults."""
    from mobile_agent.settings.values import load_settings

    configured = load_settings()
    defaults = {
        **SETTING_DEFAULTS,
        "base_url": list(configured.base_url),
        "model": configured.model,
        "family": configured.family,
        "apps_dir": configured.apps_dir,
    }
    out = {key: overrides.pick(stored, key, default) for key, default in defaults.items()}
    from mobile_agent.model.families import get_family

    get_family(out["family"])  # an unknown family: one line with the names, before any phone is touched
    if out["devices"] is not None:
        out["devices"] = str(Path(out["devices"]).resolve())
    return out


def _run_pool(
    pool: WorkerPool, runner: AgentRunner, store: TrajectoryStore, run_id: str | None, *, show: bool
) -> None:
    from mobile_agent.store import queue_status as qs

    total = qs.run_counts(store, run_id).total if run_id else 0
    done = 0
    if run_id:
        counts = qs.run_counts(store, run_id)
        done = counts.done + counts.failed
    view = ProgressView(total=total, done=done)
    display = LiveDisplay(view, enabled=show)
    sink = pool.on_event
    pool.on_event = display.on_event if sink is None else (lambda e: (display.on_event(e), sink(e)))
    try:
        with display:
            pool.run()
    finally:
        runner.close()
    if pool.store_failure is not None:  # the store stayed away past its bound: one line, exit 1
        raise pool.store_failure


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
    reconnect_wait: float | None = ReconnectWaitOpt,
    hold_share: float | None = HoldShareOpt,
    resume: str | None = typer.Option(None, "--resume", help="Finish the run RUN (after a crash or Ctrl-C)."),
    name: str | None = typer.Option(None, "--name", help="Name of the new run (default: the file name)."),
    as_json: bool = JsonOpt,
    quiet: bool = QuietOpt,
) -> None:
    """Run every task of a task file over the farm's phones; --resume RUN finishes an interrupted run."""
    from mobile_agent.farm.scheduler.recovery import recover_run
    from mobile_agent.farm.scheduler.runs import finish_run_status, submit
    from mobile_agent.farm.scheduler.summary import summarize_run
    from mobile_agent.store.answers import requeue_expired
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
            expired = requeue_expired(store, run.id)  # nobody answered them in time: a fresh attempt
            if not as_json:
                console.print(
                    f"resuming run {run.id}: {len(recovery.requeued)} task(s) back in the queue, "
                    f"{len(recovery.settled)} already finished, {len(recovery.interrupted_episodes)} episode(s) "
                    f"marked interrupted, {expired} expired waiting for a person queued again"
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
        if summary.counts.pending:  # say which requires: no phone here meets (farm/scheduler/unmet)
            summary = replace(summary, unmet=[u.to_dict() for u in pool.unmet.values()])
    if as_json:
        print_json(summary.to_dict())
    else:
        render_summary(summary)
    if pool.interrupted:
        console.print(f"interrupted; finish it with: mobile-agent batch --resume {summary.run_id}")
        raise typer.Exit(130)
    unanswered = summary.waiting or summary.expired  # people's answers were missing: not done
    raise typer.Exit(0 if summary.counts.open == 0 and summary.counts.failed == 0 and not unanswered else 1)


def _safety(settings: dict[str, Any]) -> SafetyPolicy | None:
    return policy_from_options(settings.get("policy"), settings.get("allow"), settings.get("deny"))


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
    family: str | None = typer.Option(
        None, "--family", autocompletion=complete_family, help="Family workers use unless they say otherwise."
    ),
    policy: list[str] = PolicyOpt,
    allow: list[str] = AllowOpt,
    deny: list[str] = DenyOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Enqueue a task file as a new run in the (shared) database; `mobile-agent worker` on each host serves it.

    The safety options are stored with the run: every worker applies them to its tasks unless it is given its own.
    """
    from mobile_agent.farm.scheduler.runs import submit
    from mobile_agent.store import queue_status as qs
    from mobile_agent.store.store import TrajectoryStore

    policy_from_options(policy, allow, deny)  # a bad word is a UserError before anything is stored
    if family is not None:
        from mobile_agent.model.families import get_family

        get_family(family)  # so is a family no worker could use
    given = {"base_url": base_url, "model": model, "family": family, "policy": policy, "allow": allow}
    config = {k: v for k, v in {**given, "deny": deny}.items() if v}
    with TrajectoryStore.open(db) as store:
        run = submit(store, tasks, name=name, config=config)
        total = qs.run_counts(store, run.id).total
    if as_json:
        print_json({"run_id": run.id, "name": run.name, "tasks": total})
    else:
        console.print(f"run {run.id}: {total} task(s) enqueued; serve them with `mobile-agent worker`")


# ======================================================================================================= worker
def worker_command(
    ctx: typer.Context,
    db: str | None = DbOpt,
    devices: Path | None = DevicesOpt,
    adb: str | None = AdbOpt,
    run: list[str] = typer.Option(
        [],
        "--run",
        autocompletion=complete_run,
        help="Only these runs (repeatable; default: every open run).",
    ),
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
    reconnect_wait: float | None = ReconnectWaitOpt,
    hold_share: float | None = HoldShareOpt,
    forever: bool = typer.Option(False, "--forever", help="Keep waiting for new runs instead of exiting."),
    as_json: bool = JsonOpt,
    quiet: bool = QuietOpt,
) -> None:
    """Serve this host's phones from the shared queue until the runs are done (or forever).

    Each task runs under the safety policy stored with its run, unless --policy/--allow/--deny are given here.
    """
    from mobile_agent.store import queue_status as qs
    from mobile_agent.store.store import TrajectoryStore

    overrides = _overrides(ctx.params)
    with TrajectoryStore.open(db) as store:
        run_ids = [store.run(r).id for r in run] or None
        first = (run_ids or qs.open_run_ids(store) or [None])[0]
        stored = dict(store.run(first).config) if first else {}
        stored.pop("devices", None)  # the submitting host's inventory is not this host's
        for key in ("policy", "allow", "deny"):
            stored.pop(
                key, None
            )  # each run's own words apply to its tasks (mobile_agent.farm.scheduler.policy)
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
        print_json(done)
    else:
        console.print(f"worker {pool.worker_id} stopped" + (" (interrupted)" if pool.interrupted else ""))
    if pool.interrupted:
        raise typer.Exit(130)


__all__ = [
    "SETTING_DEFAULTS",
    "batch_command",
    "submit_command",
    "worker_command",
]
