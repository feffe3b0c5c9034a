"""Import a GKD subscription file (JSON5) as popup rules, with a report of what was skipped and why.

The user supplies the file; the project ships none. A rule is imported only when everything that decides
whether and where it taps is understood (its selectors, action, position, activity filters, chains); anything
else is skipped with a reason rather than run half-understood. Timing limits (matchTime, actionMaximum,
resetMatch) are kept on the record but not enforced by the loop.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mobile_agent.apps.query.parser import parse_selector
from mobile_agent.apps.query.position import PositionError, check_expression
from mobile_agent.apps.query.syntax import SelectorError
from mobile_agent.apps.schema import PopupRule
from mobile_agent.errors import UserError

MAX_BYTES = 32 * 1024 * 1024
_TAP_ACTIONS = {"click", "clickNode", "clickCenter", None}
_SKIPPED_KEYS = {  # rule or group keys whose meaning the runtime cannot honour: the rule is skipped
    "excludeAllMatches": "excludeAllMatches is not supported",
    "versionCode": "app-version filters (versionCode) are not supported",
    "versionName": "app-version filters (versionName) are not supported",
    "versionCodes": "app-version filters (versionCodes) are not supported",
    "versionNames": "app-version filters (versionNames) are not supported",
}


@dataclass(frozen=True)
class ImportedRule:
    key: str  # "<package or GLOBAL>/<group key>/<rule key or position>"
    package: str | None  # None: a global rule (any app)
    rule: PopupRule
    enabled: bool
    enabled_reason: str
    limits: dict[str, Any] = field(default_factory=dict)  # matchTime / actionMaximum / resetMatch as written


@dataclass(frozen=True)
class SkippedRule:
    key: str
    reason: str


@dataclass
class GkdImport:
    name: str
    version: int | None
    source: str
    imported: list[ImportedRule] = field(default_factory=list)
    skipped: list[SkippedRule] = field(default_factory=list)

    @property
    def enabled(self) -> list[ImportedRule]:
        return [r for r in self.imported if r.enabled]

    def rules_by_package(self) -> tuple[dict[str, list[PopupRule]], list[PopupRule]]:
        """The enabled rules: per package, and those for any app."""
        by_package: dict[str, list[PopupRule]] = {}
        shared: list[PopupRule] = []
        for r in self.enabled:
            (shared if r.package is None else by_package.setdefault(r.package, [])).append(r.rule)
        return by_package, shared

    def summary(self) -> str:
        total = len(self.imported) + len(self.skipped)
        return (
            f"{self.source}: imported {len(self.imported)} of {total} rules "
            f"({len(self.enabled)} enabled, {len(self.imported) - len(self.enabled)} switched off by the file); "
            f"skipped {len(self.skipped)}"
        )


def load_subscription(path: str | Path) -> GkdImport:
    """Read and import a subscription file. Raises UserError when the file is not a GKD subscription."""
    p = Path(path).expanduser()
    hint = "pass a GKD subscription file (the compiled dist/*.json5 of a rule repository)"
    try:
        if p.stat().st_size > MAX_BYTES:
            raise UserError(f"{p}: larger than {MAX_BYTES // (1024 * 1024)} MB", hint)
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"popup rules file {p} does not exist", hint) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read popup rules file {p}: {exc}", hint) from None
    import json5  # only when a subscription is read: a run without one never needs it

    try:
        data = json5.loads(text)
    except (ValueError, RecursionError) as exc:
        raise UserError(f"{p} is not valid JSON5: {str(exc).splitlines()[0][:200]}", hint) from None
    return import_subscription(data, str(p))


def import_subscription(data: object, source: str = "<subscription>") -> GkdImport:
    if not isinstance(data, dict) or not isinstance(data.get("apps", []), list):
        raise UserError(f"{source} is not a GKD subscription (an object with `apps`)", "check the file")
    version = data.get("version")
    result = GkdImport(
        str(data.get("name") or "subscription"), version if isinstance(version, int) else None, source
    )
    categories = [c for c in _as_list(data.get("categories")) if isinstance(c, dict)]
    for gi, group in enumerate(_as_list(data.get("globalGroups"))):
        _import_group(result, group, None, gi, categories, is_global=True)
    for app in _as_list(data.get("apps")):
        package = app.get("id") if isinstance(app, dict) else None
        if not isinstance(package, str) or not package:
            result.skipped.append(SkippedRule(f"apps[{package!r}]", "an app entry without a package id"))
            continue
        for gi, group in enumerate(_as_list(app.get("groups"))):
            _import_group(result, group, package, gi, categories, is_global=False)
    return result


def _import_group(
    result: GkdImport,
    group: object,
    package: str | None,
    position: int,
    categories: list[dict],
    *,
    is_global: bool,
) -> None:
    owner = package or "GLOBAL"
    if not isinstance(group, dict):
        result.skipped.append(SkippedRule(f"{owner}/{position}", "a group that is not an object"))
        return
    gkey = group.get("key", position)
    enabled, why = _group_enabled(group, categories, is_global)
    not_packages = [
        a["id"]
        for a in _as_list(group.get("apps"))
        if is_global and isinstance(a, dict) and isinstance(a.get("id"), str) and a.get("enable") is False
    ]
    for ri, raw in enumerate(_rules_of(group.get("rules"))):
        rkey = raw.get("key", ri) if isinstance(raw, dict) else ri
        key = f"{owner}/{gkey}/{rkey}"
        try:
            rule, limits = _convert(raw, group, package, key, not_packages)
        except _Skip as skip:
            result.skipped.append(SkippedRule(key, str(skip)))
            continue
        result.imported.append(ImportedRule(key, package, rule, enabled, why, limits))


class _Skip(Exception):
    pass


def _group_enabled(group: dict, categories: list[dict], is_global: bool) -> tuple[bool, str]:
    name = str(group.get("name") or "")
    if not is_global:
        captured = [c for c in categories if isinstance(c.get("name"), str) and name.startswith(c["name"])]
        chosen = max(captured, key=lambda c: len(c["name"]), default=None)
        if chosen is not None and isinstance(chosen.get("enable"), bool):
            return chosen["enable"], f"category {chosen['name']} has enable:{str(chosen['enable']).lower()}"
    if group.get("enable") is False:
        return False, "group enable:false"
    return True, "enabled"


def _rules_of(rules: object) -> Iterator[dict | Any]:
    for raw in _as_list(rules):
        yield {"matches": raw} if isinstance(raw, str) else raw


def _convert(
    raw: object, group: dict, package: str | None, key: str, not_packages: list[str]
) -> tuple[PopupRule, dict]:
    if not isinstance(raw, dict):
        raise _Skip("a rule that is neither a string nor an object")
    for name, reason in _SKIPPED_KEYS.items():
        if name in raw or name in group:
            raise _Skip(reason)
    matches = _selectors(raw, "matches")
    any_matches = _selectors(raw, "anyMatches")
    unless = _selectors(raw, "excludeMatches")
    if not matches and not any_matches:
        raise _Skip("no matches or anyMatches selector")
    action = raw.get("action")
    if action not in _TAP_ACTIONS and action != "back":
        raise _Skip(f"action {action!r} is not supported (only click, clickNode, clickCenter and back)")
    position = _position(raw.get("position"))
    pre = [f"gkd/{key.rsplit('/', 1)[0]}/{k}" for k in _as_list(raw.get("preKeys"))]
    fields: dict[str, Any] = {
        "id": f"gkd/{key}",
        "description": " / ".join(str(v) for v in (group.get("name"), raw.get("name")) if v) or None,
        "selector": matches,
        "any_selector": any_matches,
        "unless": unless,
        "activities": _activities(raw.get("activityIds", group.get("activityIds")), package),
        "not_activities": _activities(
            raw.get("excludeActivityIds", group.get("excludeActivityIds")), package
        ),
        "after": pre,
        "not_packages": not_packages,
        "sources": [
            str(u) for u in _as_list(raw.get("snapshotUrls", group.get("snapshotUrls"))) if isinstance(u, str)
        ],
    }
    if action == "back":
        fields["dismiss"] = {"press": "back"}
    if position is not None:
        fields["position"] = position
    try:
        rule = PopupRule.model_validate(fields)
    except ValidationError as exc:
        raise _Skip(f"not a usable rule: {exc.errors()[0]['msg']}") from None
    limits = {k: raw.get(k, group.get(k)) for k in ("matchTime", "actionMaximum", "resetMatch", "actionCd")}
    return rule, {k: v for k, v in limits.items() if v is not None}


def _selectors(raw: dict, name: str) -> list[str]:
    out: list[str] = []
    for text in _as_list(raw.get(name)):
        if not isinstance(text, str):
            raise _Skip(f"{name} holds a {type(text).__name__}, not a selector string")
        try:
            parse_selector(text)
        except SelectorError as exc:
            raise _Skip(f"{name} {text!r}: {exc}") from None
        out.append(text)
    return out


def _position(raw: object) -> dict | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _Skip("position is not an object")
    if "x" in raw or "y" in raw:
        raise _Skip("position x / y is not supported (only left/right and top/bottom)")
    unknown = set(raw) - {"left", "right", "top", "bottom"}
    if unknown:
        raise _Skip(f"position has unknown keys {sorted(unknown)}")
    for value in raw.values():
        try:
            check_expression(value)
        except PositionError as exc:
            raise _Skip(f"position: {exc}") from None
    return dict(raw)


def _activities(raw: object, package: str | None) -> list[str]:
    out = []
    for value in _as_list(raw):
        if not isinstance(value, str):
            raise _Skip("activityIds holds something that is not a string")
        if value.startswith("."):
            if package is None:
                raise _Skip(f"relative activity {value!r} in a global group")
            value = package + value
        out.append(value)
    return out


def _as_list(value: object) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]
