"""Waiting for a phone that left the adb bus: a USB phone that was jostled, a Wi-Fi phone whose network blinked.

The adb server lists such a phone as ``offline`` or not at all; a USB phone comes back by itself, a network phone
(a ``host:port`` serial) is asked back with ``adb connect`` every few seconds (an ``offline`` entry is dropped
first: adb answers "already connected" to it and never tries again). The wait is bounded by the caller; each poll
gives the caller a chance to stop it (its stop flag: the phone taken over, Ctrl-C).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable

from mobile_agent.device.adb_server import AdbServerClient
from mobile_agent.errors import AdbServerUnreachable

log = logging.getLogger(__name__)

POLL_S = 0.5  # how often the adb server is asked for the phone's state
CONNECT_EVERY_S = 2.0  # how often a network phone is asked back with `adb connect`
CALL_S = 3.0  # no state query or connect waits longer than this
NETWORK_SERIAL = re.compile(r"(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.\-]+):\d{1,5}")


def is_network_serial(serial: str) -> bool:
    """``192.168.1.7:5555``, ``phone.lan:5555``, ``[fe80::1]:5555``: a phone adb reaches over the network."""
    return NETWORK_SERIAL.fullmatch(serial) is not None


def phone_state(client: AdbServerClient, serial: str) -> str | None:
    """The adb server's word for the phone (``device``, ``offline``, ``unauthorized``, ...), None when it is not
    listed or the answer was garbled; AdbServerUnreachable when nothing listens at the server's address."""
    try:
        for item in client.list(extended=False):
            if item.serial == serial:
                return item.state
    except AdbServerUnreachable:  # nothing listens at the server's address: no phone comes back through it
        raise
    except Exception as exc:  # noqa: BLE001 - a slow or confused answer: asked again at the next poll
        log.debug("adb devices failed while waiting for %s: %s", serial, exc)
    return None


def wait_for_phone(
    client: AdbServerClient,
    serial: str,
    seconds: float,
    *,
    poll: Callable[[], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> bool:
    """Whether the phone is back (``device``) within ``seconds``. ``poll`` runs before each look (it may raise to
    stop the wait). Network phones are asked back with ``adb connect`` meanwhile."""
    ends = clock() + max(0.0, seconds)
    network = is_network_serial(serial)
    next_connect = clock() + CONNECT_EVERY_S / 2  # adb's own reconnect gets the first second
    saved = client.deadline
    client.deadline = None  # the step's deadline (passed by now, maybe) is not this wait's bound
    try:
        while True:
            if poll is not None:
                poll()
            state = phone_state(client, serial)
            if state == "device":
                return True
            now = clock()
            if now >= ends:
                return False
            if network and now >= next_connect:
                _ask_back(client, serial, state)
                next_connect = clock() + CONNECT_EVERY_S
            time.sleep(max(0.0, min(POLL_S, ends - clock())))
    finally:
        client.deadline = saved


def _ask_back(client: AdbServerClient, serial: str, state: str | None) -> None:
    try:
        if state == "offline":
            client.disconnect(serial)
        answer = client.connect(serial, timeout=CALL_S)
        log.debug("adb connect %s: %s", serial, answer)
    except Exception as exc:  # noqa: BLE001 - not back yet: asked again in a moment
        log.debug("adb connect %s failed: %s", serial, exc)


__all__ = ["is_network_serial", "phone_state", "wait_for_phone"]
