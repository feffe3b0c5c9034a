"""A tap point inside (or next to) a rule's target: offsets written as small arithmetic over the node's box.

``left: 'width * 0.9'`` means x = node.left + 0.9 * node.width; ``right`` counts back from the node's right edge,
``top`` / ``bottom`` likewise for y (``x`` / ``y`` in a GKD rule count from the screen's left / top). Names: left
top right bottom width height screenWidth screenHeight random (one number in 0-1 per evaluation, as in GKD).
Operators: + - * / % and ^ (a power, binding tightest), with parentheses.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

NAMES = ("left", "top", "right", "bottom", "width", "height", "screenWidth", "screenHeight", "random")
_TOKEN_RE = re.compile(r"\s*(?:(\d+(?:\.\d+)?|\.\d+)|([A-Za-z_][A-Za-z0-9_]*)|(.))")


class PositionError(ValueError):
    def __init__(self, message: str, *, unsupported: bool = False) -> None:
        super().__init__(message)
        self.unsupported = unsupported


@dataclass(frozen=True)
class Box:
    left: int
    top: int
    right: int
    bottom: int
    screen_width: int
    screen_height: int
    random: float = field(default_factory=random.random)

    def names(self) -> dict[str, float]:
        return {
            "left": self.left,
            "top": self.top,
            "right": self.right,
            "bottom": self.bottom,
            "width": self.right - self.left,
            "height": self.bottom - self.top,
            "screenWidth": self.screen_width,
            "screenHeight": self.screen_height,
            "random": self.random,
        }


def check_expression(text: str | float | int) -> None:
    """Raises PositionError when the expression cannot be evaluated."""
    evaluate(text, Box(0, 0, 100, 100, 1000, 2000))


def evaluate(text: str | float | int, box: Box) -> float:
    if isinstance(text, bool):
        raise PositionError("a position offset is a number or an arithmetic string")
    if isinstance(text, int | float):
        return float(text)
    if len(text) > 200:
        raise PositionError("a position expression is at most 200 characters")
    tokens = _tokens(text)
    value, rest = _sum(tokens, box.names())
    if rest:
        raise PositionError(f"unexpected {rest[0]!r} in position {text!r}")
    return value


def _tokens(text: str) -> list[str | float]:
    out: list[str | float] = []
    for m in _TOKEN_RE.finditer(text):
        number, name, other = m.groups()
        if number is not None:
            out.append(float(number))
        elif name is not None:
            if name not in NAMES:
                raise PositionError(f"unknown name {name!r} in position (use {', '.join(NAMES)})")
            out.append(name)
        elif other is not None and other.strip():
            if other not in "+-*/%^()":
                raise PositionError(f"unexpected {other!r} in position {text!r}")
            out.append(other)
    if not out:
        raise PositionError("empty position expression")
    return out


def _sum(tokens: list[str | float], names: dict[str, float]) -> tuple[float, list[str | float]]:
    value, rest = _product(tokens, names)
    while rest and rest[0] in ("+", "-"):
        op, (rhs, rest) = rest[0], _product(rest[1:], names)
        value = value + rhs if op == "+" else value - rhs
    return value, rest


def _product(tokens: list[str | float], names: dict[str, float]) -> tuple[float, list[str | float]]:
    value, rest = _power(tokens, names)
    while rest and rest[0] in ("*", "/", "%"):
        op, (rhs, rest) = rest[0], _power(rest[1:], names)
        if op in ("/", "%") and rhs == 0:
            raise PositionError("division by zero in position")
        value = value * rhs if op == "*" else value / rhs if op == "/" else value % rhs
    return value, rest


def _power(tokens: list[str | float], names: dict[str, float]) -> tuple[float, list[str | float]]:
    base, rest = _factor(tokens, names)
    if rest and rest[0] == "^":
        exponent, rest = _power(rest[1:], names)  # right to left: 2 ^ 3 ^ 2 is 2 ^ 9
        try:
            return float(base**exponent), rest
        except (OverflowError, ZeroDivisionError, TypeError):
            raise PositionError("a power out of range in position") from None
    return base, rest


def _factor(tokens: list[str | float], names: dict[str, float]) -> tuple[float, list[str | float]]:
    if not tokens:
        raise PositionError("position expression ends early")
    head, rest = tokens[0], tokens[1:]
    if isinstance(head, float):
        return head, rest
    if head == "-":
        value, rest = _factor(rest, names)
        return -value, rest
    if head == "(":
        value, rest = _sum(rest, names)
        if not rest or rest[0] != ")":
            raise PositionError("unclosed ( in position")
        return value, rest[1:]
    if head in names:
        return names[head], rest
    raise PositionError(f"unexpected {head!r} in position")
