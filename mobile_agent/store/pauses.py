"""The pauses table: episodes waiting for a person (a confirmation, a take-over, a captcha, a login, a reply).

A paused episode ends as ``needs_user`` like any other, and one ``pauses`` row keeps what ``mobile-agent resume``
needs to continue the same episode: why it stopped, the question, the action waiting for approval, the phone and the
model it ran with, and until when the phone stays reserved for the person. Resuming reopens the episode (status
running again) and marks the row resumed.

    pause = create_pause(store, PauseRecord(episode_id=ep, step_index=4, kind="confirm", question="...", ...))
    open_pause(store, ep)                  # the row waiting for a person, or None
    reopen_episode(store, ep); mark_resumed(store, pause.id, reply="yes")
    reserved_devices(store)                # phones held for people right now
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from PIL import Image
from sqlalchemy import ForeignKey, Index, Integer, String, Text, select, update
from sqlalchemy.orm import Mapped, mapped_column

from mobile_agent.actions import Action, Outcome
from mobile_agent.errors import StoreError, UserError
from mobile_agent.store.convert import json_safe, now_utc
from mobile_agent.store.files import as_jpeg, screenshot_name, write_atomic
from mobile_agent.store.outages import retried
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.schema import Base, EpisodeRow, JSONType, UTCDateTime
from mobile_agent.store.store import TrajectoryStore

PAUSE_KINDS = ("confirm", "call_user", "take_over", "captcha", "login", "secure_screen")
OPEN, RESUMED = "open", "resumed"


class PauseRow(Base):
    __tablename__ = "pauses"
    __table_args__ = (
        Index("ix_pauses_episode", "episode_id"),
        Index("ix_pauses_device_status", "device", "status"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    episode_id: Mapped[str] = mapped_column(ForeignKey("episodes.id", ondelete="CASCADE"))
    step_index: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(32))
    question: Mapped[str] = mapped_column(Text)
    pending_action: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    decision: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    screen_hash: Mapped[str | None] = mapped_column(String(128))
    device: Mapped[str] = mapped_column(String(256))
    adb_server: Mapped[str | None] = mapped_column(String(256))
    context: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    reserved_until: Mapped[datetime] = mapped_column(UTCDateTime)
    resumed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    reply: Mapped[str | None] = mapped_column(Text)


@dataclass(frozen=True)
class PauseRecord:
    """What the loop hands over when it pauses. ``context`` is what resume needs (no secrets: it is scrubbed)."""

    episode_id: str
    step_index: int
    kind: str
    question: str
    device: str
    reserve_s: float
    adb_server: str | None = None
    pending_action: Action | None = None
    decision: dict[str, Any] | None = None
    screen_hash: int | None = None
    context: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PauseInfo:
    id: int
    episode_id: str
    step_index: int
    kind: str
    question: str
    device: str
    adb_server: str | None
    status: str
    created_at: datetime
    reserved_until: datetime
    context: dict[str, Any]
    pending_action: Action | None = None
    decision: dict[str, Any] | None = None
    screen_hash: int | None = None
    resumed_at: datetime | None = None
    reply: str | None = None

    @property
    def is_open(self) -> bool:
        return self.status == OPEN

    def reserved(self, now: datetime | None = None) -> bool:
        return self.is_open and (now or now_utc()) < self.reserved_until


def _info(row: PauseRow) -> PauseInfo:
    return PauseInfo(
        id=row.id,
        episode_id=row.episode_id,
        step_index=row.step_index,
        kind=row.kind,
        question=row.question,
        device=row.device,
        adb_server=row.adb_server,
        status=row.status,
        created_at=row.created_at,
        reserved_until=row.reserved_until,
        context=dict(row.context or {}),
        pending_action=Action.from_dict(row.pending_action) if row.pending_action else None,
        decision=row.decision,
        screen_hash=int(row.screen_hash, 16) if row.screen_hash else None,
        resumed_at=row.resumed_at,
        reply=row.reply,
    )


@retried
def create_pause(store: TrajectoryStore, record: PauseRecord) -> PauseInfo:
    if record.kind not in PAUSE_KINDS:
        raise StoreError(f"unknown pause kind {record.kind!r} (known: {', '.join(PAUSE_KINDS)})")
    now = now_utc()
    with store.write_session() as session:
        if session.get(EpisodeRow, record.episode_id) is None:
            raise StoreError(f"no episode {record.episode_id!r} to pause")
        session.execute(  # one open pause per episode: an older one is superseded
            update(PauseRow)
            .where(PauseRow.episode_id == record.episode_id, PauseRow.status == OPEN)
            .values(status=RESUMED, resumed_at=now, reply="(superseded)")
        )
        row = PauseRow(
            episode_id=record.episode_id,
            step_index=record.step_index,
            kind=record.kind,
            question=record.question,
            pending_action=record.pending_action.to_dict() if record.pending_action else None,
            decision=json_safe(record.decision) if record.decision else None,
            screen_hash=format(record.screen_hash, "x") if record.screen_hash is not None else None,
            device=record.device,
            adb_server=record.adb_server,
            context=json_safe(record.context),
            status=OPEN,
            created_at=now,
            reserved_until=now + timedelta(seconds=max(0.0, record.reserve_s)),
        )
        session.add(row)
    return _info(row)


@retried
def open_pause(store: TrajectoryStore, episode_id: str) -> PauseInfo | None:
    with store.read_session() as session:
        row = session.scalar(
            select(PauseRow)
            .where(PauseRow.episode_id == episode_id, PauseRow.status == OPEN)
            .order_by(PauseRow.id.desc())
            .limit(1)
        )
        return _info(row) if row is not None else None


@retried
def pauses(store: TrajectoryStore, episode_id: str) -> list[PauseInfo]:
    """Every pause of an episode, oldest first."""
    with store.read_session() as session:
        rows = session.scalars(
            select(PauseRow).where(PauseRow.episode_id == episode_id).order_by(PauseRow.id)
        )
        return [_info(row) for row in rows]


@retried
def mark_resumed(store: TrajectoryStore, pause_id: int, reply: str | None) -> None:
    with store.write_session() as session:
        done = session.execute(
            update(PauseRow)
            .where(PauseRow.id == pause_id, PauseRow.status == OPEN)
            .values(status=RESUMED, resumed_at=now_utc(), reply=reply)
        )
        if done.rowcount != 1:
            raise UserError(
                f"pause {pause_id} was already resumed", "another `mobile-agent resume` got there first"
            )


@retried
def reopen_episode(store: TrajectoryStore, episode_id: str) -> None:
    """A needs_user episode becomes running again, so that the same episode records its next steps."""
    with store.write_session() as session:
        row = session.get(EpisodeRow, episode_id, with_for_update=True)
        if row is None:
            raise StoreError(f"no episode {episode_id!r} to reopen")
        if row.status != EpisodeStatus.ENDED.value or row.outcome != Outcome.NEEDS_USER:
            raise UserError(
                f"episode {episode_id} is {row.outcome or row.status}, not waiting for a person",
                "only episodes that ended as needs_user can be resumed",
            )
        row.status = EpisodeStatus.RUNNING.value
        row.outcome = None
        row.outcome_detail = None
        row.ended_at = None


@retried
def reserved_devices(store: TrajectoryStore, now: datetime | None = None) -> list[PauseInfo]:
    """Open pauses whose phone is still held for a person (a scheduler should not hand these phones out)."""
    moment = now or now_utc()
    with store.read_session() as session:
        rows = session.scalars(select(PauseRow).where(PauseRow.status == OPEN).order_by(PauseRow.id))
        return [info for info in map(_info, rows) if info.reserved(moment)]


@retried
def is_reserved(store: TrajectoryStore, serial: str, adb_server: str | None = None) -> PauseInfo | None:
    return next(
        (
            p
            for p in reserved_devices(store)
            if p.device == serial and (adb_server is None or p.adb_server in (None, adb_server))
        ),
        None,
    )


@retried
def stage_screenshot(
    store: TrajectoryStore, episode_id: str, index: int, screenshot: bytes | Image.Image
) -> Path:
    """Write a step's screenshot where ``record_step`` will put it, before the step is recorded, so that a person
    asked about the step can look at it (record_step then writes the same bytes to the same path)."""
    path = store.root / episode_id / screenshot_name(index)
    write_atomic(path, as_jpeg(screenshot))
    return path


__all__ = [
    "PAUSE_KINDS",
    "PauseInfo",
    "PauseRecord",
    "PauseRow",
    "create_pause",
    "is_reserved",
    "mark_resumed",
    "open_pause",
    "pauses",
    "reopen_episode",
    "reserved_devices",
    "stage_screenshot",
]
