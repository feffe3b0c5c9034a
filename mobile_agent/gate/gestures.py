"""Swipes and drags: sliders ("右滑完成支付", "Slide to pay"), swipe-to-delete rows, instructions on screen that say
what a swipe does."""

from __future__ import annotations

import re
from collections.abc import Callable

from mobile_agent.actions import Action, ActionKind, Point
from mobile_agent.gate.finding import Finding, Situation, fail_closed, with_model
from mobile_agent.gate.lexicon import (
    MONEY_KINDS,
    SEARCH_FIELD,
    SLIDER,
    id_words,
    is_yes,
    topic_kind,
    verb_kind,
)
from mobile_agent.gate.pages import settled
from mobile_agent.screen.context import ScreenReader, TargetContext
from mobile_agent.screen.labels import label_of, labels_of
from mobile_agent.screen.text import amounts, fold

TapReader = Callable[[Situation, Point, "tuple[str, str] | None"], "Finding | None"]


def gesture_finding(s: Situation, model: tuple[str, str] | None, tap: TapReader) -> Finding | None:
    """A swipe or drag: a slider that names a kind, a long sideways swipe on a row that hides an action; a gesture
    too short to move is the tap ``tap`` reads."""
    a = s.action
    start, end = a.point, a.end
    if start is not None and end is not None and abs(start.x - end.x) + abs(start.y - end.y) < 16:
        return tap(s, start, model)  # the phone sees a tap
    if s.reader is None:
        return fail_closed(s, model, "the view tree is unavailable") if model else None
    ctx = s.reader.at(start)  # type: ignore[arg-type]
    texts = [*ctx.labels, *(ctx.context_texts if ctx.container is not None else ())]
    track = _track_texts(s.reader, ctx, end) if end is not None else []
    near = [*_texts_near_row(s.reader, ctx), *track]
    slider_words = [t for t in (*texts, *near) if SLIDER.search(fold(t))]
    row_action = _row_swipe_action(s.reader, ctx, a)
    if row_action is not None:
        return with_model(row_action, model)
    dropped = _drop_target(s.reader, ctx, a)
    if dropped is not None:
        return with_model(dropped, model)
    # Instructions anywhere on the screen that say what a swipe does ("Swipe a note left to delete it"); not a drop
    # zone the item is dragged onto inside a draft ("拖动到此处删除" takes a picked photo out of an unsent post).
    told = [
        t
        for e in s.reader.visible
        for t in labels_of(e)
        if SLIDER.search(fold(t)) and verb_kind(t, anywhere=True) and not _draft_drop_zone(s.reader, e, a)
    ]
    is_slider = (
        bool(track)
        or bool(slider_words)
        or "seekbar" in (ctx.hit.class_name.lower() if ctx.hit else "")
        or any(
            w.lower() in ("slider", "slide", "swipe", "seekbar", "puck", "unlock")
            for rid in ctx.ids
            for w in id_words(rid)
        )
    )
    if is_slider or told:
        words = [*slider_words, *told]
        found = verb_kind(" ".join(words), anywhere=True) or topic_kind([*words, *texts, *near])
        if found is None and track and words:
            # "Swipe to request UberX" over "UberX $23.40": a slider on a page that states a price orders it.
            found = _priced_page(s.reader)
        if found is None and any(_confirms(t) for t in (*words, *track)):
            # "Swipe to confirm": the slider commits whatever the screen is about ("Sending 0.5 ETH").
            found = topic_kind(s.reader.texts()) or (
                "sensitive",
                next(t for t in (*words, *track) if _confirms(t)),
            )
        if found is not None:
            return with_model(
                Finding(
                    found[0],
                    "gesture",
                    ctx.describe(),
                    f"slider '{found[1][:40]}'",
                    (f"slider text '{found[1][:60]}'",),
                ),
                model,
            )
    if model is not None:
        return Finding(model[0], "model", ctx.describe(), model[1], (model[1],))
    return None


def _priced_page(reader: ScreenReader) -> tuple[str, str] | None:
    if settled(reader, reader.at(Point(0, 0))) is not None:
        return None
    priced = [t for t in reader.texts() if amounts(t)]
    if not priced or len({(m.currency, m.value) for t in priced for m in amounts(t)}) > 3:
        return None
    topic = topic_kind(reader.texts())
    return topic if topic is not None and topic[0] in MONEY_KINDS else ("order", priced[0])


_HOME_APP = re.compile(r"launcher|\.home\b|trebuchet|lawnchair", re.I)
_SHORTCUT_ONLY = re.compile(r"remove|移除|从主屏幕移除|removefromhome(screen)?")


