"""Who runs an episode, its heartbeat, and ending the episodes whose process is gone.

Every episode row names its owner (host:pid:start, see mobile_agent.store.process) and carries a heartbeat that the
running process renews each step and every few seconds from a timer thread. Any command that opens the store ends,
as ``interrupted``, the running episodes whose owner is gone: on this host when the pid is dead or now belongs to
another process; on another host when the heartbeat is older than the lease (``MOBILE_AGENT_LEASE_S``, 60 s).

    with Heartbeat(store, episode.id):       # started with the episode, stopped at its end
        ...
    end_gone_episodes(store)                 # what TrajectoryStore.open does
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import select, update

from mobile_agent.actions import Outcome
from mobile_agent.errors import StoreError
from mobile_agent.store.convert import now_utc
from mobile_agent.store.outages import retried
from mobile_agent.store.process import is_this_host, owner_gone, this_process
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.schema import EpisodeRow, StepRow

if TYPE_CHECKING:
    from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)

LEASE_ENV = "MOBILE_AGENT_LEASE_S"
DEFAULT_LEASE_S = 60.0
HEARTBEAT_S = 5.0

# Step statuses (steps.status): see StepRow.status.
INTENT, DONE, FAILED = "intent", "done", "failed"
UNSURE = (INTENT, FAILED)  # the effect of such a step may or may not be on the phone


def lease_s() -> float:
    """How long a heartbeat from another host stays good."""
    try:
        value = float(os.environ.get(LEASE_ENV) or DEFAULT_LEASE_S)
    except ValueError:
        return DEFAULT_LEASE_S
    return value if value > 0 else DEFAULT_LEASE_S


@dataclass(frozen=True)
class GoneEpisode:
    episode_id: str
    owner: str
    reason: str


def gone_owner_reason(owner: str | None, heartbeat_age_s: float | None, lease: float) -> str | None:
    """Why an episode's owner is gone, or None while it may be alive. An episode without an owner (written by an
    older version) is never judged here."""
    if not owner:
        return None
    if is_this_host(owner):
        return owner_gone(owner)
    if heartbeat_age_s is not None and heartbeat_age_s > lease:
        return f"no heartbeat from {owner} for {heartbeat_age_s:.0f} s (lease {lease:.0f} s)"
    return None


@retried
def end_gone_episodes(store: TrajectoryStore, *, lease: float | None = None) -> list[GoneEpisode]:
    """End as ``interrupted`` every running episode whose owner is gone, saying why and what may have happened."""
    lease = lease_s() if lease is None else lease
    now = now_utc()
    query = select(EpisodeRow.id, EpisodeRow.owner, EpisodeRow.heartbeat_at).where(
        EpisodeRow.status == EpisodeStatus.RUNNING.value, EpisodeRow.owner.is_not(None)
    )
    with store.read_session() as session:
        candidates = list(session.execute(query))
    gone: list[GoneEpisode] = []
    for episode_id, owner, beat in candidates:
        age = (now - beat).total_seconds() if beat is not None else None
        reason = gone_owner_reason(owner, age, lease)
        if reason is not None:
            gone.append(GoneEpisode(episode_id, owner, reason))
    ended: list[GoneEpisode] = []
    for item in gone:
        with store.write_session() as session:
            detail = f"interrupted: {item.reason}; {_last_step_note(session, item.episode_id)}"
            result = session.execute(
                update(EpisodeRow)
                .where(
                    EpisodeRow.id == item.episode_id,
                    EpisodeRow.status == EpisodeStatus.RUNNING.value,
                    EpisodeRow.owner == item.owner,  # not one a live process took over meanwhile
                )
                .values(
                    status=EpisodeStatus.ENDED.value,
                    outcome=str(Outcome.INTERRUPTED),
                    outcome_detail=detail,
                    ended_at=now_utc(),
                )
            )
        if result.rowcount == 1:
            ended.append(item)
            log.warning("episode %s ended as interrupted: %s", item.episode_id, item.reason)
    return ended


def _last_step_note(session: object, episode_id: str) -> str:
    row = session.scalar(  # type: ignore[attr-defined]
        select(StepRow).where(StepRow.episode_id == episode_id).order_by(StepRow.index.desc()).limit(1)
    )
    if row is None:
        return "no step was recorded"
    action = (row.action or {}).get("kind", "no action")
    if row.status == INTENT:
        return f"step {row.index} ({action}) was decided but not confirmed: it may have happened on the phone"
    if row.status == FAILED:
        return f"step {row.index} ({action}) failed while acting: it may have partly happened on the phone"
    return f"its last step, step {row.index} ({action}), is recorded as done"


@retried
def claim_episode(store: TrajectoryStore, episode_id: str) -> int:
    """This process runs the episode from now on (a resumed episode, which another process started): its lease
    epoch goes one up, so whoever held it before can no longer record a step in it. Returns the new epoch."""
    with store.write_session() as session:
        row = session.get(EpisodeRow, episode_id, with_for_update=True)
        if row is None:
            raise StoreError(f"no episode {episode_id!r} to take over")
        row.owner, row.heartbeat_at = this_process(), now_utc()
        row.lease_epoch = (row.lease_epoch or 1) + 1
        epoch = row.lease_epoch
    store.hold_epoch(episode_id, epoch)
    return epoch


@retried
def beat(store: TrajectoryStore, episode_id: str) -> bool:
    """Renew the heartbeat of an episode this process owns; False when it is no longer ours or no longer running."""
    with store.write_session() as session:
        result = session.execute(
            update(EpisodeRow)
            .where(
                EpisodeRow.id == episode_id,
                EpisodeRow.status == EpisodeStatus.RUNNING.value,
                EpisodeRow.owner == this_process(),
            )
            .values(heartbeat_at=now_utc())
        )
        return result.rowcount == 1


class Heartbeat:
    """A daemon thread that renews an episode's heartbeat every ``interval_s`` until stopped; ``beat`` renews it
    now (the loop calls it each step), unless it was renewed less than ``min_gap_s`` (by default one interval)
    ago: a lease is many beats long, and a write per step would cost more than every other store write of the
    step (measured at 64 phones: 9 % of the runtime's CPU with a 1 s gap)."""

    def __init__(
        self,
        store: TrajectoryStore,
        episode_id: str,
        *,
        interval_s: float = HEARTBEAT_S,
        min_gap_s: float | None = None,
    ) -> None:
        self.store = store
        self.episode_id = episode_id
        self.interval_s = interval_s
        self.min_gap_s = interval_s if min_gap_s is None else min_gap_s
        self._last: float | None = None  # monotonic time of the last renewal
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-{episode_id}", daemon=True)

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def beat(self, *, force: bool = False) -> None:
        last = self._last
        if not force and last is not None and time.monotonic() - last < self.min_gap_s:
            return
        try:
            beat(self.store, self.episode_id)
            self._last = time.monotonic()
        except StoreError as exc:  # said once by the store when it went; the lease is many beats long
            log.debug("heartbeat of episode %s failed: %s", self.episode_id, exc.one_line())
        except Exception:  # noqa: BLE001 - one missed beat is harmless; the lease is many beats long
            log.warning("heartbeat of episode %s failed", self.episode_id, exc_info=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.beat(force=True)

    def stop(self) -> None:
        """Stop renewing. A beat still in flight (waiting out an outage of the store) is not waited for long: it
        changes nothing once the episode has ended, and the episode's end must not wait for it."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(min(1.0, self.interval_s + 1))

    def __enter__(self) -> Heartbeat:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = [
    "DONE",
    "FAILED",
    "GoneEpisode",
    "Heartbeat",
    "INTENT",
    "LEASE_ENV",
    "UNSURE",
    "beat",
    "claim_episode",
    "end_gone_episodes",
    "gone_owner_reason",
    "lease_s",
]
