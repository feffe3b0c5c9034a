"""Checks declared with a task, run on the episode's final screen and (on a simulated phone) its state.

In a task file::

    check:
      app: com.tencent.mm                  # foreground package at the end
      activity: .ui.chatting.ChattingUI    # optional; full class name or one starting with "."
      screen_text: [晚上好]                 # each must be in the final view tree (text or content-desc)
      state:                               # lines over the simulated phone's state (verify/checklang.py)
        - 'messages_sent contains {contact: 张三, text: 晚上好}'
        - len(messages_sent) == 1
      hook: "mypkg.checks:order_placed"    # a Python function(CheckContext) -> bool | CompletionPoint | list
      points:                              # optional named completion points, each made of the same parts
        - {name: chat with 张三 opened, screen_text: [张三], activity: .ui.chatting.ChattingUI}
        - {name: text 晚上好 typed, state: ['typed contains {text: ~晚上好}']}
        - {name: message sent, state: ['messages_sent contains {contact: 张三, text: 晚上好}']}

Every part is one completion point (each screen text and each state line on its own); a named point is met when
all of its parts are. All points met: complete; some: partial; none: failed. A point that cannot be evaluated (a
state predicate on a real phone, a hook that raised) is left out and says why.
"""

from __future__ import annotations

import importlib
import logging
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mobile_agent.errors import ConfigError
from mobile_agent.verify.checklang import evaluate_line, parse_check
from mobile_agent.verify.verdict import CheckVerdict, CompletionPoint

log = logging.getLogger(__name__)

CHECK_HINT = "see the check format in mobile_agent/verify/checks.py"


class _CheckParts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    app: str | None = None
    activity: str | None = None
    screen_text: list[str] = Field(default_factory=list)
    state: list[str] = Field(default_factory=list)
    hook: str | None = None

    @field_validator("state", mode="before")
    @classmethod
    def _valid_state(cls, value: Any) -> Any:
        lines = [value] if isinstance(value, str) else value
        for line in lines or []:
            parse_check(str(line))  # ValueError names the line and what is wrong with it
        return lines

    @field_validator("hook")
    @classmethod
    def _valid_hook(cls, value: str | None) -> str | None:
        if value is not None:
            module, sep, function = value.partition(":")
            if not sep or not module.strip() or not function.strip():
                raise ValueError(f"a hook is written 'package.module:function', got {value!r}")
        return value

    def is_empty(self) -> bool:
        return not (self.app or self.activity or self.screen_text or self.state or self.hook)


class PointCheck(_CheckParts):
    """A named completion point; met when every part of it is met."""

    name: str


class TaskCheck(_CheckParts):
    """What must be true at the end of a task. See the module docstring for the format."""

    points: list[PointCheck] = Field(default_factory=list)

    @classmethod
    def from_scenario(cls, scenario: Any) -> TaskCheck:
        """A simulated scenario's check lines (``mobile_agent.sim.scenario.Scenario``) as a task check."""
        return cls(state=list(scenario.checks))

    @classmethod
    def parse(cls, data: Any, *, path: str | None = None, line: int | None = None) -> TaskCheck:
        """From a task file's ``check:`` value; ConfigError naming the file, line and field when wrong."""
        try:
            check = cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "check"
            message = str(first["msg"]).removeprefix("Value error, ")
            raise ConfigError(f"check.{where}: {message}", CHECK_HINT, path=path, line=line) from None
        if check.is_empty() and not check.points:
            raise ConfigError("the check is empty", CHECK_HINT, path=path, line=line)
        for point in check.points:
            if point.is_empty():
                raise ConfigError(f"check point {point.name!r} has nothing to check", CHECK_HINT, path=path)
        return check


@dataclass(frozen=True)
class CheckContext:
    """What a hook gets: the end of the episode."""

    final_hierarchy: str | None
    final_package: str | None
    final_activity: str | None
    phone_state: Mapping[str, Any] | None
    final_step: int | None


def run_checks(
    check: TaskCheck,
    *,
    final_hierarchy: str | None,
    final_package: str | None,
    final_activity: str | None = None,
    phone_state: Mapping[str, Any] | None = None,
    final_step: int | None = None,
) -> CheckVerdict:
    """Evaluate a task's check on the final screen and, when given, the simulated phone's state."""
    ctx = CheckContext(final_hierarchy, final_package, final_activity, phone_state, final_step)
    screen_texts = screen_texts_of(final_hierarchy) if final_hierarchy is not None else None
    points: list[CompletionPoint] = []
    authoritative = False
    for parts in _top_level_parts(check):
        part_points, ground_truth = _evaluate_parts(parts, ctx, screen_texts)
        points.extend(part_points)
        authoritative = authoritative or ground_truth
    for named in check.points:
        part_points, ground_truth = _evaluate_parts(named, ctx, screen_texts)
        points.append(_merge(named.name, part_points, final_step))
        authoritative = authoritative or ground_truth
    return CheckVerdict(points, authoritative=authoritative)


def _top_level_parts(check: TaskCheck) -> list[_CheckParts]:
    return [] if check.is_empty() else [_CheckParts(**check.model_dump(exclude={"points"}))]


