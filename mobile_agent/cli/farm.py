"""The farm's commands on their own: ``python -m mobile_agent.cli.farm devices|batch|submit|worker|runs``.

The commands live in farm_devices (devices, devices check), farm_batch (batch, submit, worker) and farm_runs
(runs, runs show); ``mobile_agent.cli.app`` mounts them from there. They are a thin skin over
mobile_agent.farm and mobile_agent.farm.scheduler: parse options, call the library, render.
"""

from __future__ import annotations

import logging
import sys

import typer
from rich.console import Console
from rich.markup import escape

from mobile_agent.cli.farm_batch import batch_command, submit_command, worker_command
from mobile_agent.cli.farm_devices import devices_app
from mobile_agent.cli.farm_runs import runs_app

err_console = Console(stderr=True)


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

    from mobile_agent.agent.interrupts import stop_signals
    from mobile_agent.errors import MobileAgentError

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        with stop_signals():  # SIGTERM and SIGHUP end the episodes in flight like Ctrl-C; a second one exits
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


__all__ = ["main", "standalone_app"]

if __name__ == "__main__":
    main()
