"""Command functions for report, export and eval-offline. ``cli.py`` mounts them on the main app.

Each one parses arguments, calls the library (report/, evaluate/) and renders the result with rich.
User errors are raised as ``UserError`` for the main app to print as one line and a hint.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mobile_agent.cli.completion import complete_episode, complete_family, complete_run
from mobile_agent.cli.output import output_console
from mobile_agent.cli.terminal import shown
from mobile_agent.errors import UserError

console = output_console()

DB_OPTION = typer.Option(None, "--db", envvar="MOBILE_AGENT_DB", help="SQLAlchemy URL of the store.")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


# ----- report --------------------------------------------------------------------------------------------------
def report_command(
    episode: str | None = typer.Argument(
        None, autocompletion=complete_episode, help="Episode to report (id or unique prefix)."
    ),
    run: str | None = typer.Option(
        None, "--run", autocompletion=complete_run, help="Report a whole run instead of one episode."
    ),
    output: str | None = typer.Option(
        None,
        "--output",
        "-o",
        help="NAME.html, or a folder to write report-<kind>-<id>.html into; pictures and pages go in NAME_files/.",
    ),
    per_page: int | None = typer.Option(
        None,
        "--per-page",
        min=1,
        help="Episodes per page of a run report (default 5); a run this small is one page, a bigger one gets "
        "an index page linking its pages.",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress display."),
    db: str | None = DB_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print where the report was written as JSON."),
) -> None:
    """Write an HTML report of an episode or a run: plain pages that open offline, screenshots beside them."""
    from mobile_agent.report.html import PER_PAGE, write_report_files
    from mobile_agent.store.store import TrajectoryStore

    if (episode is None) == (run is None):
        raise UserError(
            "name one episode or pass --run RUN", hint="mobile-agent report 3f9a0c -o report.html"
        )
    with TrajectoryStore.open(db) as store, _report_progress(enabled=not (as_json or quiet)) as progress:
        written = write_report_files(
            store,
            episode=episode,
            run=run,
            output=output,
            per_page=per_page or PER_PAGE,
            progress=progress,
        )
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "report": str(written.index.resolve()),
                    "files": str(written.files.resolve()),
                    "pages": [str(page.resolve()) for page in written.pages],
                    "episodes": written.episodes,
                    "pictures": written.pictures,
                    "skipped_pictures": written.skipped_pictures,
                    "episode": episode,
                    "run": run,
                },
                ensure_ascii=False,
            )
        )
        return
    pages = f" and {len(written.pages)} page(s) of episodes" if written.pages else ""
    console.print(f"report written: {shown(str(written.index))} (open this page)", soft_wrap=True)
    console.print(
        f"[dim]{written.episodes} episode(s){pages}, {written.pictures} screenshot(s) in "
        f"{shown(str(written.files))}[/]",
        soft_wrap=True,
    )
    if written.skipped_pictures:
        console.print(
            f"[yellow]{written.skipped_pictures} screenshot(s) skipped: missing, unreadable or outside the "
            f"store (the warnings above say which)[/]",
            soft_wrap=True,
        )


@contextmanager
def _report_progress(*, enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    """Episodes written so far, on stderr (stdout keeps the result): a bar at a terminal, else a line at every
    tenth of the report (a log shows the work going on); nothing when disabled."""
    if not enabled:
        yield None
        return
    err = Console(stderr=True)
    if not err.is_terminal:
        shown: list[int] = []

        def log_line(done: int, total: int) -> None:
            tenth = done * 10 // total
            if total > 1 and (not shown or tenth > shown[-1]):
                shown.append(tenth)
                err.print(f"writing report: {done} of {total} episodes", highlight=False)

        yield log_line
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(
        TextColumn("writing report"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("episodes"),
        TimeRemainingColumn(),
        console=err,
        transient=True,
    )
    task = bar.add_task("report", total=None)

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    with bar:
        yield update


# ----- export --------------------------------------------------------------------------------------------------
def export_command(
    episodes: list[str] = typer.Argument(
        None, autocompletion=complete_episode, help="Episodes to export (ids or unique prefixes)."
    ),
    run: str | None = typer.Option(
        None, "--run", autocompletion=complete_run, help="Export every episode of a run."
    ),
    fmt: str = typer.Option(..., "--format", "-f", help="sharegpt (LLaMA-Factory) or swift (ms-swift)."),
    output: str = typer.Option("export", "--output", "-o", help="Folder to write the dataset into."),
    family: str | None = typer.Option(
        None, "--family", autocompletion=complete_family, help="Write actions in this family's syntax."
    ),
    only_complete: bool = typer.Option(False, "--only-complete", help="Only episodes verified complete."),
    only_correct_steps: bool = typer.Option(
        False, "--only-correct-steps", help="Only steps labelled correct."
    ),
    images: str = typer.Option(
        "copy", "--images", help="copy (into the folder, so it travels) or reference (the store's files)."
    ),
    copy_images: bool = typer.Option(False, "--copy-images", help="Same as --images copy."),
    per: str = typer.Option(
        "step", "--per", help="One record per step (with its prompt's history) or per episode (multi-turn)."
    ),
    name: str | None = typer.Option(None, "--name", help="Dataset name (default mobile_agent_<format>)."),
    db: str | None = DB_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print what was written and skipped as JSON."),
) -> None:
    """Export recorded steps as multimodal fine-tuning data."""
    from mobile_agent.report.export import ExportFormat, ExportOptions, ExportUnit, ImageMode, export_episodes
    from mobile_agent.report.selection import select_episodes
    from mobile_agent.store.store import TrajectoryStore

    try:
        chosen_format = ExportFormat(fmt.strip().lower())
    except ValueError:
        raise UserError(
            f"unknown export format {fmt!r}", hint="use --format sharegpt or --format swift"
        ) from None
    try:
        mode = ImageMode.COPY if copy_images else ImageMode(images.strip().lower())
    except ValueError:
        raise UserError(
            f"--images {images!r} is not a mode", hint="use --images copy or --images reference"
        ) from None
    try:
        unit = ExportUnit(per.strip().lower())
    except ValueError:
        raise UserError(f"--per {per!r} is not a unit", hint="use --per step or --per episode") from None
    options = ExportOptions(
        format=chosen_format,
        family=family,
        only_complete=only_complete,
        only_correct_steps=only_correct_steps,
        images=mode,
        dataset_name=name,
        per=unit,
    )
    with TrajectoryStore.open(db) as store:
        chosen = select_episodes(store, run=run, episodes=episodes or ())
        result = export_episodes(store, chosen, output, options)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "data_file": str(result.data_file.resolve()),
                    "dataset_info": str(result.dataset_info.resolve()) if result.dataset_info else None,
                    "dataset_name": options.name,
                    "records": result.records,
                    "episodes": result.episodes,
                    "skipped_episodes": result.skipped_episodes,
                    "skipped_steps": result.skipped_steps,
                    "notes": result.notes,
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return
    console.print(
        f"{result.records} record(s) from {result.episodes} episode(s) written to {escape(str(result.data_file))}"
    )
    if result.dataset_info is not None:
        console.print(f"LLaMA-Factory entry {options.name!r} in {escape(str(result.dataset_info))}")
    for episode_id, reason in result.skipped_episodes.items():
        console.print(f"[dim]skipped episode {episode_id}: {escape(reason)}[/]")
    for reason, count in result.skipped_steps.items():
        console.print(f"[dim]skipped {count} step(s): {escape(reason)}[/]")
    for note in result.notes:
        console.print(f"[yellow]note:[/] {escape(note)}")


# ----- eval-offline --------------------------------------------------------------------------------------------
def eval_offline_command(
    episodes: list[str] = typer.Argument(
        None, autocompletion=complete_episode, help="Episodes to evaluate on (ids or unique prefixes)."
    ),
    run: str | None = typer.Option(
        None, "--run", autocompletion=complete_run, help="Evaluate on every episode of a run."
    ),
    family: str = typer.Option(
        ..., "--family", autocompletion=complete_family, help="Output format family of the evaluated model."
    ),
    base_url: list[str] = typer.Option(..., "--base-url", help="OpenAI-compatible endpoint(s) of the model."),
    model: str | None = typer.Option(None, "--model", help="Served model name (default: the first listed)."),
    tap_distance: float = typer.Option(
        0.14, "--tap-distance", help="Tap tolerance without a view tree, as a fraction of the screen."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the full result as JSON."),
    db: str | None = DB_OPTION,
) -> None:
    """Ask a model for every recorded step and score its actions against the recorded ones."""
    from mobile_agent.evaluate.offline import EvalOptions, evaluate_offline
    from mobile_agent.report.selection import select_episodes
    from mobile_agent.store.store import TrajectoryStore

    options = EvalOptions(family=family, base_url=base_url, model=model, tap_distance=tap_distance)
    with TrajectoryStore.open(db) as store:
        chosen = select_episodes(store, run=run, episodes=episodes or ())
        report = evaluate_offline(store, chosen, options)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
        return
    table = Table(
        "app",
        "steps",
        "type acc.",
        "wrong type",
        "param acc. (right type)",
        "right type, wrong param",
        "unparsed",
        title=f"{report.model} ({report.family}) on {report.overall.steps} recorded step(s)",
    )
    rows = list(report.by_app.items()) + [("all", report.overall)]
    for app, tally in rows:
        table.add_row(
            escape(app) if app != "all" else "[bold]all[/]",
            str(tally.steps),
            _pct(tally.type_accuracy),
            str(tally.wrong_type),
            _pct(tally.param_accuracy),
            str(tally.wrong_param),
            str(tally.unparsed),
        )
    console.print(table)


__all__ = ["eval_offline_command", "export_command", "report_command"]
