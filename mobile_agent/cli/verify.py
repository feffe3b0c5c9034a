"""`mobile-agent verify (EPISODE | --run RUN) [--judge URL ...] [--judge-model M] [--labels]`.

A thin skin over ``mobile_agent.verify``: opens the store, builds one judge per ``--judge`` URL, verifies, prints
each episode's verdict (and a summary for a run) as a table or JSON.
"""

from __future__ import annotations

import json

import typer
from rich.markup import escape
from rich.table import Table

from mobile_agent.cli.completion import complete_episode, complete_run
from mobile_agent.cli.output import output_console
from mobile_agent.errors import UserError
from mobile_agent.model.client import ModelClient
from mobile_agent.store.store import TrajectoryStore
from mobile_agent.verify.judges import Judge
from mobile_agent.verify.service import episodes_of, step_labels, verify_episode
from mobile_agent.verify.verdict import FinalVerdict, summarize

console = output_console()

COLOURS = {"complete": "green", "partial": "yellow", "infeasible": "cyan", "failed": "red"}


def build_judges(urls: list[str], models: list[str], *, api_key: str | None, timeout: float) -> list[Judge]:
    """One judge per URL. Models: none (ask each endpoint what it serves), one for all, or one per URL."""
    if models and len(models) not in (1, len(urls)):
        raise UserError(
            f"{len(urls)} --judge URL(s) but {len(models)} --judge-model values",
            hint="give one --judge-model for all judges, or one per --judge in the same order",
        )
    judges = []
    for position, url in enumerate(urls):
        model = models[position] if len(models) == len(urls) else (models[0] if models else None)
        if model is None:
            probe = ModelClient([url], "probe", api_key=api_key, timeout=timeout, max_retries=0)
            try:
                served = probe.list_models()
            finally:
                probe.close()
            if not served:
                raise UserError(f"the judge at {url} serves no model", hint="pass --judge-model")
            model = served[0]
        client = ModelClient([url], model, api_key=api_key, timeout=timeout, max_retries=2)
        judges.append(Judge(client))
    return judges


def verify_command(
    episode: str | None = typer.Argument(
        None, autocompletion=complete_episode, help="Episode id (or a unique prefix)."
    ),
    run: str | None = typer.Option(
        None, "--run", autocompletion=complete_run, help="Verify every episode of this run."
    ),
    judge: list[str] = typer.Option(
        [], "--judge", help="Base URL of an OpenAI-compatible vision model to judge with (repeat for a vote)."
    ),
    judge_model: list[str] = typer.Option(
        [], "--judge-model", help="Model name at the judge(s): once for all, or once per --judge."
    ),
    labels: bool = typer.Option(
        False, "--labels", help="Also label every step (rules, then the first judge)."
    ),
    api_key: str | None = typer.Option(
        None, "--api-key", envvar="MOBILE_AGENT_JUDGE_API_KEY", help="API key for the judges."
    ),
    timeout: float = typer.Option(120.0, "--judge-timeout", min=1, help="Seconds per judge request."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables."),
    db: str | None = typer.Option(
        None, "--db", envvar="MOBILE_AGENT_DB", help="SQLAlchemy URL of the store."
    ),
) -> None:
    """Decide whether episodes really did their task: complete, partial, infeasible or failed."""
    judges = build_judges(judge, judge_model, api_key=api_key, timeout=timeout)
    try:
        with TrajectoryStore.open(db) as store:
            ids = episodes_of(store, episode, run)
            results: list[tuple[str, str, FinalVerdict | None]] = []
            for episode_id in ids:
                verdict = verify_episode(
                    store,
                    episode_id,
                    judges=judges,
                    labels_client=judges[0].client if judges else None,
                    label_steps=labels,
                )
                results.append((episode_id, store.episode(episode_id).task, verdict))
            step_rows = {i: step_labels(store, i) for i in ids} if labels else {}
    finally:
        for item in judges:
            item.client.close()
    summary = summarize(v for _, _, v in results)
    if as_json:
        payload = {
            "episodes": [
                {
                    "episode": episode_id,
                    "task": task,
                    **(verdict.to_dict() if verdict else {"verdict": None, "success": False}),
                    **(
                        {
                            "labels": {
                                str(i): [
                                    {"label": str(x.label), "source": x.source, "rationale": x.rationale}
                                    for x in xs
                                ]
                                for i, xs in step_rows.get(episode_id, {}).items()
                            }
                        }
                        if labels
                        else {}
                    ),
                }
                for episode_id, task, verdict in results
            ],
            "summary": summary.to_dict(),
        }
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    for episode_id, task, verdict in results:
        _print_verdict(episode_id, task, verdict)
        if labels:
            _print_labels(step_rows.get(episode_id, {}))
    if run is not None or len(results) > 1:
        rate = "n/a" if summary.success_rate is None else f"{summary.success_rate:.0%}"
        counts = ", ".join(f"{name} {summary.counts.get(name, 0)}" for name in COLOURS)
        console.print(
            f"[bold]{summary.successes} of {summary.total} complete[/] ({rate} of verified); {counts}; "
            f"not verified {summary.unverified}. Partial never counts as success."
        )


def _print_verdict(episode_id: str, task: str, verdict: FinalVerdict | None) -> None:
    if verdict is None:
        console.print(
            f"[bold]{episode_id}[/] {escape(task)}: [dim]not verified[/] "
            "(no check stored and no judge given; pass --judge URL)"
        )
        return
    colour = COLOURS.get(verdict.verdict.value, "white")
    agreement = "" if verdict.agreement is None else f", judges agree {verdict.agreement:.0%}"
    console.print(
        f"[bold]{episode_id}[/] {escape(task)}: [bold {colour}]{verdict.verdict}[/] "
        f"(from {verdict.source}{agreement})"
    )
    for reason in verdict.reasons:
        console.print(f"  [dim]{escape(reason)}[/]")
    if verdict.points:
        table = Table(show_header=True, box=None, padding=(0, 1))
        for column in ("", "completion point", "step", "evidence"):
            table.add_column(column, overflow="fold")
        for point in verdict.points:
            mark = "[green]✓[/]" if point.met else ("[red]✗[/]" if point.met is False else "[dim]?[/]")
            step = "" if point.step is None else str(point.step)
            table.add_row(mark, escape(point.description), step, escape(point.evidence))
        console.print(table)


def _print_labels(rows: dict) -> None:
    for index in sorted(rows):
        text = "; ".join(f"{x.label} ({x.source}: {x.rationale})" for x in rows[index])
        console.print(f"  step {index:>3}: {escape(text)}")


__all__ = ["build_judges", "verify_command"]
