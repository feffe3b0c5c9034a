"""Steps written before they act: a step whose action touches the phone is recorded as ``intent`` (with its
screenshot) by ``TrajectoryStore.record_step``, then completed here with what acting did (``done`` or ``failed``).

A crash between the two leaves the ``intent`` row: the store says the action may have happened.

    store.record_step(ep.id, replace(record, status=INTENT), screenshot=jpeg)
    result = device.perform(action)
    complete_step(store, ep.id, record.index, DONE, act_ms=result.act_ms, settle_ms=result.settle_ms)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import Connection, select

from mobile_agent.errors import StoreError
from mobile_agent.store.convert import now_utc
from mobile_agent.store.outages import until_done
from mobile_agent.store.owners import DONE, FAILED, INTENT
from mobile_agent.store.schema import EpisodeRow, StepRow
from mobile_agent.store.step_writes import FencedOut, complete_step_row

if TYPE_CHECKING:
    from mobile_agent.store.store import TrajectoryStore


def complete_step(
    store: TrajectoryStore,
    episode_id: str,
    index: int,
    status: str,
    *,
    act_ms: float | None = None,
    settle_ms: float | None = None,
    total_ms: float | None = None,
    error_kind: str | None = None,
    error_text: str | None = None,
) -> None:
    """Turn the ``intent`` step ``index`` into ``done`` or ``failed``; StoreError when there is no such intent."""
    if status not in (DONE, FAILED):
        raise StoreError(f"a step completes as {DONE} or {FAILED}, not {status!r}")
    values = {
        "status": status,
        "ended_at": now_utc(),
        "act_ms": act_ms,
        "settle_ms": settle_ms,
        "total_ms": total_ms,
        "error_kind": error_kind,
        "error_text": error_text,
    }
    epoch = store.epoch_of(episode_id)

    def attempt(retry: bool) -> None:
        with store.write_connection() as conn:
            if complete_step_row(conn, episode_id, index, INTENT, values, epoch) == 1:
                return
            if retry and _completed(conn, episode_id, index, status):
                return  # the outage hid a commit that went through
            if epoch is not None and not _held(conn, episode_id, epoch):
                raise FencedOut(
                    f"episode {episode_id} is no longer held under lease epoch {epoch}: "
                    f"step {index} stays recorded as {INTENT}"
                )
            raise StoreError(f"episode {episode_id} has no step {index} waiting to be completed")

    until_done(store.outage, attempt)


def _completed(conn: Connection, episode_id: str, index: int, status: str) -> bool:
    steps = StepRow.__table__
    found = conn.execute(
        select(steps.c.status).where(steps.c.episode_id == episode_id, steps.c.index == index)
    ).scalar()
    return found == status


def _held(conn: Connection, episode_id: str, epoch: int) -> bool:
    episodes = EpisodeRow.__table__
    found = conn.execute(select(episodes.c.lease_epoch).where(episodes.c.id == episode_id)).first()
    return found is not None and (found[0] or 1) == epoch


__all__ = ["complete_step"]
