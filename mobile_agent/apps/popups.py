"""Popup rules against one screen: does a rule fire, on which element, with which action, and if not, why not.

:func:`run_rules` tries a package's rules in order (the registry builds the order) and stops at the first that
fires; :func:`try_rule` judges one. A rule imported from GKD (apps/gkd_rules.py) also says when it may act:
matchDelay / matchTime after its app, activity or matching screen appeared (resetMatch), at most actionMaximum
times, actionCd apart, actionDelay after it was first seen. Those need what happened earlier in the episode:
:class:`RuleMemory`, one per episode (:func:`episode_memory`), kept here. Without an episode (``apps popups``,
the benchmarks) there is no memory and the limits are not applied.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from mobile_agent.actions import Action, ActionKind
from mobile_agent.apps import global_guard
from mobile_agent.apps.gkd_rules import LONG_PRESS_MS, LONG_PRESSES, GkdPoint, GkdRule, Versions
from mobile_agent.apps.query.evaluate import find_target
from mobile_agent.apps.query.needs import Need, ScreenWords, one_of, pattern_need, selector_needs
from mobile_agent.apps.query.parser import parse_selector
from mobile_agent.apps.query.position import Box, PositionError, evaluate
from mobile_agent.apps.query.syntax import SelectorError
from mobile_agent.apps.schema import ElementSelector, PopupRule
from mobile_agent.apps.selectors import find
from mobile_agent.screen.viewtree import Element, ViewTree, visible

# Packages GKD's global rules leave alone by default (matchSystemApp / matchLauncher false): the system and the
# phone makers' own apps. The dump does not say which apps are system apps; these prefixes are the common ones.
SYSTEM_PREFIXES = (
    "android",
    "com.android.",
    "com.google.android.gms",
    "com.google.android.inputmethod",
    "com.google.android.permissioncontroller",
    "com.miui.",
    "com.xiaomi.",
    "com.huawei.",
    "com.hihonor.",
    "com.coloros.",
    "com.oplus.",
    "com.oppo.",
    "com.heytap.",
    "com.vivo.",
    "com.bbk.",
    "com.iqoo.",
    "com.samsung.",
    "com.sec.",
    "com.meizu.",
    "com.flyme.",
    "com.oneplus.",
)


def is_system_package(package: str) -> bool:
    return package.startswith(SYSTEM_PREFIXES) or "launcher" in package.lower()


@dataclass(frozen=True)
class AppVersion:
    code: int | None
    name: str | None


@dataclass(frozen=True)
class RuleOutcome:
    """``element`` / ``action`` are set when the rule fires; otherwise ``reason`` says what stopped it.
    ``marked``: a GKD ``action: none`` rule matched (it acts by being remembered, for the rules chained after it)."""

    rule: PopupRule
    element: Element | None
    action: Action | None
    reason: str
    marked: bool = False

    @property
    def fires(self) -> bool:
        return self.action is not None


@dataclass(frozen=True)
class ScreenFacts:
    package: str
    activity: str | None  # None: unknown (activity filters are then assumed to hold)
    last_rule: str | None = None  # the rule that fired on the previous step, for chained rules
    app_version: AppVersion | None = None  # None: unknown (version filters are then assumed to hold)
    memory: RuleMemory | None = None  # this episode's; None: timing limits are not applied
    now: float | None = None  # monotonic seconds (tests); None: the clock


def run_rules(
    plan: Iterable[tuple[str | None, PopupRule, tuple[Need, ...]]],
    tree: ViewTree,
    facts: ScreenFacts,
    *,
    consequential: Callable[[Element], str | None],
    stop: bool = True,
) -> Iterator[tuple[str | None, RuleOutcome]]:
    """Each rule of ``plan`` tried on the screen (app id or None, outcome), up to the first that fires when
    ``stop``. A rule whose needs the screen lacks is not tried when ``stop`` (it cannot fire). ``consequential``
    names the kind of an element that cannot be undone: a rule never taps one."""
    now = time.monotonic() if facts.now is None else facts.now
    if facts.now is None:
        facts = ScreenFacts(
            facts.package, facts.activity, facts.last_rule, facts.app_version, facts.memory, now
        )
    memory = facts.memory
    if memory is not None:
        memory.observe(facts.package, facts.activity, now)
    words = ScreenWords.of(tree) if stop else None
    for app_id, rule, needs in plan:
        if words is not None and not words.satisfy(needs):
            continue  # the screen lacks a text / id the rule needs: it cannot fire here
        outcome = try_rule(rule, tree, facts)
        action = outcome.action
        if action is not None and outcome.element is not None and action.kind in _POINTED:
            careful = consequential(outcome.element)
            if careful is not None:  # a popup rule never taps what cannot be undone
                outcome = RuleOutcome(
                    rule, outcome.element, None, f"the target is consequential ({careful}); left to the model"
                )
        if memory is not None and (outcome.fires or outcome.marked):
            memory.note_fired(rule, now)
        yield app_id, outcome
        if stop and outcome.fires:
            return


_POINTED = (ActionKind.TAP, ActionKind.LONG_PRESS)


def try_rule(rule: PopupRule, tree: ViewTree, facts: ScreenFacts) -> RuleOutcome:
    def miss(reason: str) -> RuleOutcome:
        return RuleOutcome(rule, None, None, reason)

    gkd = rule if isinstance(rule, GkdRule) else None
    scope = gkd.app_scopes.get(facts.package) if gkd is not None else None
    if facts.package in rule.not_packages or (scope is not None and not scope.enable):
        return miss(f"{facts.package} opted out of this rule")
    if gkd is not None and not gkd.any_app and facts.package not in gkd.app_scopes:
        return miss(f"a global rule for listed apps only; {facts.package} is not one")
    if gkd is not None and gkd.group.startswith("gkd/GLOBAL/") and not gkd.system_apps:
        if is_system_package(facts.package):
            return miss(f"{facts.package} is a system app or launcher (the global rule leaves those alone)")
    if rule.after and facts.last_rule not in rule.after:
        if facts.memory is None or not facts.memory.just_fired(rule.after):
            return miss(f"fires only right after {' / '.join(rule.after)}")
    if not in_scope(rule, facts.package, facts.activity):
        return miss(f"activity {facts.activity} is outside the rule's activities")
    versions = [
        v for v in (gkd.versions if gkd else None, scope.versions if scope else None) if v is not None
    ]
    if facts.app_version is not None and not all(_version_holds(v, facts.app_version) for v in versions):
        return miss(
            f"app version {facts.app_version.name or facts.app_version.code} is outside the rule's versions"
        )
    if gkd is not None and facts.memory is not None:
        asleep = facts.memory.holds_back(gkd, _now(facts))
        if asleep is not None:
            return miss(asleep)
    target = _target(rule, tree)
    if isinstance(target, str):
        return miss(target)
    for text in rule.unless:
        if find_target(tree, text) is not None:
            return miss(f"`unless` matched: {text}")
    if gkd is not None and gkd.exclude_all and all(find_target(tree, t) is not None for t in gkd.exclude_all):
        return miss("every excludeAllMatches selector matched")
    if gkd is not None:
        guarded = global_guard.refuses(gkd, target, tree)  # a global rule's author never saw this app
        if guarded is not None:
            return miss(guarded)
        return _gkd_action(gkd, target, tree, facts)
    if rule.dismiss.press == "back":
        return RuleOutcome(rule, target, Action.press("back"), "matched; press back")
    if rule.dismiss.tap not in (None, "matched"):
        tap_element = find(tree, rule.dismiss.tap)  # type: ignore[arg-type]
        if tap_element is None:
            return miss("matched, but the element to tap is not on screen")
        target = tap_element
    if target.bounds is None or not visible(target):
        return miss("the target has no visible box")
    if rule.position is not None:
        p = rule.position
        return _tap_at(
            rule, target, tree, GkdPoint(left=p.left, right=p.right, top=p.top, bottom=p.bottom), "tap"
        )
    centre = target.bounds.centre
    return RuleOutcome(rule, target, Action.tap(centre.x, centre.y), "matched; tap the target's centre")


def _now(facts: ScreenFacts) -> float:
    return time.monotonic() if facts.now is None else facts.now


def in_scope(rule: PopupRule, package: str, activity: str | None) -> bool:
    """The activity filters (the rule's, or a global rule's own for this app) hold for the screen."""
    if activity is None:
        return True
    scope = rule.app_scopes.get(package) if isinstance(rule, GkdRule) else None
    activities = scope.activities if scope is not None and scope.activities is not None else rule.activities
    excluded = [*rule.not_activities, *(scope.not_activities if scope is not None else [])]
    if activities and not any(activity.startswith(a) for a in activities):
        return False
    return not any(activity.startswith(a) for a in excluded)


def _version_holds(v: Versions, app: AppVersion) -> bool:
    if v.code is not None and app.code is not None and not v.code.holds(app.code):
        return False
    return v.name is None or app.name is None or v.name.holds(app.name)


def _gkd_action(rule: GkdRule, target: Element, tree: ViewTree, facts: ScreenFacts) -> RuleOutcome:
    gesture = rule.gesture
    if gesture == "none":
        return RuleOutcome(
            rule, target, None, "matched; action none (remembered for the rules after it)", True
        )
    if rule.limits.action_delay and facts.memory is not None:
        waited = facts.memory.waited(rule, _now(facts))
        if not waited:
            return RuleOutcome(
                rule, target, None, f"matched; acts if still there in {rule.limits.action_delay} ms"
            )
    if gesture == "back":
        return RuleOutcome(rule, target, Action.press("back"), "matched; press back")
    if target.bounds is None:
        return RuleOutcome(rule, target, None, "the target has no box")
    if gesture == "swipe":
        assert rule.swipe is not None
        start = _point(rule.swipe.start, target, tree)
        end = _point(rule.swipe.end, target, tree) if rule.swipe.end is not None else start
        if start is None or end is None or not (_on_screen(start, tree) and _on_screen(end, tree)):
            return RuleOutcome(rule, target, None, "the swipe starts or ends off screen")
        if start == end:
            action = Action.long_press(*start, duration_ms=rule.swipe.duration_ms)
        else:
            action = Action.swipe(*start, *end, duration_ms=rule.swipe.duration_ms)
        return RuleOutcome(rule, target, action, f"matched; swipe {start} -> {end}")
    if not visible(target) and rule.point is None:
        return RuleOutcome(rule, target, None, "the target has no visible box")
    kind = "long press" if gesture in LONG_PRESSES else "tap"
    return _tap_at(rule, target, tree, rule.point, kind)


def _tap_at(
    rule: PopupRule, target: Element, tree: ViewTree, point: GkdPoint | None, kind: str
) -> RuleOutcome:
    assert target.bounds is not None
    where = (
        _point(point, target, tree) if point is not None else (target.bounds.centre.x, target.bounds.centre.y)
    )
    if where is None or not _on_screen(where, tree):
        return RuleOutcome(rule, target, None, f"the {kind} point {where} is off screen")
    if kind == "long press":
        action = Action.long_press(*where, duration_ms=LONG_PRESS_MS)
    else:
        action = Action.tap(*where)
    at = "at position" if point is not None else "the target's centre"
    return RuleOutcome(rule, target, action, f"matched; {kind} {at}")


def _point(p: GkdPoint | None, target: Element, tree: ViewTree) -> tuple[int, int] | None:
    assert p is not None and target.bounds is not None
    b = target.bounds
    width, height = _screen_size(tree)
    box = Box(b.left, b.top, b.right, b.bottom, width, height)
    try:
        if p.x is not None:
            x = evaluate(p.x, box)
        else:
            x = b.left + evaluate(p.left, box) if p.left is not None else b.right - evaluate(p.right, box)  # type: ignore[arg-type]
        if p.y is not None:
            y = evaluate(p.y, box)
        else:
            y = b.top + evaluate(p.top, box) if p.top is not None else b.bottom - evaluate(p.bottom, box)  # type: ignore[arg-type]
    except PositionError:
        return None
    if not (math.isfinite(x) and math.isfinite(y)):
        return None
    return round(x), round(y)


def _on_screen(point: tuple[int, int], tree: ViewTree) -> bool:
    width, height = _screen_size(tree)
    return 0 <= point[0] < width and 0 <= point[1] < height


def _screen_size(tree: ViewTree) -> tuple[int, int]:
    boxes = [e.bounds for e in tree.elements if e.bounds is not None]
    return (max((b.right for b in boxes), default=0), max((b.bottom for b in boxes), default=0))


def rule_needs(rule: PopupRule) -> tuple[Need, ...]:
    """What a screen must contain for the rule to fire (see apps/query/needs.py): its target and, when it taps
    another element, that element."""
    needs: list[Need] = []
    if rule.match is not None:
        for chosen in (rule.match, *rule.also):
            needs.extend(_element_needs(chosen))
    else:
        for text in rule.selector:
            needs.extend(_text_needs(text))
        if rule.any_selector:
            needs.extend(one_of(_text_needs(text) for text in rule.any_selector))
    if rule.dismiss.press != "back" and isinstance(rule.dismiss.tap, ElementSelector):
        needs.extend(_element_needs(rule.dismiss.tap))
    return tuple(dict.fromkeys(needs))


def _text_needs(text: str) -> tuple[Need, ...]:
    try:
        return selector_needs(parse_selector(text))
    except SelectorError:
        return ()


def _element_needs(s: ElementSelector) -> list[Need]:
    """An exact field (any of a list) must occur on the screen; an empty value in the list could match anything."""
    needs: list[Need] = []
    for field, values in (("text", s.text), ("desc", s.content_desc), ("id", s.resource_id)):
        if values and all(values):
            needs.append(frozenset((field, "in", value) for value in values))  # type: ignore[misc]
    for field, pattern in (
        ("text", s.text_pattern),
        ("desc", s.content_desc_pattern),
        ("id", s.resource_id_pattern),
    ):
        if pattern:
            needs.extend(pattern_need(field, pattern))  # type: ignore[arg-type]
    if s.class_name:
        needs.append(frozenset({("class", "in", s.class_name)}))
    return needs


def _target(rule: PopupRule, tree: ViewTree) -> Element | str:
    if rule.match is not None:
        matched = find(tree, rule.match)
        if matched is None:
            return "`match` found nothing"
        if any(find(tree, extra) is None for extra in rule.also):
            return "an `also` selector found nothing"
        return matched
    target: Element | None = None
    for i, text in enumerate(rule.selector):
        last = i == len(rule.selector) - 1
        target = find_target(tree, text, visible_first=last)
        if target is None:
            return f"no match for {text}"
    if rule.any_selector:
        hits = (find_target(tree, text, visible_first=True) for text in rule.any_selector)
        first = next((h for h in hits if h is not None), None)
        if first is None:
            return "no `any_selector` matched"
        target = target or first
    assert target is not None
    return target


# -- what happened earlier in the episode --------------------------------------------------------------------------
class RuleMemory:
    """One episode's screens (package, activity, time) and the GKD rules that acted, for the timing limits.

    A rule wakes when its app came to the front (resetMatch ``app``), when its activity appeared (``activity``,
    the default; an unknown activity continues the last one) or when the screen entered its activity filters
    (``match``). matchDelay and matchTime count from then; actionMaximum counts the actions since then (with
    actionMaximumKey: of all rules sharing the key); actionCd is the least time between two actions (shared with
    actionCdKey); actionDelay waits that long after a rule was first seen on consecutive screens, then acts if
    it still matches. A rule chained with preKeys may act within two screens after its predecessor.
    """

    HISTORY = 2000

    def __init__(self) -> None:
        self.screens: deque[tuple[str, str | None, float]] = deque(maxlen=self.HISTORY)
        self.count = 0
        self._fired: dict[str, list[float]] = {}
        self._last_action: dict[str, float] = {}
        self._last_fired: tuple[str, int] | None = None
        self._seen: dict[str, tuple[float, int]] = {}  # actionDelay: first seen at, last seen on screen
        self._lock = threading.Lock()

    def observe(self, package: str, activity: str | None, now: float) -> None:
        with self._lock:
            if activity is None and self.screens and self.screens[-1][0] == package:
                activity = self.screens[-1][1]  # unknown: the last one known
            self.screens.append((package, activity, now))
            self.count += 1

    def woke_at(self, rule: GkdRule) -> float:
        """When the rule last woke (see the class); the first screen of the episode at the latest."""
        reset = rule.limits.reset_match
        screens = list(self.screens)
        if not screens:
            return 0.0
        package, activity, since = screens[-1]
        for pkg, act, at in reversed(screens):
            same = (
                pkg == package
                if reset == "app"
                else pkg == package and act == activity
                if reset == "activity"
                else pkg == package and in_scope(rule, pkg, act)
            )
            if not same:
                break
            since = at
        return since

    def holds_back(self, rule: GkdRule, now: float) -> str | None:
        """Why the rule may not act now, or None."""
        lim = rule.limits
        with self._lock:
            woke = self.woke_at(rule)
            awake_ms = (now - woke) * 1000
            if lim.match_delay is not None and awake_ms < lim.match_delay:
                return f"matchDelay: acts from {lim.match_delay} ms after it woke ({awake_ms:.0f} ms so far)"
            if lim.match_time is not None and awake_ms > lim.match_time:
                return f"matchTime: acts only within {lim.match_time} ms after it woke ({lim.reset_match})"
            if lim.action_maximum is not None:
                done = sum(1 for t in self._fired.get(lim.counter or rule.id, []) if t >= woke)
                if done >= lim.action_maximum:
                    return f"actionMaximum: acted {done} time(s) since it woke ({lim.reset_match})"
            last = self._last_action.get(lim.cooldown or rule.id)
            if last is not None and (now - last) * 1000 < lim.action_cd:
                return f"actionCd: {lim.action_cd} ms between actions"
        return None

    def waited(self, rule: GkdRule, now: float) -> bool:
        """actionDelay: True once the rule has been seen for that long on consecutive screens."""
        with self._lock:
            seen = self._seen.get(rule.id)
            if seen is None or seen[1] < self.count - 1:
                self._seen[rule.id] = (now, self.count)
                return False
            self._seen[rule.id] = (seen[0], self.count)
            return (now - seen[0]) * 1000 >= (rule.limits.action_delay or 0)

    def just_fired(self, rules: Iterable[str]) -> bool:
        with self._lock:
            last = self._last_fired
            return last is not None and last[0] in set(rules) and self.count - last[1] <= 2

    def note_fired(self, rule: PopupRule, now: float) -> None:
        with self._lock:
            self._last_fired = (rule.id, self.count)
            if isinstance(rule, GkdRule):
                self._fired.setdefault(rule.limits.counter or rule.id, []).append(now)
                self._last_action[rule.limits.cooldown or rule.id] = now
                self._seen.pop(rule.id, None)


_MEMORIES: OrderedDict[str, RuleMemory] = OrderedDict()
_MEMORIES_LOCK = threading.Lock()
MEMORIES_KEPT = 256  # episodes running at once in one process, with room to spare


def episode_memory(episode: str) -> RuleMemory:
    """The popup-rule memory of one episode (made on first use; the oldest are dropped past MEMORIES_KEPT)."""
    with _MEMORIES_LOCK:
        memory = _MEMORIES.get(episode)
        if memory is None:
            memory = _MEMORIES[episode] = RuleMemory()
            while len(_MEMORIES) > MEMORIES_KEPT:
                _MEMORIES.popitem(last=False)
        else:
            _MEMORIES.move_to_end(episode)
        return memory
