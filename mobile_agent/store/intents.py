"""Steps written before they act: a step whose action touches the phone is recorded as ``intent`` (with its
screenshot) by ``TrajectoryStore.record_step``, then completed here with what acting did (``done`` or ``failed``).

A crash between the two leaves the ``intent`` row: the store says the action may have happened.

    store.record_step(ep.id, replace(record, status=INTENT), screenshot=jpeg)
    result = device.perform(action)
    complete_step(store, ep.id, record.index, DONE, act_ms=result.act_ms, settle_ms=result.settle_ms)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mobile_agent.errors import StoreError
from mobile_agent.store.convert import now_utc
from mobile_agent.store.owners import DONE, FAILED, INTENT
from mobile_agent.store.step_writes import complete_step_row

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
    with store.write_connection() as conn:
        if complete_step_row(conn, episode_id, index, INTENT, values) != 1:
            raise StoreError(f"episode {episode_id} has no step {index} waiting to be completed")


__all__ = ["complete_step"]
