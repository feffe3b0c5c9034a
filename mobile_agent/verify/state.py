"""State predicates, in the simulated world's own check language (``mobile_agent.sim.scenario``), evaluated on a
*snapshot* of the phone's state (a dict) instead of a live Phone, so a verifier can run them after the fact.

A line is ``<path> <op> <value>``, e.g. ``messages_sent contains {contact: 张三, text: 晚上好}``,
``len(orders) == 0``, ``settings_changed.wifi == false``, ``screen == chat``. See sim/scenario.py for the paths and
operators; the parsing and the pattern matching are the scenario module's, so the two never drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mobile_agent.sim.scenario import Check, matches, parse_check

if TYPE_CHECKING:
    from mobile_agent.sim.phone import Phone

__all__ = ["Check", "evaluate_line", "parse_check", "state_snapshot"]


def state_snapshot(phone: Phone) -> dict[str, Any]:
    """Everything a check line can name, read from a simulated phone at one moment."""
    with phone.lock:
        snapshot = phone.state.as_dict()
        snapshot["foreground"], snapshot["activity"] = phone.current()
        snapshot["screen"] = phone.screen()[1]
        snapshot["balance"] = phone.world.balance
    return snapshot


def resolve(path: str, snapshot: Mapping[str, Any]) -> Any:
    if path.startswith("len("):
        return len(snapshot.get(path[4:-1]) or [])
    root, _, rest = path.partition(".")
    value: Any = snapshot.get(root)
    for part in filter(None, rest.split(".")):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def evaluate_line(check: Check | str, snapshot: Mapping[str, Any]) -> tuple[bool, Any]:
    """(holds, the value the path had). Same semantics as ``scenario.evaluate`` on the phone it was taken from."""
    if isinstance(check, str):
        check = parse_check(check)
    actual = resolve(check.path, snapshot)
    want, op = check.value, check.op
    if op in ("contains", "lacks"):
        if isinstance(actual, dict):
            found = matches(actual, want) if isinstance(want, dict) else want in actual
        else:
            found = any(matches(item, want) for item in (actual or []))
        return (found if op == "contains" else not found), actual
    if op == "==":
        return matches(actual, want), actual
    if op == "!=":
        return not matches(actual, want), actual
    try:
        a, w = float(actual), float(want)
    except (TypeError, ValueError):
        return False, actual
    return {">=": a >= w, "<=": a <= w, ">": a > w, "<": a < w}[op], actual
