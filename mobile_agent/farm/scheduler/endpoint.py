"""The endpoint gate: after a model endpoint failure no worker of the pool starts an episode until a probe passes."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)


class EndpointGate:
    """Shared by the workers of a pool: after an endpoint failure nobody starts an episode until a probe passes.

    The first worker to arrive after the pause probes (``probe() -> str | None``, None = up); the others wait.
    """

    def __init__(
        self, probe: Callable[[], str | None] | None, *, backoff_s: float, max_backoff_s: float
    ) -> None:
        self._probe = probe
        self._backoff_s = backoff_s
        self._max_s = max_backoff_s
        self._cond = threading.Condition()
        self._paused_until = 0.0
        self._delay = 0.0
        self._probing = False

    @property
    def down(self) -> bool:
        return self._delay > 0

    def report_failure(self) -> float:
        """Pause everyone; returns the pause in seconds."""
        with self._cond:
            self._delay = min(self._max_s, self._delay * 2) if self._delay else self._backoff_s
            self._paused_until = max(self._paused_until, time.monotonic() + self._delay)
            return self._delay

    def report_success(self) -> None:
        with self._cond:
            self._delay = 0.0
            self._paused_until = 0.0
            self._cond.notify_all()

    def wait(self, stop: threading.Event) -> bool:
        """Block until the endpoint is believed up. False when ``stop`` was set while waiting."""
        while not stop.is_set():
            with self._cond:
                now = time.monotonic()
                if self._delay == 0:
                    return True
                if now < self._paused_until or self._probing:
                    self._cond.wait(timeout=min(0.25, max(0.01, self._paused_until - now)))
                    continue
                self._probing = True
            problem = self._probe() if self._probe is not None else None
            with self._cond:
                self._probing = False
                if problem is None:
                    self._delay = 0.0
                    self._paused_until = 0.0
                    self._cond.notify_all()
                    return True
                self._delay = min(self._max_s, self._delay * 2)
                self._paused_until = time.monotonic() + self._delay
                log.warning("model endpoint still down (%s); next probe in %.0f s", problem, self._delay)
        return False
