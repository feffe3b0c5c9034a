"""A segment's class name and bracket tests, compiled into one function of the node's context.

Value expressions are resolved as GKD resolves them: a bare name is a property of the node being tested (or
``prev`` / ``current`` of its context), a member reads a property of a node, a context or a string, a call runs
a method (apps/query/methods.py). Anything read on null is null; comparisons follow docs/guide/selector.md (every
operator but ``=`` / ``!=`` is false when a side is null).
"""

from __future__ import annotations

from collections.abc import Callable

from mobile_agent.apps.query.javaregex import java_regex
from mobile_agent.apps.query.methods import method_of
from mobile_agent.apps.query.syntax import (
    AllOf,
    AnyOf,
    Call,
    Compare,
    Expr,
    Literal,
    Member,
    Name,
    Not,
    Segment,
    ValueExpr,
)
from mobile_agent.apps.query.tree import PROPERTIES, Ctx, Node, child_at

Test = Callable[[Ctx], bool]
Getter = Callable[[Ctx], object]


def compile_segment(seg: Segment) -> Test:
    expr = _compile_expr(seg.expr) if seg.expr is not None else None
    if seg.class_name is None:
        return expr or (lambda ctx: True)
    name, suffix = seg.class_name, "." + seg.class_name

    def holds(ctx: Ctx) -> bool:
        cls = ctx.node.element.class_name
        if cls != name and not cls.endswith(suffix):
            return False
        return expr is None or expr(ctx)

    return holds


def _compile_expr(expr: Expr) -> Test:
    if isinstance(expr, Compare):
        return _compile_compare(expr)
    if isinstance(expr, Not):
        inner = _compile_expr(expr.expr)
        return lambda ctx: not inner(ctx)
    if isinstance(expr, AnyOf):
        grouped = _words_of_one_property(expr)
        if grouped is not None:
            return grouped
    parts = tuple(_compile_expr(p) for p in expr.parts)
    if len(parts) == 2:
        first, second = parts
        if isinstance(expr, AllOf):
            return lambda ctx: first(ctx) and second(ctx)
        return lambda ctx: first(ctx) or second(ctx)
    if isinstance(expr, AllOf):

        def all_hold(ctx: Ctx) -> bool:
            for part in parts:
                if not part(ctx):
                    return False
            return True

        return all_hold
    assert isinstance(expr, AnyOf)

    def one_holds(ctx: Ctx) -> bool:
        for part in parts:
            if part(ctx):
                return True
        return False

    return one_holds


def _words_of_one_property(expr: AnyOf) -> Test | None:
    """``[text*="a" || text*="b" || text="c" ...]`` (real rules list dozens): the property read once."""
    tests: list[tuple[str, str]] = []
    name = None
    for part in expr.parts:
        if not (
            isinstance(part, Compare)
            and isinstance(part.left, Name)
            and isinstance(part.right, Literal)
            and isinstance(part.right.value, str)
            and part.op in ("=", "^=", "*=", "$=")
            and part.left.name in PROPERTIES
            and name in (None, part.left.name)
        ):
            return None
        name = part.left.name
        tests.append((part.op, part.right.value))
    read = PROPERTIES[name]  # type: ignore[index]
    equal = frozenset(v for op, v in tests if op == "=")
    starts = tuple(v for op, v in tests if op == "^=")
    ends = tuple(v for op, v in tests if op == "$=")
    contains = tuple(v for op, v in tests if op == "*=")

    def any_word(ctx: Ctx) -> bool:
        value = read(ctx.node)
        if not isinstance(value, str):
            return False
        return (
            value in equal
            or (bool(starts) and value.startswith(starts))
            or (bool(ends) and value.endswith(ends))
            or any(word in value for word in contains)
        )

    return any_word


# -- comparisons ------------------------------------------------------------------------------------------------------
def _same(a: object, b: object) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, Node | Ctx) or isinstance(b, Node | Ctx):
        return _node_of(a) is _node_of(b)
    return type(a) is type(b) and a == b


def _node_of(v: object) -> object:
    return v.node if isinstance(v, Ctx) else v


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


_STRING_TESTS: dict[str, Callable[[str, str], bool]] = {
    "^=": str.startswith,
    "*=": lambda a, b: b in a,
    "$=": str.endswith,
}
_INT_TESTS: dict[str, Callable[[int, int], bool]] = {
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
}