def _drop_target(reader: ScreenReader, ctx: TargetContext, a: Action) -> Finding | None:
    """A drag that ends on a drop target named by a verb (a launcher's Uninstall / 卸载 zone): the drop does it. A
    drag ends where the finger lifts, so the end point is read, not the start."""
    start, end = a.point, a.end
    if start is None or end is None:
        return None
    dragging = a.kind is ActionKind.DRAG or (
        (a.duration_ms or 0) >= 800
        and ctx.target is not None
        and ctx.target.node.get("long-clickable") == "true"
    )
    if not dragging:
        return None
    at_end = reader.at(end)
    zone = at_end.target or at_end.hit
    if zone is None or zone.bounds is None or (ctx.target is not None and zone.node is ctx.target.node):
        return None
    if _draft_drop_zone(reader, zone, a):
        return None
    found = next((k for t in at_end.labels if (k := verb_kind(t, anywhere=True)) is not None), None)
    if found is None:
        return None
    if _HOME_APP.search(zone.package) and _SHORTCUT_ONLY.fullmatch(fold(found[1])):
        return None  # a home screen's Remove / 移除 takes the shortcut off the home screen; the app stays
    return Finding(
        found[0],
        "gesture",
        at_end.describe(),
        f"a drag that ends on the drop target '{found[1][:30]}'",
        (f"drop target '{found[1][:40]}'",),
    )


def _track_texts(reader: ScreenReader, ctx: TargetContext, end: Point) -> list[str]:
    """A slider's track: the smallest box around the touched thumb that also holds the gesture's end, small enough to
    be a control (a bar, a column), with its own words ("위로 밀어서 송금" above a thumb that moves up)."""
    hit = ctx.target or ctx.hit
    if hit is None or hit.bounds is None:
        return []
    limit = 0.3 * reader.screen.width * reader.screen.height
    for node in hit.node.iterancestors("node"):
        e = reader.element(node)
        if e is None or e.bounds is None:
            continue
        b = e.bounds
        if (b.right - b.left) * (b.bottom - b.top) > limit:
            return []
        if b.left <= end.x < b.right and b.top <= end.y < b.bottom:
            return [
                t for n in node.iter("node") if (x := reader.element(n)) is not None for t in labels_of(x)
            ]
    return []


_SLIDE_LEAD = re.compile(r"^.*?(滑动|滑|拖动|拖到|slide|swipe|drag)(up|right|left|down)?(to|以|来)?")


def _confirms(text: str) -> bool:
    """A track that only says yes ("Swipe to confirm", "滑动确认")."""
    return is_yes(_SLIDE_LEAD.sub("", fold(text))) or any(is_yes(w) for w in text.split())


def _draft_drop_zone(reader: ScreenReader, zone, a: Action) -> bool:  # noqa: ANN001 - an Element
    """The gesture drops onto ``zone`` from outside it, on a composer that has not published yet (a text field and a
    publish or send button): what is dropped leaves the draft, nothing stored is touched."""
    b, start, end = zone.bounds, a.point, a.end
    if b is None or start is None or end is None:
        return False
    inside = lambda p: b.left <= p.x < b.right and b.top <= p.y < b.bottom  # noqa: E731
    if not inside(end) or inside(start):
        return False
    composer = any(
        not SEARCH_FIELD.search(e.resource_id + (e.node.get("hint") or "")) for e in reader.edit_fields()
    )
    publish = any(
        e.node.get("clickable") == "true"
        and (k := verb_kind(label_of(e))) is not None
        and k[0] in ("post", "send")
        for e in reader.visible
    )
    return composer and publish


def _row_swipe_action(reader: ScreenReader, ctx: TargetContext, a: Action) -> Finding | None:
    """A long sideways swipe on a list row performs the action its row hides behind it (swipe-to-delete): the
    row's buttons are in the dump even while squeezed to nothing at its edge."""
    start, end = a.point, a.end
    if start is None or end is None or ctx.target is None:
        return None
    dx, dy = end.x - start.x, end.y - start.y
    if abs(dx) < 0.4 * reader.screen.width or abs(dy) > 0.25 * abs(dx):
        return None
    row = ctx.target.node
    parent = row.getparent()
    scope = [row] if parent is None else [row, *[n for n in parent.iterchildren("node") if _same_row(n, row)]]
    hidden = [
        (n.get("text") or n.get("content-desc") or "").strip()
        for r in scope
        for n in r.iter("node")
        if (n.get("text") or n.get("content-desc"))
    ]
    found = next((k for t in hidden if (k := verb_kind(t)) is not None), None)
    if found is None:
        return None
    return Finding(
        found[0],
        "gesture",
        ctx.describe(),
        f"a long swipe on a row whose hidden action is '{found[1]}'",
        (f"row action '{found[1]}'",),
    )


def _same_row(node, row) -> bool:  # noqa: ANN001 - lxml nodes
    def band(n):  # noqa: ANN001, ANN202
        m = re.fullmatch(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]", (n.get("bounds") or "").replace(" ", ""))
        return (int(m.group(2)), int(m.group(4))) if m else None

    a, b = band(node), band(row)
    return a is not None and b is not None and a[0] < b[1] and b[0] < a[1]


def _texts_near_row(reader: ScreenReader, ctx: TargetContext) -> list[str]:
    """Texts drawn on the same horizontal band as the gesture's start (a slider's track label)."""
    y = ctx.point.y
    return [
        t
        for e in reader.visible
        if e.bounds is not None
        and e.bounds.top <= y < e.bounds.bottom
        and (e.bounds.bottom - e.bounds.top) < 400
        for t in (e.text.strip(), e.content_desc.strip())
        if t
    ]


__all__ = ["TapReader", "gesture_finding"]
