"""A view tree as selectors see it: nodes with parent, children, sibling index, depth and pre-order span, and the
node properties of docs/guide/node.md read off the uiautomator dump."""

from __future__ import annotations

from collections.abc import Callable

from lxml import etree

from mobile_agent.screen.viewtree import Element, ViewTree, visible


class Node:
    __slots__ = ("children", "depth", "element", "end", "order", "parent", "position", "tree")

    def __init__(
        self, element: Element, parent: Node | None, position: int, depth: int, tree: list[Node]
    ) -> None:
        self.element = element
        self.parent = parent
        self.position = position  # sibling index (the dump's index attribute, else the XML position)
        self.depth = depth  # a root has depth 0
        self.tree = tree  # every node of the tree, in pre-order
        self.order = len(tree)  # this node's place in it
        self.end = self.order + 1  # one past its last descendant
        self.children: list[Node] = []


class Ctx:
    """A node being tested and the context of the segment matched just right of it (``prev``)."""

    __slots__ = ("node", "prev")

    def __init__(self, node: Node, prev: Ctx | None) -> None:
        self.node = node
        self.prev = prev


class TreeIndex:
    """The links over a ViewTree (built once per tree and kept with it: :func:`index_of`)."""

    def __init__(self, tree: ViewTree) -> None:
        by_id = {id(e.node): e for e in tree.elements}
        self.nodes: list[Node] = []
        for top in tree.root.iterchildren("node"):
            self._add(top, None, 0, by_id, 0)

    def _add(self, xml: etree._Element, parent: Node | None, pos: int, by_id: dict, depth: int) -> None:
        entry = Node(by_id[id(xml)], parent, _index(xml, pos), depth, self.nodes)
        self.nodes.append(entry)
        if parent is not None:
            parent.children.append(entry)
        for i, child in enumerate(xml.iterchildren("node")):
            self._add(child, entry, i, by_id, depth + 1)
        entry.end = len(self.nodes)


def _index(node: etree._Element, fallback: int) -> int:
    try:
        return int(node.get("index", ""))
    except ValueError:
        return fallback


_INDEXES: dict[int, tuple[ViewTree, TreeIndex]] = {}


def index_of(tree: ViewTree) -> TreeIndex:
    held = _INDEXES.get(id(tree))
    if held is None or held[0] is not tree:
        if len(_INDEXES) > 8:
            _INDEXES.clear()
        held = (tree, TreeIndex(tree))
        _INDEXES[id(tree)] = held
    return held[1]


# -- node properties ------------------------------------------------------------------------------------------------
def _vid(n: Node) -> str | None:
    e = n.element
    prefix = f"{e.package}:id/"
    return (e.resource_id[len(prefix) :] or None) if e.resource_id.startswith(prefix) else None


def _flag(attribute: str) -> Callable[[Node], bool | None]:
    def read(n: Node) -> bool | None:
        raw = n.element.node.get(attribute)
        return None if raw is None else raw == "true"

    return read


def _visible_to_user(n: Node) -> bool:
    raw = n.element.node.get("visible-to-user")
    return visible(n.element) if raw is None else raw == "true"


def _editable(n: Node) -> bool:
    """The classic dump has no editable flag; an EditText (or a subclass named so) is what accepts text."""
    raw = n.element.node.get("editable")
    return n.element.class_name.endswith("EditText") if raw is None else raw == "true"


def _box(side: str) -> Callable[[Node], int | None]:
    def read(n: Node) -> int | None:
        b = n.element.bounds
        if b is None:
            return None
        if side == "width":
            return b.right - b.left
        if side == "height":
            return b.bottom - b.top
        return getattr(b, side)

    return read


PROPERTIES: dict[str, Callable[[Node], object]] = {
    "id": lambda n: n.element.resource_id or None,
    "vid": _vid,
    "name": lambda n: n.element.class_name or None,
    "text": lambda n: n.element.text or None,  # the dump writes null as ""
    "desc": lambda n: n.element.content_desc or None,
    "clickable": _flag("clickable"),
    "focusable": _flag("focusable"),
    "checkable": _flag("checkable"),
    "checked": _flag("checked"),
    "longClickable": _flag("long-clickable"),
    "enabled": _flag("enabled"),
    "selected": _flag("selected"),
    "scrollable": _flag("scrollable"),
    "focused": _flag("focused"),
    "password": _flag("password"),
    "editable": _editable,
    "visibleToUser": _visible_to_user,
    **{side: _box(side) for side in ("left", "top", "right", "bottom", "width", "height")},
    "childCount": lambda n: len(n.children),
    "index": lambda n: n.position,
    "depth": lambda n: n.depth,
    "parent": lambda n: n.parent,
}


def child_at(n: Node | None, i: object) -> Node | None:
    """getChild(i): the child whose index is i."""
    if n is None or not isinstance(i, int) or isinstance(i, bool):
        return None
    return next((c for c in n.children if c.position == i), None)
