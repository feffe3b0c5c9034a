"""The uiautomator view-tree dump as elements, and how selectors and rules pick elements from it."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import lru_cache

from lxml import etree

from mobile_agent.actions import Point
from mobile_agent.apps.schema import ConsequentialRule, ElementSelector

log = logging.getLogger(__name__)

_BOUNDS_RE = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


@dataclass(frozen=True)
class Bounds:
    left: int
    top: int
    right: int
    bottom: int

    @property
    def centre(self) -> Point:
        return Point((self.left + self.right) // 2, (self.top + self.bottom) // 2)

    @property
    def empty(self) -> bool:
        return self.right <= self.left or self.bottom <= self.top


@dataclass(frozen=True)
class Element:
    """One node of the dump, with the attributes rules look at."""

    text: str
    resource_id: str
    content_desc: str
    class_name: str
    package: str
    bounds: Bounds | None
    node: etree._Element

    def as_dict(self) -> dict[str, str]:
        """The element in the shape ``match_consequential`` takes."""
        return {
            "text": self.text,
            "resource_id": self.resource_id,
            "content_desc": self.content_desc,
            "class": self.class_name,
        }


class ViewTree:
    """A parsed dump. Invisible nodes (visible-to-user="false") and zero-size nodes are never matched."""

    def __init__(self, root: etree._Element) -> None:
        self.root = root
        self.elements = [_element(node) for node in root.iter("node")]
        self._by_node = {id(e.node): e for e in self.elements}

    @classmethod
    def parse(cls, hierarchy_xml: str | bytes) -> ViewTree | None:
        """None when the text is not a dump (the caller then simply has no rule to apply).

        A step consults one dump several times (popup rules, walls, the safety gate): the last few parses are
        kept, and a ViewTree is never changed after it is built.
        """
        return _parse_cached(hierarchy_xml) if cls is ViewTree else cls._parse(hierarchy_xml)

    @classmethod
    def _parse(cls, hierarchy_xml: str | bytes) -> ViewTree | None:
        data = hierarchy_xml.encode("utf-8") if isinstance(hierarchy_xml, str) else hierarchy_xml
        try:
            parser = etree.XMLParser(resolve_entities=False, no_network=True, recover=False)
            root = etree.fromstring(data, parser)
        except (etree.XMLSyntaxError, ValueError) as exc:
            log.warning("cannot parse the view hierarchy: %s", exc)
            return None
        return cls(root)

    def find(self, selector: ElementSelector) -> Element | None:
        """The first visible element (document order) that satisfies every field of the selector."""
        candidates = self.elements
        if selector.xpath is not None:
            try:
                hits = self.root.xpath(selector.xpath)
            except etree.XPathError as exc:
                log.warning("bad xpath %r in a popup rule: %s", selector.xpath, exc)
                return None
            nodes = hits if isinstance(hits, list) else []
            candidates = [self._by_node[id(n)] for n in nodes if id(n) in self._by_node]
        return next((e for e in candidates if _visible(e) and _selector_holds(selector, e)), None)

    def any_element(self, rule: ConsequentialRule) -> Element | None:
        return next((e for e in self.elements if _visible(e) and rule_holds(rule, e.as_dict())), None)


@lru_cache(maxsize=4)
def _parse_cached(hierarchy_xml: str | bytes) -> ViewTree | None:
    return ViewTree._parse(hierarchy_xml)


def _element(node: etree._Element) -> Element:
    match = _BOUNDS_RE.fullmatch(node.get("bounds", "").replace(" ", ""))
    bounds = Bounds(*(int(v) for v in match.groups())) if match else None
    return Element(
        text=node.get("text", ""),
        resource_id=node.get("resource-id", ""),
        content_desc=node.get("content-desc", ""),
        class_name=node.get("class", ""),
        package=node.get("package", ""),
        bounds=bounds,
        node=node,
    )


def _visible(e: Element) -> bool:
    return e.node.get("visible-to-user", "true") != "false" and e.bounds is not None and not e.bounds.empty


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
