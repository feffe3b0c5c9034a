"""What a person would read around a point before touching it: the element under the finger, the control it
belongs to, the dialog or sheet that holds it, and the rest of the screen.

The safety gate decides on this whole picture, not on one label. Everything here is read-only over a ViewTree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from lxml import etree

from mobile_agent.actions import Point, Size
from mobile_agent.screen.labels import clickable, is_keyboard, label_of, labels_of, own_descendants, word_of
from mobile_agent.screen.text import fold
from mobile_agent.screen.viewtree import Element, ViewTree, visible

# Containers a person reads as "the dialog this button belongs to".
_DIALOG_NAME = re.compile(r"dialog|sheet|popup|alert|modal|confirm|cashier", re.IGNORECASE)
_CONTAINER_CLASS = re.compile(r"dialog|sheet|popup|alert|modal|drawer|panel", re.IGNORECASE)
_CONTAINER_ID = re.compile(
    r"dialog|sheet|popup|alert|modal|panel|layer|float|toast|confirm|cashier|keyboard", re.I
)
# "emoji_popup_anchor": where a popup will hang, a plain bar of the page until it opens.
_ANCHOR_ID = re.compile(r"anchor", re.I)
_EDIT_CLASS = re.compile(r"EditText|TextField|AutoComplete|SearchView", re.IGNORECASE)
_TAB_HINT = re.compile(r"tab", re.IGNORECASE)
# A row of a list (name, preview, time) is named by what is under the finger; a button by all its labels.
_WHOLE_LABEL_LIMIT = 20


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
    # What the dialog (or, with no dialog, the screen) states: texts outside every control and every text field
    # (a title, a message, an amount to pay; not a price typed into a filter's field).
    statements: tuple[str, ...] = ()

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
        self._controls: set[int] | None = None

    def in_control(self, node: etree._Element) -> bool:
        """The node is a control or inside one (its text is the control's label, not a statement)."""
        if self._controls is None:
            self._controls = {
                id(n) for c in self.tree.root.iter("node") if clickable(c) for n in c.iter("node")
            }
        return id(node) in self._controls

    # -- the whole screen ------------------------------------------------------------------------------------
    def packages(self) -> set[str]:
        """The apps whose nodes the dump holds (the status bar's and the keyboard's aside)."""
        return {
            e.package
            for e in self.visible
            if e.package and not e.package.startswith("com.android.systemui") and not is_keyboard(e.package)
        }

    def texts(self) -> tuple[str, ...]:
        return tuple(t for e in self.visible for t in labels_of(e))

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
            if e.bounds is None or self.in_control(e.node):
                continue
            near = abs((e.bounds.top + e.bounds.bottom) // 2 - point.y) <= band
            title = e.bounds.bottom <= top_bar + 0.05 * self.screen.height
            if near or title:
                out += labels_of(e)
        return out

    def element(self, node: etree._Element) -> Element | None:
        return self._by_node.get(id(node))

    def is_edit(self, e: Element) -> bool:
        return _EDIT_CLASS.search(e.class_name) is not None

    def page_title(self, outside: Element | None = None) -> list[str]:
        """The title bar's statements, of the page under ``outside`` (a dialog opened over it) when given."""
        skip = {id(n) for n in outside.node.iter("node")} if outside is not None else set()
        bar = 0.12 * self.screen.height
        return [
            t
            for e in self.visible
            if e.bounds is not None
            and e.bounds.bottom <= bar
            and id(e.node) not in skip
            and not self.in_control(e.node)
            and not e.package.startswith("com.android.systemui")
            for t in labels_of(e)
        ]

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
        top = self._word(hits[-1])  # topmost and deepest in document order
        taker = self._touch_taker(point)
        extra: list[str] = []
        if taker is None:  # nothing under the finger takes a touch: read what is drawn there
            hit, target, chain = top, top, [top]
        else:
            target = taker
            inside = [e for e in hits if e.node is taker.node or taker.node in e.node.iterancestors()]
            hit = self._word(inside[-1])
            chain = [hit]
            if hit.node is not taker.node:
                for node in hit.node.iterancestors("node"):
                    if node is taker.node:
                        break
                    if id(node) in self._by_node:
                        chain.append(self._by_node[id(node)])
                chain.append(taker)
            if top.node is not hit.node and top.node not in taker.node.iterancestors():
                extra = labels_of(top)  # a label drawn over the control: the person reads it as its name
        # Nothing takes the touch: the deepest view there is what the finger is on, and the texts inside it lie
        # elsewhere (an ad banner on a blank secure surface names nothing under the finger).
        own = (
            []
            if taker is None
            else [self._by_node[id(n)] for n in own_descendants(target.node) if id(n) in self._by_node]
        )
        own_labelled = _reading_order([e for e in own if visible(e) and labels_of(e)])
        whole = [t for e in [target, *own_labelled] for t in labels_of(e)]
        if len(fold(" ".join(whole))) <= _WHOLE_LABEL_LIMIT:
            labels = whole
        else:  # a composite row: only what is under the finger names it (or, between its lines, its first line)
            labels = [t for e in [*chain, *own_labelled] if _contains(e, point) for t in labels_of(e)]
            labels = labels or labels_of(own_labelled[0])
        labels = [*labels, *extra]
        labels = list(dict.fromkeys(labels))
        under = [t for e in [*chain, target, *own_labelled] if _contains(e, point) for t in labels_of(e)]
        ids = tuple(dict.fromkeys(e.resource_id for e in [*chain, target, *own] if e.resource_id))
        container = self._container(target)
        taken = {id(target.node), *(id(e.node) for e in own)}
        scope = self._subtree(container) if container is not None else self.visible
        context = tuple(t for e in scope if id(e.node) not in taken for t in labels_of(e))
        statements = tuple(
            t
            for e in scope
            if not self.in_control(e.node) and not _EDIT_CLASS.search(e.class_name)
            for t in labels_of(e)
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
            statements=statements,
        )

    def _word(self, e: Element) -> Element:
        """A character of a spelled label stands for the node that holds the word."""
        node = word_of(e.node)
        return self._by_node.get(id(node), e) if node is not None else e

    def _touch_taker(self, point: Point) -> Element | None:
        """The control Android delivers a tap to: children are offered it last-drawn first, and the deepest one that
        takes touches wins; a view that takes none (a caption, an overlay, a hidden drawer) lets it through."""

        def offer(node: etree._Element) -> etree._Element | None:
            for child in reversed(list(node.iterchildren("node"))):
                e = self._by_node.get(id(child))
                if e is None or not visible(e) or not _contains(e, point):
                    continue
                found = offer(child)
                if found is not None:
                    return found
            e = self._by_node.get(id(node))
            return node if e is not None and clickable(node) and _contains(e, point) else None

        taker = offer(self.tree.root)
        return self._by_node[id(taker)] if taker is not None else None

    def _subtree(self, e: Element) -> list[Element]:
        return [
            self._by_node[id(n)]
            for n in e.node.iter("node")
            if id(n) in self._by_node and visible(self._by_node[id(n)])
        ]

    def _container(self, target: Element) -> Element | None:
        """The dialog or sheet the target sits in, read as a person reads it: the whole card with its title and
        message. A part named like a dialog that holds only buttons (AOSP AlertDialog's ``android:id/buttonPanel``
        under ``parentPanel``, beside ``topPanel`` with ``alertTitle`` and ``contentPanel`` with ``message``) is not
        the dialog: the smallest ancestor that also holds a statement is. Climbing to a window that fills the screen
        means the "panel" was the page's own button bar: there is no dialog."""
        found = self._named_container(target)
        node = found.node if found is not None else None
        while node is not None and not self._has_statement(node):
            parent = node.getparent()
            if parent is None or parent.tag != "node":
                break
            node = parent
        if node is None or node is (found.node if found else None):
            return found
        e = self._by_node.get(id(node))
        if e is None or (
            _area(e) >= 0.9 * self.screen.width * self.screen.height and not self._is_layer(node)
        ):
            # a card named a dialog whose words are pictures stays a dialog; a button "panel" was the page's bar
            return (
                found
                if found is not None and _DIALOG_NAME.search(found.class_name + " " + found.resource_id)
                else None
            )
        return e

    def _has_statement(self, node: etree._Element) -> bool:
        """Some text in the subtree that is not a control's label (a title, a message, an amount)."""
        for n in node.iter("node"):
            e = self._by_node.get(id(n))
            if e is not None and visible(e) and labels_of(e) and not self.in_control(n):
                return True
        return False

    def _is_layer(self, node: etree._Element) -> bool:
        """Inside a window drawn over an earlier app window (a dialog or sheet window over the page)."""
        window = _window_of(node)
        apps = [w for w in self.tree.root.iterchildren("node") if _is_app_window(w)]
        return window is not None and window in apps and apps.index(window) > 0

    def _named_container(self, target: Element) -> Element | None:
        """The nearest ancestor that is a dialog, sheet or overlay: named so by its class or id, or a later
        full-width layer drawn over the page (a dim mask with a card on it)."""
        screen_area = self.screen.width * self.screen.height
        for node in target.node.iterancestors("node"):
            e = self._by_node.get(id(node))
            if e is None or e.bounds is None:
                continue
            if _CONTAINER_CLASS.search(e.class_name) or (
                _CONTAINER_ID.search(e.resource_id)
                and not _ANCHOR_ID.search(e.resource_id)
                # "keyboard_container_layout" around a whole page: named for the keyboard, it is the page
                and _area(e) < 0.9 * screen_area
            ):
                return e
            if _is_overlay(node) and _area(e) < 0.9 * screen_area:
                return e
        # An overlay that covers the whole screen: the card inside it is the dialog.
        for node in target.node.iterancestors("node"):
            e = self._by_node.get(id(node))
            if e is not None and _is_overlay(node) and len(self._subtree(e)) < len(self.visible):
                return e
        # A window of its own that does not fill the screen (a dump holds one root node per window): a dialog.
        window = next(
            (n for n in target.node.iterancestors("node") if getattr(n.getparent(), "tag", None) != "node"),
            None,
        )
        w = self._by_node.get(id(window)) if window is not None else None
        if (
            w is not None
            and not w.package.startswith("com.android.systemui")
            and not is_keyboard(w.package)
            and _area(w) < 0.9 * screen_area
        ):
            return w
        # A window over the page that fills the screen only with its dim backdrop: its card is the dialog (the
        # outermost node on the way down that does not fill the screen).
        if window is not None and self._is_layer(window):
            for node in reversed(list(target.node.iterancestors("node"))):
                e = self._by_node.get(id(node))
                if e is not None and 0 < _area(e) < 0.9 * screen_area:
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
    # A layer is a sizeable part of the screen; a bar laid over its own stub (an input row over a voice-note
    # placeholder of the same size) is not a dialog.
    if mine[3] - mine[1] < _LAYER_MIN_HEIGHT:
        return False
    covers = mine[0] <= first[0] and mine[1] <= first[1] and mine[2] >= first[2] and mine[3] >= first[3]
    # Over a bare background (a wallpaper or colour view) it is the page itself, not a layer over the page.
    return covers and _has_content(siblings[0])


_LAYER_MIN_HEIGHT = 160  # px: lower than the lowest dialog card on a 720-wide screen
_BOUNDS_RE = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


def _has_content(node: etree._Element) -> bool:
    return any(
        n.get("clickable") == "true" or (n.get("text") or n.get("content-desc") or "").strip()
        for n in node.iter("node")
    )


def _bounds(node: etree._Element) -> tuple[int, int, int, int] | None:
    m = _BOUNDS_RE.fullmatch(node.get("bounds", "").replace(" ", ""))
    return tuple(int(v) for v in m.groups()) if m else None  # type: ignore[return-value]


def texts_of(elements: Iterable[Element]) -> tuple[str, ...]:
    return tuple(t for e in elements for t in labels_of(e))


def _window_of(node: etree._Element) -> etree._Element | None:
    """The top-level node (one per window in a dump) that holds ``node``."""
    for n in (node, *node.iterancestors("node")):
        parent = n.getparent()
        if parent is None or parent.tag != "node":
            return n
    return None


def _is_app_window(node: etree._Element) -> bool:
    package = node.get("package") or ""
    return bool(package) and not package.startswith("com.android.systemui") and not is_keyboard(package)


def _reading_order(elements: list[Element]) -> list[Element]:
    """Labels in the order a person reads them: lines top to bottom, left to right on a line. Web pages draw spans in
    any order (flex row-reverse puts 付|支|认|确 on screen as 确认支付), so the tree's order says nothing."""
    boxed = [e for e in elements if e.bounds is not None]
    if len(boxed) != len(elements) or len(elements) < 2:
        return elements
    lines: list[list[Element]] = []
    for e in sorted(boxed, key=lambda e: (e.bounds.top + e.bounds.bottom) / 2):  # type: ignore[union-attr]
        cy = (e.bounds.top + e.bounds.bottom) / 2  # type: ignore[union-attr]
        last = lines[-1][-1].bounds if lines else None
        if last is not None and last.top <= cy < last.bottom:
            lines[-1].append(e)
        else:
            lines.append([e])
    return [e for line in lines for e in sorted(line, key=lambda e: e.bounds.left)]  # type: ignore[union-attr]


__all__ = ["ScreenReader", "TargetContext", "texts_of"]
