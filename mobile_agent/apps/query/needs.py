"""What a screen must contain for a selector to match it: a cheap test run before the full match.

Every step tries the app's popup rules and the shared ones, and most of them name a text or an id the screen
does not contain at all. :func:`selector_needs` reads from a parsed selector the substrings any match must
contain; :class:`ScreenWords` joins one screen's texts, descriptions, ids and classes, so testing a rule costs a
few substring or regular-expression searches instead of a walk over the tree. A need only ever rules out a
selector that cannot match: whatever it cannot reason about (negations, numbers, look-arounds) adds none.

The fields are joined with newlines and patterns searched in MULTILINE mode, so ``^`` / ``$`` still match at each
element's start and end and a match in one element is a match in the joined text (the converse need not hold,
which only lets a rule through to the full test). Look-arounds, string anchors and atomic or possessive
repeats see across the joins, so patterns using them add no need.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from mobile_agent.apps.query.javaregex import JavaRegexError, java_regex
from mobile_agent.apps.query.syntax import AllOf, AllQuery, AnyOf, AnyQuery, Compare, Expr, NotQuery, Query
from mobile_agent.screen.viewtree import ViewTree

Field = Literal["text", "desc", "id", "class"]
Kind = Literal[
    "in", "re", "java"
]  # the value occurs in the field / a pattern (Python's re, Java's) is found in it
# At least one of these holds for some element of the screen.
Need = frozenset[tuple[Field, Kind, str]]

_FIELD_OF: dict[str, Field] = {"text": "text", "desc": "desc", "id": "id", "vid": "id", "name": "class"}
_CONTAINING_OPS = frozenset({"=", "^=", "*=", "$="})  # each holds only when the value occurs in the attribute
_SEPARATOR = "\n"
_CONTEXT_SENSITIVE = ("(?=", "(?!", "(?<", "(?(", "(?-", "(?>", "*+", "++", "?+", "}+", "\\A", "\\Z", "\\z")


def selector_needs(sel: Query) -> tuple[Need, ...]:
    """Needs that all hold on any screen where ``sel`` matches (every segment matches some node)."""
    if isinstance(sel, NotQuery):
        return ()  # holds on screens without what the inner selector names
    if isinstance(sel, AnyQuery):
        return one_of(selector_needs(part) for part in sel.parts)
    if isinstance(sel, AllQuery):
        return tuple(dict.fromkeys(need for part in sel.parts for need in selector_needs(part)))
    needs: list[Need] = []
    for seg in sel.segments:
        if seg.class_name is not None:
            needs.append(frozenset({("class", "in", seg.class_name)}))
        if seg.expr is not None:
            needs.extend(_expr_needs(seg.expr))
    return tuple(dict.fromkeys(needs))


def one_of(alternatives: Iterable[tuple[Need, ...]]) -> tuple[Need, ...]:
    """The need of "at least one of these holds": nothing when any alternative needs nothing."""
    merged: set[tuple[Field, Kind, str]] = set()
    for needs in alternatives:
        if not needs:
            return ()
        merged |= needs[0]
    return (frozenset(merged),) if merged else ()


def pattern_need(field: Field, pattern: str, kind: Kind = "re") -> tuple[Need, ...]:
    """``pattern`` (Python's ``re``, or ``java`` for a selector's ``~=``) is searched in (or fully matches) the
    field of some element."""
    if any(mark in pattern for mark in _CONTEXT_SENSITIVE) or _compiled(pattern, kind) is None:
        return ()
    return (frozenset({(field, kind, pattern)}),)


def _expr_needs(expr: Expr) -> list[Need]:
    if isinstance(expr, Compare):
        field = _FIELD_OF.get(expr.attr)
        if field is None or not isinstance(expr.value, str) or not expr.value:
            return []
        if expr.op == "~=":
            return list(pattern_need(field, expr.value, "java"))
        return [frozenset({(field, "in", expr.value)})] if expr.op in _CONTAINING_OPS else []
    if isinstance(expr, AllOf):
        return [need for part in expr.parts for need in _expr_needs(part)]
    if isinstance(expr, AnyOf):
        return list(one_of(tuple(_expr_needs(part)) for part in expr.parts))
    return []  # Not: holds on screens without the value too


@dataclass(frozen=True)
class ScreenWords:
    """One screen's attribute values, each field joined into one string."""

    fields: dict[str, str]

    @classmethod
    def of(cls, tree: ViewTree) -> ScreenWords:
        elements = tree.elements
        return cls(
            {
                "text": _SEPARATOR.join(e.text for e in elements),
                "desc": _SEPARATOR.join(e.content_desc for e in elements),
                "id": _SEPARATOR.join(e.resource_id for e in elements),
                "class": _SEPARATOR.join(e.class_name for e in elements),
            }
        )

    def satisfy(self, needs: tuple[Need, ...]) -> bool:
        return all(any(self._holds(*one) for one in need) for need in needs)

    def _holds(self, field: Field, kind: Kind, value: str) -> bool:
        if kind == "in":
            return value in self.fields[field]
        pattern = _compiled(value, kind)
        return pattern is None or pattern.search(self.fields[field]) is not None


@lru_cache(maxsize=4096)
def _compiled(pattern: str, kind: Kind):  # -> a compiled pattern (re or regex) or None
    if kind == "java":
        try:
            return java_regex(pattern, multiline=True)
        except JavaRegexError:
            return None
    try:
        return re.compile(pattern, re.MULTILINE)
    except re.error:
        return None
