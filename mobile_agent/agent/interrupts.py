"""Stopping a command cleanly: SIGINT, SIGTERM and SIGHUP all act like Ctrl-C, the second one exits at once.

``stop_signals()`` (the CLI wraps every command in it) turns the first signal into a KeyboardInterrupt in the main
thread, so the episode in flight ends as ``interrupted``, is recorded and its phone released. Inside
``uninterrupted()`` (the agent loop wraps "act, then record what it did" in it) the KeyboardInterrupt waits until
the block ends, so a performed action is never left unrecorded by a signal. A second signal exits at once.

``crash_point(name)`` is a test hook: with ``MOBILE_AGENT_TEST_CRASH_AT=<name>[:<step>]`` in the environment the
process kills itself (SIGKILL) there, so tests can stop it between two precise writes.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CRASH_ENV = "MOBILE_AGENT_TEST_CRASH_AT"
STOP_SIGNALS = tuple(
    s for s in (signal.SIGINT, getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s
)

_received: list[int] = []
_deferred: list[int] = []
_shield_depth = [0]


def _handler(signum: int, _frame: Any) -> None:
    _received.append(signum)
    if len(_received) > 1:
        sys.stderr.write(f"\n{signal.Signals(signum).name} again: exiting now\n")
        sys.stderr.flush()
        os._exit(128 + signum)
    if _shield_depth[0] > 0:
        _deferred.append(signum)  # raised when the protected block ends
        return
    raise KeyboardInterrupt(signal.Signals(signum).name)


@contextmanager
def stop_signals() -> Iterator[None]:
    """Handle SIGINT/SIGTERM/SIGHUP like Ctrl-C while the block runs (main thread only; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, _handler) for s in STOP_SIGNALS}
    _received.clear()
    _deferred.clear()
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextmanager
def uninterrupted() -> Iterator[None]:
    """A stop signal that arrives inside the block is raised as KeyboardInterrupt when the block ends."""
    main = threading.current_thread() is threading.main_thread()
    if main:
        _shield_depth[0] += 1
    try:
        yield
    finally:
        if main:
            _shield_depth[0] -= 1
            if _shield_depth[0] == 0 and _deferred:
                name = signal.Signals(_deferred.pop()).name
                _deferred.clear()
                raise KeyboardInterrupt(name)


def crash_point(name: str, step: int | None = None) -> None:
    """Die here by SIGKILL when MOBILE_AGENT_TEST_CRASH_AT names this point (and step, when given)."""
    wanted = os.environ.get(CRASH_ENV)
    if not wanted:
        return
    point, _, at_step = wanted.partition(":")
    if point != name or (at_step and at_step != str(step)):
        return
    os.kill(os.getpid(), signal.SIGKILL)


__all__ = ["CRASH_ENV", "STOP_SIGNALS", "crash_point", "stop_signals", "uninterrupted"]
