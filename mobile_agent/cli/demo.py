"""`mobile-agent demo`: a sample task end to end on a simulated phone with the simulated model, no hardware.

``run_demo`` is also the library's ``mobile_agent.run_demo``. It lives in the CLI, the one part that may use both
the simulator and the agent runtime.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import typer
from rich.markup import escape

from mobile_agent.agent.config import EpisodeResult, StepEvent
from mobile_agent.agent.runtime import run_task
from mobile_agent.cli.completion import complete_family
from mobile_agent.cli.terminal import console, print_outcome, print_step
from mobile_agent.gate.policy import PolicyAction, PolicyRule, SafetyPolicy
from mobile_agent.model.families import DEFAULT_FAMILY
from mobile_agent.screen.fonts import missing_font_notice
from mobile_agent.sim.farm import SimFarm
from mobile_agent.sim.scenario import load_scenario
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store.store import TrajectoryStore

DEMO_SCENARIO = "wechat_send"
# The demo sends one WeChat message on a simulated phone: that send is allowed, everything else consequential asks.
DEMO_POLICY = SafetyPolicy(rules=(PolicyRule("send", PolicyAction.ALLOW, "com.tencent.mm"),))


@dataclass(frozen=True)
class DemoResult:
    episode: EpisodeResult
    check_ok: bool
    check_detail: str
    serial: str
    store_location: str


def run_demo(
    *,
    scenario: str = DEMO_SCENARIO,
    family: str = DEFAULT_FAMILY,
    db: str | None = None,
    data_dir: str | Path | None = None,
    adb_port: int | None = None,
    on_step: Callable[[StepEvent], None] | None = None,
    safety: SafetyPolicy | None = DEMO_POLICY,
) -> DemoResult:
    """Start a simulated phone and the simulated model in-process and run the scenario's task end to end."""
    spec = load_scenario(scenario)
    with (
        SimFarm(1, scenario=scenario, adb_port=adb_port) as farm,
        SimModelServer(family=family, model_name=f"{family}-sim") as model_server,
    ):
        serial = farm.serials[0]
        store = TrajectoryStore.open(db, root=Path(data_dir) if data_dir else None)
        try:
            result = run_task(
                spec.task,
                device=serial,
                adb=f"127.0.0.1:{farm.adb_port}",
                base_url=model_server.base_url,
                model=model_server.model_name,
                family=family,
                store=store,
                on_step=on_step,
                safety=safety,
            )
            location = store.describe_location()
        finally:
            store.close()
        check = spec.check(farm.phones[serial])
        return DemoResult(result, check.ok, check.detail, serial, location)


def demo_command(
    scenario: str = typer.Option(DEMO_SCENARIO, "--scenario", help="Simulated scenario to run."),
    family: str = typer.Option(
        DEFAULT_FAMILY,
        "--family",
        autocompletion=complete_family,
        help="Model family the simulated model speaks.",
    ),
    db: str | None = typer.Option(
        None, "--db", envvar="MOBILE_AGENT_DB", help="SQLAlchemy URL of the store."
    ),
) -> None:
    """Run a sample task end to end on a simulated phone with the simulated model (no hardware needed)."""
    load_scenario(scenario)  # a wrong name is one line before anything else is printed
    console.print(
        f"[dim]starting a simulated phone (scenario {scenario}) and the simulated {family} model...[/]"
    )
    console.print(
        "safety: the demo allows sending in WeChat (send@com.tencent.mm), because sending its one message is the "
        "task; every other consequential action (pay, transfer, order, delete, post, call) still asks. "
        "`mobile-agent run` allows nothing unless you say so (--allow)."
    )
    notice = missing_font_notice()  # said once: the simulated screens' renderer then says nothing more
    if notice:
        console.print(f"[yellow]{escape(notice)}[/]", highlight=False)
    result = run_demo(scenario=scenario, family=family, db=db, on_step=print_step)
    print_outcome(result.episode, result.store_location)
    mark = "[green]ok[/]" if result.check_ok else "[red]not met[/]"
    console.print(f"simulated phone's check: {mark}")
    for line in result.check_detail.splitlines():
        console.print(f"  {escape(line)}")
    raise typer.Exit(0 if result.episode.ok and result.check_ok else 1)


__all__ = ["DEMO_POLICY", "DEMO_SCENARIO", "DemoResult", "demo_command", "run_demo"]
