"""The database tables (SQLAlchemy 2 declarative).

Adding a table: declare it on ``Base`` in its own module under ``mobile_agent/store/`` and import that module in
``mobile_agent/store/__init__.py``; ``TrajectoryStore.open`` creates every table registered on ``Base.metadata``.
Bump ``SCHEMA_VERSION`` only when an existing table changes shape (new tables are created on open anyway).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import (
    JSON,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from mobile_agent.store.process import this_process

SCHEMA_VERSION = (
    3  # 2: episodes.owner, heartbeat_at, steps.status; 3: episodes/steps.lease_epoch (migrate.py)
)

ID_LENGTH = 12  # hex characters in a run or episode id


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite drops the zone; we put it back)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        # A naive value is taken as local time, which is what datetime.now() gives.
        value = value.astimezone(timezone.utc)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


class JSONType(TypeDecorator[Any]):
    """JSON documents: JSONB on PostgreSQL, JSON elsewhere. Chosen per dialect when a statement is compiled, so a
    SQLite run never imports the PostgreSQL dialect (~20 ms of start-up)."""

    impl = JSON
    cache_ok = True
    should_evaluate_none = True  # as JSON(): a None value is stored as JSON null, an unset column as SQL NULL

    def load_dialect_impl(self, dialect: Any) -> Any:
        if dialect.name == "postgresql":
            from sqlalchemy.dialects.postgresql import JSONB

            return dialect.type_descriptor(JSONB())
        return dialect.type_descriptor(JSON())


class Base(DeclarativeBase):
    pass


class SchemaInfoRow(Base):
    """Key/value facts about the database itself; ``schema_version`` tells a future migration what it has."""

    __tablename__ = "schema_info"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(256))


class RunRow(Base):
    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(256))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    config: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    status: Mapped[str] = mapped_column(String(32))


class EpisodeRow(Base):
    __tablename__ = "episodes"
    __table_args__ = (
        Index("ix_episodes_started_at", "started_at"),
        Index("ix_episodes_run_id", "run_id"),
        Index("ix_episodes_status", "status"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    run_id: Mapped[str | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    task: Mapped[str] = mapped_column(Text)
    app: Mapped[str | None] = mapped_column(String(256))
    device: Mapped[str] = mapped_column(String(256))
    family: Mapped[str] = mapped_column(String(64))
    model: Mapped[str] = mapped_column(String(256))
    base_url: Mapped[str | None] = mapped_column(String(1024))
    status: Mapped[str] = mapped_column(String(16))
    outcome: Mapped[str | None] = mapped_column(String(128))
    outcome_detail: Mapped[str | None] = mapped_column(Text)
    answer: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    step_count: Mapped[int] = mapped_column(Integer, default=0)
    source_episode_id: Mapped[str | None] = mapped_column(ForeignKey("episodes.id", ondelete="SET NULL"))
    meta: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    # The process that runs it (host:pid:start, set on insert) and when it last said so; a later command that
    # finds the owner gone ends the episode as interrupted (mobile_agent.store.owners).
    owner: Mapped[str | None] = mapped_column(String(256), default=this_process)
    heartbeat_at: Mapped[datetime | None] = mapped_column(
        UTCDateTime, default=lambda: datetime.now(timezone.utc)
    )
    # The fencing token: 1 when started, one more each time another process takes the episode over (a resume,
    # a take-over after its worker's lease lapsed). Step writes name the epoch they run under, and the store
    # refuses them once it is stale (mobile_agent.store.step_writes). NULL: written before version 3 (epoch 1).
    lease_epoch: Mapped[int | None] = mapped_column(Integer, default=1)


class StepRow(Base):
    __tablename__ = "steps"
    __table_args__ = (UniqueConstraint("episode_id", "index", name="uq_steps_episode_index"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    episode_id: Mapped[str] = mapped_column(ForeignKey("episodes.id", ondelete="CASCADE"))
    index: Mapped[int] = mapped_column(Integer)
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    screenshot_path: Mapped[str | None] = mapped_column(String(512))
    screenshot_sha256: Mapped[str | None] = mapped_column(String(64))
    screenshot_bytes: Mapped[int | None] = mapped_column(Integer)
    screen_width: Mapped[int | None] = mapped_column(Integer)
    screen_height: Mapped[int | None] = mapped_column(Integer)
    foreground_app: Mapped[str | None] = mapped_column(String(256))
    foreground_activity: Mapped[str | None] = mapped_column(String(512))
    hierarchy_path: Mapped[str | None] = mapped_column(String(512))

    raw_reply: Mapped[str | None] = mapped_column(Text)
    reasoning: Mapped[str | None] = mapped_column(Text)
    thought: Mapped[str | None] = mapped_column(Text)
    action: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    action_source: Mapped[str] = mapped_column(String(16))
    guard_decisions: Mapped[list[Any]] = mapped_column(JSONType, default=list)

    screenshot_ms: Mapped[float | None] = mapped_column(Float)
    model_ms: Mapped[float | None] = mapped_column(Float)
    act_ms: Mapped[float | None] = mapped_column(Float)
    settle_ms: Mapped[float | None] = mapped_column(Float)
    total_ms: Mapped[float | None] = mapped_column(Float)
    prompt_tokens: Mapped[int | None] = mapped_column(Integer)
    completion_tokens: Mapped[int | None] = mapped_column(Integer)
    model_latency_ms: Mapped[float | None] = mapped_column(Float)

    error_kind: Mapped[str | None] = mapped_column(String(128))
    error_text: Mapped[str | None] = mapped_column(Text)
    # intent: decided and committed before the phone was touched (its effect may be on the phone); done: performed;
    # failed: acting raised (error_text says why; the effect is unknown). NULL: written by schema version 1 (done).
    status: Mapped[str | None] = mapped_column(String(16))
    # The lease epoch of the episode's holder when it wrote this step (NULL: unfenced, or before version 3).
    lease_epoch: Mapped[int | None] = mapped_column(Integer)


class DeviceRow(Base):
    """A phone we have seen. The same serial can exist behind two adb servers (emulator-5554 on two hosts)."""

    __tablename__ = "devices"
    __table_args__ = (UniqueConstraint("serial", "adb_server", name="uq_devices_serial_server"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    serial: Mapped[str] = mapped_column(String(256))
    adb_server: Mapped[str] = mapped_column(String(256))  # host:port of the adb server that reaches it
    model: Mapped[str | None] = mapped_column(String(256))
    android_version: Mapped[str | None] = mapped_column(String(64))
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime)
    last_seen: Mapped[datetime] = mapped_column(UTCDateTime)
    notes: Mapped[str | None] = mapped_column(Text)


__all__ = [
    "Base",
    "DeviceRow",
    "EpisodeRow",
    "ID_LENGTH",
    "RunRow",
    "SCHEMA_VERSION",
    "SchemaInfoRow",
    "StepRow",
    "UTCDateTime",
]
