"""`mobile-agent episodes` and `mobile-agent show EPISODE`: what the store holds, as tables."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mobile_agent.store.store import TrajectoryStore

console = Console()


def episodes_command(
    limit: int = typer.Option(20, "--limit", "-n", min=1),
    run_id: str | None = typer.Option(None, "--run"),
    db: str | None = typer.Option(None, "--db", envvar="MOBILE_AGENT_DB"),
) -> None:
    """List recent episodes."""
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


def show_command(
    episode: str = typer.Argument(..., help="Episode id (a unique prefix is enough)."),
    db: str | None = typer.Option(None, "--db", envvar="MOBILE_AGENT_DB"),
) -> None:
    """Print one episode step by step."""
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
                escape(notable_decisions(s.guard_decisions)),
                f"{total:.0f}" if total else "",
                str(store.screenshot_path(s) or ""),
            )
        console.print(table)


def notable_decisions(decisions: list[dict]) -> str:
    """Guard decisions worth a glance: anything but a plain allow."""
    notable = [d for d in decisions if d.get("verdict") != "allow" or d.get("kind")]
    return ", ".join(
        f"{d.get('guard')}:{d.get('verdict')}" + (f"({d['kind']})" if d.get("kind") else "") for d in notable
    )


__all__ = ["episodes_command", "notable_decisions", "show_command"]
