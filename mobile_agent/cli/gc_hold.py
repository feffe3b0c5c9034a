"""The cyclic garbage collector held off while `run` starts, until its first step is recorded.

Start-up builds some 170,000 objects that live as long as the process (modules, classes, pydantic validators,
SQLAlchemy tables and mappers, the app registry, the OpenAI SDK) and next to no cyclic garbage, yet the collector
walked them all two or three times before the first step: 0.05-0.1 s of CPU in a 0.6 s start (gc.callbacks, see
bench/step_overhead.py). On release the survivors are frozen out of the collector's view (``gc.freeze``: later full
collections skip them instead of walking them every few steps) and collection resumes; on exit they are unfrozen
again unless something else had frozen objects first, so a caller running the command in-process (tests) keeps a
collector that can reach everything.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from types import TracebackType
from typing import TypeVar

Event = TypeVar("Event")


class CollectorHold:
    """``with CollectorHold() as hold:`` collector off; ``hold.release()`` freezes what lives and turns it back on.
    A collector that was already off is left alone."""

    def __init__(self) -> None:
        self._held = False
        self._froze = False

    def __enter__(self) -> CollectorHold:
        self._held = gc.isenabled()
        gc.disable()
        return self

    def release(self) -> None:
        if not self._held:
            return
        self._held = False
        self._froze = gc.get_freeze_count() == 0
        gc.freeze()
        gc.enable()

    def released_by(self, callback: Callable[[Event], None] | None) -> Callable[[Event], None]:
        """``callback`` (None: nothing) releasing the hold first: as a run's step callback, the hold ends with the
        first recorded step."""

        def call(event: Event) -> None:
            self.release()
            if callback is not None:
                callback(event)

        return call

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.release()
        if self._froze:
            gc.unfreeze()


__all__ = ["CollectorHold"]
