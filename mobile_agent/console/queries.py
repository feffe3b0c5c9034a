"""What the console's pages show, read from the store with a few grouped queries per page (a page stays fast with
tens of thousands of episodes: counts are computed in SQL, lists are paginated, nothing loads a whole run)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select

from mobile_agent.store.answers import PauseAnswerRow
from mobile_agent.store.convert import now_utc
from mobile_agent.store.judgments import JudgmentRow
from mobile_agent.store.pauses import OPEN, PauseRow
from mobile_agent.store.phones import FarmDeviceRow, person_holds
from mobile_agent.store.queue import QueueTaskRow
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.run_liveness import shown_status, stalled_runs
from mobile_agent.store.schema import EpisodeRow, RunRow, StepRow
from mobile_agent.store.store import TrajectoryStore

PER_PAGE = 50


@dataclass(frozen=True)
class Page:
    number: int
    per_page: int
    total: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.per_page

    @property
    def previous(self) -> int | None:
        return self.number - 1 if self.number > 1 else None

    @property
    def next(self) -> int | None:
        return self.number + 1 if self.number < self.pages else None


def page_of(number: int, total: int, per_page: int = PER_PAGE) -> Page:
    pages = max(1, -(-total // per_page))
    return Page(min(max(1, number), pages), per_page, total)


# ------------------------------------------------------------------------------------------------------- runs
@dataclass(frozen=True)
class RunRowView:
    id: str
    name: str
    status: str
    created_at: datetime
    tasks: dict[str, int]  # queue state -> count
    outcomes: dict[str, int]  # episode outcome (or running) -> count

    @property
    def total(self) -> int:
        return sum(self.tasks.values())

    @property
    def finished(self) -> int:
        return self.tasks.get("done", 0) + self.tasks.get("failed", 0)

    @property
    def percent(self) -> int:
        return round(100 * self.finished / self.total) if self.total else 0


def _task_counts(session, run_ids: list[str]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    if not run_ids:
        return counts
    query = (
        select(QueueTaskRow.run_id, QueueTaskRow.state, func.count())
        .where(QueueTaskRow.run_id.in_(run_ids))
        .group_by(QueueTaskRow.run_id, QueueTaskRow.state)
    )
    for run_id, state, n in session.execute(query):
        counts[run_id][state] = n
    return counts


def _outcome_counts(session, run_ids: list[str]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    if not run_ids:
        return counts
    query = (
        select(EpisodeRow.run_id, EpisodeRow.outcome, func.count())
        .where(EpisodeRow.run_id.in_(run_ids))
        .group_by(EpisodeRow.run_id, EpisodeRow.outcome)
    )
    for run_id, outcome, n in session.execute(query):
        counts[run_id][outcome or "running"] = n
    return counts


def list_runs(store: TrajectoryStore, page: int = 1, per_page: int = 25) -> tuple[list[RunRowView], Page]:
    with store.read_session() as session:
        total = session.scalar(select(func.count()).select_from(RunRow)) or 0
        where = page_of(page, total, per_page)
        rows = list(
            session.scalars(
                select(RunRow)
                .order_by(RunRow.created_at.desc(), RunRow.id)
                .limit(per_page)
                .offset(where.offset)
            )
        )
        ids = [r.id for r in rows]
        tasks, outcomes = _task_counts(session, ids), _outcome_counts(session, ids)
    stalled = stalled_runs(store, ids)  # running, but no live worker serves it (store/run_liveness)
    return [
        RunRowView(
            r.id,
            r.name,
            shown_status(r.status, r.id in stalled),
            r.created_at,
            tasks.get(r.id, {}),
            outcomes.get(r.id, {}),
        )
        for r in rows
    ], where


@dataclass(frozen=True)
class EpisodeLine:
    id: str
    task: str
    app: str | None
    device: str
    status: str
    outcome: str | None
    detail: str | None
    steps: int
    started_at: datetime
    ended_at: datetime | None


def _line(row: EpisodeRow) -> EpisodeLine:
    return EpisodeLine(
        row.id,
        row.task,
        row.app,
        row.device,
        row.status,
        row.outcome,
        row.outcome_detail,
        row.step_count or 0,
        row.started_at,
        row.ended_at,
    )


@dataclass(frozen=True)
class RunDetail:
    run: RunRowView
    by_phone: dict[str, dict[str, int]]
    by_app: dict[str, dict[str, int]]
    verdicts: dict[str, int]  # the newest episode-level verdict of each verified episode
    verified: int
    episodes: list[EpisodeLine]
    page: Page
    eta_s: float | None
    elapsed_s: float
    outcome_names: list[str] = field(default_factory=list)


def run_detail(store: TrajectoryStore, run_id: str, page: int = 1) -> RunDetail:
    info = store.run(run_id)
    now = now_utc()
    with store.read_session() as session:
        run = session.get(RunRow, info.id)
        tasks = _task_counts(session, [run.id]).get(run.id, {})
        outcomes = _outcome_counts(session, [run.id]).get(run.id, {})
        by_phone: dict[str, dict[str, int]] = defaultdict(dict)
        by_app: dict[str, dict[str, int]] = defaultdict(dict)
        grouped = (
            select(EpisodeRow.device, EpisodeRow.app, EpisodeRow.outcome, func.count())
            .where(EpisodeRow.run_id == run.id)
            .group_by(EpisodeRow.device, EpisodeRow.app, EpisodeRow.outcome)
        )
        for device, app, outcome, n in session.execute(grouped):
            name = outcome or "running"
            by_phone[device][name] = by_phone[device].get(name, 0) + n
            by_app[app or "-"][name] = by_app[app or "-"].get(name, 0) + n
        newest = (
            select(func.max(JudgmentRow.id))
            .join(EpisodeRow, EpisodeRow.id == JudgmentRow.episode_id)
            .where(
                EpisodeRow.run_id == run.id,
                JudgmentRow.step_index.is_(None),
                JudgmentRow.verdict.is_not(None),
            )
            .group_by(JudgmentRow.episode_id)
        )
        verdicts = {
            verdict: n
            for verdict, n in session.execute(
                select(JudgmentRow.verdict, func.count())
                .where(JudgmentRow.id.in_(newest.scalar_subquery()))
                .group_by(JudgmentRow.verdict)
            )
        }
        total = sum(outcomes.values())
        where = page_of(page, total)
        rows = session.scalars(
            select(EpisodeRow)
            .where(EpisodeRow.run_id == run.id)
            .order_by(EpisodeRow.started_at.desc(), EpisodeRow.id)
            .limit(where.per_page)
            .offset(where.offset)
        )
        episodes = [_line(r) for r in rows]
        status = shown_status(run.status, bool(stalled_runs(store, [run.id], now)))
        view = RunRowView(run.id, run.name, status, run.created_at, tasks, outcomes)
    elapsed = max(0.0, ((run.ended_at or now) - run.created_at).total_seconds())
    left = tasks.get("pending", 0) + tasks.get("claimed", 0)
    eta = elapsed / view.finished * left if view.finished and left and view.status == "running" else None
    names = sorted({o for group in by_phone.values() for o in group})
    return RunDetail(
        view,
        dict(by_phone),
        dict(by_app),
        verdicts,
        sum(verdicts.values()),
        episodes,
        where,
        eta,
        elapsed,
        names,
    )


# ----------------------------------------------------------------------------------------------------- phones
@dataclass(frozen=True)
class PhoneView:
    key: str
    serial: str
    adb_server: str
    state: str  # running, held for a person, quarantined, busy, idle, gone (not heard of for GONE_AFTER)
    worker: str | None
    quarantine_reason: str | None
    episode: EpisodeLine | None  # the one running on it, else the last one
    held_by: str | None  # the episode a person holds it for
    last_seen: datetime | None = None  # the newest of its farm row's last write and its last episode's


# A phone nobody leases or holds, with nothing running, that nothing has heard of for this long reads "gone": the
# console cannot ask adb, so a long-detached phone (a demo's) is not shown as idle.
GONE_AFTER = timedelta(minutes=10)


def phones(store: TrajectoryStore) -> list[PhoneView]:
    now = now_utc()
    holds = {h.serial: h for h in person_holds(store, now)}
    with store.read_session() as session:
        devices = list(session.scalars(select(FarmDeviceRow).order_by(FarmDeviceRow.key)))
        newest = (
            select(EpisodeRow.device, func.max(EpisodeRow.started_at).label("at"))
            .group_by(EpisodeRow.device)
            .subquery()
        )
        latest = {
            row.device: _line(row)
            for row in session.scalars(
                select(EpisodeRow).join(
                    newest, (EpisodeRow.device == newest.c.device) & (EpisodeRow.started_at == newest.c.at)
                )
            )
        }
    seen = set()
    out = []
    for d in devices:
        seen.add(d.serial)
        out.append(_phone(d.key, d.serial, d.adb_server, d, latest.get(d.serial), holds.get(d.serial), now))
    for serial, line in sorted(latest.items()):  # phones that ran single episodes, outside any farm
        if serial not in seen:
            out.append(_phone(serial, serial, "-", None, line, holds.get(serial), now))
    return out


def _phone(key, serial, adb, row: FarmDeviceRow | None, line, hold, now) -> PhoneView:
    busy = row is not None and row.worker and row.lease_until and row.lease_until > now
    heard = [row.updated_at if row is not None else None, line and (line.ended_at or line.started_at)]
    last_seen = max((t for t in heard if t is not None), default=None)
    if row is not None and row.quarantine_reason:
        state = "quarantined"
    elif hold is not None:
        state = "held for a person"
    elif line is not None and line.status == EpisodeStatus.RUNNING.value:
        state = "running"
    elif busy:
        state = "busy"
    else:
        state = "gone" if last_seen is None or now - last_seen > GONE_AFTER else "idle"
    return PhoneView(
        key,
        serial,
        adb,
        state,
        row.worker if busy else None,
        row.quarantine_reason if row is not None else None,
        line,
        hold.episode_id if hold is not None else None,
        last_seen,
    )


# -------------------------------------------------------------------------------------------------- overview
@dataclass(frozen=True)
class Totals:
    runs: int
    episodes: int
    running: int
    steps: int


def totals(store: TrajectoryStore) -> Totals:
    with store.read_session() as session:
        runs = session.scalar(select(func.count()).select_from(RunRow)) or 0
        episodes = session.scalar(select(func.count()).select_from(EpisodeRow)) or 0
        running = (
            session.scalar(
                select(func.count())
                .select_from(EpisodeRow)
                .where(EpisodeRow.status == EpisodeStatus.RUNNING.value)
            )
            or 0
        )
        steps = session.scalar(select(func.max(StepRow.id))) or 0
    return Totals(runs, episodes, running, steps)


def change_mark(store: TrajectoryStore) -> tuple[Any, ...]:
    """Something that changes whenever a page could: a step recorded, a pause opened or answered, an episode or
    task ended, a phone's farm row written. One round trip of cheap aggregates."""
    marks = select(
        select(func.max(StepRow.id)).scalar_subquery(),
        select(func.count()).select_from(PauseRow).where(PauseRow.status == OPEN).scalar_subquery(),
        select(func.max(PauseRow.id)).scalar_subquery(),
        select(func.max(PauseAnswerRow.replied_at)).scalar_subquery(),
        select(func.max(EpisodeRow.ended_at)).scalar_subquery(),
        select(func.max(QueueTaskRow.finished_at)).scalar_subquery(),
        select(func.max(FarmDeviceRow.updated_at)).scalar_subquery(),
    )
    with store.read_session() as session:
        return tuple(session.execute(marks).one())


__all__ = [
    "EpisodeLine",
    "Page",
    "PhoneView",
    "RunDetail",
    "RunRowView",
    "Totals",
    "change_mark",
    "list_runs",
    "page_of",
    "phones",
    "run_detail",
    "totals",
]
