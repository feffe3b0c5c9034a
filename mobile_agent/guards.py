"""Checks that stand between a parsed action and the phone.

Each guard looks at the proposed action and what the phone shows, and returns a ``Decision``: allow, ask a human,
block, or allow with a hint for the next prompt. Every decision is recorded with the step.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum
from typing import Protocol

from mobile_agent.actions import GESTURE_KINDS, POINT_KINDS, Action, Size


class Verdict(str, Enum):
    ALLOW = "allow"
    ASK = "ask"
    BLOCK = "block"
    HINT = "hint"  # allowed, but the next prompt carries a hint


@dataclass(frozen=True)
class Decision:
    guard: str
    verdict: Verdict
    reason: str = ""
    kind: str | None = None  # for safety decisions: pay, transfer, send, ...

    def to_dict(self) -> dict:
        d = asdict(self)
        d["verdict"] = self.verdict.value
        return {k: v for k, v in d.items() if v not in (None, "")}


@dataclass(frozen=True)
class GuardContext:
    """What a guard may look at. ``hierarchy`` is fetched lazily by the loop only when a guard asks for it."""

    task: str
    action: Action
    screen: Size
    package: str
    step_index: int


class Guard(Protocol):
    name: str

    def check(self, ctx: GuardContext) -> Decision: ...


class ValidityGuard:
    """Coordinates must fall on the screen; a gesture must move."""

    name = "validity"

    def check(self, ctx: GuardContext) -> Decision:
        a, size = ctx.action, ctx.screen
        points = []
        if a.kind in POINT_KINDS or a.kind in GESTURE_KINDS:
            points.append(a.point)
        if a.kind in GESTURE_KINDS:
            points.append(a.end)
        for p in points:
            if p is None or not (0 <= p.x < size.width and 0 <= p.y < size.height):
                return Decision(
                    self.name, Verdict.BLOCK, f"point {p} is off the {size.width}x{size.height} screen"
                )
        if a.kind in GESTURE_KINDS and a.point == a.end:
            return Decision(
                self.name, Verdict.BLOCK, "a swipe whose start and end are the same point does nothing"
            )
        return Decision(self.name, Verdict.ALLOW)


def run_guards(guards: list[Guard], ctx: GuardContext) -> list[Decision]:
    """All decisions, in order; a BLOCK stops the chain (later guards would judge an action that never happens)."""
    decisions = []
    for guard in guards:
        decision = guard.check(ctx)
        decisions.append(decision)
        if decision.verdict is Verdict.BLOCK:
            break
    return decisions