def _evaluate_parts(
    parts: _CheckParts, ctx: CheckContext, screen_texts: list[str] | None
) -> tuple[list[CompletionPoint], bool]:
    """Points for each part, and whether one of them was evaluated on ground truth (state or hook)."""
    step = ctx.final_step
    points: list[CompletionPoint] = []
    ground_truth = False
    if parts.app:
        points.append(_known_or_not(f"{parts.app} in the foreground", ctx.final_package, parts.app, step))
    if parts.activity:
        actual = ctx.final_activity
        met = None if actual is None else activity_matches(parts.activity, actual, ctx.final_package)
        points.append(
            CompletionPoint(
                f"activity {parts.activity} in the foreground",
                met,
                step,
                f"foreground activity: {actual}" if actual else "the final activity is not known",
            )
        )
    for text in parts.screen_text:
        if screen_texts is None:
            points.append(CompletionPoint(f"'{text}' on the final screen", None, step, "no final view tree"))
        else:
            met = any(text in shown for shown in screen_texts)
            points.append(
                CompletionPoint(
                    f"'{text}' on the final screen",
                    met,
                    step,
                    "found in the view tree" if met else "not in the view tree",
                )
            )
    if parts.state:
        snapshot = _snapshot(ctx)
        for text in parts.state:
            if snapshot is None:
                why = "no phone state: checks on state need a simulated phone"
                points.append(CompletionPoint(text, None, None, why))
                continue
            ground_truth = True
            holds, actual = evaluate_line(text, snapshot)
            points.append(CompletionPoint(text, holds, step, f"actual: {_brief(actual)}"))
    if parts.hook:
        hook_points = run_hook(parts.hook, ctx)
        ground_truth = ground_truth or any(p.met is not None for p in hook_points)
        points.extend(hook_points)
    return points, ground_truth


def _snapshot(ctx: CheckContext) -> Mapping[str, Any] | None:
    """The phone state, with the final app and activity filled in when the snapshot lacks them."""
    if ctx.phone_state is None:
        return None
    snapshot = dict(ctx.phone_state)
    snapshot.setdefault("foreground", ctx.final_package)
    snapshot.setdefault("activity", ctx.final_activity)
    return snapshot


def _known_or_not(description: str, actual: str | None, expected: str, step: int | None) -> CompletionPoint:
    if actual is None:
        return CompletionPoint(description, None, step, "the final foreground app is not known")
    return CompletionPoint(description, actual == expected, step, f"foreground: {actual}")


def _merge(name: str, parts: list[CompletionPoint], step: int | None) -> CompletionPoint:
    evaluated = [p for p in parts if p.met is not None]
    if not evaluated:
        why = "; ".join(p.evidence for p in parts) or "nothing to evaluate"
        return CompletionPoint(name, None, None, why)
    unmet = [p for p in evaluated if not p.met]
    evidence = "; ".join(f"unmet: {p.description} ({p.evidence})" for p in unmet) or "; ".join(
        p.description for p in evaluated
    )
    return CompletionPoint(name, not unmet, step, evidence)


def activity_matches(expected: str, actual: str, package: str | None) -> bool:
    """``.ui.Chat`` matches ``com.tencent.mm.ui.Chat`` of package com.tencent.mm; ``pkg/.Act`` forms too."""

    def full(name: str) -> str:
        pkg, sep, act = name.partition("/")
        if sep:
            return pkg + act if act.startswith(".") else act
        if name.startswith(".") and package:
            return package + name
        return name

    want, have = full(expected), full(actual)
    return want == have or (expected.startswith(".") and have.endswith(expected))


def screen_texts_of(hierarchy_xml: str) -> list[str]:
    """Every non-empty text and content-desc in a uiautomator dump."""
    try:
        root = ET.fromstring(hierarchy_xml)
    except ET.ParseError as exc:
        log.warning("final view tree is not XML (%s); screen text checks see nothing", exc)
        return []
    texts = []
    for node in root.iter("node"):
        for attribute in ("text", "content-desc"):
            value = node.get(attribute)
            if value:
                texts.append(value)
    return texts


def load_hook(spec: str) -> Callable[[CheckContext], Any]:
    """Import ``package.module:function``; ConfigError when it is not there."""
    module_name, _, function_name = spec.partition(":")
    try:
        module = importlib.import_module(module_name.strip())
    except ImportError as exc:
        raise ConfigError(
            f"check hook {spec!r}: cannot import {module_name!r} ({exc})",
            "make the module importable (installed, or on PYTHONPATH)",
        ) from None
    function = getattr(module, function_name.strip(), None)
    if not callable(function):
        raise ConfigError(f"check hook {spec!r}: {module_name} has no function {function_name!r}", CHECK_HINT)
    return function


def run_hook(spec: str, ctx: CheckContext) -> list[CompletionPoint]:
    """Run a hook; its answer becomes points. A hook that raises gives an unevaluated point, not a crash."""
    function = load_hook(spec)
    try:
        answer = function(ctx)
    except Exception as exc:  # noqa: BLE001 - a user's hook must not take the verifier down
        log.warning("check hook %s raised %s: %s", spec, type(exc).__name__, exc)
        return [CompletionPoint(f"hook {spec}", None, None, f"the hook raised {type(exc).__name__}: {exc}")]
    if isinstance(answer, CompletionPoint):
        return [answer]
    if isinstance(answer, bool):
        return [CompletionPoint(f"hook {spec}", answer, ctx.final_step, "returned by the hook")]
    if isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[0], bool):
        return [CompletionPoint(f"hook {spec}", answer[0], ctx.final_step, str(answer[1]))]
    if isinstance(answer, list) and all(isinstance(p, CompletionPoint) for p in answer):
        return list(answer)
    raise ConfigError(
        f"check hook {spec!r} returned {type(answer).__name__}",
        "return a bool, a (bool, evidence) pair, a CompletionPoint or a list of CompletionPoint",
    )


def _brief(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = [
    "CheckContext",
    "PointCheck",
    "TaskCheck",
    "activity_matches",
    "load_hook",
    "run_checks",
    "run_hook",
    "screen_texts_of",
]
