"""`mobile-agent episodes` and `mobile-agent show EPISODE`: what the store holds, as tables."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from mobile_agent.cli.terminal import shown
from mobile_agent.errors import UserError
from mobile_agent.store.store import TrajectoryStore

console = Console()


def episodes_command(
    limit: int = typer.Option(20, "--limit", "-n", min=1),
    run_id: str | None = typer.Option(None, "--run"),
    db: str | None = typer.Option(None, "--db", envvar="MOBILE_AGENT_DB"),
) -> None:
    """List recent episodes."""
    with TrajectoryStore.open(db) as store:
        if run_id is not None:
            run_id = _run_matching(store, run_id)
        rows = store.list_episodes(limit=limit, run_id=run_id)
    table = Table("episode", "started", "device", "task", "steps", "outcome")
    for e in rows:
        table.add_row(
            e.id,
            f"{e.started_at:%Y-%m-%d %H:%M:%S}",
            shown(e.device),
            shown(e.task),
            str(e.step_count),
            shown(str(e.outcome or e.status)),
        )
    console.print(table)


def show_command(
    episode: str = typer.Argument(..., help="Episode id (a unique prefix is enough)."),
    db: str | None = typer.Option(None, "--db", envvar="MOBILE_AGENT_DB"),
) -> None:
    """Print one episode step by step."""
    with TrajectoryStore.open(db) as store:
        e = store.episode(episode)
        steps = store.steps(e.id)
        console.print(
            f"[bold]{shown(e.task)}[/]  episode {e.id} on {shown(e.device)}  {shown(e.family)}/{shown(e.model)}"
        )
        console.print(f"outcome: {shown(e.outcome or e.status)}  {shown(e.outcome_detail)}")
        table = Table("#", "source", "app", "action", "thought", "guards", "ms", "screenshot")
        for s in steps:
            action = shown(s.action.describe()) if s.action else f"[red]{shown(s.error_text)}[/]"
            total = s.timings.total_ms
            table.add_row(
                str(s.index),
                str(s.action_source),
                shown(s.foreground_app),
                action,
                shown((s.thought or "")[:60]),
                shown(notable_decisions(s.guard_decisions)),
                f"{total:.0f}" if total else "",
                shown(str(store.screenshot_path(s) or "")),
            )
        console.print(table)


def _run_matching(store: TrajectoryStore, text: str) -> str:
    """The full id of the run ``text`` names (id or unique prefix); UserError saying so when none matches."""
    try:
        return store.run(text).id
    except UserError as exc:
        raise UserError(
            f"no run matches {text!r} ({exc.message})", hint="list runs with `mobile-agent runs`"
        ) from None


def notable_decisions(decisions: list[dict]) -> str:
    """Guard decisions worth a glance: anything but a plain allow."""
    notable = [d for d in decisions if d.get("verdict") != "allow" or d.get("kind")]
    return ", ".join(
        f"{d.get('guard')}:{d.get('verdict')}" + (f"({d['kind']})" if d.get("kind") else "") for d in notable
    )


__all__ = ["episodes_command", "notable_decisions", "show_command"]
