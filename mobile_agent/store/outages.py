"""A store that goes away for a while: a PostgreSQL restart, a network cut, a SQLite file locked or briefly
unreachable. Such an outage is weather: every store call waits for the database to return, with backoff, for at
most a bounded time (``MOBILE_AGENT_STORE_OUTAGE_S``, 120 s), and the process says so in one line when the store
goes and one when it returns. Past the bound a call raises ``StoreUnavailable`` (one line, a hint) and the caller
stops cleanly; what it held (claims, leases, episodes) stays in the database for others to recover.

Two places wait:

- opening a transaction (``TrajectoryStore.write_session`` and the others connect and begin before the caller's
  code runs), so a call that starts while the store is down simply waits;
- a transaction the outage broke part-way raises ``StoreInterrupted``; functions decorated with ``@retried`` run
  again from the start once the store is back (every store function is one short transaction of conditional
  writes, so running it again is safe).

A thread may bound its waits further (``wait_bound``): an episode whose lease would lapse stops waiting before
another worker may take its task over (mobile_agent.store.fencing).

    @retried
    def finish_task(store, claim, ...): ...     # survives a restart in the middle of its transaction
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

from sqlalchemy.exc import DBAPIError, IntegrityError

from mobile_agent.errors import StoreError

log = logging.getLogger(__name__)

OUTAGE_ENV = "MOBILE_AGENT_STORE_OUTAGE_S"
DEFAULT_OUTAGE_S = 120.0
MAX_BACKOFF_S = 2.0
FIRST_BACKOFF_S = 0.05

# Words in a driver's message that mean "the database is not reachable right now", not "this is wrong".
_TRANSIENT_WORDS = (
    # PostgreSQL / psycopg: the server restarting, shutting down, refusing, a cut connection
    "connection refused",
    "could not connect",
    "connection failed",
    "server closed the connection",
    "terminating connection",
    "the database system is starting up",
    "the database system is shutting down",
    "the database system is in recovery mode",
    "the database system is not yet accepting connections",
    "connection is closed",
    "connection timed out",
    "timeout expired",
    "no route to host",
    "network is unreachable",
    "connection reset",
    "broken pipe",
    "ssl syscall",
    "consuming input failed",
    "server conn crashed",
    "cannot connect now",
    "connection to server",
    "the connection is lost",
    # SQLite: another process holds the write lock past the busy timeout; the file is briefly unreachable
    "database is locked",
    "database table is locked",
    "unable to open database file",
)


def outage_bound() -> float:
    """How long store calls wait for the database to come back (env MOBILE_AGENT_STORE_OUTAGE_S)."""
    try:
        value = float(os.environ.get(OUTAGE_ENV) or DEFAULT_OUTAGE_S)
    except ValueError:
        return DEFAULT_OUTAGE_S
    return value if value >= 0 else DEFAULT_OUTAGE_S


class StoreInterrupted(StoreError):
    """The store went away in the middle of a transaction (nothing of it was committed, or its commit's fate is
    unknown); ``@retried`` runs the call again once the store is back."""


class StoreUnavailable(StoreError):
    """The store stayed unreachable past the outage bound: stop cleanly."""


class LeaseLapsing(StoreUnavailable):
    """The store is unreachable and this thread's own bound (its lease) is reached: stop touching the phone."""


