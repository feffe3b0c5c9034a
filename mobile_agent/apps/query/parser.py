"""Text -> :class:`Selector`. Every failure is a SelectorError naming the column and what is wrong.

Valid GKD syntax that this runtime does not run (``<<``, ``->``, selector-level logic,
methods, polynomial offsets, regex flags) raises SelectorError with ``unsupported=True``, so an importer can
say why a rule was skipped instead of guessing what it meant.
"""

from __future__ import annotations

import re
from functools import lru_cache

from mobile_agent.apps.query.syntax import (
    ATTRS,
    BOOL_ATTRS,
    INT_ATTRS,
    INT_OPS,
    OPS,
    STRING_ATTRS,
    STRING_OPS,
    AllOf,
    AnyOf,
    Compare,
    Expr,
    Not,
    Relation,
    Segment,
    Selector,
    SelectorError,
    Value,
)

MAX_LENGTH = 4000
_NAME_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$.]*|\*")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INT_RE = re.compile(r"-?\d+")
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "`": "`", "n": "\n", "r": "\r", "t": "\t", "b": "\b"}
_ALIASES = {"class": "name", "resource-id": "id", "content-desc": "desc"}


@lru_cache(maxsize=4096)
def parse_selector(text: str) -> Selector:
    """Parse one selector. Raises SelectorError."""
    if not isinstance(text, str):
        raise SelectorError("a selector must be a string", 0)
    if len(text) > MAX_LENGTH:
        raise SelectorError(f"longer than {MAX_LENGTH} characters", MAX_LENGTH)
    return _Parser(text).selector()


