"""One GKD rule (with its group's defaults) -> a GkdRule, or Refused with the reason.

GKD resolves every common property as *rule ?: group ?: default*; so does this. A rule is refused only for what
no phone could run or what the file gets wrong: a selector that does not parse, a position or swipe that is not
arithmetic, a value of the wrong type. Fields that only tune GKD's event-driven engine (fastQuery / quickFind,
matchRoot, forcedTime, order, priorityTime, priorityActionMaximum, the URL fields) have nothing to change for an
agent that reads the whole tree on every step, and are kept only as provenance (snapshotUrls).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, get_args

from pydantic import ValidationError

from mobile_agent.apps.gkd_rules import (
    AppScope,
    Gesture,
    GkdPoint,
    GkdRule,
    IntMatcher,
    Limits,
    StringMatcher,
    SwipeArg,
    Versions,
)
from mobile_agent.apps.query.javaregex import JavaRegexError, java_regex
from mobile_agent.apps.query.parser import parse_selector
from mobile_agent.apps.query.syntax import SelectorError

if TYPE_CHECKING:
    from mobile_agent.apps.gkd_import import Group

_SELECTOR_FIELDS = {
    "matches": "selector",
    "anyMatches": "any_selector",
    "excludeMatches": "unless",
    "excludeAllMatches": "exclude_all",
}
_ACTIONS = get_args(Gesture)
_LIMITS = {
    "matchDelay": "match_delay",
    "matchTime": "match_time",
    "actionMaximum": "action_maximum",
    "actionCd": "action_cd",
    "actionDelay": "action_delay",
}


class Refused(Exception):
    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


def convert_rule(raw: object, group: Group, key: str, siblings: dict[object, dict]) -> GkdRule:
    """``siblings``: the raw groups of the same owner by key (preKeys and shared keys may name their rules)."""
    if not isinstance(raw, dict):
        raise Refused("a rule that is neither a string nor an object")
    g = group.raw

    def prop(name: str) -> Any:
        return raw[name] if name in raw else g.get(name)

    fields: dict[str, Any] = {
        name: _selectors(raw, gkd) for gkd, name in _SELECTOR_FIELDS.items() if raw.get(gkd) is not None
    }
    if not fields.get("selector") and not fields.get("any_selector"):
        raise Refused("a rule without matches or anyMatches (a placeholder)")
    package = None if group.owner == "GLOBAL" else group.owner
    position = _point(prop("position"), "position")
    swipe = _swipe(prop("swipeArg"))
    action = prop("action")
    if action is None:
        action = "clickCenter" if position is not None else "swipe" if swipe is not None else "click"
    if action not in _ACTIONS:
        raise Refused(f"action {action!r} is not a GKD action", f"GKD has {', '.join(_ACTIONS)}")
    rule_id = f"gkd/{key}"
    fields.update(
        id=rule_id,
        description=" / ".join(str(v) for v in (g.get("name"), raw.get("name")) if v) or None,
        activities=_activities(prop("activityIds"), package),
        not_activities=_activities(prop("excludeActivityIds"), package),
        after=[_rule_ref(group, siblings, k, "preKeys") for k in _as_list(raw.get("preKeys"))],
        not_packages=group.not_packages,
        sources=[str(u) for u in _as_list(prop("snapshotUrls")) if isinstance(u, str)],
        gesture=action,
        point=position,
        swipe=swipe,
        limits=_limits(prop, group, siblings),
        versions=_versions(prop, "versions"),
        group=f"gkd/{group.ref}",
        category=group.category,
        kind=group.kind,
    )
    if action == "back":
        fields["dismiss"] = {"press": "back"}
    if package is None:
        fields.update(_global_scope(g))
    try:
        return GkdRule.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        raise Refused(f"not a usable rule: {first['msg']}", where) from None


def _selectors(raw: dict, name: str) -> list[str]:
    out: list[str] = []
    for text in _as_list(raw.get(name)):
        if not isinstance(text, str):
            raise Refused(f"{name} holds a {type(text).__name__}, not a selector string")
        try:
            parse_selector(text)
        except SelectorError as exc:
            kind = "unsupported selector" if exc.unsupported else "invalid selector"
            raise Refused(f"{kind}: {exc.message}", f"{name} {text!r} (at column {exc.column + 1})") from None
        out.append(text)
    return out


def _point(raw: object, what: str) -> GkdPoint | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise Refused(f"{what} is not an object")
    try:
        return GkdPoint.model_validate(raw)
    except ValidationError as exc:
        raise Refused(f"{what}: {exc.errors(include_url=False)[0]['msg']}", repr(raw)[:200]) from None


def _swipe(raw: object) -> SwipeArg | None:
    if raw is None:
        return None
    if (
        not isinstance(raw, dict)
        or not isinstance(raw.get("duration"), int)
        or isinstance(raw.get("duration"), bool)
    ):
        raise Refused("swipeArg needs start and an integer duration", repr(raw)[:200])
    start = _point(raw.get("start"), "swipeArg.start")
    if start is None:
        raise Refused("swipeArg needs start", repr(raw)[:200])
    try:
        return SwipeArg(start=start, end=_point(raw.get("end"), "swipeArg.end"), duration_ms=raw["duration"])
    except ValidationError as exc:
        raise Refused(f"swipeArg: {exc.errors(include_url=False)[0]['msg']}", repr(raw)[:200]) from None


def _limits(prop: Any, group: Group, siblings: dict[object, dict]) -> Limits:
    values: dict[str, Any] = {}
    for gkd, name in _LIMITS.items():
        value = prop(gkd)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < -1:
            raise Refused(f"{gkd} must be an integer number of milliseconds (or times)", repr(value))
        if value >= 0:  # -1: GKD's "no limit"
            values[name] = value
    reset = prop("resetMatch")
    if reset is not None:
        if reset not in ("activity", "match", "app"):
            raise Refused("resetMatch must be activity, match or app", repr(reset))
        values["reset_match"] = reset
    for gkd, name in (("actionMaximumKey", "counter"), ("actionCdKey", "cooldown")):
        shared = prop(gkd)
        if shared is not None:
            values[name] = _rule_ref(group, siblings, shared, gkd)
    return Limits(**values)


def _rule_ref(group: Group, siblings: dict[object, dict], rule_key: object, what: str) -> str:
    """The id of the rule with this key: in the same group, else in a group of ``scopeKeys``."""
    if not isinstance(rule_key, int) or isinstance(rule_key, bool):
        raise Refused(f"{what} holds {rule_key!r}, not a rule key")
    for gkey in (group.key, *_as_list(group.raw.get("scopeKeys"))):
        other = siblings.get(gkey)
        if other is None:
            continue
        keys = [
            r.get("key", i) if isinstance(r, dict) else i for i, r in enumerate(_as_list(other.get("rules")))
        ]
        if rule_key in keys:
            return f"gkd/{group.owner}/{gkey}/{rule_key}"
    return f"gkd/{group.ref}/{rule_key}"  # names no rule: the chain never starts, as in GKD


def _versions(prop: Any, what: str) -> Versions | None:
    code, name = prop("versionCode"), prop("versionName")
    legacy = {
        k: prop(k) for k in ("versionCodes", "excludeVersionCodes", "versionNames", "excludeVersionNames")
    }
    if code is None and (legacy["versionCodes"] is not None or legacy["excludeVersionCodes"] is not None):
        code = {"include": legacy["versionCodes"], "exclude": legacy["excludeVersionCodes"] or []}
    if name is None and (legacy["versionNames"] is not None or legacy["excludeVersionNames"] is not None):
        name = {"include": legacy["versionNames"], "exclude": legacy["excludeVersionNames"] or []}
    if code is None and name is None:
        return None
    try:
        code_m = IntMatcher.model_validate(_listed(code)) if code is not None else None
        name_m = StringMatcher.model_validate(_listed(name)) if name is not None else None
    except ValidationError as exc:
        raise Refused(
            f"{what}: {exc.errors(include_url=False)[0]['msg']}", repr((code, name))[:200]
        ) from None
    if name_m is not None and name_m.pattern is not None:
        try:
            java_regex(name_m.pattern)
        except JavaRegexError as exc:
            raise Refused(f"versionName.pattern: {exc}") from None
    return Versions(code=code_m, name=name_m)


def _listed(matcher: object) -> object:
    if not isinstance(matcher, dict):
        raise Refused("a version filter is not an object", repr(matcher)[:200])
    return {
        k: _as_list(v) if k in ("include", "exclude") and v is not None else v for k, v in matcher.items()
    }


def _global_scope(g: dict) -> dict[str, Any]:
    scopes: dict[str, AppScope] = {}
    for entry in _as_list(g.get("apps")):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise Refused("a global group's apps entry without a package id")
        package = entry["id"]

        def prop(name: str, entry: dict = entry) -> Any:
            return entry.get(name)

        activities = entry.get("activityIds")
        scopes[package] = AppScope(
            enable=entry.get("enable") is not False,
            activities=None if activities is None else _activities(activities, package),
            not_activities=_activities(entry.get("excludeActivityIds"), package),
            versions=_versions(prop, f"apps[{package}] version filter"),
        )
    return {
        "any_app": g.get("matchAnyApp") is not False,
        "system_apps": g.get("matchSystemApp") is True or g.get("matchLauncher") is True,
        "app_scopes": scopes,
    }


def _activities(raw: object, package: str | None) -> list[str]:
    out = []
    for value in _as_list(raw):
        if not isinstance(value, str):
            raise Refused("activityIds holds something that is not a string", repr(value)[:100])
        if value.startswith("."):
            if package is None:
                raise Refused(f"relative activity {value!r} in a global rule (no package to prefix)")
            value = package + value
        out.append(value)
    return out


def _as_list(value: object) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]
