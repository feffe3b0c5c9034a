"""Checks that stand between a parsed action and the phone.

Each guard looks at the proposed action and what the phone shows, and returns a ``Decision``: allow, ask a human,
block, or allow with a hint for the next prompt. Every decision is recorded with the step.

The guards themselves live next to what they know: ``ValidityGuard`` here, the safety gate in
:mod:`mobile_agent.gate.gate`, the loop detector in :mod:`mobile_agent.agent.loops`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any, Protocol

from mobile_agent.actions import GESTURE_KINDS, POINT_KINDS, Action, Size


class Verdict(str, Enum):
    ALLOW = "allow"
    ASK = "ask"
    BLOCK = "block"
    HINT = "hint"  # allowed, but the next prompt carries a hint


@dataclass(frozen=True)
class Decision:
    """One guard's word on one action. ``kind`` (pay, send, loop, ...), ``source`` (how it was found: manifest,
    label, model, screen, fail_closed, policy...) and ``element`` (what sits under the tap point) are optional."""

    guard: str
    verdict: Verdict
    reason: str = ""
    kind: str | None = None
    source: str | None = None
    element: str | None = None
    app: str | None = None
    signals: tuple[str, ...] = ()  # every reading behind it: which rule, which text, which OCR words
    # The action could matter on this screen (a finding, or a screen with potential): read the screen again right
    # before acting, and act only if it is still the one judged (mobile_agent.gate.freshness).
    recheck: bool = False

    def to_dict(self) -> dict:
        d = asdict(self)
        d["verdict"] = self.verdict.value
        d["signals"] = list(self.signals)
        return {k: v for k, v in d.items() if v not in (None, "", [], False)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Decision:
        return cls(
            guard=str(data.get("guard", "")),
            verdict=Verdict(data.get("verdict", "allow")),
            reason=str(data.get("reason", "")),
            kind=data.get("kind"),
            source=data.get("source"),
            element=data.get("element"),
            app=data.get("app"),
            signals=tuple(str(s) for s in data.get("signals") or ()),
            recheck=bool(data.get("recheck", False)),
        )


@dataclass
class GuardContext:
    """What a guard may look at.

    ``hierarchy()`` fetches the view tree lazily, at most once per step, through ``hierarchy_source`` (the loop
    hands in the XML the popup rules already dumped, when they did). It returns None when the tree is unavailable.
    """

    task: str
    action: Action
    screen: Size
    package: str
    step_index: int
    thought: str = ""
    screen_hash: int | None = None
    hierarchy_source: Callable[[], str | None] | None = None
    screenshot_source: Callable[[], Any] | None = None  # the step's frame (a PIL image) for reading pixels
    _hierarchy: str | None = field(default=None, repr=False)
    _fetched: bool = field(default=False, repr=False)

    def hierarchy(self) -> str | None:
        if not self._fetched:
            self._fetched = True
            self._hierarchy = self.hierarchy_source() if self.hierarchy_source is not None else None
        return self._hierarchy

    @property
    def hierarchy_fetched(self) -> bool:
        return self._fetched


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