def _compile_compare(c: Compare) -> Test:
    op = c.op
    if op in ("~=", "!~="):
        assert isinstance(c.right, Literal) and isinstance(c.right.value, str)
        pattern = java_regex(c.right.value)
        left = _compile_value(c.left)
        negate = op == "!~="

        def matches(ctx: Ctx) -> bool:
            a = left(ctx)
            return isinstance(a, str) and (pattern.fullmatch(a) is None) == negate

        return matches
    fast = _fast_string_test(c)
    if fast is not None:
        return fast
    left, right = _compile_value(c.left), _compile_value(c.right)
    if op == "=":
        return lambda ctx: _same(left(ctx), right(ctx))
    if op == "!=":
        return lambda ctx: not _same(left(ctx), right(ctx))
    if op.lstrip("!") in _STRING_TESTS:
        test, negate = _STRING_TESTS[op.lstrip("!")], op.startswith("!")

        def strings(ctx: Ctx) -> bool:
            a, b = left(ctx), right(ctx)
            return isinstance(a, str) and isinstance(b, str) and test(a, b) != negate

        return strings
    compare = _INT_TESTS[op]

    def ints(ctx: Ctx) -> bool:
        a, b = left(ctx), right(ctx)
        return _is_int(a) and _is_int(b) and compare(a, b)  # type: ignore[arg-type]

    return ints


def _fast_string_test(c: Compare) -> Test | None:
    """``text="..."`` and friends: most tests in real rules, read straight off the node."""
    if not (isinstance(c.left, Name) and isinstance(c.right, Literal)) or c.left.name not in PROPERTIES:
        return None
    value, read, op = c.right.value, PROPERTIES[c.left.name], c.op
    if op == "=" and value is not None:
        kind = type(value)

        def equals(ctx: Ctx) -> bool:
            actual = read(ctx.node)
            return type(actual) is kind and actual == value

        return equals
    if isinstance(value, str) and op.lstrip("!") in _STRING_TESTS:
        test, negate = _STRING_TESTS[op.lstrip("!")], op.startswith("!")

        def holds(ctx: Ctx) -> bool:
            a = read(ctx.node)
            return isinstance(a, str) and test(a, value) != negate

        return holds
    return None


# -- value expressions ------------------------------------------------------------------------------------------------
def _compile_value(expr: ValueExpr) -> Getter:
    if isinstance(expr, Literal):
        value = expr.value
        return lambda ctx: value
    if isinstance(expr, Name):
        return _name_getter(expr.name)
    if isinstance(expr, Member):
        owner, name = _compile_value(expr.owner), expr.name
        return lambda ctx: _member(owner(ctx), name)
    return _compile_call(expr)


def _name_getter(name: str) -> Getter:
    if name == "prev":
        return lambda ctx: ctx.prev
    if name == "current":
        return lambda ctx: ctx.node
    read = PROPERTIES[name]
    return lambda ctx: read(ctx.node)


def _member(owner: object, name: str) -> object:
    if owner is None:
        return None
    if isinstance(owner, str):
        return len(owner)  # the parser allows only .length on a string
    if isinstance(owner, Ctx):
        if name == "prev":
            return owner.prev
        if name == "current":
            return owner.node
        owner = owner.node
    assert isinstance(owner, Node)
    return PROPERTIES[name](owner)


def _compile_call(call: Call) -> Getter:
    args = tuple(_compile_value(a) for a in call.args)
    name = call.callee.name
    if isinstance(call.callee, Name):  # a method of the context being tested
        return lambda ctx: _run(ctx, name, [a(ctx) for a in args])
    owner = _compile_value(call.callee.owner)
    return lambda ctx: _run(owner(ctx), name, [a(ctx) for a in args])


def _run(owner: object, name: str, values: list[object]) -> object:
    if owner is None:
        return None
    if name == "getChild":
        return child_at(owner.node if isinstance(owner, Ctx) else owner, values[0])  # type: ignore[arg-type]
    if name == "getPrev":
        back, steps = owner, values[0]
        if not _is_int(steps) or steps < 0:  # type: ignore[operator]
            return None
        for _ in range(steps + 1):  # type: ignore[operator]
            back = back.prev if isinstance(back, Ctx) else None
        return back
    if name in ("equal", "notEqual"):
        same = _same(values[0], values[1])
        return same if name == "equal" else not same
    kind = "boolean" if isinstance(owner, bool) else "int" if isinstance(owner, int) else "string"
    method = method_of(kind, name, len(values))  # type: ignore[arg-type]
    if method is None or method.run is None:
        return None
    if not method.null_safe and any(v is None for v in values):
        return None
    try:
        return method.run(owner, *values)
    except (ValueError, OverflowError, IndexError):
        return None
