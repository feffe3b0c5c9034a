"""How manifest selectors and consequential rules pick elements from a view tree."""

from __future__ import annotations

import logging
import re
from functools import lru_cache

from lxml import etree

from mobile_agent.apps.schema import ConsequentialRule, ElementSelector
from mobile_agent.screen.viewtree import Element, ViewTree, visible

log = logging.getLogger(__name__)


def find(tree: ViewTree, selector: ElementSelector) -> Element | None:
    """The first visible element (document order) that satisfies every field of the selector."""
    candidates = tree.elements
    if selector.xpath is not None:
        try:
            hits = tree.root.xpath(selector.xpath)
        except etree.XPathError as exc:
            log.warning("bad xpath %r in a popup rule: %s", selector.xpath, exc)
            return None
        nodes = hits if isinstance(hits, list) else []
        by_node = {id(e.node): e for e in tree.elements}
        candidates = [by_node[id(n)] for n in nodes if id(n) in by_node]
    return next((e for e in candidates if visible(e) and _selector_holds(selector, e)), None)


def any_element(tree: ViewTree, rule: ConsequentialRule) -> Element | None:
    return next((e for e in tree.elements if visible(e) and rule_holds(rule, e.as_dict())), None)


@lru_cache(maxsize=1024)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _selector_holds(s: ElementSelector, e: Element) -> bool:
    return (
        (s.text is None or e.text.strip() in s.text)
        and (s.text_pattern is None or _regex(s.text_pattern).search(e.text) is not None)
        and (s.content_desc is None or e.content_desc.strip() in s.content_desc)
        and (
            s.content_desc_pattern is None
            or _regex(s.content_desc_pattern).search(e.content_desc) is not None
        )
        and (s.resource_id is None or e.resource_id in s.resource_id)
        and (s.resource_id_pattern is None or _regex(s.resource_id_pattern).search(e.resource_id) is not None)
        and (s.class_name is None or e.class_name == s.class_name)
        and (s.packages is None or e.package in s.packages)
    )


def rule_holds(rule: ConsequentialRule, element: dict[str, str]) -> bool:
    """Does a consequential rule name this element? Every field the rule gives must hold.

    ``text`` / ``text_pattern`` look at the element's label: its text, or its content description when it has no
    text (icon buttons such as a paper-plane "发送" carry their label there).
    """
    label = (element.get("text") or "").strip() or (element.get("content_desc") or "").strip()
    if rule.text is not None and label not in rule.text:
        return False
    patterns = (
        (rule.text_pattern, label),
        (rule.resource_id_pattern, element.get("resource_id")),
        (rule.content_desc_pattern, element.get("content_desc")),
        (rule.class_pattern, element.get("class")),
    )
    return all(_regex(p).search(value or "") is not None for p, value in patterns if p is not None)
