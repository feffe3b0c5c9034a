"""The per-step writes (a step's row, its completion, the episode's step count) as prepared Core statements.

Every step of every episode goes through these, so they skip what the ORM adds for a one-row write (a unit of work,
identity-map bookkeeping, the evaluation of an UPDATE against loaded objects) and reuse statements built once: the
same SQL, a fraction of the CPU. Each runs on a connection the store hands out (``TrajectoryStore.read_connection``
/ ``write_connection``), which maps driver errors to one-line StoreErrors like any session.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, bindparam, func, insert, select, update

from mobile_agent.errors import StoreError
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.schema import EpisodeRow, StepRow

_episodes = EpisodeRow.__table__
_steps = StepRow.__table__
_STEP_COLUMNS = tuple(c.key for c in _steps.columns if c.key != "id")

# The episode's status and outcome, and whether the step index is taken: one query before any file is written.
_EPISODE_AND_INDEX = select(
    _episodes.c.status,
    _episodes.c.outcome,
    select(_steps.c.id)
    .where(_steps.c.episode_id == bindparam("b_episode"), _steps.c.index == bindparam("b_index"))
    .limit(1)
    .scalar_subquery(),
).where(_episodes.c.id == bindparam("b_episode"))

# Counted only while the episode runs: a step never lands in an episode that ended meanwhile.
_COUNT_STEP = (
    update(_episodes)
    .where(_episodes.c.id == bindparam("b_episode"), _episodes.c.status == EpisodeStatus.RUNNING.value)
    .values(step_count=_episodes.c.step_count + 1)
)

_INSERT_STEP = insert(_steps)


def _kept_unless_given(name: str) -> Any:
    """The new value of a column, or its stored one when the caller passes None."""
    column = _steps.c[name]
    return func.coalesce(bindparam(f"v_{name}", type_=column.type), column)


_COMPLETE_STEP = (
    update(_steps)
    .where(
        _steps.c.episode_id == bindparam("b_episode"),
        _steps.c.index == bindparam("b_index"),
        _steps.c.status == bindparam("b_from"),
    )
    .values(
        status=bindparam("v_status", type_=_steps.c.status.type),
        ended_at=bindparam("v_ended_at", type_=_steps.c.ended_at.type),
        act_ms=_kept_unless_given("act_ms"),
        settle_ms=_kept_unless_given("settle_ms"),
        total_ms=_kept_unless_given("total_ms"),
        error_kind=_kept_unless_given("error_kind"),
        error_text=_kept_unless_given("error_text"),
    )
)
COMPLETABLE = ("act_ms", "settle_ms", "total_ms", "error_kind", "error_text")


def require_new_step(conn: Connection, episode_id: str, index: int) -> None:
    """StoreError unless the episode exists, is running and has no step ``index`` yet."""
    found = conn.execute(_EPISODE_AND_INDEX, {"b_episode": episode_id, "b_index": index}).first()
    if found is None:
        raise StoreError(f"no episode {episode_id!r} to record a step in")
    status, outcome, taken = found
    if status != EpisodeStatus.RUNNING.value:
        raise StoreError(f"episode {episode_id} already ended ({outcome}); step {index} not recorded")
    if taken is not None:
        raise StoreError(f"episode {episode_id} already has a step {index}")


def step_values(row: StepRow) -> dict[str, Any]:
    """The column values of a step row built by ``convert.step_row`` (not yet in any session)."""
    return {name: getattr(row, name) for name in _STEP_COLUMNS}


def add_step(conn: Connection, episode_id: str, row: StepRow) -> None:
    """Count the step in its (running) episode and insert its row, in the caller's transaction."""
    counted = conn.execute(_COUNT_STEP, {"b_episode": episode_id})
    if counted.rowcount != 1:
        raise StoreError(f"episode {episode_id} ended while step {row.index} was being recorded")
    conn.execute(_INSERT_STEP, step_values(row))


def complete_step_row(
    conn: Connection, episode_id: str, index: int, from_status: str, values: dict[str, Any]
) -> int:
    """Set the completion columns of step ``index`` while it has ``from_status``; how many rows changed."""
    params = {
        "b_episode": episode_id,
        "b_index": index,
        "b_from": from_status,
        "v_status": values["status"],
        "v_ended_at": values["ended_at"],
    }
    params.update({f"v_{name}": values.get(name) for name in COMPLETABLE})
    return conn.execute(_COMPLETE_STEP, params).rowcount


__all__ = ["COMPLETABLE", "add_step", "complete_step_row", "require_new_step", "step_values"]
