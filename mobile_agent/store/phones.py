"""The farm's phones in the shared database: who drives each one now (a worker's lease), whether it is
quarantined after infrastructure failures, and which phones are held for a person (an episode paused on it).

Every function here is one short transaction, so workers on several hosts never drive the same phone.

    if lease_device(store, phone.key, phone.serial, phone.adb, worker="host:42:ab12", lease_s=60):
        ...
    record_device_result(store, phone.key, phone.serial, phone.adb, ok=False, reason="u2 crashed")
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Integer, String, Text, select, update
from sqlalchemy.orm import Mapped, Session, mapped_column

from mobile_agent.store.convert import now_utc
from mobile_agent.store.outages import retried
from mobile_agent.store.pauses import RESUMED, PauseRow, reserved_devices
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.schema import Base, EpisodeRow, UTCDateTime
from mobile_agent.store.store import TrajectoryStore


class FarmDeviceRow(Base):
    """A phone as the farm sees it: who drives it now (lease) and whether it is quarantined."""

    __tablename__ = "farm_devices"

    key: Mapped[str] = mapped_column(String(512), primary_key=True)  # "<adb host:port>/<serial>"
    serial: Mapped[str] = mapped_column(String(256))
    adb_server: Mapped[str] = mapped_column(String(256))
    worker: Mapped[str | None] = mapped_column(String(256))
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0)
    quarantined_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    quarantine_reason: Mapped[str | None] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


# ------------------------------------------------------------------------------------------------------ records
@dataclass(frozen=True)
class FarmDeviceInfo:
    key: str
    serial: str
    adb_server: str
    worker: str | None
    lease_until: datetime | None
    consecutive_failures: int
    quarantined_until: datetime | None
    quarantine_reason: str | None

    def busy(self, now: datetime | None = None) -> bool:
        now = now or now_utc()
        return self.worker is not None and self.lease_until is not None and self.lease_until > now

    @property
    def quarantined(self) -> bool:
        """Quarantined until a probe succeeds; ``quarantined_until`` is when the next probe may happen."""
        return self.quarantine_reason is not None


# --------------------------------------------------------------------------------------- leases and quarantine
def _device_row(session: Session, key: str, serial: str, adb_server: str) -> FarmDeviceRow:
    query = select(FarmDeviceRow).where(FarmDeviceRow.key == key)
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update()
    row = session.scalar(query)
    if row is None:
        row = FarmDeviceRow(
            key=key, serial=serial, adb_server=adb_server, consecutive_failures=0, updated_at=now_utc()
        )
        session.add(row)
        session.flush()
    return row


@retried
def lease_device(
    store: TrajectoryStore,
    key: str,
    serial: str,
    adb_server: str,
    *,
    worker: str,
    lease_s: float,
    dead_workers: Iterable[str] = (),
) -> bool:
    """Take (or renew) the lease on a phone; False while another live worker holds it.

    A lease held by one of ``dead_workers`` (a crashed process on this host) is taken over at once.
    """
    from sqlalchemy.exc import IntegrityError

    dead = set(dead_workers)
    for attempt in range(2):
        try:
            with store.write_session() as session:
                row = _device_row(session, key, serial, adb_server)
                now = now_utc()
                held_by_other = (
                    row.worker not in (None, worker)
                    and row.worker not in dead
                    and row.lease_until is not None
                    and row.lease_until > now
                )
                if held_by_other:
                    return False
                row.worker = worker
                row.lease_until = now + timedelta(seconds=lease_s)
                row.updated_at = now
                return True
        except IntegrityError:
            if attempt:  # two hosts inserted the same phone at once; the second try sees the row
                raise
    return False


@retried
def lease_devices(
    store: TrajectoryStore,
    phones: Sequence[tuple[str, str, str]],
    *,
    worker: str,
    lease_s: float,
    is_dead: Callable[[str], bool] = lambda worker: False,
) -> set[str]:
    """``lease_device`` for many phones (key, serial, adb server) in one transaction: the keys now leased.

    A pool starting 32 workers takes one write lock instead of 32 (they would queue for it one by one)."""
    from sqlalchemy.exc import IntegrityError

    for attempt in range(2):
        try:
            with store.write_session() as session:
                now = now_utc()
                leased = set()
                for key, serial, adb_server in phones:
                    row = _device_row(session, key, serial, adb_server)
                    held_by_other = (
                        row.worker not in (None, worker)
                        and row.lease_until is not None
                        and row.lease_until > now
                        and not is_dead(row.worker)
                    )
                    if held_by_other:
                        continue
                    row.worker = worker
                    row.lease_until = now + timedelta(seconds=lease_s)
                    row.updated_at = now
                    leased.add(key)
                return leased
        except IntegrityError:
            if attempt:  # another host inserted one of these phones at the same moment; the retry sees it
                raise
    return set()


@retried
def release_devices(store: TrajectoryStore, keys: Sequence[str], *, worker: str) -> None:
    """Give back the leases ``worker`` holds on these phones (one transaction)."""
    if not keys:
        return
    with store.write_session() as session:
        session.execute(
            update(FarmDeviceRow)
            .where(FarmDeviceRow.key.in_(list(keys)), FarmDeviceRow.worker == worker)
            .values(worker=None, lease_until=None, updated_at=now_utc())
        )


@retried
def renew_device_leases(store: TrajectoryStore, keys: Sequence[str], *, worker: str, lease_s: float) -> int:
    """Extend the leases ``worker`` still holds on these phones; a lease released meanwhile stays released."""
    if not keys:
        return 0
    now = now_utc()
    with store.write_session() as session:
        result = session.execute(
            update(FarmDeviceRow)
            .where(FarmDeviceRow.key.in_(list(keys)), FarmDeviceRow.worker == worker)
            .values(lease_until=now + timedelta(seconds=lease_s), updated_at=now)
        )
        return result.rowcount


@retried
def release_device(store: TrajectoryStore, key: str, *, worker: str) -> None:
    with store.write_session() as session:
        session.execute(
            update(FarmDeviceRow)
            .where(FarmDeviceRow.key == key, FarmDeviceRow.worker == worker)
            .values(worker=None, lease_until=None, updated_at=now_utc())
        )


@retried
def record_device_result(
    store: TrajectoryStore,
    key: str,
    serial: str,
    adb_server: str,
    *,
    ok: bool,
    reason: str | None = None,
    quarantine_after: int = 2,
    probe_after_s: float = 60.0,
) -> FarmDeviceInfo:
    """Count consecutive infrastructure failures of a phone; quarantine it at ``quarantine_after``.

    A success (a result, or a passed probe) clears the count and lifts any quarantine.
    """
    with store.write_session() as session:
        row = _device_row(session, key, serial, adb_server)
        now = now_utc()
        if ok:
            row.consecutive_failures = 0
            row.quarantined_until = None
            row.quarantine_reason = None
        else:
            row.consecutive_failures += 1
            if row.consecutive_failures >= quarantine_after:
                row.quarantined_until = now + timedelta(seconds=probe_after_s)
                row.quarantine_reason = f"{row.consecutive_failures} infrastructure failures in a row; last: {reason or 'unknown'}"
        row.updated_at = now
        return _device_info(row)


@retried
def postpone_probe(store: TrajectoryStore, key: str, *, probe_after_s: float, reason: str) -> None:
    """A quarantined phone failed its probe: stay quarantined, try again later."""
    with store.write_session() as session:
        session.execute(
            update(FarmDeviceRow)
            .where(FarmDeviceRow.key == key)
            .values(
                quarantined_until=now_utc() + timedelta(seconds=probe_after_s),
                quarantine_reason=reason,
                updated_at=now_utc(),
            )
        )


@retried
def farm_devices(store: TrajectoryStore) -> list[FarmDeviceInfo]:
    with store.read_session() as session:
        return [
            _device_info(row) for row in session.scalars(select(FarmDeviceRow).order_by(FarmDeviceRow.key))
        ]


@retried
def farm_device(store: TrajectoryStore, key: str) -> FarmDeviceInfo | None:
    with store.read_session() as session:
        row = session.get(FarmDeviceRow, key)
        return _device_info(row) if row is not None else None


def _device_info(row: FarmDeviceRow) -> FarmDeviceInfo:
    return FarmDeviceInfo(
        key=row.key,
        serial=row.serial,
        adb_server=row.adb_server,
        worker=row.worker,
        lease_until=row.lease_until,
        consecutive_failures=row.consecutive_failures,
        quarantined_until=row.quarantined_until,
        quarantine_reason=row.quarantine_reason,
    )


# ------------------------------------------------------------------------------------------ held for a person
@dataclass(frozen=True)
class PersonHold:
    """A phone a person may be using: an episode paused on it (``paused``, until its reservation lapses), or a
    paused episode that ``mobile-agent resume`` is driving again (``resumed``, while that episode runs)."""

    serial: str
    adb_server: str | None  # as the episode recorded it; None when it ran on the default adb server
    episode_id: str
    until: datetime
    how: str  # paused | resumed


@retried
def person_holds(store: TrajectoryStore, now: datetime | None = None) -> list[PersonHold]:
    """Every phone held for a person right now. A resumed episode holds its phone at most as long again as its
    pause reserved it (so a resume process that died does not hold the phone forever)."""
    moment = now or now_utc()
    holds = [
        PersonHold(p.device, p.adb_server, p.episode_id, p.reserved_until, "paused")
        for p in reserved_devices(store, moment)
    ]
    query = (
        select(PauseRow)
        .join(EpisodeRow, EpisodeRow.id == PauseRow.episode_id)
        .where(
            PauseRow.status == RESUMED,
            PauseRow.resumed_at.is_not(None),
            EpisodeRow.status == EpisodeStatus.RUNNING.value,
        )
    )
    with store.read_session() as session:
        for row in session.scalars(query):
            until = row.resumed_at + (row.reserved_until - row.created_at)
            if until > moment:
                holds.append(PersonHold(row.device, row.adb_server, row.episode_id, until, "resumed"))
    return holds


__all__ = [
    "FarmDeviceInfo",
    "FarmDeviceRow",
    "PersonHold",
    "farm_device",
    "farm_devices",
    "lease_device",
    "lease_devices",
    "person_holds",
    "postpone_probe",
    "record_device_result",
    "release_device",
    "release_devices",
    "renew_device_leases",
]
