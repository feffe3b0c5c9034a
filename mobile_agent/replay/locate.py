"""Finding a recorded target on the live screen, and where to act on it.

The target is looked for by its identity (:mod:`mobile_agent.replay.identity`): the same class and resource-id, the
same name, under the same ancestors. Found, the action goes to its live box, at the same spot within it, so another
resolution, a list that scrolled or a row that moved still gets the right row. What then stands where the target
stood decides one more case. A row of the same list with another name in the target's old place, in a list whose
order changed around the target (李四, recorded below 张三, now above him in 张三's place), stops the replay: the
recording cannot tell whether the step meant 张三 or the first chat. A list that only moved (scrolled, rows added
or removed, the rows above and below the target still above and below it) is followed.

    found = locate(identity, live_xml, Point(347, 196), Size(720, 1600))
    found.point          # where to tap now, or None
    found.problem        # why it cannot be acted on: a sentence for the record
"""

from __future__ import annotations

from dataclasses import dataclass

from mobile_agent.actions import Point, Size
from mobile_agent.replay.identity import (
    TargetIdentity,
    ancestors_match,
    cover_at,
    cover_key,
    name_of,
    peers_of,
    same_kind,
)
from mobile_agent.screen.context import ScreenReader
from mobile_agent.screen.text import fold
from mobile_agent.screen.viewtree import Bounds, Element, ViewTree, visible


@dataclass(frozen=True)
class Located:
    """The live target (``point`` set), or why there is none (``problem``). ``waiting_helps``: the screen may still
    become right (the target not there yet, covered, the tree unreadable); otherwise it is what it is."""

    point: Point | None = None
    element: str = ""  # the live element, described
    bounds: Bounds | None = None
    moved: bool = False
    problem: str | None = None
    waiting_helps: bool = False

    @property
    def found(self) -> bool:
        return self.point is not None


def _box(b: Bounds | None) -> str:
    return f"[{b.left},{b.top}][{b.right},{b.bottom}]" if b is not None else "(no box)"


def _names(names: tuple[str, ...]) -> str:
    return " ".join(names) or "(no label)"


def locate(identity: TargetIdentity, xml: str | None, spot: Point, screen: Size | None = None) -> Located:
    """``identity`` on the live tree ``xml``; ``spot`` is the recorded point scaled to the live screen."""
    tree = ViewTree.parse(xml) if xml else None
    if tree is None:
        return Located(problem="the live view tree could not be read", waiting_helps=True)
    reader = ScreenReader(tree, screen)
    at_spot = reader.at(spot).target
    candidates = _candidates(reader, tree, identity)
    if at_spot is not None and any(c.node is at_spot.node for c in candidates):
        return _act_on(reader, at_spot, identity, moved=False)
    if not candidates:
        there = f"; at its place now: {reader.at(spot).describe()}"
        return Located(
            problem=f"target {identity.describe()} is not on the screen{there}", waiting_helps=True
        )
    if len(candidates) > 1:
        strict = [c for c in candidates if ancestors_match(c.node, identity.path)]
        candidates = strict if strict else candidates
    if len(candidates) > 1:
        boxes = ", ".join(_box(c.bounds) for c in candidates[:4])
        return Located(
            problem=f"{len(candidates)} elements look like target {identity.describe()} ({boxes}): which one "
            "the recording meant cannot be told"
        )
    found = candidates[0]
    taken = _taken_place(reader, found, at_spot, identity)
    if taken is not None:
        return Located(element=_describe(reader, found), bounds=found.bounds, problem=taken)
    return _act_on(reader, found, identity, moved=True)


def _candidates(reader: ScreenReader, tree: ViewTree, identity: TargetIdentity) -> list[Element]:
    """Shown elements of the target's kind, named as it is (with its description, when it has one and no name)."""
    found = []
    for e in tree.elements:
        if not same_kind(e, identity) or not visible(e):
            continue
        if name_of(reader, e) != identity.name:
            continue
        if not identity.name and identity.content_desc and identity.content_desc != fold(e.content_desc):
            continue
        found.append(e)
    return found


def _taken_place(
    reader: ScreenReader, found: Element, at_spot: Element | None, identity: TargetIdentity
) -> str | None:
    """A sentence when another row of the target's list now stands where the target stood and the list was
    reordered around the target (a row that came after it in the recording now comes before it, or the other way
    round); None when the target's place is free, holds something else, or the list only moved."""
    if (
        at_spot is None
        or not same_kind(at_spot, identity)
        or at_spot.node.getparent() is not found.node.getparent()
    ):
        return None
    live = [name_of(reader, p) for p in peers_of(reader, found)]
    here = next((i for i, p in enumerate(peers_of(reader, found)) if p.node is found.node), 0)
    recorded = identity.peers
    jumped = (set(recorded[identity.rank + 1 :]) & set(live[:here])) | (
        set(recorded[: identity.rank]) & set(live[here + 1 :])
    )
    jumped.discard(identity.name)
    if not jumped:
        return None  # the rows around it kept their order: the list scrolled, or rows came or went
    other = name_of(reader, at_spot)
    return (
        f"target '{_names(identity.name)}' is now '{_names(other)}' ({_describe(reader, at_spot)}): the list was "
        f"reordered around it ('{_names(sorted(jumped)[0])}' moved past it) and '{_names(identity.name)}' is now "
        f"at {_box(found.bounds)}, so whether the step meant '{_names(identity.name)}' or the row in that place "
        "cannot be told"
    )


def _act_on(reader: ScreenReader, element: Element, identity: TargetIdentity, *, moved: bool) -> Located:
    """Where on ``element`` to act: the recorded spot within its box, else its middle; the touch must reach it."""
    b = element.bounds
    assert b is not None  # visible elements have a box
    fx, fy = identity.offset
    spot = Point(
        min(b.right - 1, max(b.left, round(b.left + fx * (b.right - b.left)))),
        min(b.bottom - 1, max(b.top, round(b.top + fy * (b.bottom - b.top)))),
    )
    for point in (spot, b.centre):
        taker = reader.at(point).target
        if taker is None or taker.node is not element.node:
            continue
        cover = cover_at(reader, element, point)
        if cover is None or cover_key(cover) == identity.cover:
            return Located(point, _describe(reader, element), b, moved)
        return Located(
            element=_describe(reader, element),
            bounds=b,
            problem=f"target {identity.describe()} is covered by {_describe(reader, cover)}",
            waiting_helps=True,
        )
    cover = reader.at(b.centre).describe()
    return Located(
        element=_describe(reader, element),
        bounds=b,
        problem=f"target {identity.describe()} is covered by {cover}",
        waiting_helps=True,
    )


def _describe(reader: ScreenReader, element: Element) -> str:
    b = element.bounds
    return reader.at(b.centre).describe() if b is not None else element.class_name


__all__ = ["Located", "locate"]
