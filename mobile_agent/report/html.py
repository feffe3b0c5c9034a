"""Self-contained HTML reports of one episode or a whole run.

Every picture is inlined (base64 JPEG thumbnails with the action drawn on them), charts are inline SVG and the
page has no scripts and no external assets, so a report is one file that opens anywhere, offline.

    store = TrajectoryStore.open()
    path = write_report(store, episode="3f9a0c", output="report.html")
    path = write_report(store, run="a1b2c3")                 # ./report-run-a1b2c3....html
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import jinja2

from mobile_agent.errors import UserError
from mobile_agent.report.charts import BarRow, histogram, stacked_bars
from mobile_agent.report.draw import THUMB_WIDTH, annotated_thumbnail, jpeg_data_uri
from mobile_agent.report.verdicts import (
    COMPLETE,
    UNVERIFIED_FINISH,
    EpisodeVerdict,
    Judgment,
    episode_verdict,
    success_status,
    verification_available,
)
from mobile_agent.store.files import readable_image
from mobile_agent.store.records import EpisodeInfo, RunInfo, StepInfo
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)

TEMPLATES = Path(__file__).parent / "templates"
LAUNCHER_PACKAGES = frozenset({"com.android.launcher3", "com.android.systemui", ""})


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
    image_uri: str | None
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
class RunView:
    info: RunInfo | None
    episodes: list[EpisodeView]
    verification: bool
    by_app: list[dict[str, Any]] = field(default_factory=list)
    by_outcome: list[tuple[str, int]] = field(default_factory=list)
    app_chart: str = ""
    outcome_chart: str = ""
    step_time_chart: str = ""
    success_count: int = 0
    unverified_count: int = 0


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


def _step_view(store: TrajectoryStore, step: StepInfo, verdict: EpisodeVerdict, thumb_width: int) -> StepView:
    image_uri = None
    data = readable_image(
        store.screenshot_path(step), f"screenshot of step {step.index} of {step.episode_id}"
    )
    if data is not None:
        device_width = step.screen.width if step.screen else None
        image_uri = jpeg_data_uri(annotated_thumbnail(data, step.action, thumb_width, device_width))
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
        image_uri=image_uri,
        timings=timings,
        total_ms=step_duration_ms(step),
        guard_decisions=list(step.guard_decisions),
        judgments=verdict.labels_for(step.index),
        label=verdict.step_labels.get(step.index),
        tokens=tokens,
    )


def build_episode_view(
    store: TrajectoryStore, episode_id: str, *, thumb_width: int = THUMB_WIDTH
) -> EpisodeView:
    info = store.episode(episode_id)
    steps = store.steps(info.id)
    verdict = episode_verdict(store, info.id)
    duration = f"{info.duration_s:.1f} s" if info.duration_s is not None else "running"
    return EpisodeView(
        info=info,
        app=episode_app(info, steps),
        status=success_status(info, verdict),
        verdict=verdict,
        steps=[_step_view(store, step, verdict, thumb_width) for step in steps],
        duration=duration,
    )


def build_run_view(
    store: TrajectoryStore,
    episodes: list[EpisodeInfo],
    run: RunInfo | None = None,
    *,
    thumb_width: int = THUMB_WIDTH,
) -> RunView:
    views = [build_episode_view(store, e.id, thumb_width=thumb_width) for e in episodes]
    apps: dict[str, Counter[str]] = {}
    verified: Counter[str] = (
        Counter()
    )  # episodes with a verdict, per app: no verdict at all is "n/a", not 0 %
    for view in views:
        apps.setdefault(view.app, Counter())[_bucket(view.status)] += 1
        verified[view.app] += 1 if view.verdict.verified else 0
    order = [COMPLETE, UNVERIFIED_FINISH, "partial", "infeasible", "failed", "other"]
    by_app = [
        {
            "app": app,
            "episodes": sum(counts.values()),
            "complete": counts[COMPLETE],
            "unverified": counts[UNVERIFIED_FINISH],
            "rate": counts[COMPLETE] / sum(counts.values()) if verified[app] else None,
        }
        for app, counts in sorted(apps.items())
    ]
    app_rows = [
        BarRow(app, {name: counts[name] for name in order if counts[name]})
        for app, counts in sorted(apps.items())
    ]
    outcomes = Counter(str(v.info.outcome) if v.info.outcome else "running" for v in views)
    outcome_rows = [BarRow(name, {name: count}) for name, count in outcomes.most_common()]
    step_times = [s.total_ms for v in views for s in v.steps if s.total_ms is not None]
    return RunView(
        info=run,
        episodes=views,
        verification=verification_available(store),
        by_app=by_app,
        by_outcome=outcomes.most_common(),
        app_chart=stacked_bars(app_rows, title="Episodes by app and result"),
        outcome_chart=stacked_bars(outcome_rows, title="Episodes by outcome"),
        step_time_chart=histogram(step_times, title="Step time (observe to recorded)"),
        success_count=sum(1 for v in views if v.status == COMPLETE),
        unverified_count=sum(1 for v in views if v.status == UNVERIFIED_FINISH),
    )


def _bucket(status: str) -> str:
    return status if status in (COMPLETE, UNVERIFIED_FINISH, "partial", "infeasible", "failed") else "other"


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


def render_episode_report(store: TrajectoryStore, episode_id: str, *, thumb_width: int = THUMB_WIDTH) -> str:
    view = build_episode_view(store, episode_id, thumb_width=thumb_width)
    return (
        _environment()
        .get_template("episode.html.j2")
        .render(episode=view, verification=verification_available(store), generated=_now())
    )


def render_run_report(
    store: TrajectoryStore,
    run_id: str | None = None,
    *,
    episodes: list[EpisodeInfo] | None = None,
    thumb_width: int = THUMB_WIDTH,
) -> str:
    """A run's report (by run id), or one over any list of episodes (``episodes``) with the same summary."""
    run = store.run(run_id) if run_id else None
    chosen = episodes if episodes is not None else store.list_episodes(run_id=run.id, limit=None)  # type: ignore[union-attr]
    if not chosen:
        raise UserError(
            f"run {run.id} has no episodes to report" if run else "no episodes to report",
            hint="report one episode instead: mobile-agent report EPISODE",
        )
    chosen = sorted(chosen, key=lambda e: (e.started_at, e.id))
    view = build_run_view(store, chosen, run, thumb_width=thumb_width)
    return _environment().get_template("run.html.j2").render(run=view, generated=_now())


