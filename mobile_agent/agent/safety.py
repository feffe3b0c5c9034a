"""The safety gate: is this action consequential (pay, transfer, order, delete, send, post, call), and what does the
policy say about it (allow, ask a person, deny)?

The gate decides on the whole screen (:mod:`mobile_agent.agent.consequence`): the element under the finger and the
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
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from mobile_agent.actions import GESTURE_KINDS, POINT_KINDS, Action, ActionKind, Key
from mobile_agent.agent.consequence import classify
from mobile_agent.agent.finding import Finding, Situation
from mobile_agent.agent.guards import Decision, GuardContext, Verdict
from mobile_agent.agent.lexicon import KINDS
from mobile_agent.apps.names import normalise
from mobile_agent.errors import UserError
from mobile_agent.screen.context import ScreenReader, TargetContext
from mobile_agent.screen.labels import spelled
from mobile_agent.screen.text import shown_tree
from mobile_agent.screen.viewtree import Element

log = logging.getLogger(__name__)

POLICY_HINT = (
    "write --policy ask|deny|allow, or KIND=ACTION / KIND@APP=ACTION (comma-separated); "
    f"kinds: {', '.join(KINDS)}; actions: ask, deny, allow"
)


class PolicyAction(str, Enum):
    ASK = "ask"
    DENY = "deny"
    ALLOW = "allow"


@dataclass(frozen=True)
class PolicyRule:
    """``kind`` is a consequence kind or ``*``; ``app`` a package, app id or app name (None: every app)."""

    kind: str
    action: PolicyAction
    app: str | None = None

    def spec(self) -> str:
        where = f"@{self.app}" if self.app else ""
        return f"{self.kind}{where}={self.action.value}"

    def specificity(self) -> int:
        return (2 if self.app else 0) + (1 if self.kind != "*" else 0)


@dataclass(frozen=True)
class SafetyPolicy:
    """What happens to a consequential action: the most specific matching rule wins (kind@app, *@app, kind),
    then ``default``. The interactive default is ``ask``; a batch turns ``ask`` into a needs_user pause."""

    default: PolicyAction = PolicyAction.ASK
    rules: tuple[PolicyRule, ...] = ()

    def decide(self, kind: str, app_keys: Collection[str] = ()) -> tuple[PolicyAction, str]:
        """(action, the rule that chose it) for a consequence ``kind`` in the app known by ``app_keys``."""
        keys = {normalise(k) for k in app_keys if k} | {k for k in app_keys if k}
        best: PolicyRule | None = None
        for rule in self.rules:
            if rule.kind not in ("*", kind):
                continue
            if rule.app is not None and rule.app not in keys and normalise(rule.app) not in keys:
                continue
            if best is None or rule.specificity() >= best.specificity():
                best = rule
        if best is None:
            return self.default, f"default={self.default.value}"
        return best.action, best.spec()

    def describe(self) -> str:
        return ",".join([f"default={self.default.value}", *(r.spec() for r in self.rules)])

    def to_dict(self) -> dict[str, Any]:
        return {"default": self.default.value, "rules": [r.spec() for r in self.rules]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SafetyPolicy:
        return parse_policy([f"default={data.get('default', 'ask')}", *data.get("rules", [])])

    @classmethod
    def allow_all(cls) -> SafetyPolicy:
        return cls(PolicyAction.ALLOW)

    def plus(self, *rules: PolicyRule) -> SafetyPolicy:
        return SafetyPolicy(self.default, self.rules + rules)


def _action(value: str, spec: str) -> PolicyAction:
    try:
        return PolicyAction(value.strip().lower())
    except ValueError:
        raise UserError(
            f"bad safety policy {spec!r}: {value!r} is not ask, deny or allow", POLICY_HINT
        ) from None


_APP_NAME = re.compile(
    r"[\w.\-]+"
)  # a package name (com.tencent.mm) or a manifest id or alias (wechat, 微信)


def _kind_and_app(text: str, spec: str) -> tuple[str, str | None]:
    kind, _, app = text.strip().partition("@")
    kind = kind.strip().lower() or "*"
    if kind not in KINDS and kind != "*":
        raise UserError(f"bad safety policy {spec!r}: unknown kind {kind!r}", POLICY_HINT)
    if _ and not app.strip():
        raise UserError(f"bad safety policy {spec!r}: nothing after '@'", "name the app: KIND@com.tencent.mm")
    app = app.strip()
    if "=" in app:
        raise UserError(
            f"bad safety policy {spec!r}: '=' has no place in --allow/--deny/--ask, which name KIND@APP only",
            "write --deny pay@com.tencent.mm, or --policy pay@com.tencent.mm=allow to set the action",
        )
    if app and not _APP_NAME.fullmatch(app):
        raise UserError(
            f"bad safety policy {spec!r}: {app!r} is not an app name",
            "name the app by package (com.tencent.mm) or manifest id (wechat)",
        )
    return kind, app or None


def parse_policy(
    policy: Iterable[str] = (),
    *,
    allow: Iterable[str] = (),
    deny: Iterable[str] = (),
    ask: Iterable[str] = (),
    base: SafetyPolicy | None = None,
) -> SafetyPolicy:
    """Build a policy from command-line words.

    ``policy``: ``ask`` / ``deny`` / ``allow`` (the default for every kind), ``default=deny``, ``pay=deny``,
    ``send@com.tencent.mm=allow``; items may be comma-separated. ``allow`` / ``deny`` / ``ask``: ``KIND@APP``,
    ``KIND`` or ``*@APP``. UserError (with a hint) on anything else.
    """
    base = base or SafetyPolicy()
    default, rules = base.default, list(base.rules)
    for item in _split(policy):
        if "=" not in item:
            if item.lower() in ("ask", "deny", "allow"):
                default = PolicyAction(item.lower())
                continue
            raise UserError(f"bad safety policy {item!r}", POLICY_HINT)
        left, _, right = item.partition("=")
        if left.strip().lower() == "default":
            default = _action(right, item)
            continue
        kind, app = _kind_and_app(left, item)
        rules.append(PolicyRule(kind, _action(right, item), app))
    for action, items in ((PolicyAction.ALLOW, allow), (PolicyAction.DENY, deny), (PolicyAction.ASK, ask)):
        for item in _split(items):
            kind, app = _kind_and_app(item, item)
            rules.append(PolicyRule(kind, action, app))
    return SafetyPolicy(default, tuple(rules))


def _split(items: Iterable[str]) -> list[str]:
    return [part.strip() for item in items for part in item.split(",") if part.strip()]


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
            return Decision(self.name, Verdict.ALLOW)
        action, rule = self.policy.decide(finding.kind, self._app_keys(ctx.package))
        verdict = {PolicyAction.ALLOW: Verdict.ALLOW, PolicyAction.ASK: Verdict.ASK}.get(
            action, Verdict.BLOCK
        )
        app = self._app_name(ctx.package)
        what = f"{ctx.action.describe()} would {finding.kind}"
        on = f" on {finding.element}" if finding.element else ""
        why = f" ({finding.source}{': ' + finding.detail if finding.detail else ''})"
        reason = f"{what}{on} in {app}{why}; policy {rule}"
        signals = tuple(s for s in (*finding.signals, f"policy {rule}") if s)
        return Decision(
            self.name, verdict, reason, finding.kind, finding.source, finding.element or None, app, signals
        )

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
            ocr_words=self._ocr_reader(ctx),
        )
        return classify(situation)

    def _ocr_reader(self, ctx: GuardContext) -> Any:
        if self._ocr is None or ctx.screenshot_source is None:
            return None

        def words(point: Any) -> Any:
            reader = self.ocr
            image = ctx.screenshot_source() if reader is not None else None  # type: ignore[misc]
            if image is None:
                return None
            return reader.words_near(image, (point.x, point.y))

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


# Apps of these kinds neither move money nor talk to others (their own manifest rules may still say otherwise).
_QUIET_CATEGORIES = frozenset({"tools", "reading", "maps", "music", "news", "education", "system"})


def _could_matter(action: Action) -> bool:
    return action.kind in (
        *POINT_KINDS,
        *GESTURE_KINDS,
        ActionKind.TYPE,
        ActionKind.LAUNCH,
    ) or (action.kind is ActionKind.KEY and action.key is Key.ENTER)


__all__ = ["KINDS", "PolicyAction", "PolicyRule", "SafetyGate", "SafetyPolicy", "parse_policy"]
