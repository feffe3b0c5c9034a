"""A popup rule imported from a GKD subscription: a PopupRule plus what GKD says about when and how it acts.

The extra fields are GKD's own (api/src/index.ts of gkd-kit/docs): the action (tap, long press, back, swipe or
none), a tap point that may be relative to the screen (``x``/``y``), ``excludeAllMatches``, the timing limits
(matchDelay, matchTime, actionMaximum, resetMatch, actionCd, actionDelay, their shared keys), app-version filters,
and for a global rule the per-app scopes. apps/popups.py honours them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mobile_agent.apps.query.position import check_expression
from mobile_agent.apps.schema import PopupRule, SelectorText

Gesture = Literal[
    "click",
    "clickNode",
    "clickCenter",
    "back",
    "longClick",
    "longClickNode",
    "longClickCenter",
    "swipe",
    "none",
]
TAPS = frozenset({"click", "clickNode", "clickCenter"})
LONG_PRESSES = frozenset({"longClick", "longClickNode", "longClickCenter"})
LONG_PRESS_MS = 400  # GKD's longClickCenter
ResetMatch = Literal["activity", "match", "app"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GkdPoint(_Record):
    """A point relative to the target: one of left/right/x and one of top/bottom/y (x/y: from the screen's
    left/top). Values are numbers or arithmetic over left top right bottom width height screenWidth
    screenHeight random."""

    left: str | float | None = None
    right: str | float | None = None
    x: str | float | None = None
    top: str | float | None = None
    bottom: str | float | None = None
    y: str | float | None = None

    @model_validator(mode="after")
    def _one_per_axis(self) -> GkdPoint:
        across = [v for v in (self.left, self.right, self.x) if v is not None]
        down = [v for v in (self.top, self.bottom, self.y) if v is not None]
        if len(across) != 1 or len(down) != 1:
            raise ValueError("a position needs exactly one of left/right/x and one of top/bottom/y")
        for value in (*across, *down):
            check_expression(value)
        return self


class SwipeArg(_Record):
    start: GkdPoint
    end: GkdPoint | None = None  # GKD: the start point (a press of `duration`)
    duration_ms: int = Field(ge=0, le=60_000)


class Limits(_Record):
    """When a rule may act (times in ms). ``None``: no limit."""

    match_delay: int | None = None
    match_time: int | None = None
    action_maximum: int | None = None
    reset_match: ResetMatch = "activity"
    action_cd: int = 1000
    action_delay: int | None = None
    counter: str | None = (
        None  # rules sharing actionMaximumKey count together (their rule id, else this one's)
    )
    cooldown: str | None = None  # likewise for actionCdKey


class IntMatcher(_Record):
    include: list[int] | None = None
    exclude: list[int] = Field(default_factory=list)
    minimum: int | None = None
    maximum: int | None = None

    def holds(self, value: int) -> bool:
        if value in self.exclude:
            return False
        if self.include is not None:
            return value in self.include
        return (self.minimum is None or value >= self.minimum) and (
            self.maximum is None or value <= self.maximum
        )


class StringMatcher(_Record):
    include: list[str] | None = None
    exclude: list[str] = Field(default_factory=list)
    pattern: str | None = None

    def holds(self, value: str) -> bool:
        from mobile_agent.apps.query.javaregex import java_regex

        if value in self.exclude:
            return False
        if self.include is not None:
            return value in self.include
        return self.pattern is None or java_regex(self.pattern).fullmatch(value) is not None


class Versions(_Record):
    code: IntMatcher | None = None
    name: StringMatcher | None = None


class AppScope(_Record):
    """A global rule in one app: switched off there, or limited to some activities."""

    enable: bool = True
    activities: list[str] | None = None  # None: the rule's own
    not_activities: list[str] = Field(default_factory=list)
    versions: Versions | None = None


class GkdRule(PopupRule):
    gesture: Gesture = "click"
    point: GkdPoint | None = None
    swipe: SwipeArg | None = None
    exclude_all: list[SelectorText] = Field(default_factory=list)  # skip when all of these match
    limits: Limits = Limits()
    versions: Versions | None = None
    group: str = ""  # "gkd/<package or GLOBAL>/<group key>"
    category: str | None = None
    kind: str = "other"  # what the group dismisses (splash, update, ...) or "functional" (see gkd_intent.py)
    any_app: bool = True  # a global rule: every app, else only those in app_scopes
    system_apps: bool = False  # a global rule: also system apps and launchers
    app_scopes: dict[str, AppScope] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _gesture_needs(self) -> GkdRule:
        if self.gesture == "swipe" and self.swipe is None:
            raise ValueError("action swipe needs swipeArg")
        return self
