"""A small declarative language for predicates over the simulated phone's state dict (``SimState.as_dict()``).

A predicate maps a path in the state to a test::

    messages_sent: {contains: {contact: 张三, text: 晚上好}}     # some element has these fields
    orders: {count: 0}                                          # exactly 0 elements
    orders: {contains: {shop: 老街黄焖鸡米饭, paid: true}}
    settings_changed.wifi: {equals: false}                      # dotted path into nested dicts
    typed: {not_contains: {text: 转账}}
    transfers: {empty: true}

Tests: ``contains`` (a list has an element matching the pattern; a dict has the pattern's keys and values; a string
has the substring), ``not_contains``, ``equals``, ``count``, ``min_count``, ``empty``. A pattern matches a value when
every key of the pattern matches the value's field of that name; a pattern value that is itself a mapping of one
test (``{text: {contains: 晚上}}``) applies that test to the field. Plain values compare with ``==``, except that
strings match numbers written the same way (YAML gives 3 where a field holds "3").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

TESTS = ("contains", "not_contains", "equals", "count", "min_count", "empty")
_MISSING = object()


class PredicateError(ValueError):
    """A predicate is written wrongly (unknown test, wrong argument type)."""


@dataclass(frozen=True)
class PredicateResult:
    path: str
    test: str
    expected: Any
    met: bool
    actual: Any

    def describe(self) -> str:
        return f"{self.path} {self.test} {_short(self.expected)}"


def parse_predicate(spec: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
    """Validate a predicate mapping; returns (path, test, argument) triples. PredicateError when malformed."""
    if not isinstance(spec, Mapping):
        raise PredicateError(f"a state predicate is a mapping of path -> test, got {_short(spec)}")
    triples = []
    for path, test_spec in spec.items():
        if not isinstance(path, str) or not path:
            raise PredicateError(f"a state path must be a non-empty string, got {path!r}")
        if not isinstance(test_spec, Mapping) or len(test_spec) != 1:
            raise PredicateError(
                f"{path}: write exactly one test, e.g. {{contains: ...}} (tests: {', '.join(TESTS)})"
            )
        ((test, argument),) = test_spec.items()
        if test not in TESTS:
            raise PredicateError(f"{path}: unknown test {test!r} (tests: {', '.join(TESTS)})")
        if test in ("count", "min_count") and (not isinstance(argument, int) or isinstance(argument, bool)):
            raise PredicateError(f"{path}: {test} takes a whole number, got {argument!r}")
        if test == "empty" and not isinstance(argument, bool):
            raise PredicateError(f"{path}: empty takes true or false, got {argument!r}")
        triples.append((path, test, argument))
    return triples


def evaluate(spec: Mapping[str, Any], state: Mapping[str, Any]) -> list[PredicateResult]:
    """One result per path of ``spec`` against ``state``."""
    results = []
    for path, test, argument in parse_predicate(spec):
        actual = resolve(state, path)
        met = run_test(test, argument, actual)
        results.append(PredicateResult(path, test, argument, met, None if actual is _MISSING else actual))
    return results


def resolve(state: Any, path: str) -> Any:
    """The value at a dotted path, or a marker object when the path does not exist."""
    value = state
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


def run_test(test: str, argument: Any, actual: Any) -> bool:
    missing = actual is _MISSING
    if test == "equals":
        return not missing and _equal(argument, actual)
    if test == "empty":
        empty = missing or actual in (None, "") or (hasattr(actual, "__len__") and len(actual) == 0)
        return empty is argument
    if test in ("count", "min_count"):
        size = 0 if missing or actual is None else len(actual) if hasattr(actual, "__len__") else 1
        return size == argument if test == "count" else size >= argument
    if test == "contains":
        return not missing and _contains(actual, argument)
    if test == "not_contains":
        return missing or not _contains(actual, argument)
    raise PredicateError(f"unknown test {test!r}")


def _contains(actual: Any, pattern: Any) -> bool:
    if isinstance(actual, str):
        return isinstance(pattern, str) and pattern in actual
    if isinstance(actual, Mapping):
        return isinstance(pattern, Mapping) and matches(actual, pattern)
    if isinstance(actual, (list, tuple)):
        return any(matches(item, pattern) for item in actual)
    return False


def matches(value: Any, pattern: Any) -> bool:
    """Whether ``value`` fits ``pattern`` (see the module docstring)."""
    if isinstance(pattern, Mapping):
        if len(pattern) == 1:
            ((key, argument),) = pattern.items()
            if key in TESTS and not (isinstance(value, Mapping) and key in value):
                return run_test(key, argument, value)
        if not isinstance(value, Mapping):
            return False
        return all(key in value and matches(value[key], expected) for key, expected in pattern.items())
    return _equal(pattern, value)


def _equal(expected: Any, actual: Any) -> bool:
    if expected == actual:
        return True
    # YAML writes 3 where a record holds "3" (or 22.0 where it holds 22): compare the spellings.
    scalars = (str, int, float)
    if isinstance(expected, scalars) and isinstance(actual, scalars) and not isinstance(expected, bool):
        return str(expected).strip() == str(actual).strip()
    return False


def _short(value: Any, limit: int = 80) -> str:
    if isinstance(value, Mapping):
        text = "{" + ", ".join(f"{k}: {_short(v, limit)}" for k, v in value.items()) + "}"
    else:
        text = str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = ["PredicateError", "PredicateResult", "TESTS", "evaluate", "matches", "parse_predicate", "resolve"]
