"""The world state a task's ``state:`` check reads, from a phone in another process (a `sim up` phone).

A simulated phone in the test's own process hands its state over directly (``mobile_agent.sim.scenario.
phone_state``); one started by `mobile-agent sim up` lives in another process, so it answers the shell command
``sim-state`` over the adb channel it already serves with the same snapshot as one JSON object. A real phone has no
such command: it has no state to read, and a ``state:`` check on it stays unevaluated ("no phone state").

    state = read_phone_state(serial, "127.0.0.1:15037")   # a dict, or None for a phone without one
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from mobile_agent.device.adb_server import adb_client

log = logging.getLogger(__name__)

STATE_COMMAND = "sim-state"
TIMEOUT_S = 10.0


def read_phone_state(
    serial: str, adb: str | None = None, *, timeout: float = TIMEOUT_S
) -> Mapping[str, Any] | None:
    """The phone's world state, or None when it has none (a real phone) or cannot be asked (it left the bus)."""
    try:
        out = adb_client(adb).device(serial).shell([STATE_COMMAND], timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - no state is what a check reports; the reason goes to the log
        log.info("no world state from %s: %s", serial, exc)
        return None
    try:
        state = json.loads(out)
    except ValueError:
        return None  # `sim-state: not found`: not a simulated phone
    return state if isinstance(state, dict) else None


__all__ = ["STATE_COMMAND", "read_phone_state"]
