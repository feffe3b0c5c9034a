"""`mobile-agent episodes` and `mobile-agent show EPISODE`: what the store holds, as tables."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from mobile_agent.cli.completion import complete_episode, complete_run
from mobile_agent.cli.output import output_console
from mobile_agent.cli.terminal import shown
from mobile_agent.errors import UserError

if TYPE_CHECKING:
    from mobile_agent.store.records import EpisodeInfo
    from mobile_agent.store.store import TrajectoryStore

console = output_console()
DB_HELP = "SQLAlchemy URL of the store (default: MOBILE_AGENT_DB, the config file, else ./replays)."
JSON_HELP = "Print JSON for scripts instead of a table."


def episode_json(e: EpisodeInfo) -> dict[str, Any]:
    """What scripts need to know about an episode (``episodes --json``, ``show --json``)."""
    return {
        "episode_id": e.id,
        "task": e.task,
        "device": e.device,
        "family": e.family,
        "model": e.model,
        "status": str(e.status),
        "outcome": str(e.outcome) if e.outcome else None,
        "detail": e.outcome_detail,
        "answer": e.answer,
        "steps": e.step_count,
        "run_id": e.run_id,
        "started_at": e.started_at.isoformat() if e.started_at else None,
        "ended_at": e.ended_at.isoformat() if e.ended_at else None,
    }


def print_json(data: Any) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def episodes_command(
    limit: int = typer.Option(20, "--limit", "-n", min=1, help="Show at most this many, newest first."),
    run_id: str | None = typer.Option(
        None,
        "--run",
        autocompletion=complete_run,
        help="Only the episodes of this run (id or unique prefix).",
    ),
    db: str | None = typer.Option(None, "--db", envvar="MOBILE_AGENT_DB", help=DB_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """List recent episodes."""
    from mobile_agent.store.store import TrajectoryStore

    with TrajectoryStore.open(db) as store:
        if run_id is not None:
            run_id = _run_matching(store, run_id)
        rows = store.list_episodes(limit=limit, run_id=run_id)
        location = store.describe_location()
    if as_json:
        print_json({"store": location, "episodes": [episode_json(e) for e in rows]})
        return
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
    episode: str = typer.Argument(
        ..., autocompletion=complete_episode, help="Episode id (a unique prefix is enough)."
    ),
    db: str | None = typer.Option(None, "--db", envvar="MOBILE_AGENT_DB", help=DB_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Print one episode step by step, with the full path of every screenshot."""
    from mobile_agent.store.store import TrajectoryStore

    with TrajectoryStore.open(db) as store:
        e = store.episode(episode)
        steps = store.steps(e.id)
        if as_json:
            print_json(
                {
                    **episode_json(e),
                    "store": store.describe_location(),
                    "steps": [_step_json(store, s) for s in steps],
                }
            )
            return
        console.print(
            f"[bold]{shown(e.task)}[/]  episode {e.id} on {shown(e.device)}  {shown(e.family)}/{shown(e.model)}"
        )
        console.print(f"outcome: {shown(e.outcome or e.status)}  {shown(e.outcome_detail)}")
        table = Table("#", "source", "app", "action", "thought", "guards", "ms")
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
            )
        console.print(table)
        paths = [(s.index, store.screenshot_path(s)) for s in steps]
        if any(path for _, path in paths):
            console.print("screenshots:")
            for index, path in paths:  # whole paths, never cut to the column width: people copy them
                if path:
                    console.print(f"  #{index} {shown(str(path))}", soft_wrap=True, highlight=False)


def _step_json(store: TrajectoryStore, s: Any) -> dict[str, Any]:
    path = store.screenshot_path(s)
    return {
        "index": s.index,
        "source": str(s.action_source),
        "app": s.foreground_app,
        "action": s.action.describe() if s.action else None,
        "error": s.error_text,
        "thought": s.thought,
        "guards": s.guard_decisions,
        "ms": s.timings.total_ms,
        "screenshot": str(path) if path else None,
    }


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


__all__ = ["episode_json", "episodes_command", "notable_decisions", "print_json", "show_command"]
