"""One popup rule against one screen: does it fire, on which element, with which action, and if not, why not."""

from __future__ import annotations

from dataclasses import dataclass

from mobile_agent.actions import Action
from mobile_agent.apps.query.evaluate import find_target
from mobile_agent.apps.query.needs import Need, one_of, pattern_need, selector_needs
from mobile_agent.apps.query.parser import parse_selector
from mobile_agent.apps.query.position import Box, evaluate
from mobile_agent.apps.query.syntax import SelectorError
from mobile_agent.apps.schema import ElementSelector, PopupRule
from mobile_agent.apps.selectors import find
from mobile_agent.screen.viewtree import Element, ViewTree, visible


@dataclass(frozen=True)
class RuleOutcome:
    """``element`` / ``action`` are set when the rule fires; otherwise ``reason`` says what stopped it."""

    rule: PopupRule
    element: Element | None
    action: Action | None
    reason: str

    @property
    def fires(self) -> bool:
        return self.action is not None


@dataclass(frozen=True)
class ScreenFacts:
    package: str
    activity: str | None  # None: unknown (activity filters are then assumed to hold)
    last_rule: str | None  # the rule that fired on the previous step, for chained rules


def try_rule(rule: PopupRule, tree: ViewTree, facts: ScreenFacts) -> RuleOutcome:
    def miss(reason: str) -> RuleOutcome:
        return RuleOutcome(rule, None, None, reason)

    if facts.package in rule.not_packages:
        return miss(f"{facts.package} opted out of this rule")
    if rule.after and facts.last_rule not in rule.after:
        return miss(f"fires only right after {' / '.join(rule.after)}")
    if facts.activity is not None:
        if rule.activities and not any(facts.activity.startswith(a) for a in rule.activities):
            return miss(f"activity {facts.activity} is not one of {', '.join(rule.activities)}")
        if any(facts.activity.startswith(a) for a in rule.not_activities):
            return miss(f"activity {facts.activity} is excluded")
    target = _target(rule, tree)
    if isinstance(target, str):
        return miss(target)
    for text in rule.unless:
        if find_target(tree, text) is not None:
            return miss(f"`unless` matched: {text}")
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
        x, y = _position(rule, target, tree)
        width, height = _screen_size(tree)
        if not (0 <= x < width and 0 <= y < height):
            return miss(f"the position ({x}, {y}) is off screen")
        return RuleOutcome(rule, target, Action.tap(x, y), "matched; tap at position")
    centre = target.bounds.centre
    return RuleOutcome(rule, target, Action.tap(centre.x, centre.y), "matched; tap the target's centre")


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
    for text in rule.selector:
        target = find_target(tree, text)
        if target is None:
            return f"no match for {text}"
    if rule.any_selector:
        hits = (find_target(tree, text) for text in rule.any_selector)
        first = next((h for h in hits if h is not None), None)
        if first is None:
            return "no `any_selector` matched"
        target = target or first
    assert target is not None
    return target


def _position(rule: PopupRule, target: Element, tree: ViewTree) -> tuple[int, int]:
    assert rule.position is not None and target.bounds is not None
    b = target.bounds
    width, height = _screen_size(tree)
    box = Box(b.left, b.top, b.right, b.bottom, width, height)
    p = rule.position
    x = b.left + evaluate(p.left, box) if p.left is not None else b.right - evaluate(p.right, box)  # type: ignore[arg-type]
    y = b.top + evaluate(p.top, box) if p.top is not None else b.bottom - evaluate(p.bottom, box)  # type: ignore[arg-type]
    return round(x), round(y)


def _screen_size(tree: ViewTree) -> tuple[int, int]:
    boxes = [e.bounds for e in tree.elements if e.bounds is not None]
    return (max((b.right for b in boxes), default=0), max((b.bottom for b in boxes), default=0))
