"""``mobile-agent runs`` (recent runs and their task counts) and ``mobile-agent runs show`` (a run's summary)."""

from __future__ import annotations

import typer
from rich.markup import escape
from rich.table import Table

from mobile_agent.cli.completion import complete_run
from mobile_agent.cli.farm_options import DbOpt, JsonOpt, console, print_json
from mobile_agent.cli.farm_progress import render_summary

runs_app = typer.Typer(help="Runs in the (shared) database and their progress.", invoke_without_command=True)


@runs_app.callback()
def runs_list(
    ctx: typer.Context,
    db: str | None = DbOpt,
    limit: int = typer.Option(20, "--limit", "-n", min=1, help="Show at most this many, newest first."),
    as_json: bool = JsonOpt,
) -> None:
    """List recent runs with their task counts."""
    if ctx.invoked_subcommand is not None:
        return
    from mobile_agent.store import queue_status as qs
    from mobile_agent.store.run_liveness import shown_status, stalled_runs
    from mobile_agent.store.store import TrajectoryStore

    with TrajectoryStore.open(db) as store:
        rows = [(r, qs.run_counts(store, r.id)) for r in store.list_runs(limit=limit)]
        stalled = stalled_runs(store, [r.id for r, _ in rows])  # running, but no live worker serves it
    status = {r.id: shown_status(r.status, r.id in stalled) for r, _ in rows}
    if as_json:
        print_json(
            [
                {
                    "run_id": r.id,
                    "name": r.name,
                    "status": status[r.id],
                    "created_at": r.created_at.isoformat(),
                    "tasks": c.total,
                    "done": c.done,
                    "failed": c.failed,
                    "pending": c.pending,
                    "running": c.claimed,
                    "waiting": c.waiting,
                    "expired": c.expired,
                }
                for r, c in rows
            ]
        )
        return
    table = Table(
        "run",
        "name",
        "status",
        "created",
        "tasks",
        "done",
        "failed",
        "pending",
        "running",
        "waiting",
        "expired",
    )
    for r, c in rows:
        table.add_row(
            r.id,
            escape(r.name),
            status[r.id],
            f"{r.created_at:%Y-%m-%d %H:%M}",
            str(c.total),
            str(c.done),
            str(c.failed),
            str(c.pending),
            str(c.claimed),
            str(c.waiting),
            str(c.expired),
        )
    console.print(table)


@runs_app.command("show")
def runs_show(
    run_id: str = typer.Argument(
        ..., autocompletion=complete_run, help="Run id (a unique prefix is enough)."
    ),
    db: str | None = DbOpt,
    tasks: bool = typer.Option(False, "--tasks", help="Also list every task."),
    as_json: bool = JsonOpt,
) -> None:
    """A run's progress and summary: outcomes by app and phone, retries, quarantined phones."""
    from mobile_agent.farm.scheduler.summary import summarize_run
    from mobile_agent.store import queue_status as qs
    from mobile_agent.store.store import TrajectoryStore

    with TrajectoryStore.open(db) as store:
        summary = summarize_run(store, run_id)
        rows = qs.list_tasks(store, summary.run_id) if (tasks or as_json) else []
    if as_json:
        data = summary.to_dict()
        data["task_list"] = [
            {
                "label": t.label,
                "task": t.task,
                "app": t.app,
                "state": str(t.state),
                "outcome": t.outcome,
                "attempts": t.attempts,
                "episode_id": t.episode_id,
                "device": t.device,
            }
            for t in rows
        ]
        print_json(data)
        return
    render_summary(summary)
    if rows:
        table = Table("task", "state", "outcome", "attempts", "episode")
        for t in rows:
            table.add_row(
                escape(t.label), str(t.state), escape(t.outcome or ""), str(t.attempts), t.episode_id or ""
            )
        console.print(table)


__all__ = [
    "runs_app",
    "runs_list",
    "runs_show",
]
