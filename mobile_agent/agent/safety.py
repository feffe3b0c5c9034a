"""The safety gate: is this action consequential (pay, transfer, order, delete, send, post, call), and what does the
policy say about it (allow, ask a person, deny)?

What the gate looks at, in order:
  (a) the app manifests' consequential rules (``AppRegistry.match_consequential`` / ``match_consequential_screen``),
  (b) the element under the tap point in the view tree (its label, in the foreground app's context), with a small
      built-in label lexicon for apps without a manifest,
  (c) the model's own signal (``Action.sensitive``: AutoGLM's ``Tap(message=...)``).
A black (secure) screen and the model's call-user / take-over are handled by the loop as a take-over, not here.

Fail closed: when the view tree cannot be had and the target looks consequential (a sensitive flag, a thought that
talks about paying or sending, or an app whose manifest lists money rules), the gate asks. Text on the screen never
changes the policy: the gate reads labels only to classify the element that would be touched.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from lxml import etree

from mobile_agent.actions import POINT_KINDS, Action, ActionKind, Key, Point
from mobile_agent.apps.names import normalise
from mobile_agent.screen.viewtree import Element, ViewTree
from mobile_agent.errors import UserError
from mobile_agent.agent.guards import Decision, GuardContext, Verdict

log = logging.getLogger(__name__)

KINDS = ("pay", "transfer", "order", "delete", "send", "post", "call", "sensitive")
MONEY_KINDS = frozenset({"pay", "transfer", "order"})
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


def _kind_and_app(text: str, spec: str) -> tuple[str, str | None]:
    kind, _, app = text.strip().partition("@")
    kind = kind.strip().lower() or "*"
    if kind not in KINDS and kind != "*":
        raise UserError(f"bad safety policy {spec!r}: unknown kind {kind!r}", POLICY_HINT)
    if _ and not app.strip():
        raise UserError(f"bad safety policy {spec!r}: nothing after '@'", "name the app: KIND@com.tencent.mm")
    return kind, app.strip() or None


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


# ----- what is consequential ------------------------------------------------------------------------------------
# Full labels only (anchored at both ends), so that running text such as "记得转账给我" never matches.
LABEL_LEXICON: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        (
            "pay",
            r"^(确认|立即|去|马上|继续)?(支付|付款|买单)(\s*[¥￥]?\s*[\d.,]+\s*元?)?$|^确认交易$|^(pay|pay now)$",
        ),
        ("transfer", r"^(确认|立即)?转账$|^确认汇款$"),
        ("order", r"^(提交|确认|立即)(订单|下单)$|^去下单$|^(place order|submit order)$"),
        ("delete", r"^(确认|永久|彻底)?删除(聊天记录|消息|好友|订单|文件)?$|^清空(聊天记录)?$|^delete$"),
        ("send", r"^发送$|^send$"),
        ("post", r"^(发表|发布)$|^post$"),
    )
)
# Words in free text (the model's sensitive message or its thought) that say what kind of thing is about to happen.
TEXT_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        ("transfer", r"转账|汇款|transfer"),
        ("pay", r"支付|付款|买单|\bpay"),
        ("order", r"下单|提交订单|place order"),
        ("delete", r"删除|清空|\bdelete"),
        ("send", r"发送|\bsend"),
        ("post", r"发表|发布|\bpost\b"),
        ("call", r"拨打|通话|\bcall\b"),
    )
)


@dataclass(frozen=True)
class Finding:
    """Why an action is consequential."""

    kind: str
    source: str  # manifest | label | screen | model | fail_closed
    element: str = ""
    detail: str = ""


@dataclass(frozen=True)
class TapTarget:
    """The element a tap would land on (nearest clickable ancestor of the deepest hit) and the labels it carries."""

    element: Element
    candidates: tuple[Element, ...]

    def describe(self) -> str:
        return describe_element(self.element, self.candidates)


def describe_element(element: Element, candidates: Iterable[Element] = ()) -> str:
    label = element.text.strip() or element.content_desc.strip()
    if not label:
        label = next(
            (c.text.strip() or c.content_desc.strip() for c in candidates if c.text or c.content_desc), ""
        )
    parts = [f"'{label}'" if label else "(no label)", element.class_name.rsplit(".", 1)[-1]]
    if element.resource_id:
        parts.append(element.resource_id)
    if element.bounds is not None:
        b = element.bounds
        parts.append(f"[{b.left},{b.top}][{b.right},{b.bottom}]")
    return " ".join(p for p in parts if p)


def target_at(tree: ViewTree, point: Point) -> TapTarget | None:
    """The element under ``point``: the last (topmost, deepest) visible element in document order that contains
    it, walked up to its nearest clickable ancestor; plus the labels that belong to that clickable."""
    by_node = {id(e.node): e for e in tree.elements}
    hits = [e for e in tree.elements if _visible(e) and _contains(e, point)]
    if not hits:
        return None
    deepest = hits[-1]
    chain = [deepest]
    target = deepest
    node = deepest.node
    while node is not None and node.get("clickable") != "true":
        node = node.getparent()
        if node is not None and id(node) in by_node:
            chain.append(by_node[id(node)])
    if node is not None and id(node) in by_node:
        target = by_node[id(node)]
    candidates = list(dict.fromkeys(chain))
    labelled = [
        by_node[id(child)]
        for child in _own_descendants(target.node)
        if id(child) in by_node
        and (by_node[id(child)].text.strip() or by_node[id(child)].content_desc.strip())
    ]
    # A control with one label is named by it wherever the finger lands (a button's padding); a composite row
    # (name, preview, time) is named only by the labels under the finger, so a preview text never names the row.
    if len(labelled) == 1:
        candidates += labelled
    else:
        candidates += [e for e in labelled if _contains(e, point)]
    return TapTarget(target, tuple(dict.fromkeys(candidates)))


def _own_descendants(node: etree._Element) -> Iterable[etree._Element]:
    """Descendants that are not inside another clickable (their labels belong to the tapped control)."""
    for child in node.iterchildren("node"):
        if child.get("clickable") == "true":
            continue
        yield child
        yield from _own_descendants(child)


def _visible(e: Element) -> bool:
    return e.node.get("visible-to-user", "true") != "false" and e.bounds is not None and not e.bounds.empty


def _contains(e: Element, p: Point) -> bool:
    b = e.bounds
    return b is not None and b.left <= p.x < b.right and b.top <= p.y < b.bottom


def label_kind(label: str) -> str | None:
    label = label.strip()
    return next((kind for kind, pattern in LABEL_LEXICON if pattern.search(label)), None) if label else None


def text_kind(text: str) -> str | None:
    return next((kind for kind, pattern in TEXT_KINDS if pattern.search(text)), None) if text else None


class SafetyGate:
    """The Guard that classifies an action and applies the policy. Stateless between steps."""

    name = "safety"

    def __init__(self, policy: SafetyPolicy | None = None, registry: Any = None) -> None:
        self.policy = policy or SafetyPolicy()
        self.registry = registry

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
        return Decision(
            self.name, verdict, reason, finding.kind, finding.source, finding.element or None, app
        )

    # -- classification ----------------------------------------------------------------------------------------
    def classify(self, ctx: GuardContext) -> Finding | None:
        action = ctx.action
        sensitive = (action.sensitive or "").strip()
        if not self._could_matter(action):
            return Finding(text_kind(sensitive) or "sensitive", "model", "", sensitive) if sensitive else None
        xml = ctx.hierarchy()
        tree = ViewTree.parse(xml) if xml else None
        if tree is None:
            return self._fail_closed(ctx, sensitive)
        target = target_at(tree, action.point) if action.kind in POINT_KINDS and action.point else None
        if target is not None:
            found = self._element_finding(ctx.package, target)
            if found is not None:
                return found
        screen = self._screen_finding(ctx.package, xml)  # type: ignore[arg-type]
        if screen is not None:
            return screen
        if sensitive:
            element = target.describe() if target is not None else ""
            return Finding(text_kind(sensitive) or "sensitive", "model", element, sensitive)
        return None

    @staticmethod
    def _could_matter(action: Action) -> bool:
        return (
            action.kind in POINT_KINDS
            or action.kind is ActionKind.TYPE
            or (action.kind is ActionKind.KEY and action.key is Key.ENTER)
        )

    def _element_finding(self, package: str, target: TapTarget) -> Finding | None:
        described = target.describe()
        if self.registry is not None:
            for element in target.candidates:
                for pkg in dict.fromkeys([package, element.package]):
                    if not pkg:
                        continue
                    rule = self.registry.match_consequential(pkg, element.as_dict())
                    if rule is not None:
                        return Finding(rule.kind, "manifest", described, rule.description or "")
        for element in target.candidates:
            for label in (element.text, element.content_desc):
                kind = label_kind(label)
                if kind is not None:
                    return Finding(kind, "label", described, f"label '{label.strip()}'")
        return None

    def _screen_finding(self, package: str, xml: str) -> Finding | None:
        if self.registry is None or not package:
            return None
        found = self.registry.match_consequential_screen(package, xml)
        if found is None:
            return None
        rule, element = found
        return Finding(rule.kind, "screen", describe_element(element), rule.description or "")

    def _fail_closed(self, ctx: GuardContext, sensitive: str) -> Finding | None:
        reason = "the view tree is unavailable"
        if sensitive:
            return Finding(
                text_kind(sensitive) or "sensitive", "fail_closed", "", f"{reason}; model: {sensitive}"
            )
        kind = text_kind(ctx.thought)
        if kind is not None:
            return Finding(kind, "fail_closed", "", f"{reason}; the model's thought mentions {kind}")
        money = [r.kind for r in self._rules(ctx.package) if r.kind in MONEY_KINDS]
        if money and ctx.action.kind in POINT_KINDS:
            return Finding(money[0], "fail_closed", "", f"{reason} in an app that moves money")
        return None

    # -- app context -------------------------------------------------------------------------------------------
    def _rules(self, package: str) -> list[Any]:
        if self.registry is None or not package:
            return []
        manifest = self.registry.by_package(package)
        return list(manifest.consequential) if manifest is not None else []

    def _app_keys(self, package: str) -> list[str]:
        keys = [package]
        manifest = self.registry.by_package(package) if self.registry is not None and package else None
        if manifest is not None:
            keys += [manifest.id, *manifest.names]
        return keys

    def _app_name(self, package: str) -> str:
        manifest = self.registry.by_package(package) if self.registry is not None and package else None
        return f"{manifest.name} ({package})" if manifest is not None else (package or "an unknown app")


__all__ = [
    "KINDS",
    "Finding",
    "PolicyAction",
    "PolicyRule",
    "SafetyGate",
    "SafetyPolicy",
    "TapTarget",
    "describe_element",
    "label_kind",
    "parse_policy",
    "target_at",
    "text_kind",
]
