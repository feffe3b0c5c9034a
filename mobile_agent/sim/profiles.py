"""Latency profiles and injectable faults of a simulated phone.

Both the wire side (adbd, shell, sync) and the world side (phone, u2 server, rendering) read these; tests and the
``sim up`` CLI set them. All delays are in seconds.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field


@dataclass(frozen=True)
class LatencyProfile:
    name: str
    screencap_png: float = 0.0  # `screencap -p`
    u2_screenshot: float = 0.0  # jsonrpc takeScreenshot (JPEG)
    tap: float = 0.0
    swipe_extra: float = 0.0  # added to the gesture's own duration
    key: float = 0.0
    text: float = 0.0
    hierarchy: float = 0.0
    transition: float = (
        0.0  # how long a screen change animates; screenshots mid-way show an intermediate frame
    )
    cold_start: float = 0.0  # launching an app that is not running
    shell: float = 0.0  # any shell command


PROFILES: dict[str, LatencyProfile] = {
    "instant": LatencyProfile("instant"),
    "phone": LatencyProfile(
        "phone",
        screencap_png=0.5,
        u2_screenshot=0.15,
        tap=0.05,
        swipe_extra=0.05,
        key=0.05,
        text=0.15,
        hierarchy=0.3,
        transition=0.35,
        cold_start=1.5,
        shell=0.02,
    ),
}


def profile(name: str) -> LatencyProfile:
    try:
        return PROFILES[name]
    except KeyError:
        from mobile_agent.errors import UserError

        raise UserError(
            f"unknown latency profile {name!r}", f"choose one of: {', '.join(PROFILES)}"
        ) from None


@dataclass
class Faults:
    """Switches a test flips at run time. Thread-safe enough: each field is read atomically."""

    offline_until: float = (
        0.0  # monotonic time; while in the future the phone is off the bus and refuses connects
    )
    screenshot_delay: float = 0.0  # extra seconds per screenshot
    screenshot_fail: bool = False  # takeScreenshot returns an error, screencap exits 1
    u2_crash_next: bool = (
        False  # the next jsonrpc call answers "UiAutomation not connected" and the server dies
    )
    u2_already_registered: bool = False  # launching the u2 server prints "already registered" and exits
    push_fail: bool = False  # sync SEND answers FAIL
    input_security_exception: bool = False  # injected input raises the Xiaomi-style SecurityException
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def go_offline(self, seconds: float) -> None:
        self.offline_until = time.monotonic() + seconds

    @property
    def offline(self) -> bool:
        return time.monotonic() < self.offline_until
