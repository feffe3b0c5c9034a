"""One episode per phone for single runs too: ``mobile-agent run`` and ``resume`` lease the phone in the store, the
same lease a farm worker takes (mobile_agent.store.phones), renewed every few seconds while the episode runs.

A phone leased by a live process is refused with who holds it; a lease whose process is gone is taken over at
once; ``force`` takes over a live one (and says so in the log).

The process whose lease was taken over learns it at its next renewal (within HEARTBEAT_S) and sets ``lost``, the
episode's stop flag: the episode does nothing more on the phone and ends as ``interrupted``, naming who has the
phone now; the lease is not released by it (it is not its lease any more).

    hold = PhoneHold(store, serial, adb, force=False)
    agent = Agent(..., stop=hold.lost)
    with hold:
        agent.run(task)
"""

from __future__ import annotations

import logging
import threading

from sqlalchemy import select

from mobile_agent.agent.config import StopFlag
from mobile_agent.device.android import parse_adb_address
from mobile_agent.errors import MobileAgentError, UserError
from mobile_agent.store import phones as phone_db
from mobile_agent.store.owners import HEARTBEAT_S, lease_s
from mobile_agent.store.process import Owner, owner_gone, this_process
from mobile_agent.store.records import EpisodeStatus
from mobile_agent.store.schema import EpisodeRow
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)


class PhoneHold:
    """This process's lease on one phone while a single episode runs on it."""

    def __init__(self, store: TrajectoryStore, serial: str, adb: str | None, *, force: bool = False) -> None:
        self.store = store
        self.serial = serial
        host, port = parse_adb_address(adb)
        self.adb = f"{host}:{port}"
        self.key = f"{self.adb}/{serial}"
        self.force = force
        self.me = this_process()
        self.lease_s = lease_s()
        self.took_over: str | None = None  # the holder whose lease was taken, when one was
        self.lost = StopFlag()  # set when another process took this lease over
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._renew, name=f"phone-lease-{serial}", daemon=True)

    def acquire(self) -> PhoneHold:
        info = phone_db.farm_device(self.store, self.key)
        holder = info.worker if info is not None and info.busy() and info.worker != self.me else None
        dead: list[str] = []
        if holder is not None:
            gone = owner_gone(holder)
            if gone is None and not self.force:
                raise UserError(
                    f"phone {self.serial} is busy: {self._describe(holder)}",
                    "wait for that episode to end, use another phone, or take the phone over with --force",
                )
            dead.append(holder)
            self.took_over = holder
            why = gone or "--force"
            log.warning("taking over phone %s from %s (%s)", self.serial, self._describe(holder), why)
        leased = phone_db.lease_device(
            self.store,
            self.key,
            self.serial,
            self.adb,
            worker=self.me,
            lease_s=self.lease_s,
            dead_workers=dead,
        )
        if not leased:  # another process took it between the look and the lease
            info = phone_db.farm_device(self.store, self.key)
            raise UserError(
                f"phone {self.serial} is busy: {self._describe(info.worker if info else '?')}",
                "wait for that episode to end, use another phone, or take the phone over with --force",
            )
        self._thread.start()
        return self

    def _describe(self, holder: str) -> str:
        owner = Owner.parse(holder)
        who = f"host {owner.host} pid {owner.pid}" if owner else holder
        episode = self._episode_of(owner)
        if episode is None:
            return f"held by {who} (no episode running yet)"
        return f"held by {who}, episode {episode.id} since {episode.started_at:%Y-%m-%d %H:%M:%S} UTC"

    def _episode_of(self, owner: Owner | None) -> EpisodeRow | None:
        if owner is None:
            return None
        prefix = f"{owner.host}:{owner.pid}:"
        query = (
            select(EpisodeRow)
            .where(
                EpisodeRow.status == EpisodeStatus.RUNNING.value,
                EpisodeRow.device == self.serial,
                EpisodeRow.owner.startswith(prefix),
            )
            .order_by(EpisodeRow.started_at.desc())
            .limit(1)
        )
        with self.store.read_session() as session:
            return session.scalar(query)

    def _renew(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            try:
                renewed = phone_db.renew_device_leases(
                    self.store, [self.key], worker=self.me, lease_s=self.lease_s
                )
            except (
                MobileAgentError
            ) as exc:  # the store away past its bound: said in one line; the next beat retries
                log.warning("could not renew the lease on phone %s: %s", self.serial, exc.one_line())
                continue
            except Exception:  # noqa: BLE001 - the next beat retries; the lease is many beats long
                log.warning("could not renew the lease on phone %s", self.serial, exc_info=True)
                continue
            if not renewed:
                reason = self._lost_to()
                log.warning("%s; this run stops before it touches the phone again", reason)
                self.lost.set(reason)
                return

    def _lost_to(self) -> str:
        """Who has the phone now, in words, once our lease was found gone."""
        try:
            info = phone_db.farm_device(self.store, self.key)
            if info is not None and info.worker:
                return f"phone {self.serial} was taken over by another process: {self._describe(info.worker)}"
        except Exception:  # noqa: BLE001 - the stop matters, not the name
            log.warning("could not read who holds phone %s now", self.serial, exc_info=True)
            return f"the lease on phone {self.serial} was taken over by another process"
        return f"the lease on phone {self.serial} was taken over by another process (released since)"

    def release(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(HEARTBEAT_S + 1)
        if self.lost.is_set():  # another process holds the phone: its lease is not ours to give back
            return
        try:
            phone_db.release_device(self.store, self.key, worker=self.me)
        except (
            MobileAgentError
        ) as exc:  # a store fault (disk full, read-only): said in one line; the lease lapses
            log.warning("could not release the lease on phone %s: %s", self.serial, exc.one_line())
        except Exception:  # noqa: BLE001 - the lease lapses by itself
            log.warning("could not release the lease on phone %s", self.serial, exc_info=True)

    def __enter__(self) -> PhoneHold:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


__all__ = ["PhoneHold"]
