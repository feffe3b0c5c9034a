"""The safety gate: is this action consequential (pay, transfer, order, delete, send, post, call, share, security),
and what does the policy say about it (allow, ask a person, deny)?

The gate decides on the whole screen (:mod:`mobile_agent.gate.consequence`): the element under the finger and the
control it belongs to, the dialog that holds it, amounts, password fields, the app's manifest rules, the model's own
words, and, where the tree is blind, the pixels (OCR, when the ``[ocr]`` extra is installed). Every action kind is
judged: taps, long presses, gestures, Enter, typing and launches. A black (secure) screen and the model's call-user /
take-over are handled by the loop as a take-over, not here.

Fail closed: when the view tree cannot be had, or shows another app, or nothing names the control under the finger
in an app that can pay, send or delete, the gate asks. Text on the screen never changes the policy: the gate reads
it only to classify what would be touched.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from mobile_agent.actions import GESTURE_KINDS, POINT_KINDS, Action, ActionKind, Key, Point
from mobile_agent.gate.consequence import classify
from mobile_agent.gate.finding import Finding, Situation
from mobile_agent.gate.guard import Decision, GuardContext, Verdict
from mobile_agent.gate.mirror import mirrored_action, mirrored_layout, mirrored_tree, mirrored_words
from mobile_agent.gate.policy import PolicyAction, SafetyPolicy
from mobile_agent.gate.potential import potential_of
from mobile_agent.screen.context import ScreenReader, TargetContext
from mobile_agent.screen.labels import spelled
from mobile_agent.screen.text import shown_tree
from mobile_agent.screen.viewtree import Element

log = logging.getLogger(__name__)

# What OCR reads around a blind target: this share of the frame's height above and below the finger, at most this
# many text lines (nearest first).
_OCR_ABOVE, _OCR_BELOW, _OCR_LINES = 0.4, 0.3, 16


class SafetyGate:
    """The Guard that classifies an action and applies the policy. Stateless between steps.

    ``ocr``: an object with ``words_near(image, point)`` (see :mod:`mobile_agent.screen.ocr`), used only for blind
    targets and only when the step can hand over its screenshot; None reads no pixels.
    """

    name = "safety"

    def __init__(self, policy: SafetyPolicy | None = None, registry: Any = None, ocr: Any = "auto") -> None:
        self.policy = policy or SafetyPolicy()
        self.registry = registry
        self._ocr = ocr

    @property
    def ocr(self) -> Any:
        """The OCR reader; ``"auto"`` (the default) uses the ``[ocr]`` extra when it is installed, None reads no
        pixels. Created on first need, so steps that never meet a blind control never load a model."""
        if isinstance(self._ocr, str):
            from mobile_agent.screen.ocr import OcrReader, ocr_available

            self._ocr = OcrReader() if ocr_available() else None
        return self._ocr

    # -- the guard ---------------------------------------------------------------------------------------------
    def check(self, ctx: GuardContext) -> Decision:
        finding = self.classify(ctx)
        if finding is None:
            return Decision(self.name, Verdict.ALLOW, recheck=self._could_cost(ctx))
        action, rule = self.policy.decide(finding.kind, self._app_keys(ctx.package))
        verdict = {PolicyAction.ALLOW: Verdict.ALLOW, PolicyAction.ASK: Verdict.ASK}.get(
            action, Verdict.BLOCK
        )
        app = self._app_name(ctx.package)
        what = f"{ctx.action.describe()} would {_WOULD.get(finding.kind, finding.kind)}"
        on = f" on {finding.element}" if finding.element else ""
        why = f" ({finding.source}{': ' + finding.detail if finding.detail else ''})"
        reason = f"{what}{on} in {app}{why}; policy {rule}"
        signals = tuple(s for s in (*finding.signals, f"policy {rule}") if s)
        return Decision(
            self.name,
            verdict,
            reason,
            finding.kind,
            finding.source,
            finding.element or None,
            app,
            signals,
            recheck=True,
        )

    def _could_cost(self, ctx: GuardContext) -> bool:
        """Whether the screen an allowed action lands on could cost something (potential): then the loop reads
        the screen again right before acting."""
        if not _could_matter(ctx.action) or ctx.action.kind is ActionKind.LAUNCH:
            return False
        xml = ctx.hierarchy()
        shown = shown_tree(xml) if xml else None
        if shown is None:
            return False
        reader = ScreenReader(shown[0], ctx.screen)
        return potential_of(reader.texts(), reader) is not None

    # -- classification ----------------------------------------------------------------------------------------
    def classify(self, ctx: GuardContext) -> Finding | None:
        action = ctx.action
        if not _could_matter(action):
            sensitive = (action.sensitive or "").strip()
            return (
                Finding("sensitive", "model", "", sensitive, (f"model: {sensitive[:80]}",))
                if sensitive
                else None
            )
        xml = ctx.hierarchy() if action.kind is not ActionKind.LAUNCH else None
        # Every text of the screen in the form a person reads it (NFKC, no zero-width, simplified): see shown().
        shown = shown_tree(xml) if xml else None
        tree, xml = shown if shown is not None else (None, xml)
        # A right-to-left screen is judged in its mirror image: back at the start, actions at the end, as written.
        mirrored = tree is not None and mirrored_layout(tree, ctx.screen.width, ctx.screen.height)
        width = ctx.screen.width if mirrored else None
        if width is not None:
            tree, action = mirrored_tree(tree, width), mirrored_action(action, width)  # type: ignore[arg-type]
        reader = ScreenReader(tree, ctx.screen) if tree is not None else None
        package = ctx.package
        situation = Situation(
            action=action,
            package=package,
            reader=reader,
            thought=ctx.thought,
            can_matter=self._can_matter(package),
            manifest_element=(lambda target: self._manifest_element(package, target))
            if self.registry
            else None,
            manifest_screen=(lambda: self._manifest_screen(package, xml)) if self.registry and xml else None,
            ocr_words=self._ocr_reader(ctx, width),
        )
        found = classify(situation)
        if found is not None and width is not None:  # its boxes are the mirror image's
            found = replace(found, signals=(*found.signals, "right-to-left screen, read mirrored"))
        return found

    def _ocr_reader(self, ctx: GuardContext, mirrored: int | None = None) -> Any:
        if self._ocr is None or ctx.screenshot_source is None:
            return None

        def words(point: Any) -> Any:
            if (
                mirrored is not None
            ):  # the frame is not mirrored: read it at the real point, flip what is read
                return mirrored_words(read(Point(mirrored - 1 - point.x, point.y)), mirrored)
            return read(point)

        def read(point: Any) -> Any:
            reader = self.ocr
            image = ctx.screenshot_source() if reader is not None else None  # type: ignore[misc]
            if image is None:
                return None
            # The sheet or page around the finger, not one word: fine print 400 px away decides like any text.
            height = image.size[1]
            return reader.words_near(
                image,
                (point.x, point.y),
                radius_y=(round(height * _OCR_ABOVE), round(height * _OCR_BELOW)),
                max_lines=_OCR_LINES,
            )

        return words

    def _manifest_element(self, package: str, target: TargetContext) -> tuple[str, str] | None:
        for element in (target.target, *target.chain):
            if element is None:
                continue
            for pkg in dict.fromkeys([package, element.package]):
                if not pkg:
                    continue
                rule = self.registry.match_consequential(pkg, _as_read(element))
                if rule is not None:
                    return rule.kind, rule.description or f"{rule.kind} rule of {pkg}"
        return None

    def _manifest_screen(self, package: str, xml: str | None) -> tuple[str, str] | None:
        if not package or not xml:
            return None
        found = self.registry.match_consequential_screen(package, xml)
        if found is None:
            return None
        rule, _element = found
        return rule.kind, rule.description or f"{rule.kind} screen of {package}"

    # -- app context -------------------------------------------------------------------------------------------
    def _can_matter(self, package: str) -> bool:
        """Can this app pay, send or delete? Unknown apps can (fail closed); known ones by their own rules or by
        what kind of app they are."""
        if self.registry is None or not package:
            return True
        manifest = self.registry.by_package(package)
        return manifest is None or bool(manifest.consequential) or manifest.category not in _QUIET_CATEGORIES

    def _app_keys(self, package: str) -> list[str]:
        keys = [package]
        manifest = self.registry.by_package(package) if self.registry is not None and package else None
        if manifest is not None:
            keys += [manifest.id, *manifest.names]
        return keys

    def _app_name(self, package: str) -> str:
        manifest = self.registry.by_package(package) if self.registry is not None and package else None
        return f"{manifest.name} ({package})" if manifest is not None else (package or "an unknown app")


def _as_read(element: Element) -> dict[str, str]:
    """The element's attributes with the label a person reads as its text (a label spelled one character per child
    view is its text)."""
    fields = element.as_dict()
    if not (fields.get("text") or "").strip():
        fields["text"] = spelled(element.node)
    return fields


# How a reason says what a kind would do, where the kind's name is not a verb.
_WOULD = {"security": "lower the device's protection"}

# Apps of these kinds neither move money nor talk to others (their own manifest rules may still say otherwise).
_QUIET_CATEGORIES = frozenset({"tools", "reading", "maps", "music", "news", "education", "system"})


def _could_matter(action: Action) -> bool:
    return action.kind in (
        *POINT_KINDS,
        *GESTURE_KINDS,
        ActionKind.TYPE,
        ActionKind.LAUNCH,
    ) or (action.kind is ActionKind.KEY and action.key is Key.ENTER)


__all__ = ["SafetyGate"]
