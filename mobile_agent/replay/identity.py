"""What identifies the control a recorded action touched, read off the recorded view tree at the recorded point.

A replay finds the target again by these, as tools that replay UI flows do (Maestro, Appium), instead of tapping the
recorded coordinates: its class and resource-id, its text and description, the labels that name it, and its path
from the nearest stable ancestor (the closest one whose resource-id is unique on that screen). Identities are read
from the stored trees when the replay runs, so recordings made before this module existed replay the same way.

What *names* a control is read as a person reads it. A row whose parts say which one is its title (AOSP's
``android:id/title`` beside ``android:id/summary``) is named by that title: the WLAN row whatever network its summary
shows. A button is named by all its labels ("发送", "确认支付", a PIN key's "5"; a switch's ON/OFF too, since
tapping it does the opposite when it differs). A composite row (a chat: name, preview, time; a shop: name, rating, prices) is named by its title, the
first line that is not a clock or a counter: the row of 张三 stays 张三's row when its preview changes from
"好的，收到" to "晚上好", and it is not the row of 李四 whatever the finger was on.

    identity = identify(recorded_xml, Point(520, 294))
    identity.name            # ('张三',)
    identity.describe()      # "'张三' (LinearLayout com.tencent.mm:id/cj1)"
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from lxml import etree

from mobile_agent.actions import Point, Size
from mobile_agent.screen.context import ScreenReader
from mobile_agent.screen.labels import labels_of, own_descendants
from mobile_agent.screen.text import fold
from mobile_agent.screen.viewtree import Bounds, Element, ViewTree, visible

# Folded texts that change with the clock, not with what a control is: "10:21" (folded "1021"), "昨天", "3分钟前",
# "下午3:05", "星期一", unread counters "3" / "99+". Dropped from a composite row's labels only: a key labelled
# "5" on a (possibly shuffled) PIN pad is the whole label and stays compared.
CLOCKLIKE = re.compile(
    r"^(?:\d+|刚刚|今天|昨天|前天|\d+(?:秒|分钟|小时|天|周|个月)前|(?:上午|下午|中午|晚上|凌晨)\d+"
    r"|(?:星期|周)[一二三四五六日天]|\d+月\d+日|\d+(?:am|pm)|(?:am|pm)\d+|yesterday|today|now|justnow)$"
)
# A part whose resource-id names it the row's title: android:id/title (AOSP preferences), ...:id/item_title, ...:id/name.
_TITLE_ID = re.compile(r":id/(?:\w+_)?(?:title|name)$", re.IGNORECASE)
# Longer than this (folded), a control's labels are a composite row, named by its title; shorter, by them all.
WHOLE_LABEL_LIMIT = 20


def short_class(e: Element | None) -> str:
    return e.class_name.rsplit(".", 1)[-1] if e is not None else ""


def naming_labels(raw: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``raw`` folded, without the clock-like ones (unless nothing else is left), each once."""
    folded = [f for f in (fold(t) for t in raw) if f]
    kept = [f for f in folded if not CLOCKLIKE.match(f)]
    return tuple(dict.fromkeys(kept or folded))


@dataclass(frozen=True)
class PathStep:
    class_name: str  # short class name
    resource_id: str


@dataclass(frozen=True)
class TargetIdentity:
    """The recorded target: what it is, what names it, where it sits in the tree and in its list."""

    class_name: str
    resource_id: str
    text: str  # its own text, folded
    content_desc: str  # its own description, folded
    name: tuple[str, ...]  # what names it (see the module docstring); () for a control nothing names
    labels: tuple[str, ...]  # every label of the control, for messages (a row's preview and time too)
    path: tuple[PathStep, ...]  # ancestors from the stable one (first) down to its parent
    bounds: Bounds
    offset: tuple[float, float]  # where in its box the finger was, as fractions of its width and height
    # the names of the rows of its list (its siblings of its kind), in order
    peers: tuple[tuple[str, ...], ...]
    rank: int  # its place among them
    clickable: bool
    cover: str = (
        ""  # what was drawn over the finger in the recording too (class and resource-id), if anything
    )

    def describe(self) -> str:
        label = " ".join(self.name) or self.content_desc or self.text
        kind = " ".join(p for p in (self.class_name, self.resource_id) if p)
        return f"'{label}' ({kind})" if label else f"(no label) {kind}"


