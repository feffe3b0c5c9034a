"""What a person would read around a point before touching it: the element under the finger, the control it
belongs to, the dialog or sheet that holds it, and the rest of the screen.

The safety gate decides on this whole picture, not on one label. Everything here is read-only over a ViewTree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from lxml import etree

from mobile_agent.actions import Point, Size
from mobile_agent.screen.text import fold
from mobile_agent.screen.viewtree import Element, ViewTree, visible

# Containers a person reads as "the dialog this button belongs to".
_CONTAINER_CLASS = re.compile(r"dialog|sheet|popup|alert|modal|drawer|panel", re.IGNORECASE)
_CONTAINER_ID = re.compile(
    r"dialog|sheet|popup|alert|modal|panel|layer|float|toast|confirm|cashier|keyboard", re.I
)
_EDIT_CLASS = re.compile(r"EditText|TextField|AutoComplete|SearchView", re.IGNORECASE)
_TAB_HINT = re.compile(r"tab", re.IGNORECASE)
# A row of a list (name, preview, time) is named by what is under the finger; a button by all its labels.
_WHOLE_LABEL_LIMIT = 20


def label_of(e: Element) -> str:
    return e.text.strip() or e.content_desc.strip()


def labels_of(e: Element) -> list[str]:
    """Text and description both: when they disagree (text 取消, description 确认付款) the gate reads both."""
    return list(dict.fromkeys(t for t in (e.text.strip(), e.content_desc.strip()) if t))


def _clickable(node: etree._Element) -> bool:
    return node.get("clickable") == "true" or node.get("long-clickable") == "true"


def _contains(e: Element, p: Point) -> bool:
    b = e.bounds
    return b is not None and b.left <= p.x < b.right and b.top <= p.y < b.bottom


def _area(e: Element) -> int:
    b = e.bounds
    return 0 if b is None else max(0, b.right - b.left) * max(0, b.bottom - b.top)


@dataclass(frozen=True)
class TargetContext:
    """The picture around one point (see the module docstring). ``labels`` are the raw texts that name the touched
    control; ``context_texts`` the rest of its dialog (or, with no dialog, of the screen)."""

    point: Point
    hit: Element | None
    target: Element | None
    labels: tuple[str, ...]
    ids: tuple[str, ...]
    container: Element | None
    context_texts: tuple[str, ...]
    screen_texts: tuple[str, ...]
    is_tab: bool = False
    is_edit: bool = False
    under_finger: tuple[str, ...] = ()  # the labels whose own box holds the point
    chain: tuple[Element, ...] = field(default=(), repr=False)

    @property
    def takes_touch(self) -> bool:
        """Something under the finger is clickable: a tap there does something."""
        e = self.target
        return e is not None and (e.node.get("clickable") == "true" or e.node.get("long-clickable") == "true")

    @property
    def blind(self) -> bool:
        """Nothing names the touched control: no text, no description, no resource-id."""
        return not any(fold(t) for t in self.labels) and not any(self.ids)

    def folded_label(self) -> str:
        return fold(" ".join(self.labels))

    def describe(self) -> str:
        e = self.target or self.hit
        if e is None:
            return f"nothing at ({self.point.x}, {self.point.y})"
        label = " ".join(t for t in self.labels if t)[:60]
        parts = [f"'{label}'" if label else "(no label)", e.class_name.rsplit(".", 1)[-1]]
        if e.resource_id:
            parts.append(e.resource_id)
        if e.bounds is not None:
            b = e.bounds
            parts.append(f"[{b.left},{b.top}][{b.right},{b.bottom}]")
        return " ".join(p for p in parts if p)


class ScreenReader:
    """One parsed tree, indexed for questions about points on it."""

    def __init__(self, tree: ViewTree, screen: Size | None = None) -> None:
        self.tree = tree
        self.visible = [e for e in tree.elements if visible(e)]
        self._by_node = {id(e.node): e for e in tree.elements}
        boxes = [e.bounds for e in tree.elements if e.bounds is not None]
        if (
            screen is None and boxes
        ):  # the dump's extent (its first node may be the status bar, not the window)
            screen = Size(max(b.right for b in boxes), max(b.bottom for b in boxes))
        self.screen = screen or Size(1080, 2400)

    # -- the whole screen ------------------------------------------------------------------------------------
    def packages(self) -> set[str]:
        """The apps whose nodes the dump holds (the status bar's and the keyboard's aside)."""
        system = (
            "com.android.systemui",
            "com.google.android.inputmethod",
            "com.sohu.inputmethod",
            "com.baidu.input",
        )
        return {e.package for e in self.visible if e.package and not e.package.startswith(system)}

    def texts(self) -> tuple[str, ...]:
        return tuple(t for e in self.visible for t in (e.text.strip(), e.content_desc.strip()) if t)

    def is_empty(self) -> bool:
        """No visible node carries text, a description or a resource-id (Flutter, canvas, games)."""
        return not any(label_of(e) or e.resource_id for e in self.visible)

    def password_fields(self) -> list[Element]:
        return [e for e in self.visible if e.node.get("password") == "true"]

    def focused_field(self) -> Element | None:
        edits = [e for e in self.visible if _EDIT_CLASS.search(e.class_name)]
        focused = [e for e in edits if e.node.get("focused") == "true"]
        return (focused or [None])[0]

    def beside_edit(self, e: Element) -> bool:
        """A small control sharing its parent with a text field: the field's clear (×) or voice button."""
        if e.bounds is None:
            return False
        cy = (e.bounds.top + e.bounds.bottom) // 2
        for f in self.edit_fields():
            b = f.bounds
            if b is None or f is e:
                continue
            inside_band = b.top <= cy <= b.bottom
            close = e.bounds.left >= b.left and e.bounds.left - b.right <= 150
            if inside_band and close and (e.bounds.right - e.bounds.left) <= 200:
                return True
        return False

    def beside_filled_edit(self, e: Element) -> bool:
        """Beside a text field that holds typed text (a send arrow next to a written message)."""
        if e.bounds is None:
            return False
        cy = (e.bounds.top + e.bounds.bottom) // 2
        for f in self.edit_fields():
            b = f.bounds
            if (
                b is None
                or f is e
                or not f.text.strip()
                or f.text.strip() == (f.node.get("hint") or "").strip()
            ):
                continue
            if (
                b.top - 40 <= cy <= b.bottom + 40
                and e.bounds.left >= b.right - 10
                and e.bounds.left - b.right <= 250
            ):
                return True
        return False

    def statements_near(self, point: Point, band: int = 420) -> list[str]:
        """Texts that are not controls (titles, bodies, amounts), on the title bar or near ``point`` vertically."""
        top_bar = 0.12 * self.screen.height
        out = []
        for e in self.visible:
            if e.bounds is None or _inside_clickable(e.node):
                continue
            near = abs((e.bounds.top + e.bounds.bottom) // 2 - point.y) <= band
            title = e.bounds.bottom <= top_bar + 0.05 * self.screen.height
            if near or title:
                out += labels_of(e)
        return out

    def edit_fields(self) -> list[Element]:
        return [e for e in self.visible if _EDIT_CLASS.search(e.class_name)]

    def digit_keys(self) -> int:
        """How many distinct single-digit keys (0-9) are on screen: a PIN or number pad shows ten."""
        digits = {fold(label_of(e)) for e in self.visible if e.node.get("clickable") == "true" or label_of(e)}
        return len(digits & set("0123456789"))

    # -- around a point --------------------------------------------------------------------------------------
    def at(self, point: Point) -> TargetContext:
        hits = [e for e in self.visible if _contains(e, point)]
        screen_texts = self.texts()
        if not hits:
            return TargetContext(point, None, None, (), (), None, screen_texts, screen_texts)
        hit = hits[-1]  # topmost and deepest in document order
        chain = [hit]
        node = hit.node
        while node is not None and not _clickable(node):
            node = node.getparent()
            if node is not None and id(node) in self._by_node:
                chain.append(self._by_node[id(node)])
        target = self._by_node.get(id(node), hit) if node is not None else hit
        extra: list[str] = []
        if node is None:
            # The topmost node takes no touch: the touch falls through to the topmost clickable under the point
            # (a label drawn over a button). Both are read.
            clickables = [e for e in hits if _clickable(e.node)]
            if clickables:
                extra = labels_of(hit)
                target = clickables[-1]
                chain = [target]
        own = [self._by_node[id(n)] for n in _own_descendants(target.node) if id(n) in self._by_node]
        own_labelled = [e for e in own if visible(e) and labels_of(e)]
        whole = [t for e in [target, *own_labelled] for t in labels_of(e)]
        if len(fold(" ".join(whole))) <= _WHOLE_LABEL_LIMIT:
            labels = whole
        else:  # a composite row: only what is under the finger names it
            labels = [t for e in [*chain, *own_labelled] if _contains(e, point) for t in labels_of(e)]
        labels = [*labels, *extra]
        labels = list(dict.fromkeys(labels))
        under = [t for e in [*chain, target, *own_labelled] if _contains(e, point) for t in labels_of(e)]
        ids = tuple(dict.fromkeys(e.resource_id for e in [*chain, target, *own] if e.resource_id))
        container = self._container(target)
        taken = {id(target.node), *(id(e.node) for e in own)}
        scope = self._subtree(container) if container is not None else self.visible
        context = tuple(
            t for e in scope if id(e.node) not in taken for t in (e.text.strip(), e.content_desc.strip()) if t
        )
        return TargetContext(
            point=point,
            hit=hit,
            target=target,
            labels=tuple(labels),
            ids=ids,
            container=container,
            context_texts=context,
            screen_texts=screen_texts,
            is_tab=self._is_tab(target),
            is_edit=bool(_EDIT_CLASS.search(target.class_name) or _EDIT_CLASS.search(hit.class_name)),
            chain=tuple(chain),
            under_finger=tuple(dict.fromkeys([*under, *extra])),
        )

    def _subtree(self, e: Element) -> list[Element]:
        return [
            self._by_node[id(n)]
            for n in e.node.iter("node")
            if id(n) in self._by_node and visible(self._by_node[id(n)])
        ]

    def _container(self, target: Element) -> Element | None:
        """The nearest ancestor that is a dialog, sheet or overlay: named so by its class or id, or a later
        full-width layer drawn over the page (a dim mask with a card on it)."""
        screen_area = self.screen.width * self.screen.height
        for node in target.node.iterancestors("node"):
            e = self._by_node.get(id(node))
            if e is None or e.bounds is None:
                continue
            if _CONTAINER_CLASS.search(e.class_name) or _CONTAINER_ID.search(e.resource_id):
                return e
            if _is_overlay(node) and _area(e) < 0.9 * screen_area:
                return e
        # An overlay that covers the whole screen: the card inside it is the dialog.
        for node in target.node.iterancestors("node"):
            e = self._by_node.get(id(node))
            if e is not None and _is_overlay(node) and len(self._subtree(e)) < len(self.visible):
                return e
        return None

    def _is_tab(self, target: Element) -> bool:
        if _TAB_HINT.search(target.class_name) or re.search(r"(^|[/_])tab", target.resource_id, re.I):
            return True
        parent = target.node.getparent()
        if parent is None or target.node.get("selected") is None:
            return False
        siblings = [c for c in parent.iterchildren("node") if c.get("clickable") == "true"]
        if len(siblings) < 3 or target.bounds is None:
            return False
        rows = {
            self._by_node[id(c)].bounds.top
            for c in siblings
            if id(c) in self._by_node and self._by_node[id(c)].bounds
        }
        # Three or more clickables side by side in one row, one of them selected: a tab strip.
        return len(rows) == 1 and any(c.get("selected") == "true" for c in siblings)


def _inside_clickable(node: etree._Element) -> bool:
    return any(_clickable(n) for n in (node, *node.iterancestors("node")))


def _is_overlay(node: etree._Element) -> bool:
    """A node drawn after a sibling that it covers: the page is under it."""
    parent = node.getparent()
    if parent is None or parent.tag != "node":
        return False
    siblings = list(parent.iterchildren("node"))
    if len(siblings) < 2 or siblings.index(node) == 0:
        return False
    mine = _bounds(node)
    first = _bounds(siblings[0])
    if mine is None or first is None:
        return False
    return mine[0] <= first[0] and mine[1] <= first[1] and mine[2] >= first[2] and mine[3] >= first[3]


_BOUNDS_RE = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


def _bounds(node: etree._Element) -> tuple[int, int, int, int] | None:
    m = _BOUNDS_RE.fullmatch(node.get("bounds", "").replace(" ", ""))
    return tuple(int(v) for v in m.groups()) if m else None  # type: ignore[return-value]


def _own_descendants(node: etree._Element) -> Iterator[etree._Element]:
    """Descendants not inside another clickable: their labels belong to this control."""
    for child in node.iterchildren("node"):
        if child.get("clickable") == "true":
            continue
        yield child
        yield from _own_descendants(child)


def texts_of(elements: Iterable[Element]) -> tuple[str, ...]:
    return tuple(t for e in elements for t in (e.text.strip(), e.content_desc.strip()) if t)


__all__ = ["ScreenReader", "TargetContext", "label_of", "labels_of", "texts_of"]
