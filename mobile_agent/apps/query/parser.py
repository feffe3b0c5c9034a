"""Text -> :data:`Query`. Every failure is a SelectorError naming the column and what is wrong.

The whole language gkd-kit/docs documents is read (docs/popup-rules.md). What no phone can run is refused with
``unsupported=True``, so an importer can say why a rule was skipped: the web inspector's ``_id``/``_pid`` and
Java regular expressions the `regex` module cannot express.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import TypeVar

from mobile_agent.apps.query.javaregex import JavaRegexError, java_regex
from mobile_agent.apps.query.syntax import (
    ANY,
    ONE,
    OPS,
    AllOf,
    AllQuery,
    AnyOf,
    AnyQuery,
    Compare,
    Expr,
    Not,
    NotQuery,
    Offsets,
    Query,
    Relation,
    Segment,
    Selector,
    SelectorError,
)
from mobile_agent.apps.query.values import ValueParser, check_compare

MAX_LENGTH = 4000
_NAME_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$.]*|\*")
_TERM_RE = re.compile(r"([+-]?)(\d*)(n?)")
_RELATION_OPS = ("<<", "->", "+", "-", ">", "<")
T = TypeVar("T")


@lru_cache(maxsize=8192)
def parse_selector(text: str) -> Query:
    """Parse one selector. Raises SelectorError."""
    if not isinstance(text, str):
        raise SelectorError("a selector must be a string", 0)
    if len(text) > MAX_LENGTH:
        raise SelectorError(f"longer than {MAX_LENGTH} characters", MAX_LENGTH)
    return _Parser(text).query()


class _Parser(ValueParser):
    # -- logic over whole selectors: (S1) || (S2), (S1) && (S2), !(S) -------------------------------------------
    def query(self) -> Query:
        self.skip_ws()
        if self.done():
            raise self.fail("the selector is empty")
        if self.peek() == "(" or self.peek(2) == "!(":
            result = self.any_query()
        else:
            result = self.unit(in_group=False)
        self.skip_ws()
        if not self.done():
            if self.peek(2) in ("||", "&&"):
                raise self.fail(f"selector-level {self.peek(2)} joins selectors written in ( ): (S1) || (S2)")
            raise self.fail(f"unexpected {self.peek()!r}")
        return result

    def any_query(self) -> Query:
        parts = self.joined("||", self.all_query)
        return parts[0] if len(parts) == 1 else AnyQuery(tuple(parts))

    def all_query(self) -> Query:
        parts = self.joined("&&", self.not_query)
        return parts[0] if len(parts) == 1 else AllQuery(tuple(parts))

    def joined(self, op: str, item: Callable[[], T]) -> list[T]:
        """``item (op item)*``, with any whitespace around the operators."""
        parts = [item()]
        while True:
            self.skip_ws()
            if self.peek(2) != op:
                return parts
            self.i += 2
            self.skip_ws()
            parts.append(item())

    def not_query(self) -> Query:
        negate = self.peek(2) == "!("
        if negate:
            self.i += 1
        if self.peek() != "(":
            raise self.fail("selector-level logic needs every selector in ( ): (S1) || (S2)")
        with self.nested():
            self.i += 1
            self.skip_ws()
            if self.peek() == "(" or self.peek(2) == "!(":
                inner = self.any_query()
            else:
                inner = self.unit(in_group=True)
            self.skip_ws()
            if self.peek() != ")":
                raise self.fail("expected ) after a selector" if not self.done() else "unclosed (")
            self.i += 1
        return NotQuery(inner) if negate else inner

    # -- one selector: segments and relations ----------------------------------------------------------------
    def unit(self, *, in_group: bool) -> Selector:
        start = self.i
        segments = [self.segment()]
        relations: list[Relation] = []
        while True:
            had_space = self.skip_ws()
            if self.done() or (in_group and self.peek() == ")") or self.peek(2) in ("||", "&&"):
                break
            if not had_space:
                raise self.fail(
                    f"unexpected {self.peek()!r} (segments and relations are separated by spaces)"
                )
            op = next((o for o in _RELATION_OPS if self.s.startswith(o, self.i)), None)
            if op is not None:
                relations.append(self.relation(op))
                if not self.skip_ws():
                    if self.done():
                        raise self.fail("a relation needs a segment after it")
                    raise self.fail("a relation operator needs a space after it")
                if self.done():
                    raise self.fail("a relation needs a segment after it")
            else:  # two segments with only a space between them: A is any ancestor of B
                relations.append(Relation(">", ANY))
            segments.append(self.segment())
        return Selector(self.s[start : self.i].rstrip(), tuple(segments), tuple(relations))

    def relation(self, op: str) -> Relation:
        start = self.i
        self.i += len(op)
        offsets = ONE
        if self.peek() == "(":
            close = self.s.find(")", self.i)
            if close < 0:
                raise self.fail("unclosed ( in a relation offset")
            body = self.s[self.i + 1 : close].replace(" ", "")
            self.i = close + 1
            offsets = self.offset_body(body, start)
        else:
            m = re.compile(r"\d*n|\d+").match(self.s, self.i)
            if m:
                self.i = m.end()
                offsets = self.offset_body(m.group(), start)
        return Relation(op, offsets)  # type: ignore[arg-type]

    def offset_body(self, body: str, start: int) -> Offsets:
        if re.fullmatch(r"\d+(,\d+)*", body):
            values = frozenset(int(v) for v in body.split(","))
            if 0 in values:
                raise self.fail("relation offsets start at 1", at=start)
            return Offsets(values)
        a, b = self.polynomial(body, start)
        if a > 0:
            return ANY if (a, b) == (1, 0) else Offsets(None, a, b)
        values = frozenset(v for v in (a * n + b for n in range(1, max(b, 1) + 1)) if v >= 1)
        if not values:
            raise self.fail(f"relation offset ({body}) allows no position (offsets start at 1)", at=start)
        return Offsets(values)

    def polynomial(self, body: str, start: int) -> tuple[int, int]:
        """``an+b`` in any order of terms (``3-n``, ``-n+4``, ``2n``, ``+3``)."""
        a = b = 0
        pos, seen = 0, False
        while pos < len(body):
            m = _TERM_RE.match(body, pos)
            if not m or m.end() == pos or (seen and not m.group(1)):
                raise self.fail(f"bad relation offset ({body}); use k, n, (a,b,c) or (an+b)", at=start)
            sign, digits, n = m.groups()
            if not digits and not n:
                raise self.fail(f"bad relation offset ({body}); use k, n, (a,b,c) or (an+b)", at=start)
            value = int(digits) if digits else 1
            value = -value if sign == "-" else value
            if n:
                a += value
            else:
                b += value
            pos, seen = m.end(), True
        if not seen:
            raise self.fail("empty relation offset ()", at=start)
        return a, b

    # -- segment ---------------------------------------------------------------------------------------------
    def segment(self) -> Segment:
        start = self.i
        target = False
        if self.peek() == "@":
            target = True
            self.i += 1
        class_name: str | None = None
        m = _NAME_RE.match(self.s, self.i)
        if m:
            class_name = None if m.group() == "*" else m.group()
            self.i = m.end()
            if class_name is not None and (class_name.endswith(".") or ".." in class_name):
                raise self.fail(f"bad class name {class_name!r}", at=start)
        if self.peek() in (":", "("):
            raise self.fail(f"unexpected {self.peek()!r} in a segment (a class name, * or [...])")
        parts: list[Expr] = []
        while self.peek() == "[":
            self.i += 1
            self.skip_ws()
            parts.append(self.or_expr())
            self.skip_ws()
            if self.peek() != "]":
                raise self.fail("expected ] (or && / ||)" if not self.done() else "unclosed [")
            self.i += 1
        if self.i == start or (target and self.i == start + 1):
            raise self.fail(f"expected a segment (class name, * or [...]), found {self.peek()!r}")
        if not self.done() and self.peek() not in " \t\r\n)":
            raise self.fail(f"unexpected {self.peek()!r} after a segment")
        expr = parts[0] if len(parts) == 1 else AllOf(tuple(parts)) if parts else None
        return Segment(target, class_name, expr)

    # -- bracket expressions -----------------------------------------------------------------------------------
    def or_expr(self) -> Expr:
        parts = self.joined("||", self.and_expr)
        return parts[0] if len(parts) == 1 else AnyOf(tuple(parts))

    def and_expr(self) -> Expr:
        parts = self.joined("&&", self.unary)
        return parts[0] if len(parts) == 1 else AllOf(tuple(parts))

    def unary(self) -> Expr:
        if self.peek(2) == "!(":
            self.i += 1
            return Not(self.group())
        if self.peek() == "!":
            raise self.fail("! must be followed by ( ... )")
        if self.peek() == "(":
            return self.group()
        return self.compare()

    def group(self) -> Expr:
        with self.nested():
            self.i += 1  # (
            self.skip_ws()
            inner = self.or_expr()
            self.skip_ws()
            if self.peek() != ")":
                raise self.fail("expected )")
            self.i += 1
        return inner

    def compare(self) -> Compare:
        if self.done() or self.peek() == "]":
            raise self.fail("unclosed [" if self.done() else 'expected a test such as text="..." in [ ]')
        left_at = self.i
        left, left_type = self.value_expr()
        self.skip_ws()
        op = next((o for o in OPS if self.s.startswith(o, self.i)), None)
        if op is None:
            found = self.peek()
            raise self.fail(f"expected a comparison operator, found {found!r}" if found else "unclosed [")
        op_at = self.i
        self.i += len(op)
        self.skip_ws()
        right_at = self.i
        right, right_type = self.value_expr()
        check_compare(self, left, left_type, op, right, right_type, op_at, left_at, right_at)
        if op in ("~=", "!~="):
            self.check_regex(right.value, op_at)  # type: ignore[union-attr]
        return Compare(left, op, right)

    def check_regex(self, pattern: str, at: int) -> None:
        try:
            java_regex(pattern)
        except JavaRegexError as exc:
            raise self.fail(str(exc), unsupported=exc.unsupported, at=at) from None
