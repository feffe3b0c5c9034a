"""The command line: a thin skin over the library. This module builds the Typer app from a table of the commands
in the other ``mobile_agent.cli`` modules (each imported only when it runs or shows its help, see cli/lazy.py), and
turns a library error into ``error:`` / ``hint:`` lines on stderr and its exit code (2 for a user error, 1 for any
other)."""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

import typer

from mobile_agent.cli.lazy import Lazy, LazyGroup
from mobile_agent.errors import MobileAgentError

try:  # recent typer releases vendor click as typer._click; older ones use click itself
    from typer._click.exceptions import ClickException
except ImportError:  # pragma: no cover - depends on the installed typer
    from click.exceptions import ClickException

if TYPE_CHECKING:
    from rich.console import Console


class RootCommands(LazyGroup):
    """Every command, each from the module that holds it (`--help` lists them in this order)."""

    entries = (
        Lazy("run", "mobile_agent.cli.run:run_command", "Run one task on one phone and record every step."),
        Lazy(
            "demo",
            "mobile_agent.cli.demo:demo_command",
            "Run a sample task end to end on a simulated phone with the simulated model (no hardware needed).",
        ),
        Lazy("episodes", "mobile_agent.cli.episodes:episodes_command", "List recent episodes."),
        Lazy(
            "show",
            "mobile_agent.cli.episodes:show_command",
            "Print one episode step by step, with the full path of every screenshot.",
        ),
        Lazy(
            "doctor",
            "mobile_agent.cli.doctor:doctor_command",
            "Check the set-up step by step and say how to fix each failure.",
        ),
        Lazy(
            "resume",
            "mobile_agent.cli.safety:resume_command",
            "Continue a paused episode after a person confirmed, answered or took over.",
            help="Continue a paused episode after a person confirmed, answered or took over.",
        ),
        Lazy(
            "replay",
            "mobile_agent.cli.replay:replay_command",
            "Re-run a recorded episode on a phone through the safety gate; stop where it diverges.",
            help="Re-run a recorded episode on a phone through the safety gate; stop where it diverges.",
        ),
        Lazy(
            "report",
            "mobile_agent.cli.report:report_command",
            "Write an HTML report of an episode or a run (offline pages; an index page for a big run).",
            help="Write an HTML report of an episode or a run (offline pages; an index page for a big run).",
        ),
        Lazy(
            "export",
            "mobile_agent.cli.report:export_command",
            "Export trajectories as training data (LLaMA-Factory, ms-swift).",
            help="Export trajectories as training data (LLaMA-Factory, ms-swift).",
        ),
        Lazy(
            "eval-offline",
            "mobile_agent.cli.report:eval_offline_command",
            "Score a model on recorded steps without a phone.",
            help="Score a model on recorded steps without a phone.",
        ),
        Lazy(
            "batch",
            "mobile_agent.cli.farm_batch:batch_command",
            "Run a task file across many phones with retries, quarantine and resume.",
            help="Run a task file across many phones with retries, quarantine and resume.",
        ),
        Lazy(
            "submit",
            "mobile_agent.cli.farm_batch:submit_command",
            "Enqueue a task file in a shared database for workers on several hosts.",
            help="Enqueue a task file in a shared database for workers on several hosts.",
        ),
        Lazy(
            "worker",
            "mobile_agent.cli.farm_batch:worker_command",
            "Serve this host's phones from a shared task queue.",
            help="Serve this host's phones from a shared task queue.",
        ),
        Lazy(
            "console",
            "mobile_agent.cli.console:console_command",
            "Serve the web console (phones, runs, episodes, the inbox) on loopback.",
            help="Serve the web console (phones, runs, episodes, the inbox) on loopback.",
        ),
        Lazy(
            "mcp",
            "mobile_agent.cli.mcp_server:mcp_command",
            "Serve the farm over MCP (stdio or HTTP): phones and tasks as tools, behind the gate and the recorder.",
            help="Serve the farm over MCP (stdio or HTTP): phones and tasks as tools, behind the gate and the recorder.",
        ),
        Lazy(
            "verify",
            "mobile_agent.cli.verify:verify_command",
            "Verify episodes: complete, partial, infeasible or failed.",
            help="Verify episodes: complete, partial, infeasible or failed.",
        ),
        Lazy(
            "adb",
            "mobile_agent.cli.adb:adb_command",
            "Run the adb that ships with mobile-agent against the configured adb server "
            "(e.g. `mobile-agent adb devices`).",
            context_settings={"allow_extra_args": True, "ignore_unknown_options": True},  # adb parses its own
        ),
        Lazy(
            "sim",
            "mobile_agent.cli.sim:sim_app",
            "Simulated phones and a simulated model endpoint, for tests and demos.",
        ),
        Lazy(
            "devices",
            "mobile_agent.cli.farm_devices:devices_app",
            "Phones: state, health checks, preparation.",
        ),
        Lazy("runs", "mobile_agent.cli.farm_runs:runs_app", "Batch runs and their progress, from any host."),
        Lazy(
            "inbox",
            "mobile_agent.cli.inbox:inbox_app",
            "Questions paused episodes wait on, across runs; answer them.",
        ),
        Lazy("apps", "mobile_agent.cli.apps:apps_app", "App manifests: list, show, verify on a phone."),
        Lazy("tasks", "mobile_agent.cli.tasks:tasks_app", "Task files: check one without touching a phone."),
    )


