"""UiSelector matching as the uiautomator2 server does it: which nodes a selector dict picks, and their objInfo."""

from __future__ import annotations

import re
from typing import Any

from mobile_agent.sim.world.node import Node

SELECTOR_META = {"mask", "childOrSibling", "childOrSiblingSelector", "index", "instance"}


def matches(node: Node, selector: dict) -> bool:
    text = node.shown_text()
    for key, want in selector.items():
        if key in SELECTOR_META:
            continue
        ok = {
            "text": lambda w: text == w,
            "textContains": lambda w: w in text,
            "textMatches": lambda w: re.fullmatch(w, text) is not None,
            "textStartsWith": lambda w: text.startswith(w),
            "className": lambda w: node.cls == w,
            "classNameMatches": lambda w: re.fullmatch(w, node.cls) is not None,
            "description": lambda w: node.desc == w,
            "descriptionContains": lambda w: w in node.desc,
            "descriptionMatches": lambda w: re.fullmatch(w, node.desc) is not None,
            "descriptionStartsWith": lambda w: node.desc.startswith(w),
            "checkable": lambda w: node.checkable == bool(w),
            "checked": lambda w: node.checked == bool(w),
            "clickable": lambda w: node.clickable == bool(w),
            "longClickable": lambda w: node.long_clickable == bool(w),
            "scrollable": lambda w: node.scrollable == bool(w),
            "enabled": lambda w: node.enabled == bool(w),
            "focusable": lambda w: (node.focusable or node.editable) == bool(w),
            "focused": lambda w: node.focused == bool(w),
            "selected": lambda w: node.selected == bool(w),
            "packageName": lambda w: node.package == w,
            "packageNameMatches": lambda w: re.fullmatch(w, node.package) is not None,
            "resourceId": lambda w: node.rid == w,
            "resourceIdMatches": lambda w: re.fullmatch(w, node.rid) is not None,
        }.get(key)
        if ok is None or not ok(want):
            return False
    return True


def index_in_parent(root: Node, target: Node) -> int:
    for node in root.walk():
        for i, child in enumerate(node.children):
            if child is target:
                return i
    return 0


def describe(selector: dict) -> str:
    return "[" + ", ".join(f"{k.upper()}={v}" for k, v in selector.items() if k not in SELECTOR_META) + "]"


def obj_info(node: Node) -> dict[str, Any]:
    left, top, right, bottom = node.bounds
    bounds = {"left": left, "top": top, "right": right, "bottom": bottom}
    return {
        "bounds": bounds,
        "visibleBounds": dict(bounds),
        "childCount": len(node.children),
        "className": node.cls,
        "contentDescription": node.desc or None,
        "packageName": node.package,
        "resourceName": node.rid or None,
        "text": node.shown_text(),
        "checkable": node.checkable,
        "checked": node.checked,
        "clickable": node.clickable,
        "enabled": node.enabled,
        "focusable": node.focusable or node.editable,
        "focused": node.focused,
        "longClickable": node.long_clickable,
        "scrollable": node.scrollable,
        "selected": node.selected,
    }
