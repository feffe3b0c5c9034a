"""Pending tasks that no phone of a pool can take: their ``requires:`` is not a subset of any phone's tags. The pool
says so once per requirement set when it first sees it (a progress event) and the run's summary lists them, so a
batch that waits on such tasks says why instead of only running out its --stall time."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mobile_agent.farm.scheduler.jobs import ProgressEvent
from mobile_agent.store.queue import parse_requires_key
from mobile_agent.store.queue_status import PendingSnapshot

if TYPE_CHECKING:
    from mobile_agent.farm.scheduler.pool import WorkerPool


@dataclass(frozen=True)
class Unmet:
    """``tasks`` pending tasks require ``requires``; no phone in ``phones`` (serial -> its tags) has them all."""

    requires: tuple[str, ...]
    tasks: int
    phones: Mapping[str, tuple[str, ...]]

    def missing(self) -> tuple[str, ...]:
        """The required tags that no phone has at all (empty when each exists somewhere, only not together)."""
        have = {tag for tags in self.phones.values() for tag in tags}
        return tuple(tag for tag in self.requires if tag not in have)

    def line(self) -> str:
        missing = self.missing()
        lacking = f"no phone has {', '.join(missing)}" if missing else "no phone has them all"
        phones = "; ".join(f"{serial}: {', '.join(tags) or '-'}" for serial, tags in self.phones.items())
        return (
            f"{self.tasks} task(s) require {', '.join(self.requires)}: {lacking} "
            f"(phones' tags: {phones or 'no phone'})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "requires": list(self.requires),
            "tasks": self.tasks,
            "missing": list(self.missing()),
            "phones": {serial: list(tags) for serial, tags in self.phones.items()},
        }


def _shown_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """A phone's tags as shown: sorted, without ``serial:`` (the phone is named by its serial already)."""
    return tuple(sorted(t for t in tags if not t.startswith("serial:")))


def unmet_requirements(snapshot: PendingSnapshot, phones: Mapping[str, frozenset[str]]) -> list[Unmet]:
    """The pending requirement sets that no phone (serial -> tags) satisfies, with how many tasks wait on each."""
    shown = {serial: _shown_tags(tags) for serial, tags in sorted(phones.items())}
    out = []
    for key, (_, count) in sorted(snapshot.by_requirements.items()):
        required = parse_requires_key(key)
        if count and not any(required <= tags for tags in phones.values()):
            out.append(Unmet(tuple(sorted(required)), int(count), shown))
    return out


def watch(pool: WorkerPool) -> None:
    """Keep ``pool.unmet`` to the requirement sets no phone of the pool meets now; emit an ``unmet`` event for each
    one when it is first seen (again if it went away and came back)."""
    found = unmet_requirements(pool.pending(), {w.entry.serial: w.tags for w in pool.workers})
    now = {u.requires: u for u in found}
    for requires, unmet in now.items():
        if requires not in pool.unmet:
            pool.emit(ProgressEvent("unmet", "-", detail=unmet.line()))
    pool.unmet = now


__all__ = ["Unmet", "unmet_requirements", "watch"]
