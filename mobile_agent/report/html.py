"""HTML reports of one episode or a whole run: plain pages that open anywhere, offline, with no scripts and no
external assets.

A report is a page and, beside it, a folder ``<name>_files/`` with the pictures: each step's screenshot with its
action drawn, a thumbnail on the page that links to the full size. A run that fits on one page (``per_page``
episodes) is that one page; a bigger run gets an index page (summary, results per app and per outcome, verdicts,
the list of episodes) and its episodes on pages of ``per_page`` in the files folder, each linked from the index.

    store = TrajectoryStore.open()
    path = write_report(store, episode="3f9a0c", output="report.html")
    path = write_report(store, run="a1b2c3")        # ./report-run-a1b2c3....html and its _files/ folder
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import jinja2

from mobile_agent.errors import UserError
from mobile_agent.report.draw import THUMB_WIDTH
from mobile_agent.report.layout import (
    Picture,
    PictureWriter,
    ReportLayout,
    page_name,
    prepare,
    report_layout,
    safe_name,
    write_text,
)
from mobile_agent.report.summary import EpisodeEntry, RunSummary
from mobile_agent.report.verdicts import (
    COMPLETE,
    EpisodeVerdict,
    Judgment,
    episode_verdict,
    success_status,
    verification_available,
)
from mobile_agent.store.records import EpisodeInfo, RunInfo, StepInfo
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)

TEMPLATES = Path(__file__).parent / "templates"
LAUNCHER_PACKAGES = frozenset({"com.android.launcher3", "com.android.systemui", ""})
PER_PAGE = 5  # episodes per page of a run report; a run of at most this many is one page

Progress = Callable[[int, int], None]  # (episodes written, episodes in the report)


@dataclass(frozen=True)
class StepView:
    index: int
    source: str
    action: str
    thought: str
    raw_reply: str
    reasoning: str
    error: str
    foreground_app: str
    picture: Picture | None
    timings: dict[str, float]
    total_ms: float | None
    guard_decisions: list[dict[str, Any]]
    judgments: list[Judgment]
    label: str | None
    tokens: str


@dataclass(frozen=True)
class EpisodeView:
    info: EpisodeInfo
    app: str
    status: str
    verdict: EpisodeVerdict
    steps: list[StepView]
    duration: str

    @property
    def succeeded(self) -> bool:
        return self.status == COMPLETE


@dataclass(frozen=True)
class WrittenReport:
    """What ``write_report`` wrote: the page to open, the files folder, the pages of episodes (empty when the
    index holds them), and the counts."""

    index: Path
    files: Path
    pages: list[Path]
    episodes: int
    pictures: int
    skipped_pictures: int


def episode_app(episode: EpisodeInfo, steps: list[StepInfo]) -> str:
    """The app an episode is about: the one it was started for, else the app it spent most steps in."""
    if episode.app:
        return episode.app
    seen = Counter(s.foreground_app for s in steps if s.foreground_app not in LAUNCHER_PACKAGES)
    return seen.most_common(1)[0][0] if seen else "(none)"


def step_duration_ms(step: StepInfo) -> float | None:
    if step.timings.total_ms is not None:
        return step.timings.total_ms
    if isinstance(step.started_at, datetime) and isinstance(step.ended_at, datetime):
        return (step.ended_at - step.started_at).total_seconds() * 1000
    return None


def _step_view(step: StepInfo, verdict: EpisodeVerdict, picture: Picture | None) -> StepView:
    timings = {
        name: value
        for name, value in (
            ("screenshot", step.timings.screenshot_ms),
            ("model", step.timings.model_ms),
            ("act", step.timings.act_ms),
            ("settle", step.timings.settle_ms),
        )
        if value is not None
    }
    tokens = ""
    if step.prompt_tokens is not None or step.completion_tokens is not None:
        tokens = f"{step.prompt_tokens or 0} in / {step.completion_tokens or 0} out"
    error = f"{step.error_kind}: {step.error_text}" if step.error_kind else (step.error_text or "")
    return StepView(
        index=step.index,
        source=str(step.action_source),
        action=step.action.describe() if step.action else "",
        thought=step.thought or "",
        raw_reply=step.raw_reply or "",
        reasoning=step.reasoning or "",
        error=error,
        foreground_app=step.foreground_app or "",
        picture=picture,
        timings=timings,
        total_ms=step_duration_ms(step),
        guard_decisions=list(step.guard_decisions),
        judgments=verdict.labels_for(step.index),
        label=verdict.step_labels.get(step.index),
        tokens=tokens,
    )


def build_episode_view(store: TrajectoryStore, episode_id: str, pictures: PictureWriter) -> EpisodeView:
    """An episode as its section shows it; its pictures are written into the report's files folder."""
    info = store.episode(episode_id)
    steps = store.steps(info.id)
    verdict = episode_verdict(store, info.id)
    drawn = pictures.episode(info.id, steps)
    return EpisodeView(
        info=info,
        app=episode_app(info, steps),
        status=success_status(info, verdict),
        verdict=verdict,
        steps=[_step_view(step, verdict, drawn.get(step.index)) for step in steps],
        duration=f"{info.duration_s:.1f} s" if info.duration_s is not None else "running",
    )