def is_transient(exc: BaseException) -> bool:
    """True for a driver error that means the database is unreachable for now (a restart, a cut, a lock)."""
    if isinstance(exc, IntegrityError) or not isinstance(exc, DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    text = str(exc.orig if exc.orig is not None else exc).lower()
    return any(word in text for word in _TRANSIENT_WORDS)


def _first_line(exc: BaseException) -> str:
    original = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    lines = str(original).strip().splitlines()
    return lines[0][:200] if lines else type(original).__name__


# A thread's own bound on waiting (a monotonic deadline, or None), e.g. the time its episode's lease has left.
_local = threading.local()


@contextmanager
def wait_bound(deadline: Callable[[], float | None]) -> Iterator[None]:
    """Within this block, store waits on this thread also end at ``deadline()`` (monotonic seconds)."""
    previous = getattr(_local, "deadline", None)
    _local.deadline = deadline
    try:
        yield
    finally:
        _local.deadline = previous


def _thread_deadline() -> float | None:
    source = getattr(_local, "deadline", None)
    return source() if source is not None else None


class Outage:
    """Whether one store is reachable, shared by every thread using it: the first failure says so in one line,
    the first success after it says the store is back, and waits end together at the bound."""

    def __init__(self, where: str, bound_s: float | None = None) -> None:
        self.where = where
        self._bound_s = bound_s
        self._down_since: float | None = None  # monotonic
        self._gave_up = False
        self._lock = threading.Lock()

    @property
    def bound_s(self) -> float:
        return outage_bound() if self._bound_s is None else self._bound_s

    @property
    def down(self) -> bool:
        return self._down_since is not None

    def failed(self, exc: BaseException) -> None:
        """A call found the store unreachable."""
        with self._lock:
            if self._down_since is not None:
                return
            self._down_since = time.monotonic()
            self._gave_up = False
        log.warning(
            "store unreachable (%s): waiting up to %.0f s for it; episodes pause at their next record",
            _first_line(exc),
            self.bound_s,
        )

    def back(self) -> None:
        """A call went through: the outage (if there was one) is over."""
        if self._down_since is None:
            return
        with self._lock:
            since, self._down_since = self._down_since, None
        if since is not None:
            log.warning("store back after %.1f s: continuing", time.monotonic() - since)

    def pause(self, exc: BaseException, attempt: int) -> None:
        """Wait before try ``attempt + 1``; StoreUnavailable once the outage (or this thread's bound) is over."""
        self.failed(exc)
        now = time.monotonic()
        since = self._down_since if self._down_since is not None else now
        limit = since + self.bound_s
        own = _thread_deadline()
        if now >= limit:
            with self._lock:
                first = not self._gave_up
                self._gave_up = True
            if first:
                log.warning("store still unreachable after %.0f s: giving up", self.bound_s)
            raise StoreUnavailable(
                f"the store {self.where} was unreachable for {self.bound_s:.0f} s ({_first_line(exc)})",
                hint=f"bring the database back (or raise {OUTAGE_ENV}); the tasks held are taken over by "
                "live workers, or run `mobile-agent-farm batch --resume RUN`",
            ) from None
        if own is not None and now >= own:
            raise LeaseLapsing(
                f"the store {self.where} is unreachable ({_first_line(exc)}) and this episode's lease would lapse",
                hint="the task goes back to the queue for another worker once the store is back",
            ) from None
        delay = min(MAX_BACKOFF_S, FIRST_BACKOFF_S * (2**attempt), limit - now)
        if own is not None:
            delay = min(delay, own - now)
        time.sleep(max(0.0, delay))


P = ParamSpec("P")
R = TypeVar("R")


def retried(fn: Callable[P, R]) -> Callable[P, R]:
    """Run ``fn(store, ...)`` again when the store went away in the middle of it (StoreInterrupted), after
    waiting for the store with backoff; bounded by the store's outage bound."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        attempt = 0
        while True:
            try:
                return fn(*args, **kwargs)
            except StoreInterrupted as exc:
                outage = _outage_of(args[0] if args else None)
                if outage is None:
                    raise
                outage.pause(exc.__cause__ or exc, attempt)
                attempt += 1

    return wrapper


def until_done(outage: Outage, attempt: Callable[[bool], R]) -> R:
    """``attempt(retry)`` until it goes through, waiting out an outage that broke it part-way (bounded); ``retry``
    tells a later try, which may first look whether the earlier one's commit landed after all."""
    tries = 0
    while True:
        try:
            return attempt(tries > 0)
        except StoreInterrupted as exc:
            outage.pause(exc.__cause__ or exc, tries)
            tries += 1


def _outage_of(store: Any) -> Outage | None:
    outage = getattr(store, "outage", None)
    if isinstance(outage, Outage):
        return outage
    inner = getattr(store, "store", None)  # an object holding a store (a lease, a heartbeat)
    outage = getattr(inner, "outage", None)
    return outage if isinstance(outage, Outage) else None


__all__ = [
    "DEFAULT_OUTAGE_S",
    "LeaseLapsing",
    "OUTAGE_ENV",
    "Outage",
    "StoreInterrupted",
    "StoreUnavailable",
    "is_transient",
    "outage_bound",
    "retried",
    "until_done",
    "wait_bound",
]
