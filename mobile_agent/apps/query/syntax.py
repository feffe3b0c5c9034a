"""The parsed form of a popup selector: the GKD selector language as gkd-kit/docs documents it (docs/popup-rules.md).

A unit selector is segments joined by relations: ``A op B`` says where node A sits relative to node B. Matching
runs right to left; the target is the last segment marked ``@``, else the rightmost one. Unit selectors combine
as ``(S1) || (S2)``, ``(S1) && (S2)`` and ``!(S)`` (:class:`AnyQuery`, :class:`AllQuery`, :class:`NotQuery`).

Inside ``[...]`` a test compares two value expressions: literals, names (``text``, ``parent``, ``prev``), members
(``parent.childCount``, ``text.length``) and calls (``getChild(0)``, ``width.div(2)``). Every value expression has
a static type (:data:`ValueType`), checked when the selector is parsed, as GKD checks it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal as TypingLiteral

Value = str | int | bool | None
ValueType = TypingLiteral["null", "boolean", "int", "string", "node", "context"]

# Properties of a node (docs/guide/node.md) plus the uiautomator dump's own flags, for manifests written against it.
NODE_PROPS: dict[str, ValueType] = {
    **dict.fromkeys(("id", "vid", "name", "text", "desc"), "string"),
    **dict.fromkeys(("left", "top", "right", "bottom", "width", "height"), "int"),
    **dict.fromkeys(("childCount", "index", "depth"), "int"),
    **dict.fromkeys(
        ("clickable", "focusable", "checkable", "checked", "editable", "longClickable", "visibleToUser"),
        "boolean",
    ),
    **dict.fromkeys(("enabled", "selected", "scrollable", "focused", "password"), "boolean"),
    "parent": "node",
}
CONTEXT_PROPS: dict[str, ValueType] = {**NODE_PROPS, "prev": "context", "current": "node"}
INSPECTOR_ONLY = frozenset({"_id", "_pid"})  # node numbers of GKD's web inspector; no phone has them

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


# -- value expressions ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Literal:
    value: Value


@dataclass(frozen=True)
class Name:
    """An identifier, read from the node being tested (its context: node properties, ``prev``, ``current``)."""

    name: str


@dataclass(frozen=True)
class Member:
    owner: ValueExpr
    name: str


@dataclass(frozen=True)
class Call:
    """``callee(args)``: a method of the callee's owner (``width.div(2)``) or of the context (``getChild(0)``)."""

    callee: Name | Member
    args: tuple[ValueExpr, ...]


ValueExpr = Literal | Name | Member | Call


# -- tests inside brackets --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Compare:
    left: ValueExpr
    op: str
    right: ValueExpr

    @property
    def attr(self) -> str | None:
        """The node property on the left when it is one plain name (``text``), else None."""
        return self.left.name if isinstance(self.left, Name) else None

    @property
    def value(self) -> Value:
        """The literal on the right, or None when the right side is an expression."""
        return self.right.value if isinstance(self.right, Literal) else None


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


RelOp = TypingLiteral["+", "-", ">", "<", "<<", "->"]


@dataclass(frozen=True)
class Offsets:
    """The numbers a relation allows: ``{a*n + b | n >= 1} ∩ {1, 2, ...}`` (a tuple is ``values``)."""

    values: frozenset[int] | None = None  # a finite set; None: the polynomial below
    a: int = 1
    b: int = 0

    def __contains__(self, k: int) -> bool:
        if self.values is not None:
            return k in self.values
        if k < 1:
            return False
        if self.a == 0:
            return k == self.b
        n, rest = divmod(k - self.b, self.a)
        return rest == 0 and n >= 1

    @property
    def any(self) -> bool:
        return self.values is None and self.a == 1 and self.b <= 0


ANY = Offsets()
ONE = Offsets(frozenset({1}))


@dataclass(frozen=True)
class Relation:
    op: RelOp
    offsets: Offsets


@dataclass(frozen=True)
class Selector:
    """One unit selector."""

    text: str
    segments: tuple[Segment, ...]
    relations: tuple[Relation, ...]  # relations[i] joins segments[i] and segments[i + 1]

    @property
    def target_index(self) -> int:
        marked = [i for i, s in enumerate(self.segments) if s.target]
        return marked[-1] if marked else len(self.segments) - 1


@dataclass(frozen=True)
class AnyQuery:
    """``(S1) || (S2)``: the first that matches gives the target."""

    parts: tuple[Query, ...]


@dataclass(frozen=True)
class AllQuery:
    """``(S1) && (S2)``: all must match; the last gives the target."""

    parts: tuple[Query, ...]


@dataclass(frozen=True)
class NotQuery:
    """``!(S)``: the node matches when S does not; the node itself is the target."""

    inner: Query


Query = Selector | AnyQuery | AllQuery | NotQuery


def units(query: Query) -> list[Selector]:
    """Every unit selector inside a query."""
    if isinstance(query, Selector):
        return [query]
    if isinstance(query, NotQuery):
        return units(query.inner)
    return [unit for part in query.parts for unit in units(part)]
