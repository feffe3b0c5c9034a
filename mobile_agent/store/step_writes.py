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
# The same, fenced: only while the episode is still held under the writer's lease epoch (NULL: epoch 1, as
# written before schema version 3). A worker whose episode was taken over writes nothing.
_EPOCH = func.coalesce(_episodes.c.lease_epoch, 1)
_COUNT_FENCED_STEP = _COUNT_STEP.where(_EPOCH == bindparam("b_epoch"))
_HELD = (
    select(_episodes.c.id)
    .where(_episodes.c.id == bindparam("b_episode"), _EPOCH == bindparam("b_epoch"))
    .exists()
)
_RUNNING = select(_episodes.c.id).where(
    _episodes.c.id == bindparam("b_episode"), _episodes.c.status == EpisodeStatus.RUNNING.value
)
_LANDED = select(_steps.c.started_at, _steps.c.lease_epoch).where(
    _steps.c.episode_id == bindparam("b_episode"), _steps.c.index == bindparam("b_index")
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
_COMPLETE_FENCED_STEP = _COMPLETE_STEP.where(_HELD)


class FencedOut(StoreError):
    """A write from a worker that no longer holds the episode (its lease epoch is stale, or the episode was ended
    by whoever took it over): refused, so no step is ever recorded by a worker that lost its lease."""


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


def add_step(conn: Connection, episode_id: str, row: StepRow, epoch: int | None = None) -> None:
    """Count the step in its (running) episode and insert its row, in the caller's transaction. With ``epoch``
    (the writer's lease epoch), FencedOut unless the episode is still held under it."""
    if epoch is None:
        counted = conn.execute(_COUNT_STEP, {"b_episode": episode_id})
    else:
        counted = conn.execute(_COUNT_FENCED_STEP, {"b_episode": episode_id, "b_epoch": epoch})
    if counted.rowcount != 1:
        if epoch is not None and conn.execute(_RUNNING, {"b_episode": episode_id}).first() is not None:
            raise FencedOut(
                f"episode {episode_id} is no longer held under lease epoch {epoch} (ended or taken over): "
                f"step {row.index} not recorded",
                hint="another worker runs this task now; this one stops before touching the phone again",
            )
        raise StoreError(f"episode {episode_id} ended while step {row.index} was being recorded")
    conn.execute(_INSERT_STEP, step_values(row))


def step_landed(conn: Connection, episode_id: str, row: StepRow) -> bool:
    """True when this very step row is already stored (a commit an outage hid from its writer)."""
    found = conn.execute(_LANDED, {"b_episode": episode_id, "b_index": row.index}).first()
    if found is None:
        return False
    started, epoch = found
    same_start = (
        started is not None
        and row.started_at is not None
        and abs((started.replace(tzinfo=None) - row.started_at.replace(tzinfo=None)).total_seconds()) < 0.001
    )
    return same_start and epoch == row.lease_epoch


def complete_step_row(
    conn: Connection,
    episode_id: str,
    index: int,
    from_status: str,
    values: dict[str, Any],
    epoch: int | None = None,
) -> int:
    """Set the completion columns of step ``index`` while it has ``from_status`` (and, with ``epoch``, while the
    episode is still held under it); how many rows changed."""
    params: dict[str, Any] = {
        "b_episode": episode_id,
        "b_index": index,
        "b_from": from_status,
        "v_status": values["status"],
        "v_ended_at": values["ended_at"],
    }
    params.update({f"v_{name}": values.get(name) for name in COMPLETABLE})
    if epoch is None:
        return conn.execute(_COMPLETE_STEP, params).rowcount
    return conn.execute(_COMPLETE_FENCED_STEP, {**params, "b_epoch": epoch}).rowcount


__all__ = [
    "COMPLETABLE",
    "FencedOut",
    "add_step",
    "complete_step_row",
    "require_new_step",
    "step_landed",
    "step_values",
]
