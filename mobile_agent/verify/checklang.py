"""The check language: one line states what must hold in a phone's state, evaluated on a snapshot of that state (a
mapping), live or recorded, so a check on a simulated phone and one on a recording never drift apart.

A check line is ``<path> <op> <value>``: path is a state list or dict (messages_sent, orders, transfers,
settings_changed, typed, popups_dismissed, logged_in, calls, shares), optionally with ``.key``, or one of
foreground, screen, activity, balance, or ``len(<list>)``; op is contains, lacks, ==, !=, >=, <=, >, <; value is
YAML. In a pattern a string starting with ``~`` matches as a substring, dicts match as subsets and lists as "each
pattern item is in".

    messages_sent contains {contact: 张三, text: 晚上好}
    len(orders) == 0
    settings_changed.wifi == false
    screen == chat

A snapshot names each path as a key (``mobile_agent.sim.scenario.phone_state`` reads one off a simulated phone).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml
from pydantic import BaseModel

STATE_PATHS = (
    "messages_sent",
    "orders",
    "transfers",
    "settings_changed",
    "typed",
    "popups_dismissed",
    "logged_in",
    "calls",
    "shares",
)
PHONE_PATHS = ("foreground", "screen", "activity", "balance")
OPS = ("contains", "lacks", "==", "!=", ">=", "<=", ">", "<")
CHECK_RE = re.compile(r"^\s*(len\(\w+\)|[\w.]+)\s+(contains|lacks|==|!=|>=|<=|>|<)\s+(.+?)\s*$")


class Check(BaseModel):
    """One parsed check line."""

    text: str
    path: str
    op: str
    value: Any


def parse_check(text: str) -> Check:
    match = CHECK_RE.match(text)
    if not match:
        raise ValueError(f"check {text!r} is not '<path> <op> <value>' (ops: {', '.join(OPS)})")
    path, op, raw = match.groups()
    root = path[4:-1] if path.startswith("len(") else path.split(".", 1)[0]
    if root not in STATE_PATHS + PHONE_PATHS:
        raise ValueError(
            f"check {text!r}: unknown path {root!r}; use one of {', '.join(STATE_PATHS + PHONE_PATHS)}"
        )
    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise ValueError(f"check {text!r}: the value is not YAML ({exc.__class__.__name__})") from None
    return Check(text=text, path=path, op=op, value=value)


def resolve(path: str, state: Mapping[str, Any]) -> Any:
    """The value a check path names in a state snapshot (None where a key is missing)."""
    if path.startswith("len("):
        return len(state.get(path[4:-1]) or [])
    root, _, rest = path.partition(".")
    value: Any = state.get(root)
    for part in filter(None, rest.split(".")):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def evaluate_check(check: Check, state: Mapping[str, Any]) -> tuple[bool, Any]:
    """(holds, the value the path had) for a parsed check on a state snapshot, live or recorded."""
    actual = resolve(check.path, state)
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


def evaluate_line(check: Check | str, snapshot: Mapping[str, Any]) -> tuple[bool, Any]:
    """(holds, the value the path had), for a check line or a parsed check, on a state snapshot."""
    if isinstance(check, str):
        check = parse_check(check)
    return evaluate_check(check, snapshot)


def matches(actual: Any, pattern: Any) -> bool:
    if isinstance(pattern, dict):
        return isinstance(actual, dict) and all(
            k in actual and matches(actual[k], v) for k, v in pattern.items()
        )
    if isinstance(pattern, list):
        return isinstance(actual, list) and all(any(matches(a, p) for a in actual) for p in pattern)
    if isinstance(pattern, str) and pattern.startswith("~"):
        return pattern[1:] in str(actual)
    if isinstance(pattern, bool) or isinstance(actual, bool):
        return actual is pattern or actual == pattern
    if isinstance(pattern, (int, float)) and isinstance(actual, (int, float)):
        return abs(actual - pattern) < 1e-9
    return actual == pattern or (isinstance(actual, (int, float)) and str(pattern) == _number(actual))


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
