"""Deadlines that bound every wait: an episode's, a step's, one call's.

A library call that blocks on a socket (the OpenAI SDK's timeouts are per read, adbutils and uiautomator2 have
none by default) cannot be interrupted from outside, so :func:`call_within` runs it on a helper thread and stops
waiting at the bound: the caller gets :class:`Abandoned` on time, and the abandoned thread ends on its own once
its socket is closed or times out (``on_abandon`` is how the caller closes it).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from mobile_agent.errors import DeadlineExceeded

T = TypeVar("T")


@dataclass(frozen=True)
class Deadline:
    """A moment on the monotonic clock, and what it is the deadline of (named in the error when it passes)."""

    at: float
    what: str = "the deadline"

    @classmethod
    def after(cls, seconds: float, what: str) -> Deadline:
        return cls(time.monotonic() + seconds, what)

    @classmethod
    def never(cls) -> Deadline:
        return cls(math.inf, "no deadline")

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())

    @property
    def expired(self) -> bool:
        return time.monotonic() >= self.at

    def bound(self, cap: float) -> float:
        """How long the next wait may last: its own cap, or less when the deadline is nearer."""
        return min(cap, self.remaining())

    def sooner(self, other: Deadline | None) -> Deadline:
        return self if other is None or self.at <= other.at else other

    def exceeded(self, doing: str) -> DeadlineExceeded:
        return DeadlineExceeded(
            f"{doing} ran past {self.what}",
            "the phone or the model endpoint stopped answering; raise --timeout / --step-timeout if it is only slow",
        )


class Abandoned(Exception):
    """A call did not return within its bound; the caller stopped waiting for it."""


def call_within(
    call: Callable[[], T],
    seconds: float,
    *,
    name: str = "bounded-call",
    on_abandon: Callable[[], None] | None = None,
) -> T:
    """``call()``'s result (or its exception) if it ends within ``seconds``; else :class:`Abandoned`.

    The call runs on a daemon thread, so an abandoned one never keeps the process alive.
    """
    done = threading.Event()
    box: list = []

    def run() -> None:
        try:
            box.append((True, call()))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread as is
            box.append((False, exc))
        finally:
            done.set()

    worker = threading.Thread(target=run, name=name, daemon=True)
    worker.start()
    if not done.wait(max(0.0, seconds)):
        if on_abandon is not None:
            on_abandon()
        raise Abandoned(f"{name} did not return within {seconds:.1f} s")
    ok, value = box[0]
    if ok:
        return value
    raise value


__all__ = ["Abandoned", "Deadline", "call_within"]
