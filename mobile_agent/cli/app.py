"""The command line: a thin skin over the library. This module builds the Typer app from the commands in the
other ``mobile_agent.cli`` modules, and turns a library error into ``error:`` / ``hint:`` lines on stderr and its
exit code (2 for a user error, 1 for any other)."""

from __future__ import annotations

import logging
import sys

import typer
from rich.console import Console
from rich.markup import escape
from sqlalchemy.exc import SQLAlchemyError

from mobile_agent.agent.interrupts import stop_signals
from mobile_agent.cli.terminal import printable
from mobile_agent.errors import MobileAgentError
from mobile_agent.privacy.redact import install_log_redaction, redact_text
from mobile_agent.store.faults import store_fault

try:  # recent typer releases vendor click as typer._click; older ones use click itself
    from typer._click.exceptions import ClickException
except ImportError:  # pragma: no cover - depends on the installed typer
    from click.exceptions import ClickException

console = Console()
err_console = Console(stderr=True, soft_wrap=True)

app = typer.Typer(
    help="Run GUI vision-language models as agents on Android phones: one task, a farm, replay and reports.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish, PowerShell
    pretty_exceptions_enable=False,
)
sim_app = typer.Typer(
    help="Simulated phones and a simulated model endpoint, for tests and demos.", no_args_is_help=True
)
app.add_typer(sim_app, name="sim")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"mobile-agent {version('mobile-agent')}")
        except PackageNotFoundError:  # pragma: no cover - running from a tree that was never installed
            typer.echo("mobile-agent (not installed)")
        raise typer.Exit(0)


@app.callback()
def _root(
    show_version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Run GUI vision-language models as agents on Android phones: one task, a farm, replay and reports."""


def _mount() -> None:
    """Every command, each from the module that holds it (`--help` lists them in this order)."""
    from mobile_agent.cli.adb import ADB_CONTEXT, adb_command
    from mobile_agent.cli.apps import apps_app
    from mobile_agent.cli.console import console_command
    from mobile_agent.cli.demo import demo_command
    from mobile_agent.cli.doctor import doctor_command
    from mobile_agent.cli.episodes import episodes_command, show_command
    from mobile_agent.cli.farm_batch import batch_command, submit_command, worker_command
    from mobile_agent.cli.farm_devices import devices_app
    from mobile_agent.cli.farm_runs import runs_app
    from mobile_agent.cli.inbox import inbox_app
    from mobile_agent.cli.report import eval_offline_command, export_command, replay_command, report_command
    from mobile_agent.cli.run import run_command
    from mobile_agent.cli.safety import resume_command
    from mobile_agent.cli.sim import up_command
    from mobile_agent.cli.sim_judge import judge_command
    from mobile_agent.cli.sim_model import model_command
    from mobile_agent.cli.tasks import tasks_app
    from mobile_agent.cli.verify import verify_command

    app.command("run")(run_command)
    app.command("demo")(demo_command)
    app.command("episodes")(episodes_command)
    app.command("show")(show_command)
    app.command("doctor")(doctor_command)
    app.command("resume", help="Continue a paused episode after a person confirmed, answered or took over.")(
        resume_command
    )
    app.command(
        "replay", help="Re-run a recorded episode on a phone through the safety gate; stop where it diverges."
    )(replay_command)
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
    app.add_typer(
        inbox_app, name="inbox", help="Questions paused episodes wait on, across runs; answer them."
    )
    app.command("console", help="Serve the web console (phones, runs, episodes, the inbox) on loopback.")(
        console_command
    )
    app.command("verify", help="Verify episodes: complete, partial, infeasible or failed.")(verify_command)
    app.add_typer(apps_app, name="apps", help="App manifests: list, show, verify on a phone.")
    app.command("adb", context_settings=ADB_CONTEXT)(adb_command)
    app.add_typer(tasks_app, name="tasks", help="Task files: check one without touching a phone.")
    sim_app.command("up", help="Start simulated phones and connect them to an adb server.")(up_command)
    sim_app.command("model", help="Serve the simulated model (OpenAI-compatible) on loopback.")(model_command)
    sim_app.command(
        "judge", help="Serve a scripted judge (OpenAI-compatible) on loopback, for verify --judge."
    )(judge_command)


_mount()


def _fail(exc: MobileAgentError) -> None:
    err_console.print(f"[bold red]error:[/] {escape(printable(redact_text(exc.message)))}", highlight=False)
    if exc.hint:
        err_console.print(f"[dim]hint: {escape(printable(redact_text(exc.hint)))}[/]", highlight=False)
    sys.exit(exc.exit_code)


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    install_log_redaction()  # no log line, of any library, carries a secret
    try:
        with stop_signals():  # SIGTERM and SIGHUP end the episode in flight like Ctrl-C; a second one exits
            code = app(args=argv, standalone_mode=False)
    except MobileAgentError as exc:
        _fail(exc)
    except SQLAlchemyError as exc:  # a database fault no store call translated: still one line and a hint
        _fail(store_fault(exc, "the store"))
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


__all__ = ["app", "main"]


if __name__ == "__main__":
    main()
