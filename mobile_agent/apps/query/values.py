"""Value expressions inside ``[...]``: literals, names, members and calls, each with its static type.

``[index=parent.childCount.minus(1)]``, ``[getChild(0).text="广告"]``, ``[left>prev.width.div(10).times(9)]``:
either side of a test is a value expression. Types follow docs/guide/node.md; a type mismatch is an invalid
selector, as in GKD.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from mobile_agent.apps.query.methods import ANY, method_names, method_of
from mobile_agent.apps.query.syntax import (
    CONTEXT_PROPS,
    INSPECTOR_ONLY,
    INT_OPS,
    NODE_PROPS,
    STRING_OPS,
    Call,
    Literal,
    Member,
    Name,
    SelectorError,
    Value,
    ValueExpr,
    ValueType,
)

_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INT_RE = re.compile(r"-?\d+")
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "`": "`", "n": "\n", "r": "\r", "t": "\t", "b": "\b"}
_ALIASES = {"class": "name", "resource-id": "id", "content-desc": "desc"}  # uiautomator's spellings
_WORDS: dict[str, Value] = {"null": None, "true": True, "false": False}
_SHOWN = {"int": "integer"}


def shown(kind: str) -> str:
    return _SHOWN.get(kind, kind)


class ValueParser:
    """Cursor helpers and the value-expression grammar, shared with the selector parser."""

    MAX_NESTING = 64

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.depth = 0

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

    @contextmanager
    def nested(self) -> Iterator[None]:
        self.depth += 1
        if self.depth > self.MAX_NESTING:
            raise self.fail(f"nested more than {self.MAX_NESTING} deep")
        try:
            yield
        finally:
            self.depth -= 1

    # -- value expressions -----------------------------------------------------------------------------------
    def value_expr(self) -> tuple[ValueExpr, ValueType]:
        ch = self.peek()
        if ch in ("'", '"', "`"):
            return Literal(self.string(ch)), "string"
        m = _IDENT_RE.match(self.s, self.i)
        if m and m.group() in _WORDS:
            self.i = m.end()
            value = _WORDS[m.group()]
            return Literal(value), "null" if value is None else "boolean"
        number = _INT_RE.match(self.s, self.i)
        if number:
            if _IDENT_RE.match(self.s, number.end()):
                raise self.fail(f"bad number {self.s[self.i : number.end() + 1]!r}")
            self.i = number.end()
            return Literal(int(number.group())), "int"
        if m:
            return self.variable()
        raise self.fail(
            f"expected a value (string, number, true, false, null or a property), found {ch!r}"
            if ch
            else "unclosed ["
        )

    def variable(self) -> tuple[ValueExpr, ValueType]:
        start = self.i
        name = self.identifier()
        if self.peek() == "-" and name in ("resource", "content"):  # uiautomator spellings
            nxt = _IDENT_RE.match(self.s, self.i + 1)
            if nxt:
                name += "-" + nxt.group()
                self.i = nxt.end()
        name = _ALIASES.get(name, name)
        expr: ValueExpr
        if self.peek() == "(":  # a method of the context: getChild(0), getPrev(1), equal(a, b)
            expr, kind = self.call(Name(name), "context", start)
        else:
            expr, kind = Name(name), self.property_type("context", name, start)
        while True:
            if self.peek() == "(":
                raise self.fail("a call cannot be called again: a()()")
            if self.peek() != ".":
                return expr, kind
            if not _IDENT_RE.match(self.s, self.i + 1):
                raise self.fail("a property name must follow '.'")
            self.i += 1
            at = self.i
            member = self.identifier()
            if self.peek() == "(":
                expr, kind = self.call(Member(expr, member), kind, at)
            else:
                expr, kind = Member(expr, member), self.property_type(kind, member, at)

    def identifier(self) -> str:
        m = _IDENT_RE.match(self.s, self.i)
        if not m:
            raise self.fail(f"expected a name, found {self.peek()!r}")
        if m.group() in _WORDS:
            raise self.fail(f"{m.group()} is a value, not a name")
        self.i = m.end()
        return m.group()

    def property_type(self, owner: ValueType, name: str, at: int) -> ValueType:
        if name in INSPECTOR_ONLY:
            raise self.fail(
                f"{name} exists only in GKD's web inspector (no phone has it)", unsupported=True, at=at
            )
        if owner == "string":
            if name == "length":
                return "int"
            raise self.fail(f"a string has no property {name!r} (only length)", at=at)
        props = CONTEXT_PROPS if owner == "context" else NODE_PROPS if owner == "node" else None
        if props is None:
            raise self.fail(f"{shown(owner)} has no property {name!r}", at=at)
        if name not in props:
            raise self.fail(f"unknown attribute {name!r}", at=at)
        return props[name]

    def call(self, callee: Name | Member, owner: ValueType, start: int) -> tuple[ValueExpr, ValueType]:
        self.i += 1  # (
        args: list[ValueExpr] = []
        kinds: list[ValueType] = []
        with self.nested():
            self.skip_ws()
            while self.peek() != ")":
                if args:
                    if self.peek() != ",":
                        raise self.fail("expected , or ) in a call" if not self.done() else "unclosed (")
                    self.i += 1
                    self.skip_ws()
                arg, kind = self.value_expr()
                args.append(arg)
                kinds.append(kind)
                self.skip_ws()
            self.i += 1
        name = callee.name
        method = method_of(owner, name, len(args))
        if method is None:
            names = method_names(owner)
            known = f" ({shown(owner)} has {', '.join(names)})" if names else ""
            raise self.fail(f"unknown method {name}() with {len(args)} argument(s){known}", at=start)
        for want, got in zip(method.params, kinds, strict=True):
            if want != ANY and got not in (want, "null"):
                raise self.fail(f"{name}() takes {shown(want)}, not {shown(got)}", at=start)
        result = method.result
        if result == ANY:
            real = [k for k in kinds if k != "null"]
            if len(set(real)) > 1:
                raise self.fail(f"{name}() needs both values of one type", at=start)
            result = real[0] if real else "null"
        return Call(callee, tuple(args)), result  # type: ignore[return-value]

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


def check_compare(
    p: ValueParser,
    left: ValueExpr,
    left_type: ValueType,
    op: str,
    right: ValueExpr,
    right_type: ValueType,
    op_at: int,
    left_at: int,
    right_at: int,
) -> None:
    """Raise SelectorError when ``op`` cannot compare these types (the table in docs/guide/selector.md)."""
    what = _described(left, left_type)
    if "null" in (left_type, right_type):
        if op not in ("=", "!="):
            raise p.fail(f"{op} null: only = and != compare with null", at=op_at)
        return
    if op in ("~=", "!~=") and not isinstance(right, Literal):
        raise p.fail(f"the right side of {op} must be a string literal (a regular expression)", at=right_at)
    if op in STRING_OPS and left_type != "string":
        raise p.fail(f"{op} needs a string attribute; {what} is {shown(left_type)}", at=op_at)
    if op in INT_OPS and left_type != "int":
        raise p.fail(f"{op} needs an integer attribute; {what} is {shown(left_type)}", at=op_at)
    if left_type != right_type:
        article = "an" if shown(right_type)[0] in "aeiou" else "a"
        raise p.fail(
            f"{what} is {shown(left_type)}, compared with {article} {shown(right_type)}", at=right_at
        )
    if left_type in ("node", "context") and op not in ("=", "!="):
        raise p.fail(f"{op} cannot compare nodes", at=op_at)
    del left_at


def _described(expr: ValueExpr, kind: ValueType) -> str:
    if isinstance(expr, Name):
        return expr.name
    if isinstance(expr, Member):
        return f"{_described(expr.owner, kind)}.{expr.name}"
    if isinstance(expr, Literal):
        return repr(expr.value)
    return "the call"