def _entry(view: EpisodeView, href: str) -> EpisodeEntry:
    return EpisodeEntry(
        id=view.info.id,
        task=view.info.task,
        app=view.app,
        device=view.info.device or "",
        status=view.status,
        verdict=view.verdict.verdict,
        outcome=str(view.info.outcome) if view.info.outcome else "running",
        steps=len(view.steps),
        duration=view.duration,
        started_at=view.info.started_at,
        href=href,
    )


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=jinja2.select_autoescape(enabled_extensions=("j2", "html")),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["ms"] = lambda value: "" if value is None else f"{value:,.0f} ms"
    env.filters["percent"] = lambda value: "n/a" if value is None else f"{100 * value:.0f}%"
    env.filters["when"] = lambda value: value.strftime("%Y-%m-%d %H:%M:%S UTC") if value else ""
    return env


def write_report(
    store: TrajectoryStore,
    *,
    episode: str | None = None,
    run: str | None = None,
    output: str | Path | None = None,
    thumb_width: int = THUMB_WIDTH,
    per_page: int = PER_PAGE,
    progress: Progress | None = None,
) -> Path:
    """Write the report of one episode or one run (see ``write_report_files``); returns the page to open."""
    return write_report_files(
        store,
        episode=episode,
        run=run,
        output=output,
        thumb_width=thumb_width,
        per_page=per_page,
        progress=progress,
    ).index


def write_report_files(
    store: TrajectoryStore,
    *,
    episode: str | None = None,
    run: str | None = None,
    output: str | Path | None = None,
    thumb_width: int = THUMB_WIDTH,
    per_page: int = PER_PAGE,
    progress: Progress | None = None,
) -> WrittenReport:
    """Write the report of one episode or one run to ``output`` (default ``report-<kind>-<id>.html``, with its
    ``_files`` folder beside it). ``progress`` is called after each episode."""
    if (episode is None) == (run is None):
        raise UserError("report needs exactly one of EPISODE or --run RUN", hint="mobile-agent report 3f9a0c")
    if per_page < 1:
        raise UserError(f"--per-page {per_page} is not a page size", hint="pass --per-page 1 or more")
    env = _environment()
    verification = verification_available(store)
    if episode is not None:
        info = store.episode(episode)
        layout = report_layout(output, f"report-episode-{safe_name(info.id)}")
        prepare(layout)
        with PictureWriter(store, layout, thumb_width) as pictures:
            view = build_episode_view(store, info.id, pictures)
            html = env.get_template("episode.html.j2").render(
                episode=view, verification=verification, files=layout.files_href, generated=_now()
            )
            write_text(layout.index, html)
            if progress is not None:
                progress(1, 1)
            return WrittenReport(layout.index, layout.files, [], 1, pictures.written, pictures.skipped)
    run_info = store.run(run)  # type: ignore[arg-type]
    chosen = sorted(store.list_episodes(run_id=run_info.id, limit=None), key=lambda e: (e.started_at, e.id))
    if not chosen:
        raise UserError(
            f"run {run_info.id} has no episodes to report",
            hint="check the run with `mobile-agent runs`, or report one episode: mobile-agent report EPISODE",
        )
    layout = report_layout(output, f"report-run-{safe_name(run_info.id)}")
    prepare(layout)
    return _write_run(store, env, layout, run_info, chosen, thumb_width, per_page, verification, progress)


def _write_run(
    store: TrajectoryStore,
    env: jinja2.Environment,
    layout: ReportLayout,
    run: RunInfo,
    chosen: list[EpisodeInfo],
    thumb_width: int,
    per_page: int,
    verification: bool,
    progress: Progress | None,
) -> WrittenReport:
    """Pages of ``per_page`` episodes, each written as soon as its episodes are drawn, then the index."""
    summary = RunSummary()
    one_page = len(chosen) <= per_page
    page_count = -(-len(chosen) // per_page)
    pages: list[Path] = []
    inline: list[EpisodeView] = []
    done = 0
    with PictureWriter(store, layout, thumb_width) as pictures:
        for number, batch in enumerate(_batches(chosen, per_page), start=1):
            views = []
            for info in batch:
                view = build_episode_view(store, info.id, pictures)
                page = "" if one_page else f"{layout.files_href}{page_name(number)}"
                summary.add(
                    _entry(view, f"{page}#episode-{view.info.id}"),
                    [s.total_ms for s in view.steps if s.total_ms is not None],
                )
                views.append(view)
                done += 1
                if progress is not None:
                    progress(done, len(chosen))
            if one_page:
                inline = views
                continue
            html = env.get_template("page.html.j2").render(
                run=run,
                episodes=views,
                number=number,
                pages=page_count,
                page_name=page_name,
                index=layout.index_href,
                verification=verification,
                files="",
                generated=_now(),
            )
            path = layout.inside(layout.page(number))
            write_text(path, html)
            pages.append(path)
        html = env.get_template("run.html.j2").render(
            run=run,
            summary=summary,
            verification=verification,
            episodes=inline,
            pages=pages,
            files=layout.files_href,
            generated=_now(),
        )
        write_text(layout.index, html)
        return WrittenReport(
            layout.index, layout.files, pages, len(chosen), pictures.written, pictures.skipped
        )


def _batches(items: list[EpisodeInfo], size: int) -> Iterator[list[EpisodeInfo]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _now() -> datetime:
    return datetime.now(timezone.utc)


__all__ = [
    "PER_PAGE",
    "EpisodeView",
    "StepView",
    "WrittenReport",
    "build_episode_view",
    "episode_app",
    "step_duration_ms",
    "write_report",
    "write_report_files",
]
