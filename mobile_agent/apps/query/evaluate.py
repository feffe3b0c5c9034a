"""Run a parsed selector on a view tree: right to left, with backtracking, returning the target element.

Written from the documented semantics (docs/popup-rules.md, gkd-kit/docs), not from any rule engine's code. A
selector is compiled once into closures (``compiled``), so a step tries a rule without walking its syntax tree.
Sibling offsets use the ``index`` attribute, which keeps a node's position among all children even when the dump
left some out. Nodes a dump marks ``visible-to-user="false"`` take part in matching, as they do in GKD (rules
test ``[visibleToUser=false]``); :func:`find_target` prefers a visible target when one is asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import lru_cache

from mobile_agent.apps.query.conditions import compile_segment
from mobile_agent.apps.query.parser import parse_selector
from mobile_agent.apps.query.syntax import AllQuery, AnyQuery, NotQuery, Query, Relation, Selector
from mobile_agent.apps.query.tree import Ctx, Node, index_of
from mobile_agent.screen.viewtree import Element, ViewTree, visible


def find_target(tree: ViewTree, selector: Query | str, *, visible_first: bool = False) -> Element | None:
    """The target of the first match (document order of the rightmost segment), or None. With
    ``visible_first`` the first visible target wins over an earlier invisible one."""
    fallback = None
    for hit in targets(tree, selector):
        if not visible_first or visible(hit):
            return hit
        fallback = fallback or hit
    return fallback


def targets(tree: ViewTree, selector: Query | str) -> Iterator[Element]:
    match = compiled(selector) if isinstance(selector, str) else _compile_query(selector)
    for node in index_of(tree).nodes:
        hit = match(node)
        if hit is not None:
            yield hit.element


Matcher = Callable[[Node], "Node | None"]


@lru_cache(maxsize=8192)
def compiled(text: str) -> Matcher:
    """The selector as one function: node -> the target when the selector matches with its last segment there."""
    return _compile_query(parse_selector(text))


# -- queries and unit selectors ---------------------------------------------------------------------------------------
def _compile_query(q: Query) -> Matcher:
    if isinstance(q, Selector):
        return _compile_unit(q)
    if isinstance(q, NotQuery):
        inner = _compile_query(q.inner)
        return lambda node: node if inner(node) is None else None
    parts = [_compile_query(p) for p in q.parts]
    if isinstance(q, AnyQuery):

        def any_of(node: Node) -> Node | None:
            for part in parts:
                hit = part(node)
                if hit is not None:
                    return hit
            return None

        return any_of
    assert isinstance(q, AllQuery)

    def all_of(node: Node) -> Node | None:
        hit = None
        for part in parts:
            hit = part(node)
            if hit is None:
                return None
        return hit

    return all_of


def _compile_unit(sel: Selector) -> Matcher:
    tests = [compile_segment(s) for s in sel.segments]
    related = [_compile_relation(r) for r in sel.relations]
    last, want = len(tests) - 1, sel.target_index

    def walk(i: int, ctx: Ctx, target: Node | None) -> Node | None:
        if i == want:
            target = ctx.node
        if i == 0:
            return target
        test = tests[i - 1]
        for other in related[i - 1](ctx):
            candidate = Ctx(other, ctx)
            if test(candidate):
                found = walk(i - 1, candidate, target)
                if found is not None:
                    return found
        return None

    rightmost = tests[last]

    def match(node: Node) -> Node | None:
        ctx = Ctx(node, None)
        return walk(last, ctx, None) if rightmost(ctx) else None

    return match


def _compile_relation(rel: Relation) -> Callable[[Ctx], Iterator[Node]]:
    """Every node A with ``A rel B`` (B is the context's node), nearest first."""
    ks, op = rel.offsets, rel.op
    finite = sorted(ks.values) if ks.values is not None else None

    def siblings(ctx: Ctx) -> Iterator[Node]:
        b = ctx.node
        if b.parent is None:
            return
        sign = -1 if op == "+" else 1
        found = [s for s in b.parent.children if (s.position - b.position) * sign > 0]
        found.sort(key=lambda s: abs(s.position - b.position))
        yield from (s for s in found if abs(s.position - b.position) in ks)

    def ancestors(ctx: Ctx) -> Iterator[Node]:
        up, generation = ctx.node.parent, 1
        while up is not None:
            if generation in ks:
                yield up
            up, generation = up.parent, generation + 1

    def children(ctx: Ctx) -> Iterator[Node]:  # A is B's k-th child: A.index = k - 1
        yield from (c for c in ctx.node.children if c.position + 1 in ks)

    def descendants(ctx: Ctx) -> Iterator[Node]:  # the k-th in pre-order
        b = ctx.node
        nodes = b.tree
        if finite is not None:
            yield from (nodes[b.order + k] for k in finite if b.order + k < b.end)
        else:
            yield from (nodes[o] for o in range(b.order + 1, b.end) if o - b.order in ks)

    def previous(ctx: Ctx) -> Iterator[Node]:  # a node matched earlier: k segments to the right
        back, k = ctx.prev, 1
        while back is not None:
            if k in ks:
                yield back.node
            back, k = back.prev, k + 1

    if op in ("+", "-"):
        return siblings
    if op == ">":
        return ancestors
    if op == "<":
        return children
    if op == "->":
        return previous
    return descendants
