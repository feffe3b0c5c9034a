"""The parsed form of a popup selector (the GKD selector language, the subset documented in docs/popup-rules.md).

A selector is segments joined by relations: ``A op B`` says where node A sits relative to node B. Matching runs
right to left; the target is the last segment marked ``@``, else the rightmost one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Value = str | int | bool | None

STRING_ATTRS = frozenset({"text", "desc", "id", "vid", "name"})
INT_ATTRS = frozenset(
    {"left", "top", "right", "bottom", "width", "height", "index", "childCount", "depth"}
    | {"text.length", "desc.length"}
)
BOOL_ATTRS = frozenset(
    {"clickable", "focusable", "checkable", "checked", "longClickable", "enabled", "selected", "scrollable"}
    | {"visibleToUser", "focused", "password"}
)
ATTRS = STRING_ATTRS | INT_ATTRS | BOOL_ATTRS

STRING_OPS = frozenset({"^=", "*=", "$=", "!^=", "!*=", "!$=", "~=", "!~="})
INT_OPS = frozenset({">", ">=", "<", "<="})
OPS = ("!^=", "!*=", "!$=", "!~=", "!=", "^=", "*=", "$=", "~=", ">=", "<=", "=", ">", "<")


class SelectorError(ValueError):
    """A selector that cannot be used. ``unsupported`` is True for valid GKD syntax this runtime does not run."""

    def __init__(self, message: str, column: int, *, unsupported: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.column = column  # 0-based offset into the selector text
        self.unsupported = unsupported

    def __str__(self) -> str:
        kind = "unsupported" if self.unsupported else "invalid selector"
        return f"{kind}: {self.message} (at column {self.column + 1})"


@dataclass(frozen=True)
class Compare:
    attr: str
    op: str
    value: Value


@dataclass(frozen=True)
class Not:
    expr: Expr


@dataclass(frozen=True)
class AllOf:
    parts: tuple[Expr, ...]


@dataclass(frozen=True)
class AnyOf:
    parts: tuple[Expr, ...]


Expr = Compare | Not | AllOf | AnyOf


@dataclass(frozen=True)
class Segment:
    target: bool  # marked with @
    class_name: str | None  # None or "*": any class
    expr: Expr | None  # None: no bracket test


RelOp = Literal["+", "-", ">", "<"]


@dataclass(frozen=True)
class Relation:
    """``op`` with the offsets it allows; ``offsets`` None means any (the ``n`` form)."""

    op: RelOp
    offsets: frozenset[int] | None


@dataclass(frozen=True)
class Selector:
    text: str
    segments: tuple[Segment, ...]
    relations: tuple[Relation, ...]  # relations[i] joins segments[i] and segments[i + 1]

    @property
    def target_index(self) -> int:
        marked = [i for i, s in enumerate(self.segments) if s.target]
        return marked[-1] if marked else len(self.segments) - 1
