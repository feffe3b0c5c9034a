"""Mapping between ORM rows and the typed records callers see."""

from __future__ import annotations

import json
import logging
from datetime import datetime, timezone
from typing import Any

from mobile_agent.actions import Action, Outcome, Size
from mobile_agent.privacy.redact import scrub_secrets
from mobile_agent.store.records import (
    ActionSource,
    DeviceInfo,
    EpisodeInfo,
    EpisodeStatus,
    RunInfo,
    RunStatus,
    StepInfo,
    StepRecord,
    StepTimings,
)
from mobile_agent.store.schema import DeviceRow, EpisodeRow, RunRow, StepRow

log = logging.getLogger(__name__)

# A reply, thought or error longer than this is cut in the store (a 5 MB reply would bloat every report and
# export); the note says how long it was. Characters, not bytes: the column is text.
MAX_STORED_TEXT = 256 * 1024
# Integer columns are 32-bit on PostgreSQL; a token count outside that range is an endpoint's nonsense.
MAX_STORED_COUNT = 2**31 - 1


def now_utc() -> datetime:
    return datetime.now(timezone.utc)


def as_utc(value: datetime | float | None) -> datetime | None:
    """A datetime, or seconds since the epoch (time.time()), as an aware UTC datetime."""
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, tz=timezone.utc)
    return value.astimezone(timezone.utc)


def json_safe(value: Any) -> Any:
    """Secret-free and JSON-serialisable (paths, datetimes and the like become strings)."""
    return json.loads(json.dumps(scrub_secrets(value), default=str))


def clip_text(text: str | None, limit: int = MAX_STORED_TEXT) -> str | None:
    """``text``, or its first ``limit`` characters and a note saying how long it was."""
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"\n[truncated by mobile-agent: {len(text)} characters, the first {limit} kept]"


def stored_count(value: object) -> int | None:
    """A token count as the store keeps it: an int clamped to 0..MAX_STORED_COUNT; None when it is not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:  # NaN
        return None
    if value in (float("inf"), float("-inf")):
        return MAX_STORED_COUNT if value > 0 else 0
    return max(0, min(int(value), MAX_STORED_COUNT))


def step_row(
    episode_id: str,
    step: StepRecord,
    shot_rel: str | None,
    shot_sha: str | None,
    shot_size: int | None,
    hierarchy_rel: str | None,
) -> StepRow:
    timings = step.timings
    return StepRow(
        episode_id=episode_id,
        index=step.index,
        attempt=step.attempt,
        started_at=as_utc(step.started_at) or now_utc(),
        ended_at=as_utc(step.ended_at),
        screenshot_path=shot_rel,
        screenshot_sha256=shot_sha,
        screenshot_bytes=shot_size,
        screen_width=step.screen.width if step.screen else None,
        screen_height=step.screen.height if step.screen else None,
        foreground_app=step.foreground_app,
        foreground_activity=step.foreground_activity,
        hierarchy_path=hierarchy_rel,
        raw_reply=clip_text(step.raw_reply),
        reasoning=clip_text(step.reasoning),
        thought=clip_text(step.thought),
        action=step.action.to_dict() if step.action is not None else None,
        action_source=ActionSource(step.action_source).value,
        guard_decisions=json_safe(list(step.guard_decisions)),
        screenshot_ms=timings.screenshot_ms,
        model_ms=timings.model_ms,
        act_ms=timings.act_ms,
        settle_ms=timings.settle_ms,
        total_ms=timings.total_ms,
        prompt_tokens=stored_count(step.prompt_tokens),
        completion_tokens=stored_count(step.completion_tokens),
        model_latency_ms=step.model_latency_ms,
        error_kind=step.error_kind,
        error_text=clip_text(step.error_text),
        status=step.status,
    )


def step_info(row: StepRow) -> StepInfo:
    action = None
    if row.action is not None:
        try:
            action = Action.from_dict(row.action)
        except ValueError:
            log.warning(
                "step %d of episode %s has an unreadable action: %r", row.index, row.episode_id, row.action
            )
    screen = Size(row.screen_width, row.screen_height) if row.screen_width and row.screen_height else None
    return StepInfo(
        episode_id=row.episode_id,
        index=row.index,
        action=action,
        action_source=ActionSource(row.action_source),
        started_at=row.started_at,
        ended_at=row.ended_at,
        screen=screen,
        foreground_app=row.foreground_app,
        foreground_activity=row.foreground_activity,
        raw_reply=row.raw_reply,
        reasoning=row.reasoning,
        thought=row.thought,
        guard_decisions=list(row.guard_decisions or []),
        timings=StepTimings(
            screenshot_ms=row.screenshot_ms,
            model_ms=row.model_ms,
            act_ms=row.act_ms,
            settle_ms=row.settle_ms,
            total_ms=row.total_ms,
        ),
        prompt_tokens=row.prompt_tokens,
        completion_tokens=row.completion_tokens,
        model_latency_ms=row.model_latency_ms,
        error_kind=row.error_kind,
        error_text=row.error_text,
        attempt=row.attempt,
        status=row.status,
        screenshot_path=row.screenshot_path,
        screenshot_sha256=row.screenshot_sha256,
        lease_epoch=row.lease_epoch,
        screenshot_bytes=row.screenshot_bytes,
        hierarchy_path=row.hierarchy_path,
    )


def _stored_outcome(row: EpisodeRow) -> Outcome | None:
    if row.outcome is None:
        return None
    try:
        return Outcome(row.outcome)
    except ValueError:
        log.warning("episode %s has an unknown outcome %r", row.id, row.outcome)
        return None


def episode_info(row: EpisodeRow) -> EpisodeInfo:
    return EpisodeInfo(
        id=row.id,
        task=row.task,
        device=row.device,
        family=row.family,
        model=row.model,
        status=EpisodeStatus(row.status),
        started_at=row.started_at,
        step_count=row.step_count,
        run_id=row.run_id,
        app=row.app,
        base_url=row.base_url,
        outcome=_stored_outcome(row),
        outcome_detail=row.outcome_detail,
        answer=row.answer,
        ended_at=row.ended_at,
        source_episode_id=row.source_episode_id,
        meta=dict(row.meta or {}),
        lease_epoch=row.lease_epoch or 1,
    )


def run_info(row: RunRow) -> RunInfo:
    return RunInfo(
        id=row.id,
        name=row.name,
        status=RunStatus(row.status),
        created_at=row.created_at,
        config=dict(row.config or {}),
        ended_at=row.ended_at,
    )


def device_info(row: DeviceRow) -> DeviceInfo:
    return DeviceInfo(
        serial=row.serial,
        adb_server=row.adb_server,
        first_seen=row.first_seen,
        last_seen=row.last_seen,
        model=row.model,
        android_version=row.android_version,
        notes=row.notes,
    )


__all__ = [
    "MAX_STORED_COUNT",
    "MAX_STORED_TEXT",
    "as_utc",
    "clip_text",
    "device_info",
    "episode_info",
    "json_safe",
    "now_utc",
    "run_info",
    "step_info",
    "step_row",
    "stored_count",
]
