"""Typed records the store takes in and gives out. Callers never see ORM rows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from enum import Enum
from typing import Any

from mobile_agent.actions import Action, Outcome, Size


class _TextEnum(str, Enum):
    """Prints as its value ("running", not "EpisodeStatus.RUNNING") in tables and f-strings."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class ActionSource(_TextEnum):
    """Who chose a step's action."""

    MODEL = "model"
    RULE = "rule"
    HUMAN = "human"
    REPLAY = "replay"
    MCP = "mcp"  # a calling agent's device tool (mobile_agent/mcp): the action came over the protocol


class EpisodeStatus(_TextEnum):
    RUNNING = "running"
    ENDED = "ended"


class RunStatus(_TextEnum):
    RUNNING = "running"
    ENDED = "ended"
    INTERRUPTED = "interrupted"


@dataclass(frozen=True)
class StepTimings:
    """Wall-clock milliseconds spent in each part of one step."""

    screenshot_ms: float | None = None
    model_ms: float | None = None
    act_ms: float | None = None
    settle_ms: float | None = None
    total_ms: float | None = None

    @classmethod
    def from_dict(cls, values: Mapping[str, float | None]) -> StepTimings:
        """From ``{"screenshot": 41.0, "model_ms": 800, ...}``: keys with or without the ``_ms`` suffix."""
        known = {f.name for f in fields(cls)}
        picked: dict[str, float | None] = {}
        for key, value in values.items():
            name = key if key.endswith("_ms") else f"{key}_ms"
            if name not in known:
                raise ValueError(f"unknown step timing {key!r}; known: {', '.join(sorted(known))}")
            picked[name] = None if value is None else float(value)
        return cls(**picked)


@dataclass(frozen=True)
class StepRecord:
    """One observe -> act turn, as the agent hands it to the store.

    ``index`` starts at 0 and grows by one per step of an episode. ``action`` is None when the reply could not be
    parsed (then ``error_kind``/``error_text`` say why). ``started_at`` defaults to the moment it is recorded;
    times may be datetimes or ``time.time()`` seconds (read back as aware UTC datetimes).
    """

    index: int
    action: Action | None = None
    action_source: ActionSource = ActionSource.MODEL
    started_at: datetime | float | None = None
    ended_at: datetime | float | None = None
    screen: Size | None = None
    foreground_app: str | None = None
    foreground_activity: str | None = None
    raw_reply: str | None = None
    reasoning: str | None = None
    thought: str | None = None
    guard_decisions: list[dict[str, Any]] = field(default_factory=list)
    timings: StepTimings = field(default_factory=StepTimings)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    model_latency_ms: float | None = None
    error_kind: str | None = None
    error_text: str | None = None
    attempt: int = 1
    status: str | None = None  # intent | done | failed (mobile_agent.store.owners); None: done (older stores)


@dataclass(frozen=True, kw_only=True)
class StepInfo(StepRecord):
    """A recorded step: the record plus where its files are. Paths are relative to the store root."""

    episode_id: str
    screenshot_path: str | None = None
    screenshot_sha256: str | None = None
    screenshot_bytes: int | None = None
    hierarchy_path: str | None = None
    lease_epoch: int | None = None  # the writer's lease epoch (None: unfenced, or an older store)


@dataclass(frozen=True)
class EpisodeInfo:
    id: str
    task: str
    device: str
    family: str
    model: str
    status: EpisodeStatus
    started_at: datetime
    step_count: int = 0
    run_id: str | None = None
    app: str | None = None
    base_url: str | None = None
    outcome: Outcome | None = None
    outcome_detail: str | None = None
    answer: str | None = None
    ended_at: datetime | None = None
    source_episode_id: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    lease_epoch: int = 1  # the fencing token: one more each time another process took the episode over

    @property
    def is_running(self) -> bool:
        return self.status is EpisodeStatus.RUNNING

    @property
    def duration_s(self) -> float | None:
        if self.ended_at is None:
            return None
        return (self.ended_at - self.started_at).total_seconds()


@dataclass(frozen=True)
class RunInfo:
    id: str
    name: str
    status: RunStatus
    created_at: datetime
    config: dict[str, Any] = field(default_factory=dict)
    ended_at: datetime | None = None


@dataclass(frozen=True)
class DeviceInfo:
    serial: str
    adb_server: str
    first_seen: datetime
    last_seen: datetime
    model: str | None = None
    android_version: str | None = None
    notes: str | None = None


__all__ = [
    "ActionSource",
    "DeviceInfo",
    "EpisodeInfo",
    "EpisodeStatus",
    "RunInfo",
    "RunStatus",
    "StepInfo",
    "StepRecord",
    "StepTimings",
]