class _Parser:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    # -- helpers ---------------------------------------------------------------------------------------------
    def fail(self, message: str, *, unsupported: bool = False, at: int | None = None) -> SelectorError:
        return SelectorError(message, self.i if at is None else at, unsupported=unsupported)

    def peek(self, n: int = 1) -> str:
        return self.s[self.i : self.i + n]

    def skip_ws(self) -> bool:
        start = self.i
        while self.i < len(self.s) and self.s[self.i] in " \t\r\n":
            self.i += 1
        return self.i > start

    def done(self) -> bool:
        return self.i >= len(self.s)

    # -- selector --------------------------------------------------------------------------------------------
    def selector(self) -> Selector:
        self.skip_ws()
        if self.done():
            raise self.fail("the selector is empty")
        if self.peek() == "(" or self.peek(2) == "!(":
            raise self.fail("selector-level logic: (S1) || (S2), (S1) && (S2), !(S)", unsupported=True)
        segments = [self.segment()]
        relations: list[Relation] = []
        while True:
            had_space = self.skip_ws()
            if self.done():
                break
            if not had_space:
                raise self.fail(
                    f"unexpected {self.peek()!r} (segments and relations are separated by spaces)"
                )
            if self.peek() in "+-><":
                relations.append(self.relation())
                if not self.skip_ws():
                    if self.done():
                        raise self.fail("a relation needs a segment after it")
                    raise self.fail("a relation operator needs a space after it")
                if self.done():
                    raise self.fail("a relation needs a segment after it")
                segments.append(self.segment())
            else:  # two segments with only a space between them: A is any ancestor of B
                relations.append(Relation(">", None))
                segments.append(self.segment())
        return Selector(self.s, tuple(segments), tuple(relations))

    def relation(self) -> Relation:
        start = self.i
        if self.peek(2) == "<<":
            raise self.fail("the descendant operator <<", unsupported=True)
        if self.peek(2) == "->":
            raise self.fail("the -> operator (a node matched earlier)", unsupported=True)
        op = self.s[self.i]
        self.i += 1
        offsets: frozenset[int] | None = frozenset({1})
        if self.peek() == "n":
            self.i += 1
            offsets = None
        elif self.peek().isdigit():
            m = re.compile(r"\d+").match(self.s, self.i)
            assert m is not None
            offsets = frozenset({int(m.group())})
            self.i = m.end()
        elif self.peek() == "(":
            offsets = self.offset_list(start)
        if offsets is not None and 0 in offsets:
            raise self.fail("relation offsets start at 1", at=start)
        return Relation(op, offsets)  # type: ignore[arg-type]

    def offset_list(self, start: int) -> frozenset[int] | None:
        close = self.s.find(")", self.i)
        if close < 0:
            raise self.fail("unclosed ( in a relation offset")
        body = self.s[self.i + 1 : close].replace(" ", "")
        self.i = close + 1
        if body == "n":
            return None
        if re.fullmatch(r"\d+(,\d+)*", body):
            return frozenset(int(v) for v in body.split(","))
        if "n" in body:
            raise self.fail(f"polynomial offset ({body})", unsupported=True, at=start)
        raise self.fail(f"bad relation offset ({body}); use k, n or (a,b,c)", at=start)

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
        if self.peek() == ":":
            raise self.fail("pseudo-classes such as :is(...) are not selector syntax", unsupported=True)
        if self.peek() == "(":
            raise self.fail("a method call or parenthesis where a segment should be", unsupported=True)
        parts: list[Expr] = []
        while self.peek() == "[":
            self.i += 1
            self.skip_ws()
            parts.append(self.or_expr())
            self.skip_ws()
            if self.peek() != "]":
                raise self.fail("expected ] (or && / ||)" if not self.done() else "unclosed [")
            self.i += 1
        if self.i == start:
            raise self.fail(f"expected a segment (class name, * or [...]), found {self.peek()!r}")
        if not self.done() and self.peek() not in " \t\r\n":
            raise self.fail(f"unexpected {self.peek()!r} after a segment")
        expr = parts[0] if len(parts) == 1 else AllOf(tuple(parts)) if parts else None
        return Segment(target, class_name, expr)

    # -- bracket expressions -----------------------------------------------------------------------------------
    def or_expr(self) -> Expr:
        parts = [self.and_expr()]
        while True:
            self.skip_ws()
            if self.peek(2) != "||":
                break
            self.i += 2
            self.skip_ws()
            parts.append(self.and_expr())
        return parts[0] if len(parts) == 1 else AnyOf(tuple(parts))

    def and_expr(self) -> Expr:
        parts = [self.unary()]
        while True:
            self.skip_ws()
            if self.peek(2) != "&&":
                break
            self.i += 2
            self.skip_ws()
            parts.append(self.unary())
        return parts[0] if len(parts) == 1 else AllOf(tuple(parts))

    def unary(self) -> Expr:
        if self.peek(2) == "!(":
            self.i += 1
            return Not(self.group())
        if self.peek() == "(":
            return self.group()
        return self.compare()

    def group(self) -> Expr:
        self.i += 1  # (
        self.skip_ws()
        inner = self.or_expr()
        self.skip_ws()
        if self.peek() != ")":
            raise self.fail("expected )")
        self.i += 1
        return inner

    def compare(self) -> Compare:
        start = self.i
        m = _IDENT_RE.match(self.s, self.i)
        if not m:
            raise self.fail(
                f"expected an attribute name, found {self.peek()!r}" if self.peek() else "unclosed ["
            )
        self.i = m.end()
        attr = m.group()
        while self.peek() == "." and _IDENT_RE.match(self.s, self.i + 1):
            nxt = _IDENT_RE.match(self.s, self.i + 1)
            assert nxt is not None
            attr += "." + nxt.group()
            self.i = nxt.end()
        if self.peek() == "-" and attr in ("resource", "content"):  # uiautomator spellings
            nxt = _IDENT_RE.match(self.s, self.i + 1)
            if nxt:
                attr += "-" + nxt.group()
                self.i = nxt.end()
        if self.peek() == "(":
            raise self.fail(f"method call {attr}(...)", unsupported=True, at=start)
        attr = _ALIASES.get(attr, attr)
        if attr not in ATTRS:
            head, _, tail = attr.partition(".")
            if tail == "length" and head in STRING_ATTRS:
                raise self.fail(f"{attr}: only text.length and desc.length", unsupported=True, at=start)
            if tail:
                raise self.fail(f"{attr}: a property of another node or value", unsupported=True, at=start)
            raise self.fail(f"unknown attribute {attr!r}", at=start)
        self.skip_ws()
        op = next((o for o in OPS if self.s.startswith(o, self.i)), None)
        if op is None:
            raise self.fail(f"expected a comparison operator after {attr}, found {self.peek()!r}")
        op_at = self.i
        self.i += len(op)
        self.skip_ws()
        value = self.value(op)
        self.check_types(attr, op, value, op_at)
        if op in ("~=", "!~="):
            value = self.check_regex(value, op_at)  # type: ignore[arg-type]
        return Compare(attr, op, value)

    def value(self, op: str) -> Value:
        ch = self.peek()
        if ch in ("'", '"', "`"):
            return self.string(ch)
        for word, val in (("null", None), ("true", True), ("false", False)):
            if self.s.startswith(word, self.i) and not _IDENT_RE.match(self.s, self.i + len(word)):
                self.i += len(word)
                return val
        m = _INT_RE.match(self.s, self.i)
        if m and not _IDENT_RE.match(self.s, m.end()):
            self.i = m.end()
            return int(m.group())
        if _IDENT_RE.match(self.s, self.i):
            raise self.fail(f"the right side of {op} is an expression, not a literal", unsupported=True)
        raise self.fail(
            f"expected a value (string, number, true, false or null), found {ch!r}" if ch else "unclosed ["
        )

    def string(self, quote: str) -> str:
        start = self.i
        self.i += 1
        out: list[str] = []
        while True:
            if self.done():
                raise self.fail("unclosed string", at=start)
            ch = self.s[self.i]
            if ch == quote:
                self.i += 1
                return "".join(out)
            if ch in "\r\n":
                raise self.fail("a string cannot span lines", at=start)
            if ch == "\\":
                esc = self.s[self.i + 1 : self.i + 2]
                if esc in _ESCAPES:
                    out.append(_ESCAPES[esc])
                    self.i += 2
                    continue
                width = {"x": 2, "u": 4}.get(esc)
                digits = self.s[self.i + 2 : self.i + 2 + width] if width else ""
                if width and re.fullmatch(r"[0-9A-Fa-f]+", digits) and len(digits) == width:
                    out.append(chr(int(digits, 16)))
                    self.i += 2 + width
                    continue
                raise self.fail(f"bad escape \\{esc} in a string")
            out.append(ch)
            self.i += 1

    def check_types(self, attr: str, op: str, value: Value, at: int) -> None:
        if value is None:
            if op not in ("=", "!="):
                raise self.fail(f"{op} null: only = and != compare with null", at=at)
            return
        kind = "string" if attr in STRING_ATTRS else "integer" if attr in INT_ATTRS else "boolean"
        actual = "boolean" if isinstance(value, bool) else "integer" if isinstance(value, int) else "string"
        if op in STRING_OPS and kind != "string":
            raise self.fail(f"{op} needs a string attribute; {attr} is {kind}", at=at)
        if op in INT_OPS and kind != "integer":
            raise self.fail(f"{op} needs an integer attribute; {attr} is {kind}", at=at)
        if actual != kind:
            raise self.fail(f"{attr} is {kind}, compared with a {actual}", at=at)
        assert attr in ATTRS and (attr not in BOOL_ATTRS or isinstance(value, bool))

    def check_regex(self, pattern: str, at: int) -> str:
        if "(?" in pattern and re.search(r"\(\?[a-zA-Z]", pattern):
            raise self.fail("regex with an inline flag such as (?i)", unsupported=True, at=at)
        try:
            re.compile(pattern)
        except re.error as exc:
            raise self.fail(f"bad regular expression {pattern!r}: {exc}", at=at) from None
        return pattern
