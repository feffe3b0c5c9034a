"""`mobile-agent tasks check FILE`: validate a task file whole, without touching a phone or a model."""

from __future__ import annotations

import typer

tasks_app = typer.Typer(no_args_is_help=True)


@tasks_app.command("check")
def check_command(
    path: str = typer.Argument(..., help="The task file (.yaml, .yml or .jsonl)."),
    apps_dir: str | None = typer.Option(
        None, "--apps-dir", envvar="MOBILE_AGENT_APPS", help="Extra manifests the app names may come from."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the tasks found as JSON."),
) -> None:
    """Validate a task file (keys, families, models, app names, checks, safety words); exit 2 on the first error."""
    from mobile_agent.apps.registry import load_registry
    from mobile_agent.cli.episodes import print_json
    from mobile_agent.farm.tasks import expand, load_tasks

    loaded = load_tasks(path, registry=load_registry(apps_dir))
    episodes = len(expand(loaded))
    if as_json:
        print_json(
            {
                "file": path,
                "ok": True,
                "tasks": [
                    {"where": t.where, **t.spec.model_dump(mode="json", exclude_none=True)} for t in loaded
                ],
                "episodes": episodes,
            }
        )
        return
    typer.echo(f"{path}: {len(loaded)} task(s), {episodes} episode(s): valid")


__all__ = ["check_command", "tasks_app"]
