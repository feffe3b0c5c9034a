"""State predicates, in the simulated world's own check language (``mobile_agent.sim.scenario``), evaluated on a
*snapshot* of the phone's state (a dict) instead of a live Phone, so a verifier can run them after the fact.

A line is ``<path> <op> <value>``, e.g. ``messages_sent contains {contact: 张三, text: 晚上好}``,
``len(orders) == 0``, ``settings_changed.wifi == false``, ``screen == chat``. See sim/scenario.py for the paths and
operators; the snapshot, the parsing and the evaluation are the scenario module's (``phone_state``,
``parse_check``, ``evaluate_check``), so a check on a live phone and one on a recording never drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mobile_agent.sim.scenario import Check, evaluate_check, parse_check, resolve
from mobile_agent.sim.scenario import phone_state as state_snapshot

__all__ = ["Check", "evaluate_line", "parse_check", "resolve", "state_snapshot"]


def evaluate_line(check: Check | str, snapshot: Mapping[str, Any]) -> tuple[bool, Any]:
    """(holds, the value the path had), for a check line or a parsed check, on a ``state_snapshot``."""
    if isinstance(check, str):
        check = parse_check(check)
    return evaluate_check(check, snapshot)
