"""The console's pages: `/` (waiting questions first), `/phones`, `/runs`, `/runs/ID`, `/episodes/ID`, `/inbox`,
server-rendered with Jinja2 (autoescaped: model and phone text always shows as text). A request with the header
``X-Console-Partial`` gets only the page's ``<main>`` content, which the console script swaps in on updates."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse

from mobile_agent.console import queries
from mobile_agent.console.security import csrf_token
from mobile_agent.errors import UserError
from mobile_agent.farm.inbox import list_waiting
from mobile_agent.report.html import episode_app, step_duration_ms
from mobile_agent.report.verdicts import episode_verdict, success_status
from mobile_agent.store.answers import answers_of_episode
from mobile_agent.store.pauses import pauses
from mobile_agent.store.records import StepInfo
from mobile_agent.store.store import TrajectoryStore

TEMPLATES = Path(__file__).parent / "templates"
MAX_PAGE = 1_000_000  # a page past the last shows the last; a number no OFFSET can hold is read as this


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,  # every template, whatever its name
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = lambda v: v.strftime("%Y-%m-%d %H:%M:%S") if v else ""
    env.filters["age"] = _age
    env.filters["ms"] = lambda v: "" if v is None else f"{v:,.0f} ms"
    env.filters["first_line"] = lambda text: next((ln for ln in (text or "").splitlines() if ln.strip()), "")
    return env


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


@dataclass(frozen=True)
class StepLine:
    index: int
    source: str
    action: str
    thought: str
    reasoning: str
    raw_reply: str
    error: str
    app: str
    total_ms: float | None
    guards: list[dict[str, Any]]
    has_shot: bool
    label: str | None
    judgments: list[Any]


def _step(store: TrajectoryStore, step: StepInfo, verdict) -> StepLine:
    error = f"{step.error_kind}: {step.error_text}" if step.error_kind else (step.error_text or "")
    shot = store.screenshot_path(step)
    return StepLine(
        step.index,
        str(step.action_source),
        step.action.describe() if step.action else "",
        step.thought or "",
        step.reasoning or "",
        step.raw_reply or "",
        error,
        step.foreground_app or "",
        step_duration_ms(step),
        list(step.guard_decisions),
        shot is not None and shot.is_file(),
        verdict.step_labels.get(step.index),
        verdict.labels_for(step.index),
    )


class Pages:
    """The GET handlers, bound to one store and one access token (for the forms' CSRF field)."""

    def __init__(self, store: TrajectoryStore, token: str) -> None:
        self.store = store
        self.env = environment()
        self.csrf = csrf_token(token)

    async def render(self, request: Request, template: str, **context: Any) -> HTMLResponse:
        partial = request.headers.get("x-console-partial") == "1"
        html = self.env.get_template(template).render(
            partial=partial, csrf=self.csrf, path=request.url.path, **context
        )
        return HTMLResponse(html)

    def _number(self, request: Request, name: str = "page") -> int:
        try:
            return min(MAX_PAGE, max(1, int(request.query_params.get(name, "1"))))
        except ValueError:
            return 1

    async def overview(self, request: Request) -> HTMLResponse:
        def load():
            return (
                list_waiting(self.store, limit=50),
                queries.list_runs(self.store, 1, 10)[0],
                queries.phones(self.store),
                queries.totals(self.store),
            )

        waiting, runs, phones, totals = await run_in_threadpool(load)
        return await self.render(
            request, "overview.html.j2", waiting=waiting, runs=runs, phones=phones, totals=totals
        )

    async def phones(self, request: Request) -> HTMLResponse:
        phones = await run_in_threadpool(queries.phones, self.store)
        return await self.render(request, "phones.html.j2", phones=phones)

    async def runs(self, request: Request) -> HTMLResponse:
        runs, page = await run_in_threadpool(queries.list_runs, self.store, self._number(request))
        return await self.render(request, "runs.html.j2", runs=runs, page=page)

    async def run(self, request: Request) -> HTMLResponse:
        run_id = request.path_params["run_id"]
        number = self._number(request)

        def load():
            detail = queries.run_detail(self.store, run_id, number)
            return detail, list_waiting(self.store, run_ids=[detail.run.id])

        try:
            detail, waiting = await run_in_threadpool(load)
        except UserError as exc:
            return await self.missing(request, exc)
        return await self.render(request, "run.html.j2", d=detail, waiting=waiting)

    async def episode(self, request: Request) -> HTMLResponse:
        episode_id = request.path_params["episode_id"]

        def load():
            info = self.store.episode(episode_id)
            steps = self.store.steps(info.id)
            verdict = episode_verdict(self.store, info.id)
            waiting = [q for q in list_waiting(self.store) if q.episode_id == info.id]
            return {
                "info": info,
                "app": episode_app(info, steps),
                "status": success_status(info, verdict),
                "verdict": verdict,
                "steps": [_step(self.store, s, verdict) for s in steps],
                "pauses": pauses(self.store, info.id),
                "answers": {a.pause_id: a for a in answers_of_episode(self.store, info.id)},
                "waiting": waiting[0] if waiting else None,
            }

        try:
            context = await run_in_threadpool(load)
        except UserError as exc:
            return await self.missing(request, exc)
        return await self.render(request, "episode.html.j2", **context)

    async def inbox(self, request: Request) -> HTMLResponse:
        waiting = await run_in_threadpool(list_waiting, self.store)
        return await self.render(
            request, "inbox.html.j2", waiting=waiting, message=request.query_params.get("message")
        )

    async def missing(self, request: Request, exc: UserError) -> HTMLResponse:
        response = await self.render(request, "missing.html.j2", message=exc.message)
        response.status_code = 404
        return response


__all__ = ["Pages", "StepLine", "environment"]