app = typer.Typer(
    cls=RootCommands,
    help="Run GUI vision-language models as agents on Android phones: one task, a farm, replay and reports.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish, PowerShell
    pretty_exceptions_enable=False,
)


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
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Run GUI vision-language models as agents on Android phones: one task, a farm, replay and reports."""


def _fail(exc: MobileAgentError) -> None:
    from rich.markup import escape

    from mobile_agent.cli.terminal import printable
    from mobile_agent.privacy.redact import redact_text

    err = _err_console()
    err.print(f"[bold red]error:[/] {escape(printable(redact_text(exc.message)))}", highlight=False)
    if exc.hint:
        err.print(f"[dim]hint: {escape(printable(redact_text(exc.hint)))}[/]", highlight=False)
    sys.exit(exc.exit_code)


def _err_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True)


def _database_fault(exc: Exception) -> MobileAgentError | None:
    """A database fault no store call translated, as one line and a hint; None for anything else. SQLAlchemy is
    only asked when something imported it: an exception it did not define cannot be one of its errors."""
    if "sqlalchemy" not in sys.modules:
        return None
    from sqlalchemy.exc import SQLAlchemyError

    if not isinstance(exc, SQLAlchemyError):
        return None
    from mobile_agent.store.faults import store_fault

    return store_fault(exc, "the store")


def main(argv: list[str] | None = None) -> None:
    from mobile_agent.agent.interrupts import stop_signals
    from mobile_agent.privacy.redact import install_log_redaction

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    install_log_redaction()  # no log line, of any library, carries a secret
    try:
        with stop_signals():  # SIGTERM and SIGHUP end the episode in flight like Ctrl-C; a second one exits
            code = app(args=argv, standalone_mode=False)
    except MobileAgentError as exc:
        _fail(exc)
    except (typer.Abort, KeyboardInterrupt):
        _err_console().print("interrupted")
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except ClickException as exc:
        from rich.markup import escape

        ctx = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
            from rich.console import Console

            Console().print(ctx.get_help())
            sys.exit(0)
        err = _err_console()
        err.print(f"[bold red]error:[/] {escape(exc.format_message())}", highlight=False)
        if ctx is not None:
            err.print(f"[dim]hint: see `{ctx.command_path} --help`[/]", highlight=False)
        sys.exit(exc.exit_code)
    except Exception as exc:
        fault = _database_fault(exc)
        if fault is None:
            raise
        _fail(fault)
    sys.exit(code if isinstance(code, int) else 0)


__all__ = ["app", "main"]


if __name__ == "__main__":
    main()
