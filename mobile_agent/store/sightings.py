"""When the store last heard of each farm phone, read-only: the newest of its farm row's last write (a lease, a
renewal by a worker's heartbeat, a release, a failure) and the start or end of its newest episode. ``devices``
lists the phones the store knows that adb no longer has as gone, with this time.

    for seen in sightings(store): print(seen.key, seen.last_seen)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select

from mobile_agent.store.outages import retried
from mobile_agent.store.phones import FarmDeviceRow
from mobile_agent.store.schema import EpisodeRow
from mobile_agent.store.store import TrajectoryStore


@dataclass(frozen=True)
class Sighting:
    key: str  # "<adb host:port>/<serial>"
    serial: str
    adb_server: str
    last_seen: datetime


@retried
def sightings(store: TrajectoryStore) -> list[Sighting]:
    """Every phone with a farm row, with when the store last heard of it, by key."""
    with store.read_session() as session:
        episodes = {
            device: max(t for t in (started, ended) if t is not None)
            for device, started, ended in session.execute(
                select(
                    EpisodeRow.device, func.max(EpisodeRow.started_at), func.max(EpisodeRow.ended_at)
                ).group_by(EpisodeRow.device)
            )
        }
        rows = list(
            session.execute(
                select(
                    FarmDeviceRow.key,
                    FarmDeviceRow.serial,
                    FarmDeviceRow.adb_server,
                    FarmDeviceRow.updated_at,
                ).order_by(FarmDeviceRow.key)
            )
        )
    out = []
    for key, serial, adb_server, updated_at in rows:
        heard = [t for t in (updated_at, episodes.get(serial)) if t is not None]
        out.append(Sighting(key, serial, adb_server, max(heard)))
    return out


__all__ = ["Sighting", "sightings"]
