"""The single action record every part of the runtime speaks, and how episodes end.

Coordinates are always device pixels. Model families convert from their own coordinate space in ``parse`` and back
in ``format``; the device and the store never see model coordinates.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any


class ActionKind(str, Enum):
    TAP = "tap"
    DOUBLE_TAP = "double_tap"
    LONG_PRESS = "long_press"
    SWIPE = "swipe"
    DRAG = "drag"
    TYPE = "type"
    KEY = "key"
    LAUNCH = "launch"
    WAIT = "wait"
    ANSWER = "answer"
    FINISH = "finish"
    CALL_USER = "call_user"


class Key(str, Enum):
    BACK = "back"
    HOME = "home"
    ENTER = "enter"
    RECENT = "recent"


POINT_KINDS = frozenset({ActionKind.TAP, ActionKind.DOUBLE_TAP, ActionKind.LONG_PRESS})
GESTURE_KINDS = frozenset({ActionKind.SWIPE, ActionKind.DRAG})
TERMINAL_KINDS = frozenset({ActionKind.ANSWER, ActionKind.FINISH})


@dataclass(frozen=True)
class Point:
    x: int
    y: int

    def __iter__(self):
        yield self.x
        yield self.y


@dataclass(frozen=True)
class Action:
    """One thing to do on the phone (or to say to the user).

    ``text`` is the typed content for TYPE, the message for ANSWER / FINISH / CALL_USER. ``sensitive`` is the model's
    own warning that a tap is consequential (AutoGLM's ``message=`` on Tap) — the safety gate reads it.
    """

    kind: ActionKind
    point: Point | None = None
    end: Point | None = None
    text: str | None = None
    app: str | None = None
    key: Key | None = None
    duration_ms: int | None = None
    sensitive: str | None = None

    def __post_init__(self) -> None:
        kind = self.kind
        if kind in POINT_KINDS and self.point is None:
            raise ValueError(f"{kind.value} needs a point")
        if kind in GESTURE_KINDS and (self.point is None or self.end is None):
            raise ValueError(f"{kind.value} needs a start point and an end point")
        if kind is ActionKind.TYPE and self.text is None:
            raise ValueError("type needs text")
        if kind is ActionKind.KEY and self.key is None:
            raise ValueError("key needs a key")
        if kind is ActionKind.LAUNCH and not self.app:
            raise ValueError("launch needs an app")

    # Convenience constructors keep call sites short and readable.
    @classmethod
    def tap(cls, x: int, y: int, **kw: Any) -> Action:
        return cls(ActionKind.TAP, point=Point(x, y), **kw)

    @classmethod
    def double_tap(cls, x: int, y: int) -> Action:
        return cls(ActionKind.DOUBLE_TAP, point=Point(x, y))

    @classmethod
    def long_press(cls, x: int, y: int, duration_ms: int | None = None) -> Action:
        return cls(ActionKind.LONG_PRESS, point=Point(x, y), duration_ms=duration_ms)

    @classmethod
    def swipe(cls, x1: int, y1: int, x2: int, y2: int, duration_ms: int | None = None) -> Action:
        return cls(ActionKind.SWIPE, point=Point(x1, y1), end=Point(x2, y2), duration_ms=duration_ms)

    @classmethod
    def drag(cls, x1: int, y1: int, x2: int, y2: int, duration_ms: int | None = None) -> Action:
        return cls(ActionKind.DRAG, point=Point(x1, y1), end=Point(x2, y2), duration_ms=duration_ms)

    @classmethod
    def type(cls, text: str) -> Action:
        return cls(ActionKind.TYPE, text=text)

    @classmethod
    def press(cls, key: Key | str) -> Action:
        return cls(ActionKind.KEY, key=Key(key))

    @classmethod
    def launch(cls, app: str) -> Action:
        return cls(ActionKind.LAUNCH, app=app)

    @classmethod
    def wait(cls, duration_ms: int | None = None) -> Action:
        return cls(ActionKind.WAIT, duration_ms=duration_ms)

    @classmethod
    def answer(cls, text: str) -> Action:
        return cls(ActionKind.ANSWER, text=text)

    @classmethod
    def finish(cls, text: str | None = None) -> Action:
        return cls(ActionKind.FINISH, text=text)

    @classmethod
    def call_user(cls, text: str) -> Action:
        return cls(ActionKind.CALL_USER, text=text)

    @property
    def is_terminal(self) -> bool:
        return self.kind in TERMINAL_KINDS

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind.value}
        for f in fields(self):
            if f.name == "kind":
                continue
            value = getattr(self, f.name)
            if value is None:
                continue
            if isinstance(value, Point):
                value = [value.x, value.y]
            elif isinstance(value, Enum):
                value = value.value
            out[f.name] = value
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Action:
        try:
            kw: dict[str, Any] = {"kind": ActionKind(data["kind"])}
            for name in ("point", "end"):
                if data.get(name) is not None:
                    x, y = data[name]
                    kw[name] = Point(int(x), int(y))
            if data.get("key") is not None:
                kw["key"] = Key(data["key"])
            for name in ("text", "app", "sensitive"):
                if data.get(name) is not None:
                    kw[name] = str(data[name])
            if data.get("duration_ms") is not None:
                kw["duration_ms"] = int(data["duration_ms"])
            return cls(**kw)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not an action record: {data!r} ({exc})") from exc

    @classmethod
    def from_json(cls, text: str) -> Action:
        return cls.from_dict(json.loads(text))

    def describe(self) -> str:
        """A short human-readable form for logs and the live display."""
        k = self.kind
        if k in POINT_KINDS:
            return f"{k.value}({self.point.x}, {self.point.y})"  # type: ignore[union-attr]
        if k in GESTURE_KINDS:
            return f"{k.value}({self.point.x},{self.point.y} -> {self.end.x},{self.end.y})"  # type: ignore[union-attr]
        if k is ActionKind.KEY:
            return f"key({self.key.value})"  # type: ignore[union-attr]
        if k is ActionKind.LAUNCH:
            return f"launch({self.app})"
        if k is ActionKind.WAIT:
            return "wait()"
        return f"{k.value}({self.text!r})" if self.text is not None else f"{k.value}()"


class Outcome(str):
    """How an episode stopped. A plain string so it stores and compares simply.

    Fixed values are class attributes; errors are ``Outcome.error("device_lost")`` -> ``"error:device_lost"``.
    """

    FINISHED: Outcome
    ANSWERED: Outcome
    NEEDS_USER: Outcome
    BLOCKED: Outcome
    MAX_STEPS: Outcome
    LOOP: Outcome
    INTERRUPTED: Outcome
    TIMEOUT: Outcome
    NEEDS_USER_EXPIRED: Outcome  # nobody answered within the hold: a result, never a success

    FIXED = (
        "finished",
        "answered",
        "needs_user",
        "blocked",
        "max_steps",
        "loop",
        "interrupted",
        "timeout",
        "needs_user:expired",
    )

    def __new__(cls, value: str) -> Outcome:
        if value not in cls.FIXED and not (value.startswith("error:") and len(value) > 6):
            raise ValueError(f"unknown outcome {value!r}")
        return super().__new__(cls, value)

    @classmethod
    def error(cls, kind: str) -> Outcome:
        return cls(f"error:{kind}")

    @property
    def is_error(self) -> bool:
        return self.startswith("error:")

    @property
    def ended_by_agent(self) -> bool:
        """finished or answered: the agent believes it is done. Verification decides whether it really is."""
        return self in ("finished", "answered")


for _name in Outcome.FIXED:
    setattr(Outcome, _name.upper().replace(":", "_"), Outcome(_name))


@dataclass(frozen=True)
class Size:
    width: int
    height: int

    def __iter__(self):
        yield self.width
        yield self.height


__all__ = ["Action", "ActionKind", "Key", "Outcome", "Point", "Size"]
