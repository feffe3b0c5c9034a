"""Import a GKD subscription file (JSON5) as popup rules, with a report of what was refused and why.

The user supplies the file; the project ships none. Reading it costs one JSON5 parse (apps/subscription_cache.py
keeps the result per process, keyed by the content). A package's rules are converted the first time a screen of
that package is matched, so a 3,000-rule file costs a few milliseconds per app seen, not a conversion of every
rule at start-up; :meth:`GkdImport.imported` / ``skipped`` convert everything (for ``apps popups --report``).

A rule is imported only when everything that decides whether, where and how it acts is understood (its
selectors, action, position, activity and version filters, chains, timing limits: apps/gkd_rules.py); anything
else is refused with a reason rather than run half-understood. Which groups act: those the user names with
``--popup-categories`` (a category or a group name), whatever the file says; else the dismissal groups the file
switches on (a category's ``enable`` overrides its groups'); a functional group (功能类, auto-click, rewards: see
apps/gkd_intent.py) or one whose purpose cannot be read never acts unless named.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mobile_agent.apps import subscription_cache
from mobile_agent.apps.gkd_convert import Refused, convert_rule
from mobile_agent.apps.gkd_intent import CATEGORIES_ENV, acts_by_default, kind_of, named_kind
from mobile_agent.apps.gkd_rules import GkdRule
from mobile_agent.apps.schema import PopupRule
from mobile_agent.errors import UserError

GLOBAL = "GLOBAL"


@dataclass(frozen=True)
class ImportedRule:
    key: str  # "<package or GLOBAL>/<group key>/<rule key or position>"
    package: str | None  # None: a global rule (any app)
    rule: GkdRule
    enabled: bool
    enabled_reason: str

    @property
    def limits(self) -> dict[str, Any]:
        """The timing limits as GKD names them (only those the file sets or that differ from GKD's defaults)."""
        lim = self.rule.limits
        named = {
            "matchDelay": lim.match_delay,
            "matchTime": lim.match_time,
            "actionMaximum": lim.action_maximum,
            "resetMatch": lim.reset_match if lim.reset_match != "activity" else None,
            "actionCd": lim.action_cd if lim.action_cd != 1000 else None,
            "actionDelay": lim.action_delay,
        }
        return {k: v for k, v in named.items() if v is not None}


@dataclass(frozen=True)
class SkippedRule:
    key: str
    reason: str  # why, in general (the report groups by it)
    detail: str = ""  # the selector or value at fault


@dataclass
class Group:
    """One group as the file writes it; its rules are converted on demand."""

    owner: str  # package or GLOBAL
    key: object
    position: int
    name: str
    raw: dict
    category: str | None
    kind: str
    file_enable: bool
    file_reason: str
    not_packages: list[str] = field(default_factory=list)  # a global group: apps that opt out

    @property
    def ref(self) -> str:
        return f"{self.owner}/{self.key}"


class Subscription:
    """A parsed subscription file: groups indexed by package; rules converted once per owner and kept."""

    def __init__(self, data: object, source: str) -> None:
        if not isinstance(data, dict) or not isinstance(data.get("apps", []), list):
            raise UserError(f"{source} is not a GKD subscription (an object with `apps`)", "check the file")
        version = data.get("version")
        self.name = str(data.get("name") or "subscription")
        self.version = version if isinstance(version, int) and not isinstance(version, bool) else None
        self.categories = [
            c
            for c in _as_list(data.get("categories"))
            if isinstance(c, dict) and isinstance(c.get("name"), str)
        ]
        self.refused_entries: list[SkippedRule] = []
        self.apps: dict[str, list[Group]] = {}
        self.app_groups: dict[str, dict] = {}  # raw app entries, for preKeys / scopeKeys across groups
        for app in _as_list(data.get("apps")):
            package = app.get("id") if isinstance(app, dict) else None
            if not isinstance(package, str) or not package:
                self.refused_entries.append(
                    SkippedRule(f"apps[{package!r}]", "an app entry without a package id")
                )
                continue
            groups = [self._group(package, g, i) for i, g in enumerate(_as_list(app.get("groups")))]
            self.apps.setdefault(package, []).extend(g for g in groups if g is not None)
            self.app_groups[package] = app
        self.globals = [
            g
            for g in (self._group(GLOBAL, g, i) for i, g in enumerate(_as_list(data.get("globalGroups"))))
            if g is not None
        ]
        for group in self.globals:
            group.not_packages = self._opted_out(group)
        self._converted: dict[str, tuple[list[ImportedRule], list[SkippedRule]]] = {}
        self.rule_count = sum(len(_rules_of(g.raw.get("rules"))) for g in self.groups())

    def groups(self) -> Iterator[Group]:
        yield from self.globals
        for groups in self.apps.values():
            yield from groups

    def category_of(self, name: str) -> dict | None:
        captured = [c for c in self.categories if name.startswith(c["name"])]
        return max(captured, key=lambda c: len(c["name"]), default=None)

    def _group(self, owner: str, raw: object, position: int) -> Group | None:
        if not isinstance(raw, dict):
            self.refused_entries.append(SkippedRule(f"{owner}/{position}", "a group that is not an object"))
            return None
        key = raw.get("key", position)
        if not isinstance(key, int) or isinstance(key, bool):
            self.refused_entries.append(
                SkippedRule(f"{owner}/{position}", "a group key must be an integer", repr(key)[:80])
            )
            return None
        name = str(raw.get("name") or "")
        category = self.category_of(name)
        enable, reason = True, "enabled"
        if owner != GLOBAL and category is not None and isinstance(category.get("enable"), bool):
            enable, reason = (
                category["enable"],
                f"category {category['name']} has enable:{str(category['enable']).lower()}",
            )
        elif raw.get("enable") is False:
            enable, reason = False, "group enable:false"
        cat_name = category["name"] if category else None
        return Group(
            owner,
            raw.get("key", position),
            position,
            name,
            raw,
            cat_name,
            kind_of(name, cat_name),
            enable,
            reason,
        )

    def _opted_out(self, group: Group) -> list[str]:
        out = [
            a["id"]
            for a in _as_list(group.raw.get("apps"))
            if isinstance(a, dict) and isinstance(a.get("id"), str) and a.get("enable") is False
        ]
        prefix = group.raw.get("disableIfAppGroupMatch")
        if isinstance(prefix, str):
            prefix = prefix or group.name
            out += [
                package
                for package, groups in self.apps.items()
                if any(
                    g.name.startswith(prefix) and g.raw.get("ignoreGlobalGroupMatch") is not True
                    for g in groups
                )
            ]
        return list(dict.fromkeys(out))

    def converted(self, owner: str) -> tuple[list[tuple[Group, GkdRule]], list[SkippedRule]]:
        """The owner's rules (a package or GLOBAL), converted the first time and kept."""
        with _CONVERT_LOCK:
            held = self._converted.get(owner)
            if held is None:
                held = self._convert(owner)
                self._converted[owner] = held
        return held  # type: ignore[return-value]

    def _convert(self, owner: str) -> tuple[list[tuple[Group, GkdRule]], list[SkippedRule]]:
        groups = self.globals if owner == GLOBAL else self.apps.get(owner, [])
        done: list[tuple[Group, GkdRule]] = []
        refused: list[SkippedRule] = []
        siblings = {g.key: g.raw for g in groups}
        for group in groups:
            for ri, raw in enumerate(_rules_of(group.raw.get("rules"))):
                rkey = raw.get("key", ri) if isinstance(raw, dict) else ri
                key = f"{group.ref}/{rkey}"
                try:
                    rule = convert_rule(raw, group, key, siblings)
                except Refused as why:
                    refused.append(SkippedRule(key, why.reason, why.detail))
                    continue
                done.append((group, rule))
        return done, refused


_CONVERT_LOCK = threading.Lock()


class GkdImport:
    """A subscription as this process uses it: which groups act, given the categories the user named."""

    def __init__(self, subscription: Subscription, source: str, named: Iterable[str] | None = ()) -> None:
        """``named``: what --popup-categories gives; None: the popup_categories setting, read when first needed
        (and again after unpickling: a registry kept on disk does not keep another process's setting)."""
        self.subscription = subscription
        self.source = source
        self._given = None if named is None else _clean(named)
        self._named: tuple[str, ...] | None = self._given
        self._named_key: str | None = None
        self.name = subscription.name
        self.version = subscription.version

    @property
    def named(self) -> tuple[str, ...]:
        if self._given is not None:
            return self._given
        key = os.environ.get(CATEGORIES_ENV)  # what --popup-categories sets: read again when it changes
        if self._named is None or self._named_key != key:
            self._named, self._named_key = _clean(configured_categories()), key
        return self._named

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_named": self._given, "_named_key": None}

    # -- which groups act --------------------------------------------------------------------------------------
    def acts(self, group: Group) -> tuple[bool, str]:
        named = next((n for n in self.named if _names_group(n, group)), None)
        if named is not None:
            return True, f"named by --popup-categories ({named})"
        if not acts_by_default(group.kind):
            what = "functional" if group.kind == "functional" else "purpose unclear"
            return False, f"{what} group: acts only when its category or name is given to --popup-categories"
        return group.file_enable, group.file_reason

    def unknown_names(self) -> list[str]:
        """The names given to --popup-categories that match no category or group of this file."""
        groups = list(self.subscription.groups())
        return [n for n in self.named if not any(_names_group(n, g) for g in groups)]

    # -- rules for the matcher ---------------------------------------------------------------------------------
    def rules_for(self, package: str) -> list[PopupRule]:
        return [rule for group, rule in self.subscription.converted(package)[0] if self.acts(group)[0]]

    def shared_rules(self) -> list[PopupRule]:
        return [rule for group, rule in self.subscription.converted(GLOBAL)[0] if self.acts(group)[0]]

    def rules_by_package(self) -> tuple[dict[str, list[PopupRule]], list[PopupRule]]:
        """Every acting rule: per package, and those for any app (converts the whole file)."""
        by_package = {pkg: rules for pkg in self.subscription.apps if (rules := self.rules_for(pkg))}
        return by_package, self.shared_rules()

    # -- the whole file (converts every rule) --------------------------------------------------------------------
    def _everything(self) -> Iterator[tuple[str, list[tuple[Group, GkdRule]], list[SkippedRule]]]:
        for owner in (GLOBAL, *self.subscription.apps):
            done, refused = self.subscription.converted(owner)
            yield owner, done, refused

    @property
    def imported(self) -> list[ImportedRule]:
        out = []
        for owner, done, _ in self._everything():
            for group, rule in done:
                on, why = self.acts(group)
                out.append(
                    ImportedRule(
                        rule.id.removeprefix("gkd/"), None if owner == GLOBAL else owner, rule, on, why
                    )
                )
        return out

    @property
    def skipped(self) -> list[SkippedRule]:
        return self.subscription.refused_entries + [
            s for _, _, refused in self._everything() for s in refused
        ]

    @property
    def enabled(self) -> list[ImportedRule]:
        return [r for r in self.imported if r.enabled]

    def summary(self) -> str:
        """Counts over every rule (converts the whole file)."""
        imported, skipped = self.imported, self.skipped
        on = sum(r.enabled for r in imported)
        return (
            f"{self.source}: imported {len(imported)} of {len(imported) + len(skipped)} rules "
            f"({on} act, {len(imported) - on} switched off); refused {len(skipped)}"
        )

    def brief(self) -> str:
        """Counts from the groups alone (no rule converted): what `run` prints at start-up."""
        groups = list(self.subscription.groups())
        acting = [g for g in groups if self.acts(g)[0]]
        held_back = sum(1 for g in groups if not acts_by_default(g.kind) and not self.acts(g)[0])
        return (
            f"{self.source}: {len(self.subscription.apps)} apps, {len(groups)} groups, "
            f"{self.subscription.rule_count} rules; {len(acting)} groups act"
            + (f" ({held_back} functional or unclear groups held back)" if held_back else "")
        )


def _names_group(name: str, group: Group) -> bool:
    """``name`` is the group's category, its name or a prefix of it ending at '-', or its kind: an English kind
    (splash, update, ...) or a category name of that kind when the group is in no category (gkd-kit's 2024 file
    names update groups 更新弹窗 or 版本更新, outside its 更新提示 category)."""
    if name in (group.category, group.name, group.kind) or group.name.startswith(name + "-"):
        return True
    return group.category is None and named_kind(name) == group.kind


def load_subscription(path: str | Path, categories: Iterable[str] | None = None) -> GkdImport:
    """Read a subscription file (parsed once per process for the same bytes). Raises UserError when it is not a
    GKD subscription. ``categories``: the names --popup-categories gives (None: the popup_categories setting)."""
    p, data = subscription_cache.read_bytes(path)
    subscription = subscription_cache.cached(
        data, "gkd", lambda raw: Subscription(subscription_cache.parse_json5(raw, str(p)), str(p))
    )
    return GkdImport(subscription, str(p), categories)


def import_subscription(
    data: object, source: str = "<subscription>", categories: Iterable[str] = ()
) -> GkdImport:
    return GkdImport(Subscription(data, source), source, categories)


def _clean(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n for n in (str(s).strip() for s in names) if n))


def configured_categories() -> list[str]:
    from mobile_agent.settings.values import load_settings

    return list(load_settings().popup_categories)


def _rules_of(rules: object) -> list[Any]:
    return [{"matches": raw} if isinstance(raw, str) else raw for raw in _as_list(rules)]


def _as_list(value: object) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]
