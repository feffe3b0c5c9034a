"""`mobile-agent sim up|model|judge`: the `sim` group, and `sim up`, which starts simulated phones, registers them
with an adb server and runs until Ctrl-C.

Standard output carries one serial per line and nothing else (scripts read it); status goes to standard error.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import typer

from mobile_agent.cli.lazy import Lazy, LazyGroup


class SimCommands(LazyGroup):
    entries = (
        Lazy(
            "up",
            "mobile_agent.cli.sim:up_command",
            "Start simulated phones and connect them to an adb server.",
            help="Start simulated phones and connect them to an adb server.",
        ),
        Lazy(
            "model",
            "mobile_agent.cli.sim_model:model_command",
            "Serve the simulated model (OpenAI-compatible) on loopback.",
            help="Serve the simulated model (OpenAI-compatible) on loopback.",
        ),
        Lazy(
            "judge",
            "mobile_agent.cli.sim_judge:judge_command",
            "Serve a scripted judge (OpenAI-compatible) on loopback, for verify --judge.",
            help="Serve a scripted judge (OpenAI-compatible) on loopback, for verify --judge.",
        ),
    )


sim_app = typer.Typer(
    cls=SimCommands,
    help="Simulated phones and a simulated model endpoint, for tests and demos.",
    no_args_is_help=True,
)


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """`kill PID` stops the farm as cleanly as Ctrl-C does."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def up_command(
    phones: int = typer.Option(1, "--phones", "-n", min=1, max=64, help="How many simulated phones."),
    profile: str = typer.Option("instant", "--profile", help="Latency profile: instant or phone."),
    adb_port: int = typer.Option(15037, "--adb-port", help="adb server port; started there if none answers."),
    base_port: int = typer.Option(16400, "--base-port", help="Phone i listens on 127.0.0.1:BASE_PORT+i."),
    scenario: str | None = typer.Option(
        None, "--scenario", help="Scenario name or YAML file for every phone."
    ),
) -> None:
    """Start simulated phones and connect them to an adb server; Ctrl-C disconnects and stops them."""
    from mobile_agent.sim.farm import SimFarm

    stop = threading.Event()
    with _sigterm_as_interrupt():
        try:
            with SimFarm(
                phones, profile=profile, adb_port=adb_port, base_port=base_port, scenario=scenario
            ) as farm:
                for serial in farm.serials:
                    typer.echo(serial)
                typer.echo(
                    f"{len(farm.serials)} simulated phone(s) on the adb server at 127.0.0.1:{farm.adb_port}; "
                    f"use `mobile-agent adb -P {farm.adb_port} devices`. Ctrl-C stops them.",
                    err=True,
                )
                while not stop.wait(3600):
                    pass
        except KeyboardInterrupt:
            typer.echo("stopped", err=True)
