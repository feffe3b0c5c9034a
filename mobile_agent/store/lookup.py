"""Finding runs and episodes by a unique id prefix, and the checks a record passes before it is written."""

from __future__ import annotations

import re
from typing import TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from mobile_agent.actions import Outcome
from mobile_agent.errors import StoreError, UserError
from mobile_agent.store.records import ActionSource, StepRecord
from mobile_agent.store.schema import EpisodeRow, RunRow

LIST_HINT = "list recent episodes with `mobile-agent episodes`"
_HEX = re.compile(r"[0-9a-f]+")
_AMBIGUOUS_SHOWN = 5

RowT = TypeVar("RowT", RunRow, EpisodeRow)


def resolve_id(session: Session, row_type: type[RowT], id_or_prefix: str, noun: str) -> RowT:
    """The row whose id is ``id_or_prefix`` or starts with it; UserError when none or several match."""
    key = id_or_prefix.strip().lower()
    hint = LIST_HINT if noun == "episode" else "list recent runs with `mobile-agent runs`"
    if not key or not _HEX.fullmatch(key):
        raise UserError(
            f"{id_or_prefix!r} is not {'an' if noun[:1] in 'aeiou' else 'a'} {noun} id",
            hint=f"{noun} ids are hex like 3f9a0c12b7de; {hint}",
        )
    exact = session.get(row_type, key)
    if exact is not None:
        return exact
    matches = list(
        session.scalars(
            select(row_type)
            .where(row_type.id.startswith(key))
            .order_by(row_type.id)
            .limit(_AMBIGUOUS_SHOWN + 1)
        )
    )
    if not matches:
        raise UserError(f"no {noun} with id {key!r}", hint=hint)
    if len(matches) > 1:
        shown = ", ".join(m.id for m in matches[:_AMBIGUOUS_SHOWN])
        more = ", ..." if len(matches) > _AMBIGUOUS_SHOWN else ""
        raise UserError(
            f"{noun} id {key!r} is ambiguous: {shown}{more}", hint="type more characters of the id"
        )
    return matches[0]


def as_outcome(value: Outcome | str) -> Outcome:
    try:
        return Outcome(str(value))
    except ValueError as exc:
        raise StoreError(str(exc)) from exc


def validate_step(step: StepRecord) -> None:
    if step.index < 0:
        raise StoreError(f"step index must be >= 0, got {step.index}")
    if step.attempt < 1:
        raise StoreError(f"step attempt must be >= 1, got {step.attempt}")
    try:
        ActionSource(step.action_source)
    except ValueError as exc:
        known = ", ".join(source.value for source in ActionSource)
        raise StoreError(f"unknown action source {step.action_source!r} (known: {known})") from exc


__all__ = ["LIST_HINT", "RowT", "as_outcome", "resolve_id", "validate_step"]
