"""`mobile-agent replay`: one recorded episode on one phone, or a replay suite (`--run RUN`, `--episodes FILE`, or
several episode ids) over the farm's phones (cli/replay_suite.py).

Each parses arguments, calls the library (mobile_agent.replay) and renders the result. User errors are raised as
``UserError`` for the main app to print as one line and a hint.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from mobile_agent.actions import Outcome
from mobile_agent.cli.completion import complete_episode, complete_run, complete_serial
from mobile_agent.cli.farm_options import console, print_json
from mobile_agent.cli.safety import ALLOW_HELP, DENY_HELP, POLICY_HELP, policy_from_options
from mobile_agent.cli.terminal import TerminalUser
from mobile_agent.errors import UserError

if TYPE_CHECKING:
    from mobile_agent.replay.results import ReplayOptions, ReplayResult, StepComparison

DIVERGENCE_HELP = (
    "When what the action touches differs from the recording (the target, its dialog, an amount, the recipient, "
    "the app): stop = end the replay before touching it (default); warn = record the divergence, warn and act "
    "anyway; continue = record it and act anyway, quietly. Differences elsewhere on the screen are only noted."
)
RESET_HELP = (
    "Bring the phone to the recording's start before step 0: home (the home screen, then the recorded app if it "
    "started in one), force-stop (the recording's apps stopped first), clear-data (their data cleared first: "
    "accounts too), none (default for one episode; a suite uses each task's own reset, else force-stop)."
)


def _world_state(phone: Any) -> Any:
    """A simulated phone's world state over adb (`sim-state`), for the source tasks' state: checks; None on a real
    phone."""
    from mobile_agent.verify.phone_state import read_phone_state

    return read_phone_state(phone.serial, phone.adb)


def replay_command(
    episodes: list[str] | None = typer.Argument(
        None,
        autocompletion=complete_episode,
        help="Episode(s) to replay (id or unique prefix); several make a suite.",
    ),
    run: str | None = typer.Option(
        None,
        "--run",
        autocompletion=complete_run,
        help="Replay every ended episode of this run as a suite (a regression test).",
    ),
    episodes_file: Path | None = typer.Option(
        None, "--episodes", help="Replay the episodes listed in this file (one id a line) as a suite."
    ),
    device: str | None = typer.Option(
        None,
        "--device",
        "-d",
        autocompletion=complete_serial,
        help="Target phone serial (default: the only one; a suite: every phone).",
    ),
    devices: Path | None = typer.Option(
        None, "--devices", envvar="MOBILE_AGENT_DEVICES", help="A suite's phones: an inventory file."
    ),
    adb: str | None = typer.Option(None, "--adb", envvar="MOBILE_AGENT_ADB", help="adb server HOST:PORT."),
    speed: float = typer.Option(
        0.0,
        "--speed",
        min=0.0,
        help="Keep the recording's pace X times faster; 0 = as fast as screens settle.",
    ),
    until: int | None = typer.Option(None, "--until", min=0, help="Stop after this recorded step index."),
    on_divergence: str = typer.Option("stop", "--on-divergence", help=DIVERGENCE_HELP),
    reset: str | None = typer.Option(None, "--reset", help=RESET_HELP),
    wait: float = typer.Option(
        10.0,
        "--wait",
        min=0.0,
        max=600.0,
        help="Seconds a step waits for its target (and dismisses popups meanwhile) before it gives up.",
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Show the scaled actions; do nothing, record nothing."
    ),
    policy: list[str] | None = typer.Option(None, "--policy", help=POLICY_HELP),
    allow: list[str] | None = typer.Option(None, "--allow", help=ALLOW_HELP),
    deny: list[str] | None = typer.Option(None, "--deny", help=DENY_HELP),
    non_interactive: bool = typer.Option(
        False,
        "--non-interactive",
        help="Never ask the terminal; a consequential action ends the replay as needs_user, not performed.",
    ),
    apps_dir: str | None = typer.Option(
        None, "--apps-dir", envvar="MOBILE_AGENT_APPS", help="Extra manifests."
    ),
    report: str | None = typer.Option(
        None,
        "--report",
        "-o",
        help="A suite's HTML report: NAME.html or a folder; stopped episodes show recorded and live screens.",
    ),
    name: str | None = typer.Option(None, "--name", help="Name of a suite's run."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No live progress display (a suite)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    db: str | None = typer.Option(
        None, "--db", envvar="MOBILE_AGENT_DB", help="SQLAlchemy URL of the store."
    ),
) -> None:
    """Re-execute recorded episodes on phones that have moved on: each target is found again by its element (and
    waited for), compared with the recording, judged by the safety gate, then touched.

    Every recorded action passes the same safety gate as `run`: a consequential one (pay, send, order...) is asked
    about at the terminal, or refused, under --policy/--allow/--deny; a recording is no permission.
    Exits 1 when the replay (or any episode of a suite) does not get through: stopped, blocked or needs_user.
    """
    from mobile_agent.replay.results import ReplayOptions

    safety = policy_from_options(policy, allow, deny)  # bad words: a UserError before anything is touched
    suite = run is not None or episodes_file is not None or len(episodes or []) > 1
    options = ReplayOptions(
        speed=speed,
        until=until,
        on_divergence=on_divergence.strip().lower(),  # type: ignore[arg-type]
        dry_run=dry_run,
        reset=(reset or ("force-stop" if suite else "none")).strip().lower(),  # type: ignore[arg-type]
        wait_s=wait,
    )
    if suite:
        from mobile_agent.cli.replay_suite import run_suite

        for given, flag in ((dry_run, "--dry-run"), (until is not None, "--until"), (speed, "--speed")):
            if given:
                raise UserError(
                    f"{flag} replays one episode, not a suite", hint=f"drop {flag}, or name one episode"
                )
        words = {"policy": policy or [], "allow": allow or [], "deny": deny or []}
        passed = run_suite(
            db,
            run=run,
            episodes=list(episodes or []),
            episodes_file=episodes_file,
            options=options,
            reset_given=reset is not None,
            safety=safety,
            safety_words=words,
            devices=devices,
            device=device,
            adb=adb,
            apps_dir=apps_dir,
            report=report,
            name=name,
            show=not (quiet or as_json),
            as_json=as_json,
            phone_state=_world_state,
        )
        raise typer.Exit(0 if passed else 1)
    if not episodes:
        raise UserError(
            "name the episode to replay", hint="mobile-agent replay EPISODE, or --run RUN for a suite"
        )
    if report is not None:
        raise UserError(
            "--report writes a suite's report", hint="for one episode: mobile-agent report REPLAY_ID"
        )
    result = _replay_one(episodes[0], options, device, adb, safety, non_interactive, apps_dir, db, as_json)
    if as_json:
        print_json(_result_json(result))
    elif result.episode_id is None:
        _print_dry_run(result)
    else:
        _print_result(result)
    raise typer.Exit(1 if _failed(result.outcome) else 0)


def _replay_one(
    episode: str,
    options: ReplayOptions,
    device: str | None,
    adb: str | None,
    safety: Any,
    non_interactive: bool,
    apps_dir: str | None,
    db: str | None,
    as_json: bool,
) -> ReplayResult:
    from mobile_agent.agent.config import NoUser
    from mobile_agent.agent.runtime import load_registry
    from mobile_agent.replay.replayer import replay_episode
    from mobile_agent.store.store import TrajectoryStore

    user = NoUser() if non_interactive or as_json else TerminalUser()
    registry = load_registry(apps_dir) if apps_dir else None
    with TrajectoryStore.open(db) as store:
        return replay_episode(
            store,
            episode,
            device=device,
            adb=adb,
            options=options,
            on_step=None if as_json else _show_step,
            registry=registry,
            safety=safety,
            user=user,
        )


def _show_step(step: StepComparison) -> None:
    what = escape(step.action.describe()) if step.action else "[red]no action[/]"
    if step.popup is not None:
        mark = "[cyan]popup dismissed[/]"
    elif step.skipped:
        mark = "[dim]skipped[/]"
    elif step.diverged:
        mark = "[red]diverged[/]" if not step.performed else "[yellow]diverged, acted anyway[/]"
    elif step.performed:
        mark = "[green]ok[/]"
    else:
        mark = "[red]not performed[/]" if step.error else "[dim]planned[/]"
    console.print(f"[bold]{step.index:>3}[/] {what}  {mark} [dim]{escape(step.describe())}[/]")


def _print_dry_run(result: ReplayResult) -> None:
    size = (
        f"{result.target_screen.width}x{result.target_screen.height}" if result.target_screen else "recorded"
    )
    console.print(f"dry run: {len(result.steps)} step(s) planned for a {size} screen; nothing was done")


def _print_result(result: ReplayResult) -> None:
    diverged = result.divergences
    colour = "green" if not diverged and not _failed(result.outcome) else "yellow"
    console.print(
        f"replay [bold]{result.episode_id}[/] of {result.source.id}: [{colour}]{result.outcome}[/], "
        f"{len(diverged)} of {len(result.steps)} step(s) diverged"
    )
    if result.detail:
        console.print(f"[dim]{escape(result.detail)}[/]")


def _failed(outcome: Outcome | None) -> bool:
    """Divergences under warn/continue are reported, not failures; stop turns the first one into error:divergence.
    A consequential action nobody approved (needs_user) or that was refused (blocked) was not performed."""
    if outcome is None:
        return False
    return str(outcome).startswith("error") or outcome in (Outcome.NEEDS_USER, Outcome.BLOCKED)


def _result_json(result: ReplayResult) -> dict[str, Any]:
    return {
        "source_id": result.source.id,
        "episode_id": result.episode_id,
        "outcome": str(result.outcome) if result.outcome is not None else None,
        "ok": not _failed(result.outcome),
        "detail": result.detail,
        "screen": list(result.target_screen) if result.target_screen else None,
        "steps": [
            {
                "index": s.index,
                "action": s.action.describe() if s.action else None,
                "performed": s.performed,
                "diverged": s.diverged,
                "popup": s.popup,
                "skipped": s.skipped,
                "differences": list(s.differences),
                "notes": list(s.notes),
                "located": s.located or None,
                "described": s.describe(),
            }
            for s in result.steps
        ],
    }


__all__ = ["replay_command"]