def identify(xml: str | None, point: Point, screen: Size | None = None) -> TargetIdentity | None:
    """The identity of what takes a touch at ``point`` on the tree ``xml``; None when the tree cannot be read or
    nothing there can be found again (no control, nothing named)."""
    tree = ViewTree.parse(xml) if xml else None
    if tree is None:
        return None
    reader = ScreenReader(tree, screen)
    target = reader.at(point).target
    if target is None or target.bounds is None or target.bounds.empty:
        return None
    identity = identity_of(reader, target, point)
    if not identity.clickable and not (identity.name or identity.resource_id or identity.content_desc):
        return None  # a touch on a blank part of the page: nothing to find again, the spot is what counts
    return identity


def identity_of(reader: ScreenReader, target: Element, point: Point | None = None) -> TargetIdentity:
    bounds = target.bounds or Bounds(0, 0, 1, 1)
    width, height = max(1, bounds.right - bounds.left), max(1, bounds.bottom - bounds.top)
    where = point or bounds.centre
    offset = (
        min(1.0, max(0.0, (where.x - bounds.left) / width)),
        min(1.0, max(0.0, (where.y - bounds.top) / height)),
    )
    peers = peers_of(reader, target)
    return TargetIdentity(
        class_name=short_class(target),
        resource_id=target.resource_id,
        text=fold(target.text),
        content_desc=fold(target.content_desc),
        name=name_of(reader, target),
        labels=naming_labels(control_labels(reader, target)),
        path=path_of(reader.tree, target),
        bounds=bounds,
        offset=offset,
        peers=tuple(name_of(reader, p) for p in peers),
        rank=next((i for i, p in enumerate(peers) if p.node is target.node), 0),
        clickable=target.node.get("clickable") == "true" or target.node.get("long-clickable") == "true",
        cover=cover_key(cover_at(reader, target, where)),
    )


def cover_at(reader: ScreenReader, target: Element, point: Point) -> Element | None:
    """What a person sees at ``point`` instead of ``target``: a view drawn after it, outside it and its ancestors,
    that shows something there (a picture, a text, a control). A touch may still fall through such a view in the
    tree (a splash ad's frame takes none), but the person sees the splash, not the row: the replay waits for it to
    go (or a popup rule to dismiss it) instead of tapping through it. A transparent frame drawn over a list to hold a
    floating button elsewhere shows nothing at the point, and covers nothing."""
    inside = {id(n) for n in target.node.iter("node")} | {id(n) for n in target.node.iterancestors("node")}
    after = False
    for e in reader.visible:
        if e.node is target.node:
            after = True
            continue
        if not after or id(e.node) in inside or not _holds(e, point):
            continue
        shows = e.node.get("clickable") == "true" or labels_of(e) or "Image" in e.class_name
        if shows and not _within(e, target):
            return e
    return None


def cover_key(cover: Element | None) -> str:
    return f"{short_class(cover)} {cover.resource_id}".strip() if cover is not None else ""


def _holds(e: Element, p: Point) -> bool:
    b = e.bounds
    return b is not None and b.left <= p.x < b.right and b.top <= p.y < b.bottom


def _within(e: Element, target: Element) -> bool:
    """``e`` lies inside ``target``'s box (a badge drawn on the row itself, by another branch of the tree)."""
    a, b = e.bounds, target.bounds
    return (
        a is not None
        and b is not None
        and a.left >= b.left
        and a.top >= b.top
        and a.right <= b.right
        and a.bottom <= b.bottom
    )


def _labelled(reader: ScreenReader, target: Element) -> list[Element]:
    """The control and its visible descendants that are not controls of their own, those that carry a label, in
    reading order (top to bottom, left to right)."""
    own = [reader.element(n) for n in own_descendants(target.node)]
    shown = [e for e in own if e is not None and visible(e) and labels_of(e)]
    shown.sort(key=lambda e: (e.bounds.top, e.bounds.left))  # type: ignore[union-attr]
    return [target, *shown] if labels_of(target) else shown


