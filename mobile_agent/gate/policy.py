"""The policy words: what happens to a consequential kind (allow, ask a person, deny), per kind and per app, as
the command line writes it (``--policy``, ``--allow``, ``--deny``, ``--ask``).

The kinds (:data:`mobile_agent.gate.lexicon.KINDS`): ``pay``, ``transfer``, ``order``, ``delete``, ``send``,
``post``, ``call``; ``share`` (personal data or access handed to another party: a phone number to a mini-program,
contacts, a login on another device); ``security`` (lowering the device's own protection: the screen lock removed,
Find My Device switched off, installing unknown apps or USB debugging allowed); ``sensitive`` (consequential, but
nothing says which kind). ``--deny security`` refuses the last kind of action in every app; ``security@com.android.
settings=allow`` lets it through in Settings only."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from mobile_agent.apps.names import normalise
from mobile_agent.errors import UserError
from mobile_agent.gate.lexicon import KINDS

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


__all__ = ["POLICY_HINT", "PolicyAction", "PolicyRule", "SafetyPolicy", "parse_policy"]
