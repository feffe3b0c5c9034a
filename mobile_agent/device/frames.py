"""What frames alone tell: a black (secure) screen, and — when the phone gives no idle signal — a screen that
stopped changing."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from mobile_agent.screen.imagehash import brightest, dhash, distance


@dataclass(frozen=True)
class SettleOptions:
    timeout: float = 2.0  # never wait longer than this for the screen to stop changing
    grace: float = 0.3  # how long an unchanged screen may take to start changing after an action
    same_within: int = 2  # frames whose dHashes differ in at most this many of 256 bits are the same screen
    reuse_within: float = 1.0  # the settled frame serves as the next observation if it is younger than this


def compare_until_same(
    shoot: Callable[[], bytes], before: int | None, started: float, o: SettleOptions
) -> tuple[bytes, bool]:
    """Take frames until two in a row show the same screen and it differs from ``before`` (the dHash of the frame
    the action was chosen on) or the grace time passed; (the last frame, whether that happened in time)."""
    frame = shoot()
    previous = dhash(frame)
    while (elapsed := time.perf_counter() - started) < o.timeout:
        frame = shoot()
        current = dhash(frame)
        changed = before is None or distance(current, before) > o.same_within
        if distance(current, previous) <= o.same_within and (changed or elapsed >= o.grace):
            return frame, True
        previous = current
    return frame, False


def is_black(jpeg: bytes, threshold: int = 8) -> bool:
    """An all-black frame: what Android returns for a FLAG_SECURE window (payment, password).

    Read off the reduced-scale grey decode the frame's dHash uses (decoded once for both, then cached).
    """
    return brightest(jpeg) <= threshold
