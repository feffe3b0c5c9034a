"""The properties and methods a selector's value expressions may call, with their types (docs/guide/node.md).

Scalar methods run here; the node and context ones (``getChild``, ``getPrev``) need the tree and run in
evaluate.py. As in GKD, a method called on null, or with a null argument, gives null (``equal`` and ``ifElse``
excepted), and so does an out-of-range index, a division by zero or text that is not a number.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mobile_agent.apps.query.syntax import ValueType

ANY = "any"  # a parameter that takes every type; as a result: the type of the arguments


@dataclass(frozen=True)
class Method:
    params: tuple[str, ...]  # ValueType or ANY
    result: str  # ValueType or ANY
    run: Callable[..., Any] | None = None  # None: node / context methods, run by the evaluator
    null_safe: bool = False  # runs with null arguments instead of giving null


def _int_op(f: Callable[[int, int], int | None]) -> Method:
    return Method(("int",), "int", f)


def _div(a: int, b: int) -> int | None:
    if b == 0:
        return None
    q = abs(a) // abs(b)  # Kotlin's Int division truncates toward zero, and rem takes the dividend's sign
    return q if (a >= 0) == (b >= 0) else -q


def _rem(a: int, b: int) -> int | None:
    d = _div(a, b)
    return None if d is None else a - b * d


def _to_string(a: int, radix: int = 10) -> str | None:
    if not 2 <= radix <= 36:
        return None
    digits, n, out = "0123456789abcdefghijklmnopqrstuvwxyz", abs(a), ""
    while True:
        n, r = divmod(n, radix)
        out = digits[r] + out
        if n == 0:
            return ("-" if a < 0 else "") + out


def _to_int(s: str, radix: int = 10) -> int | None:
    if not 2 <= radix <= 36 or not s or s.strip() != s or "_" in s:
        return None
    try:
        return int(s, radix)
    except ValueError:
        return None


def _get(s: str, i: int) -> str | None:
    return s[i] if 0 <= i < len(s) else None


def _at(s: str, i: int) -> str | None:
    return s[i] if -len(s) <= i < len(s) else None


def _substring(s: str, start: int, end: int | None = None) -> str | None:
    stop = len(s) if end is None else end
    return s[start:stop] if 0 <= start <= stop <= len(s) else None


def _index_of(s: str, sub: str, start: int = 0) -> int:
    return s.find(sub, max(start, 0))


BOOLEAN_METHODS: dict[tuple[str, int], Method] = {
    ("toInt", 0): Method((), "int", lambda a: int(a)),
    ("or", 1): Method(("boolean",), "boolean", lambda a, b: a or b),
    ("and", 1): Method(("boolean",), "boolean", lambda a, b: a and b),
    ("not", 0): Method((), "boolean", lambda a: not a),
    ("ifElse", 2): Method((ANY, ANY), ANY, lambda a, x, y: x if a else y, null_safe=True),
}
INT_METHODS: dict[tuple[str, int], Method] = {
    ("toString", 0): Method((), "string", _to_string),
    ("toString", 1): Method(("int",), "string", _to_string),
    ("plus", 1): _int_op(lambda a, b: a + b),
    ("minus", 1): _int_op(lambda a, b: a - b),
    ("times", 1): _int_op(lambda a, b: a * b),
    ("div", 1): _int_op(_div),
    ("rem", 1): _int_op(_rem),
    ("more", 1): Method(("int",), "boolean", lambda a, b: a > b),
    ("moreEqual", 1): Method(("int",), "boolean", lambda a, b: a >= b),
    ("less", 1): Method(("int",), "boolean", lambda a, b: a < b),
    ("lessEqual", 1): Method(("int",), "boolean", lambda a, b: a <= b),
}
STRING_METHODS: dict[tuple[str, int], Method] = {
    ("get", 1): Method(("int",), "string", _get),
    ("at", 1): Method(("int",), "string", _at),
    ("substring", 1): Method(("int",), "string", _substring),
    ("substring", 2): Method(("int", "int"), "string", _substring),
    ("toInt", 0): Method((), "int", _to_int),
    ("toInt", 1): Method(("int",), "int", _to_int),
    ("indexOf", 1): Method(("string",), "int", _index_of),
    ("indexOf", 2): Method(("string", "int"), "int", _index_of),
}
NODE_METHODS: dict[tuple[str, int], Method] = {("getChild", 1): Method(("int",), "node")}
CONTEXT_METHODS: dict[tuple[str, int], Method] = {
    **NODE_METHODS,
    ("getPrev", 1): Method(("int",), "context"),
    ("equal", 2): Method((ANY, ANY), "boolean", null_safe=True),
    ("notEqual", 2): Method((ANY, ANY), "boolean", null_safe=True),
}
METHODS_OF: dict[str, dict[tuple[str, int], Method]] = {
    "boolean": BOOLEAN_METHODS,
    "int": INT_METHODS,
    "string": STRING_METHODS,
    "node": NODE_METHODS,
    "context": CONTEXT_METHODS,
}


def method_of(owner: ValueType, name: str, arity: int) -> Method | None:
    return METHODS_OF.get(owner, {}).get((name, arity))


def method_names(owner: ValueType) -> list[str]:
    return sorted({name for name, _ in METHODS_OF.get(owner, {})})
