"""What the gate is given for one action (Situation) and what it concludes (Finding)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mobile_agent.actions import POINT_KINDS, Action, Point
from mobile_agent.screen.context import ScreenReader, TargetContext

if TYPE_CHECKING:
    from mobile_agent.screen.ocr import OcrWord


@dataclass(frozen=True)
class Finding:
    """Why an action is consequential. ``source``: manifest | label | dialog | amount | screen | gesture | key |
    type | link | ocr | model | blind | fail_closed. ``signals``: every reading that supported it."""

    kind: str
    source: str
    element: str = ""
    detail: str = ""
    signals: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class Situation:
    """What the classifier is given for one action."""

    action: Action
    package: str
    reader: ScreenReader | None  # None: no view tree could be had
    thought: str = ""
    can_matter: bool = False  # the app's manifest lists consequential rules, or the app is unknown
    manifest_element: Callable[[TargetContext], tuple[str, str] | None] | None = None
    manifest_screen: Callable[[], tuple[str, str] | None] | None = None
    ocr_words: Callable[[Point], list[OcrWord] | None] | None = None


def with_model(f: Finding, model: tuple[str, str] | None) -> Finding:
    if model is None:
        return f
    return Finding(f.kind, f.source, f.element, f.detail, (*f.signals, model[1]))


def fail_closed(s: Situation, model: tuple[str, str] | None, reason: str) -> Finding | None:
    if model is not None:
        return Finding(model[0], "fail_closed", "", f"{reason}; {model[1]}", (reason, model[1]))
    if s.can_matter and s.action.kind in POINT_KINDS:
        return Finding(
            "sensitive", "fail_closed", "", f"{reason} in an app that can pay, send or delete", (reason,)
        )
    return None


__all__ = ["Finding", "Situation", "fail_closed", "with_model"]
