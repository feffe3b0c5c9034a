"""Deadlines that bound every wait: an episode's, a step's, one call's.

A library call that blocks on a socket (the OpenAI SDK's timeouts are per read, adbutils and uiautomator2 have
none by default) cannot be interrupted from outside, so :func:`call_within` runs it on a helper thread and stops
waiting at the bound: the caller gets :class:`Abandoned` on time, and the abandoned thread ends on its own once
its socket is closed or times out (``on_abandon`` is how the caller closes it).

A step makes a dozen such calls, and starting a thread for each cost more CPU than some of the calls, so helper
threads are kept and reused: a thread that finished its call waits for the next one (a few are kept, each for a
while). A thread whose call was abandoned is busy until that call ends and is offered to no one meanwhile, so a
hung call never holds up a later one: that one simply gets another thread.
"""

from __future__ import annotations

import math
import os
import queue
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


MAX_IDLE_WORKERS = 32  # more than a farm host's phones make calls at once; beyond that a finished worker ends
IDLE_SECONDS = 30.0  # an idle worker ends after this long without a call
IDLE_NAME = "bounded-call-idle"


class _Job:
    __slots__ = ("call", "name", "done", "result")

    def __init__(self, call: Callable[[], object], name: str) -> None:
        self.call = call
        self.name = name
        self.done = threading.Lock()  # held until the call ends (cheaper to wait on than an Event)
        self.done.acquire()
        self.result: tuple[bool, object] = (False, None)

    def run(self) -> None:
        try:
            self.result = (True, self.call())
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread as is
            self.result = (False, exc)


class _Worker:
    """A daemon thread that runs one handed-over call at a time and then offers itself for the next."""

    def __init__(self) -> None:
        self.inbox: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._serve, name=IDLE_NAME, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                job = self.inbox.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with _IDLE_LOCK:
                    if self in _IDLE:
                        _IDLE.remove(self)
                        return
                continue  # a caller took this worker just now: its job is on the way
            self.thread.name = job.name  # what it runs, for thread dumps and leak checks
            job.run()
            self.thread.name = IDLE_NAME
            with _IDLE_LOCK:  # idle again before the caller wakes, so that its next call finds this worker
                keep = len(_IDLE) < MAX_IDLE_WORKERS
                if keep:
                    _IDLE.append(self)
            job.done.release()
            del job  # an idle worker holds no result
            if not keep:
                return


_IDLE: list[_Worker] = []  # workers waiting for a call, the most recently used last
_IDLE_LOCK = threading.Lock()


def _forget_workers() -> None:  # a forked child has none of its parent's threads
    global _IDLE_LOCK
    _IDLE.clear()
    _IDLE_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_forget_workers)


def _hand_over(job: _Job) -> None:
    with _IDLE_LOCK:
        worker = _IDLE.pop() if _IDLE else None
    (worker or _Worker()).inbox.put(job)


def call_within(
    call: Callable[[], T],
    seconds: float,
    *,
    name: str = "bounded-call",
    on_abandon: Callable[[], None] | None = None,
) -> T:
    """``call()``'s result (or its exception) if it ends within ``seconds``; else :class:`Abandoned`.

    The call runs on a daemon thread (named ``name`` while it runs), so an abandoned one never keeps the process
    alive.
    """
    job = _Job(call, name)
    _hand_over(job)
    if not job.done.acquire(timeout=max(0.0, seconds) if seconds < threading.TIMEOUT_MAX else -1):
        if on_abandon is not None:
            on_abandon()
        raise Abandoned(f"{name} did not return within {seconds:.1f} s")
    ok, value = job.result
    if ok:
        return value  # type: ignore[return-value]
    raise value  # type: ignore[misc]


__all__ = ["Abandoned", "Deadline", "call_within"]