def write_report(
    store: TrajectoryStore,
    *,
    episode: str | None = None,
    run: str | None = None,
    output: str | Path | None = None,
    thumb_width: int = THUMB_WIDTH,
) -> Path:
    """Write the report of one episode or one run to ``output`` (default ``report-<kind>-<id>.html``)."""
    if (episode is None) == (run is None):
        raise UserError("report needs exactly one of EPISODE or --run RUN", hint="mobile-agent report 3f9a0c")
    if episode is not None:
        info = store.episode(episode)
        html = render_episode_report(store, info.id, thumb_width=thumb_width)
        default = f"report-episode-{info.id}.html"
    else:
        info_run = store.run(run)  # type: ignore[arg-type]
        html = render_run_report(store, info_run.id, thumb_width=thumb_width)
        default = f"report-run-{info_run.id}.html"
    path = Path(output) if output is not None else Path(default)
    if path.is_dir():
        path = path / default
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise UserError(
            f"cannot write the report to {path}: {exc.strerror or exc}", hint="pass -o FILE.html"
        ) from exc
    return path


def _now() -> datetime:
    return datetime.now(timezone.utc)


__all__ = [
    "EpisodeView",
    "RunView",
    "StepView",
    "build_episode_view",
    "build_run_view",
    "episode_app",
    "render_episode_report",
    "render_run_report",
    "step_duration_ms",
    "write_report",
]
