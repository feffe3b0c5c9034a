"""Run a parsed selector on a view tree: right to left, with backtracking, returning the target element.

Written from the documented semantics (docs/popup-rules.md), not from any rule engine's code. Nodes marked
``visible-to-user="false"`` do not exist for matching (a GKD snapshot leaves them out); sibling offsets use the
``index`` attribute, which keeps the position among all children even when some were left out of the dump.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from lxml import etree

from mobile_agent.apps.query.parser import parse_selector
from mobile_agent.apps.query.syntax import (
    AllOf,
    AnyOf,
    Compare,
    Expr,
    Not,
    Relation,
    Segment,
    Selector,
    Value,
)
from mobile_agent.screen.viewtree import Element, ViewTree, visible

_BOOL_XML = {"longClickable": "long-clickable"}


@dataclass(frozen=True)
class _Node:
    element: Element
    parent: _Node | None
    position: int  # sibling index (the dump's index attribute, else the XML position)
    depth: int
    children: list[_Node]


class TreeIndex:
    """Parent / child / sibling links over a ViewTree (built once per tree and kept with it)."""

    def __init__(self, tree: ViewTree) -> None:
        by_id = {id(e.node): e for e in tree.elements}
        self.nodes: list[_Node] = []
        for top in tree.root.iterchildren("node"):
            self._add(top, None, 0, by_id, 0)

    def _add(self, node: etree._Element, parent: _Node | None, pos: int, by_id: dict, depth: int) -> None:
        element = by_id[id(node)]
        entry = _Node(element, parent, _index(node, pos), depth, [])
        self.nodes.append(entry)
        if parent is not None:
            parent.children.append(entry)
        for i, child in enumerate(node.iterchildren("node")):
            self._add(child, entry, i, by_id, depth + 1)


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


def find_target(tree: ViewTree, selector: Selector | str) -> Element | None:
    """The target of the first match (document order of the rightmost segment), or None."""
    return next(iter(targets(tree, selector)), None)


def targets(tree: ViewTree, selector: Selector | str) -> Iterator[Element]:
    sel = parse_selector(selector) if isinstance(selector, str) else selector
    last = len(sel.segments) - 1
    want = sel.target_index
    for node in index_of(tree).nodes:
        if _present(node) and _segment_holds(sel.segments[last], node):
            hit = _walk(sel, last, node, want)
            if hit is not None:
                yield hit.element


def _walk(sel: Selector, i: int, node: _Node, want: int, chosen: _Node | None = None) -> _Node | None:
    """Match segments[0..i] with segments[i] at ``node``; the node matched at ``want``, or None for no match."""
    if i == want:
        chosen = node
    if i == 0:
        return chosen
    for other in _related(sel.relations[i - 1], node):
        if _present(other) and _segment_holds(sel.segments[i - 1], other):
            found = _walk(sel, i - 1, other, want, chosen)
            if found is not None:
                return found
    return None


def _related(rel: Relation, b: _Node) -> Iterator[_Node]:
    """Every node A with ``A rel B``, nearest first."""
    ks = rel.offsets
    if rel.op in ("+", "-"):
        siblings = b.parent.children if b.parent is not None else []
        sign = -1 if rel.op == "+" else 1
        found = [s for s in siblings if s is not b and (s.position - b.position) * sign > 0]
        found.sort(key=lambda s: abs(s.position - b.position))
        yield from (s for s in found if ks is None or abs(s.position - b.position) in ks)
    elif rel.op == ">":
        up, generation = b.parent, 1
        while up is not None:
            if ks is None or generation in ks:
                yield up
            up, generation = up.parent, generation + 1
    else:  # "<": A is B's k-th child (1-based)
        yield from (c for c in b.children if ks is None or c.position + 1 in ks)


def _present(node: _Node) -> bool:
    return node.element.node.get("visible-to-user", "true") != "false"


def _segment_holds(seg: Segment, node: _Node) -> bool:
    if seg.class_name is not None:
        cls = node.element.class_name
        if cls != seg.class_name and not cls.endswith("." + seg.class_name):
            return False
    return seg.expr is None or _expr_holds(seg.expr, node)


def _expr_holds(expr: Expr, node: _Node) -> bool:
    if isinstance(expr, Compare):
        return _compare(expr, _attribute(expr.attr, node))
    if isinstance(expr, Not):
        return not _expr_holds(expr.expr, node)
    if isinstance(expr, AllOf):
        return all(_expr_holds(p, node) for p in expr.parts)
    assert isinstance(expr, AnyOf)
    return any(_expr_holds(p, node) for p in expr.parts)


def _attribute(name: str, node: _Node) -> Value:
    e = node.element
    if name in ("text", "desc", "text.length", "desc.length"):
        raw = e.text if name.startswith("text") else e.content_desc
        if not raw:
            return None
        return len(raw) if name.endswith(".length") else raw
    if name == "id":
        return e.resource_id or None
    if name == "vid":
        prefix = f"{e.package}:id/"
        return e.resource_id[len(prefix) :] or None if e.resource_id.startswith(prefix) else None
    if name == "name":
        return e.class_name or None
    if name == "visibleToUser":
        return visible(e)
    if name == "index":
        return node.position
    if name == "childCount":
        return len(node.children)
    if name == "depth":
        return node.depth
    if name in ("left", "top", "right", "bottom", "width", "height"):
        b = e.bounds
        if b is None:
            return None
        return {"width": b.right - b.left, "height": b.bottom - b.top}.get(name, getattr(b, name, None))
    raw = e.node.get(_BOOL_XML.get(name, name))
    return None if raw is None else raw == "true"


def _compare(c: Compare, actual: Value) -> bool:
    if c.op == "=":
        return actual == c.value and type(actual) is type(c.value)
    if c.op == "!=":
        return not (actual == c.value and type(actual) is type(c.value))
    if actual is None:
        return False
    if isinstance(actual, str) and isinstance(c.value, str):
        negate = c.op.startswith("!")
        op = c.op.lstrip("!")
        result = {
            "^=": actual.startswith(c.value),
            "*=": c.value in actual,
            "$=": actual.endswith(c.value),
        }.get(op)
        if result is None:  # ~=
            result = _regex(c.value).fullmatch(actual) is not None
        return result != negate
    if isinstance(actual, int) and isinstance(c.value, int) and not isinstance(actual, bool):
        return {
            ">": actual > c.value,
            ">=": actual >= c.value,
            "<": actual < c.value,
            "<=": actual <= c.value,
        }[c.op]
    return False


@lru_cache(maxsize=1024)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)
