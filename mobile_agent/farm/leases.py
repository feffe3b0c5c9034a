"""Who holds a phone: a worker (its lease in the shared database, so no other worker on any host drives it),
a person (an episode paused on it), or nobody because it is quarantined; and the status ``mobile-agent devices``
shows, which merges these with what the phone tells about itself.

    with DeviceLease(store, phone.entry, worker="host:42:ab12"):
        ...
    statuses = describe_phones(phones, store)    # model, Android, battery, screen, u2, busy, quarantined
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

from mobile_agent.errors import DeviceError
from mobile_agent.farm.health import PhoneFacts, probe_u2, read_facts
from mobile_agent.farm.inventory import FarmPhone, PhoneEntry, PhoneState, normalize_adb
from mobile_agent.store.phones import (
    FarmDeviceInfo,
    PersonHold,
    farm_devices,
    lease_device,
    person_holds,
    release_device,
)
from mobile_agent.store.store import TrajectoryStore


# ---------------------------------------------------------------------------------------------------- status
def hold_on(entry: PhoneEntry, holds: Sequence[PersonHold]) -> PersonHold | None:
    """The first of ``holds`` on this phone, or None. A hold recorded without an adb
    server (an episode run on the default server) matches the serial on any server."""
    for hold in holds:
        if hold.serial != entry.serial:
            continue
        if hold.adb_server is None:
            return hold
        try:
            if normalize_adb(hold.adb_server) == entry.adb:
                return hold
        except ValueError:
            continue
    return None


@dataclass(frozen=True)
class PhoneStatus:
    phone: FarmPhone
    state: PhoneState
    facts: PhoneFacts = field(default_factory=PhoneFacts)
    u2_error: str | None = None
    u2_checked: bool = False
    worker: str | None = None
    quarantine_reason: str | None = None
    reserved_by: str | None = None  # the episode a person holds the phone for
    reserved_until: datetime | None = None

    @property
    def u2(self) -> str:
        if not self.u2_checked:
            return "-"
        return "ok" if self.u2_error is None else f"fails: {self.u2_error}"


def describe_phones(
    phones: Sequence[FarmPhone], store: TrajectoryStore | None = None, *, probe: bool = True, threads: int = 8
) -> list[PhoneStatus]:
    """What ``mobile-agent devices`` shows. Busy and reserved phones are not probed (a worker or a person is
    using them)."""
    leases: dict[str, FarmDeviceInfo] = {}
    holds: list[PersonHold] = []
    if store is not None:
        leases = {info.key: info for info in farm_devices(store)}
        holds = person_holds(store)

    def one(phone: FarmPhone) -> PhoneStatus:
        info = leases.get(phone.key)
        state = phone.state
        worker = info.worker if info is not None and info.busy() else None
        reason = info.quarantine_reason if info is not None else None
        hold = hold_on(phone.entry, holds)
        held = {"reserved_by": hold.episode_id, "reserved_until": hold.until} if hold is not None else {}
        common = dict(worker=worker, quarantine_reason=reason, **held)
        if state is PhoneState.ONLINE and hold is not None:
            state = PhoneState.RESERVED
        elif state is PhoneState.ONLINE and reason:
            state = PhoneState.QUARANTINED
        elif state is PhoneState.ONLINE and worker:
            state = PhoneState.BUSY
        if phone.state is not PhoneState.ONLINE:
            return PhoneStatus(phone, state, **common)
        facts = read_facts(phone.entry)
        if not probe or worker or hold is not None:
            return PhoneStatus(phone, state, facts, **common)
        return PhoneStatus(phone, state, facts, probe_u2(phone.entry), True, **common)

    if not phones:
        return []
    with ThreadPoolExecutor(max_workers=max(1, min(threads, len(phones)))) as pool:
        return list(pool.map(one, phones))


# ---------------------------------------------------------------------------------------------------- leases
class DeviceLease:
    """A worker's hold on one phone, kept in the shared database so no other worker (on any host) drives it."""

    def __init__(
        self, store: TrajectoryStore, entry: PhoneEntry, worker: str, *, lease_s: float = 60.0
    ) -> None:
        self.store = store
        self.entry = entry
        self.worker = worker
        self.lease_s = lease_s
        self.held = False

    def acquire(self) -> bool:
        self.held = lease_device(
            self.store,
            self.entry.key,
            self.entry.serial,
            self.entry.adb,
            worker=self.worker,
            lease_s=self.lease_s,
        )
        return self.held

    renew = acquire

    def release(self) -> None:
        if self.held:
            release_device(self.store, self.entry.key, worker=self.worker)
            self.held = False

    def __enter__(self) -> DeviceLease:
        if not self.acquire():
            raise DeviceError(
                f"phone {self.entry.serial} is in use by another worker", "wait for it, or use another phone"
            )
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


__all__ = [
    "DeviceLease",
    "PhoneStatus",
    "describe_phones",
    "hold_on",
]