def control_labels(reader: ScreenReader, target: Element) -> list[str]:
    """Every label of the control: its own and those of its parts, in reading order."""
    return [t for e in _labelled(reader, target) for t in labels_of(e)]


def _lines(elements: list[Element]) -> int:
    """How many lines of text the elements make (one whose middle falls inside the last one's box is on its line)."""
    lines, last = 0, None
    for e in sorted(elements, key=lambda e: e.bounds.top + e.bounds.bottom):  # type: ignore[union-attr]
        middle = (e.bounds.top + e.bounds.bottom) / 2  # type: ignore[union-attr]
        if last is None or not last.top <= middle < last.bottom:
            lines += 1
            last = e.bounds
    return lines


def name_of(reader: ScreenReader, target: Element) -> tuple[str, ...]:
    """What names ``target``: the part its resource-id calls the title, when there is one (a settings row "WLAN"
    whatever its summary says); all its labels for a control of one short line (a button, a key, a tab); else the
    title of a row of several lines (its first label that is no clock or counter)."""
    labelled = _labelled(reader, target)
    titles = [e for e in labelled if e is not target and _TITLE_ID.search(e.resource_id)]
    if titles and (named := naming_labels(labels_of(titles[0]))):
        return named  # a row says which part is its title (android:id/title beside its summary, a value)
    whole = naming_labels([t for e in labelled for t in labels_of(e)])
    if _lines(labelled) <= 1 and len("".join(whole)) <= WHOLE_LABEL_LIMIT:
        return whole
    for e in labelled:
        kept = [t for t in naming_labels(labels_of(e)) if not CLOCKLIKE.match(t)]
        if kept:
            return (kept[0],)
    return whole[:1]


def path_of(tree: ViewTree, target: Element) -> tuple[PathStep, ...]:
    """(class, resource-id) of each ancestor from the nearest one whose resource-id is unique on the screen down to
    the target's parent; from the window's top when none is."""
    ids = Counter(e.resource_id for e in tree.elements if e.resource_id)
    steps: list[PathStep] = []
    for node in target.node.iterancestors("node"):
        rid = node.get("resource-id", "")
        steps.append(PathStep(node.get("class", "").rsplit(".", 1)[-1], rid))
        if rid and ids[rid] == 1:
            break
    return tuple(reversed(steps))


def peers_of(reader: ScreenReader, target: Element) -> list[Element]:
    """The target and its siblings of the same class and resource-id that are shown, in tree order: the rows of the
    list it is a row of (just itself when it is no row)."""
    parent = target.node.getparent()
    if parent is None or parent.tag != "node":
        return [target]
    same: list[Element] = []
    for node in parent.iterchildren("node"):
        e = reader.element(node)
        if (
            e is not None
            and visible(e)
            and e.class_name == target.class_name
            and e.resource_id == target.resource_id
        ):
            same.append(e)
    return same or [target]


def same_kind(a: Element, identity: TargetIdentity) -> bool:
    return short_class(a) == identity.class_name and a.resource_id == identity.resource_id


def ancestors_match(node: etree._Element, path: tuple[PathStep, ...]) -> bool:
    """Whether ``node``'s ancestors, read upwards, are ``path`` read from its end."""
    ancestors = list(node.iterancestors("node"))
    if len(ancestors) < len(path):
        return False
    for step, up in zip(reversed(path), ancestors, strict=False):
        if (up.get("class", "").rsplit(".", 1)[-1], up.get("resource-id", "")) != (
            step.class_name,
            step.resource_id,
        ):
            return False
    return True


__all__ = [
    "CLOCKLIKE",
    "PathStep",
    "TargetIdentity",
    "ancestors_match",
    "control_labels",
    "cover_at",
    "cover_key",
    "identify",
    "identity_of",
    "name_of",
    "naming_labels",
    "path_of",
    "peers_of",
    "same_kind",
    "short_class",
]
