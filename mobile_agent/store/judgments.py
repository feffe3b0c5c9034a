"""The judgments table: every verdict and step label a check, a judge model or a rule gave an episode.

One row per judgment, never updated: verifying again adds rows, and readers take the newest row per judge.
``step_index`` is None for a verdict on the whole episode and the step's index for a step label.

    record_judgment(store, JudgmentRecord(episode_id=ep, source="judge", judge="http://j1/v1", model="qwen",
                                          prompt_version="judge-v1", verdict="partial", rationale="not sent"))
    judgments(store, ep)                      # oldest first
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Float, ForeignKey, Index, Integer, String, Text, select
from sqlalchemy.orm import Mapped, mapped_column

from mobile_agent.errors import StoreError
from mobile_agent.privacy.redact import redact_url
from mobile_agent.store.convert import json_safe, now_utc
from mobile_agent.store.outages import retried
from mobile_agent.store.schema import Base, EpisodeRow, JSONType, UTCDateTime
from mobile_agent.store.store import TrajectoryStore

SOURCES = ("check", "judge", "rule")


class JudgmentRow(Base):
    __tablename__ = "judgments"
    __table_args__ = (Index("ix_judgments_episode_step", "episode_id", "step_index"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    episode_id: Mapped[str] = mapped_column(ForeignKey("episodes.id", ondelete="CASCADE"))
    step_index: Mapped[int | None] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(String(16))  # check | judge | rule
    judge: Mapped[str] = mapped_column(String(1024))  # judge base URL or name; "checks"; a rule's name
    model: Mapped[str | None] = mapped_column(String(256))
    prompt_version: Mapped[str | None] = mapped_column(String(64))
    verdict: Mapped[str | None] = mapped_column(String(16))  # for the episode (step_index None)
    label: Mapped[str | None] = mapped_column(String(16))  # for a step
    points: Mapped[list[Any]] = mapped_column(JSONType, default=list)
    rationale: Mapped[str | None] = mapped_column(Text)
    latency_s: Mapped[float | None] = mapped_column(Float)
    error: Mapped[str | None] = mapped_column(Text)  # why a judge gave no usable answer
    meta: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


@dataclass(frozen=True)
class JudgmentRecord:
    """A judgment as handed to the store. ``points``: completion points as dicts (description, met, step, ...)."""

    episode_id: str
    source: str
    judge: str
    step_index: int | None = None
    model: str | None = None
    prompt_version: str | None = None
    verdict: str | None = None
    label: str | None = None
    points: list[dict[str, Any]] = field(default_factory=list)
    rationale: str | None = None
    latency_s: float | None = None
    error: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class JudgmentInfo(JudgmentRecord):
    id: int
    created_at: datetime


@retried
def record_judgment(store: TrajectoryStore, record: JudgmentRecord) -> JudgmentInfo:
    """Write one judgment and commit. StoreError when the episode does not exist or the record is inconsistent."""
    if record.source not in SOURCES:
        raise StoreError(f"unknown judgment source {record.source!r} (known: {', '.join(SOURCES)})")
    if record.step_index is None and record.label is not None:
        raise StoreError("a step label needs a step index")
    if record.step_index is not None and record.verdict is not None:
        raise StoreError("a verdict is for the whole episode: leave step_index empty")
    with store.write_session() as session:
        if session.get(EpisodeRow, record.episode_id) is None:
            raise StoreError(f"no episode {record.episode_id!r} to record a judgment on")
        row = JudgmentRow(
            episode_id=record.episode_id,
            step_index=record.step_index,
            source=record.source,
            judge=redact_url(record.judge) if "://" in record.judge else record.judge,
            model=record.model,
            prompt_version=record.prompt_version,
            verdict=record.verdict,
            label=record.label,
            points=json_safe(list(record.points)),
            rationale=record.rationale,
            latency_s=record.latency_s,
            error=record.error,
            meta=json_safe(dict(record.meta)),
            created_at=now_utc(),
        )
        session.add(row)
    return _info(row)


@retried
def judgments(
    store: TrajectoryStore,
    episode_id: str,
    *,
    steps: bool | None = None,
    source: str | None = None,
) -> list[JudgmentInfo]:
    """Judgments of an episode, oldest first. ``steps``: True only step labels, False only episode verdicts."""
    query = select(JudgmentRow).where(JudgmentRow.episode_id == episode_id)
    if steps is True:
        query = query.where(JudgmentRow.step_index.is_not(None))
    elif steps is False:
        query = query.where(JudgmentRow.step_index.is_(None))
    if source is not None:
        query = query.where(JudgmentRow.source == source)
    query = query.order_by(JudgmentRow.created_at, JudgmentRow.id)
    with store.read_session() as session:
        return [_info(row) for row in session.scalars(query)]


def latest_per_judge(rows: list[JudgmentInfo]) -> list[JudgmentInfo]:
    """The newest row of each (source, judge, model, step) among ``rows`` (which are oldest first)."""
    newest: dict[tuple[str, str, str | None, int | None], JudgmentInfo] = {}
    for row in rows:
        newest[(row.source, row.judge, row.model, row.step_index)] = row
    return sorted(newest.values(), key=lambda r: (r.step_index if r.step_index is not None else -1, r.id))


def _info(row: JudgmentRow) -> JudgmentInfo:
    return JudgmentInfo(
        id=row.id,
        created_at=row.created_at,
        episode_id=row.episode_id,
        source=row.source,
        judge=row.judge,
        step_index=row.step_index,
        model=row.model,
        prompt_version=row.prompt_version,
        verdict=row.verdict,
        label=row.label,
        points=list(row.points or []),
        rationale=row.rationale,
        latency_s=row.latency_s,
        error=row.error,
        meta=dict(row.meta or {}),
    )


__all__ = [
    "JudgmentInfo",
    "JudgmentRecord",
    "JudgmentRow",
    "judgments",
    "latest_per_judge",
    "record_judgment",
]
