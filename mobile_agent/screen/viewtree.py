"""The uiautomator view-tree dump as elements: parsing, bounds, visibility. Selectors live with the apps."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import lru_cache

from lxml import etree

from mobile_agent.actions import Point

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
        """The element in the shape consequential rules read."""
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
        bounds_of: dict[str, Bounds | None] = {}  # this dump's boxes: wrappers often repeat their child's
        self.elements = [_element(node, bounds_of) for node in root.iter("node")]

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


@lru_cache(maxsize=4)
def _parse_cached(hierarchy_xml: str | bytes) -> ViewTree | None:
    return ViewTree._parse(hierarchy_xml)


# A dump has tens to hundreds of nodes and is read every step: the records are filled in directly, without the
# per-field ``object.__setattr__`` of a frozen dataclass's __init__ (they stay frozen: assignment still raises).
_new = object.__new__
_set = object.__setattr__


def _element(node: etree._Element, bounds_of: dict[str, Bounds | None] | None = None) -> Element:
    get = node.get
    raw = get("bounds", "")
    if bounds_of is None:
        bounds = _bounds(raw)
    elif raw in bounds_of:
        bounds = bounds_of[raw]
    else:
        bounds = bounds_of[raw] = _bounds(raw)
    element = _new(Element)
    _set(
        element,
        "__dict__",
        {
            "text": get("text", ""),
            "resource_id": get("resource-id", ""),
            "content_desc": get("content-desc", ""),
            "class_name": get("class", ""),
            "package": get("package", ""),
            "bounds": bounds,
            "node": node,
        },
    )
    return element


def _bounds(raw: str) -> Bounds | None:
    match = _BOUNDS_RE.fullmatch(raw.replace(" ", "") if " " in raw else raw)
    if match is None:
        return None
    left, top, right, bottom = match.groups()
    bounds = _new(Bounds)
    _set(bounds, "__dict__", {"left": int(left), "top": int(top), "right": int(right), "bottom": int(bottom)})
    return bounds


def visible(e: Element) -> bool:
    """Shown to the user: not marked invisible and with a non-empty box."""
    return e.node.get("visible-to-user", "true") != "false" and e.bounds is not None and not e.bounds.empty
