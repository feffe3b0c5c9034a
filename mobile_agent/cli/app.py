"""The command line: a thin skin over the library. Parses arguments, calls the library, renders results."""

from __future__ import annotations

import logging
import sys

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mobile_agent.errors import MobileAgentError, UserError
from mobile_agent.cli.safety import ALLOW_HELP, DENY_HELP, POLICY_HELP, policy_from_options
from mobile_agent.cli.terminal import TerminalUser

try:  # recent typer releases vendor click as typer._click; older ones use click itself
    from typer._click.exceptions import ClickException
except ImportError:  # pragma: no cover - depends on the installed typer
    from click.exceptions import ClickException

console = Console()
err_console = Console(stderr=True, soft_wrap=True)

app = typer.Typer(
    help="Run GUI vision-language models as agents on Android phones: one task, a farm, replay and reports.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
sim_app = typer.Typer(
    help="Simulated phones and a simulated model endpoint, for tests and demos.", no_args_is_help=True
)
app.add_typer(sim_app, name="sim")


def _mount_optional() -> None:
    """Sub-commands that live in their own modules."""
    from mobile_agent.cli.apps import apps_app
    from mobile_agent.cli.farm import batch_command, devices_app, runs_app, submit_command, worker_command
    from mobile_agent.cli.report import eval_offline_command, export_command, replay_command, report_command
    from mobile_agent.cli.safety import resume_command
    from mobile_agent.cli.sim import up_command
    from mobile_agent.cli.sim_model import model_command
    from mobile_agent.cli.verify import verify_command

    app.command("resume", help="Continue a paused episode after a person confirmed, answered or took over.")(
        resume_command
    )
    app.command("replay", help="Re-run a recorded episode on a phone, comparing every screen.")(
        replay_command
    )
    app.command("report", help="Write a self-contained HTML report of an episode or a run.")(report_command)
    app.command("export", help="Export trajectories as training data (LLaMA-Factory, ms-swift).")(
        export_command
    )
    app.command("eval-offline", help="Score a model on recorded steps without a phone.")(eval_offline_command)
    app.command("batch", help="Run a task file across many phones with retries, quarantine and resume.")(
        batch_command
    )
    app.command("submit", help="Enqueue a task file in a shared database for workers on several hosts.")(
        submit_command
    )
    app.command("worker", help="Serve this host's phones from a shared task queue.")(worker_command)
    app.add_typer(devices_app, name="devices", help="Phones: state, health checks, preparation.")
    app.add_typer(runs_app, name="runs", help="Batch runs and their progress, from any host.")
    app.command("verify", help="Verify episodes: complete, partial, infeasible or failed.")(verify_command)
    app.add_typer(apps_app, name="apps", help="App manifests: list, show, verify on a phone.")
    sim_app.command("up", help="Start simulated phones and connect them to an adb server.")(up_command)
    sim_app.command("model", help="Serve the simulated model (OpenAI-compatible) on loopback.")(model_command)


def _print_step(event) -> None:
    t = event.timings
    timing = " ".join(f"{k} {v:.0f}ms" for k, v in t.items() if k != "total")
    what = event.action.describe() if event.action else f"[red]{escape(event.error or 'no action')}[/]"
    thought = (event.thought or "").replace("\n", " ")
    if len(thought) > 60:
        thought = thought[:57] + "..."
    src = "" if event.source == "model" else f"[magenta]({event.source})[/] "
    console.print(f"[bold]{event.index:>3}[/] {src}{escape(what)}  [dim]{escape(thought)}  {timing}[/]")


def _print_outcome(result, location: str | None = None) -> None:
    colour = "green" if result.ok else "red"
    console.print(
        f"outcome: [bold {colour}]{result.outcome}[/] after {result.steps} steps (episode {result.episode_id})"
    )
    if result.answer:
        console.print(f"answer: {escape(result.answer)}")
    if result.detail and not result.ok:
        console.print(f"detail: {escape(result.detail)}")
    if location:
        console.print(f"trajectory: {escape(location)}  (mobile-agent show {result.episode_id})")


def _critic(url: str | None, model: str | None, reasks: int, fail_closed: bool):
    if not url:
        return None
    from mobile_agent.model.client import ModelClient
    from mobile_agent.verify.labels import Critic

    if model is None:
        try:
            served = ModelClient([url], "probe", timeout=15.0, max_retries=1).list_models()
        except MobileAgentError:
            served = []
        if not served and fail_closed:
            raise UserError(
                f"the critic at {url} lists no model", "pass --critic-model, or check the endpoint"
            )
        model = served[0] if served else "critic"
    return Critic(ModelClient([url], model, timeout=60.0), fail_closed=fail_closed, max_reasks=reasks)


@app.command()
def run(
    task: str = typer.Argument(..., help="What the agent should do, in plain words."),
    device: str | None = typer.Option(
        None, "--device", "-d", help="Phone serial (default: the only attached phone)."
    ),
    adb: str | None = typer.Option(None, "--adb", envvar="MOBILE_AGENT_ADB", help="adb server HOST:PORT."),
    base_url: list[str] = typer.Option(
        ["http://127.0.0.1:8000/v1"],
        "--base-url",
        envvar="MOBILE_AGENT_BASE_URL",
        help="OpenAI-compatible endpoint(s).",
    ),
    model: str = typer.Option(
        "ui-venus-2", "--model", envvar="MOBILE_AGENT_MODEL", help="Model name served there."
    ),
    family: str = typer.Option(
        "ui-venus-2", "--family", envvar="MOBILE_AGENT_FAMILY", help="Output format family."
    ),
    max_steps: int = typer.Option(50, "--max-steps", min=1, help="Stop after this many steps."),
    timeout: float = typer.Option(900.0, "--timeout", min=1, help="Episode timeout in seconds."),
    history_turns: int = typer.Option(8, "--history-turns", min=0, help="Earlier steps shown to the model."),
    history_images: int = typer.Option(
        2,
        "--history-images",
        min=0,
        help="Of those, how many keep their screenshot (bytes per step grow with it).",
    ),
    db: str | None = typer.Option(
        None, "--db", envvar="MOBILE_AGENT_DB", help="SQLAlchemy URL of the store."
    ),
    apps_dir: str | None = typer.Option(
        None, "--apps-dir", envvar="MOBILE_AGENT_APPS", help="Extra manifests."
    ),
    no_popup_rules: bool = typer.Option(
        False, "--no-popup-rules", help="Let the model handle popups itself."
    ),
    policy: list[str] | None = typer.Option(None, "--policy", help=POLICY_HELP),
    allow: list[str] | None = typer.Option(None, "--allow", help=ALLOW_HELP),
    deny: list[str] | None = typer.Option(None, "--deny", help=DENY_HELP),
    critic: str | None = typer.Option(
        None,
        "--critic",
        envvar="MOBILE_AGENT_CRITIC",
        help="Endpoint of a critic model that labels each action first.",
    ),
    critic_model: str | None = typer.Option(
        None, "--critic-model", help="Critic model name (default: the first served)."
    ),
    critic_reasks: int = typer.Option(
        2, "--critic-reasks", min=0, help="Re-ask the model this often on 'wrong'."
    ),
    critic_fail_closed: bool = typer.Option(
        False, "--critic-fail-closed", help="Stop the episode when the critic cannot be asked."
    ),
    non_interactive: bool = typer.Option(
        False, "--non-interactive", help="Never ask the terminal; end as needs_user."
    ),
) -> None:
    """Run one task on one phone and record every step."""
    from mobile_agent.agent.loop import AgentConfig, NoUser
    from mobile_agent.model.base import PromptOptions
    from mobile_agent.agent.runtime import run_task

    config = AgentConfig(
        max_steps=max_steps,
        timeout_s=timeout,
        popup_rules=not no_popup_rules,
        prompt=PromptOptions(max_history_turns=history_turns, history_images=history_images),
    )
    user = NoUser() if non_interactive else TerminalUser()
    safety = policy_from_options(policy, allow, deny)
    reviewer = _critic(critic, critic_model, critic_reasks, critic_fail_closed)
    result = run_task(
        task,
        device=device,
        adb=adb,
        base_url=base_url,
        model=model,
        family=family,
        db=db,
        apps_dir=apps_dir,
        config=config,
        user=user,
        on_step=_print_step,
        safety=safety,
        critic=reviewer,
    )
    _print_outcome(result)
    raise typer.Exit(0 if result.ok else 1)


@app.command()
def demo(
    scenario: str = typer.Option("wechat_send", "--scenario", help="Simulated scenario to run."),
    family: str = typer.Option("ui-venus-2", "--family", help="Model family the simulated model speaks."),
    db: str | None = typer.Option(
        None, "--db", envvar="MOBILE_AGENT_DB", help="SQLAlchemy URL of the store."
    ),
) -> None:
    """Run a sample task end to end on a simulated phone with the simulated model (no hardware needed)."""
    from mobile_agent.agent.runtime import run_demo

    console.print(
        f"[dim]starting a simulated phone (scenario {scenario}) and the simulated {family} model...[/]"
    )
    result = run_demo(scenario=scenario, family=family, db=db, on_step=_print_step)
    _print_outcome(result.episode, result.store_location)
    mark = "[green]ok[/]" if result.check_ok else "[red]not met[/]"
    console.print(f"simulated phone's check: {mark}")
    for line in result.check_detail.splitlines():
        console.print(f"  {escape(line)}")
    raise typer.Exit(0 if result.episode.ok and result.check_ok else 1)


@app.command()
def episodes(
    limit: int = typer.Option(20, "--limit", "-n", min=1),
    run_id: str | None = typer.Option(None, "--run"),
    db: str | None = typer.Option(None, "--db", envvar="MOBILE_AGENT_DB"),
) -> None:
    """List recent episodes."""
    from mobile_agent.store.store import TrajectoryStore

    with TrajectoryStore.open(db) as store:
        rows = store.list_episodes(limit=limit, run_id=run_id)
    table = Table("episode", "started", "device", "task", "steps", "outcome")
    for e in rows:
        table.add_row(
            e.id,
            f"{e.started_at:%Y-%m-%d %H:%M:%S}",
            e.device,
            e.task,
            str(e.step_count),
            str(e.outcome or e.status),
        )
    console.print(table)


@app.command()
def show(
    episode: str = typer.Argument(..., help="Episode id (a unique prefix is enough)."),
    db: str | None = typer.Option(None, "--db", envvar="MOBILE_AGENT_DB"),
) -> None:
    """Print one episode step by step."""
    from mobile_agent.store.store import TrajectoryStore

    with TrajectoryStore.open(db) as store:
        e = store.episode(episode)
        steps = store.steps(e.id)
        console.print(f"[bold]{escape(e.task)}[/]  episode {e.id} on {e.device}  {e.family}/{e.model}")
        console.print(f"outcome: {e.outcome}  {escape(e.outcome_detail or '')}")
        table = Table("#", "source", "app", "action", "thought", "guards", "ms", "screenshot")
        for s in steps:
            action = s.action.describe() if s.action else f"[red]{escape(s.error_text or '')}[/]"
            total = s.timings.total_ms
            table.add_row(
                str(s.index),
                str(s.action_source),
                s.foreground_app or "",
                action,
                escape((s.thought or "")[:60]),
                escape(_notable_decisions(s.guard_decisions)),
                f"{total:.0f}" if total else "",
                str(store.screenshot_path(s) or ""),
            )
        console.print(table)


def _notable_decisions(decisions: list[dict]) -> str:
    """Guard decisions worth a glance: anything but a plain allow."""
    notable = [d for d in decisions if d.get("verdict") != "allow" or d.get("kind")]
    return ", ".join(
        f"{d.get('guard')}:{d.get('verdict')}" + (f"({d['kind']})" if d.get("kind") else "") for d in notable
    )


@app.command()
def doctor(
    device: str | None = typer.Option(None, "--device", "-d"),
    adb: str | None = typer.Option(None, "--adb", envvar="MOBILE_AGENT_ADB"),
    base_url: str = typer.Option(
        "http://127.0.0.1:8000/v1",
        "--base-url",
        envvar="MOBILE_AGENT_BASE_URL",
        help="Model endpoint to check.",
    ),
    model: str = typer.Option("ui-venus-2", "--model", envvar="MOBILE_AGENT_MODEL"),
    family: str = typer.Option("ui-venus-2", "--family", envvar="MOBILE_AGENT_FAMILY"),
) -> None:
    """Check the set-up step by step and say how to fix each failure."""
    from mobile_agent.cli.doctor import run_checks

    failed = 0
    for check in run_checks(device=device, adb=adb, base_url=base_url, model=model, family=family):
        mark = {"ok": "[green]✓[/]", "fail": "[red]✗[/]", "skip": "[yellow]-[/]"}[check.status]
        console.print(f"{mark} {escape(check.name)}: {escape(check.detail)}")
        if check.status == "fail":
            failed += 1
            if check.fix:
                console.print(f"    [dim]fix: {escape(check.fix)}[/]")
    raise typer.Exit(1 if failed else 0)


_mount_optional()


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        code = app(args=argv, standalone_mode=False)
    except MobileAgentError as exc:
        err_console.print(f"[bold red]error:[/] {escape(exc.message)}", highlight=False)
        if exc.hint:
            err_console.print(f"[dim]hint: {escape(exc.hint)}[/]", highlight=False)
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        err_console.print("interrupted")
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except ClickException as exc:
        ctx = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
            console.print(ctx.get_help())
            sys.exit(0)
        err_console.print(f"[bold red]error:[/] {escape(exc.format_message())}", highlight=False)
        if ctx is not None:
            err_console.print(f"[dim]hint: see `{ctx.command_path} --help`[/]", highlight=False)
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


__all__ = ["app", "main", "UserError"]


if __name__ == "__main__":
    main()
