"""What a replayed action is about to touch, compared with what the recorded action touched.

A screen hash says whether two screens look alike; it does not say whether the finger lands on the same thing. A
chat list whose first row is 李四 instead of 张三, or a cashier asking ¥91 instead of ¥25, hashes within a few bits of
the recording. So before acting, the replay reads both view trees around the action's point (the recorded tree at the
recorded point, the live tree where the target is now) and compares what matters to the action:

- the element under the finger: its class, its resource-id, and the name it goes by (a button's labels, a row's
  title: :mod:`mobile_agent.replay.identity`);
- the dialog or sheet it sits in, if any: its texts (who a transfer goes to, what a dialog asks);
- amounts (¥/$/元 patterns), as a multiset: always those in the touched control and its dialog, and those anywhere
  on the screen when the action can move money (the gate judged it consequential, live or in the recording).
  A shop's home feed whose prices changed does not stop a tap on its search box; a 提交订单 under ¥91 where the
  recording had ¥25 stops;
- where the action is consequential, the page's title too: whom the message or the money goes to;
- for typing, the field that has the focus.

Each such difference is a sentence naming what differed, and stops the replay (:func:`compare_touched`). What
differs elsewhere (a row's preview, other texts on the screen) is written down and shown, and does not
(:func:`notes_between`).

    recorded = read_touched(recorded_xml, Point(520, 294), Size(1080, 2400))
    live = read_touched(live_xml, Point(347, 196), Size(720, 1600))
    compare_touched(recorded, live)  # ["target '张三' is now '李四' (LinearLayout com.tencent.mm:id/cj1)"]
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from mobile_agent.actions import Point, Size
from mobile_agent.replay.identity import CLOCKLIKE, control_labels, name_of, naming_labels, short_class
from mobile_agent.screen.context import ScreenReader
from mobile_agent.screen.labels import labels_of
from mobile_agent.screen.text import amounts
from mobile_agent.screen.viewtree import ViewTree

_NOTED_TEXTS = 3  # texts named in a note on what changed elsewhere, each way


@dataclass(frozen=True)
class Touched:
    """One screen as it concerns one action: what lies under the point and the money and names around it."""

    readable: bool  # False: the tree could not be parsed; nothing else is meaningful
    element: str = ""  # a short description for messages: label, class, resource-id
    class_name: str = ""
    resource_id: str = ""
    name: tuple[str, ...] = ()  # what names the control: a button's labels, a row's title (replay.identity)
    control: tuple[str, ...] = ()  # every label of the control (a whole chat row), folded, clock-like dropped
    in_dialog: bool = False
    dialog: tuple[str, ...] = ()  # folded texts of the dialog or sheet around the target (sorted, unique)
    amounts: tuple[str, ...] = ()  # every amount on the screen, normalised ("¥25.00"), sorted
    local_amounts: tuple[str, ...] = ()  # the amounts in the touched control and its dialog, sorted
    focused: str = ""  # class and resource-id of the focused text field, for typing
    pointed: bool = False  # the action has a point and the tree was read at it
    title: tuple[str, ...] = ()  # the page's title bar, folded: whom a message or a payment goes to
    texts: tuple[str, ...] = ()  # every text on the screen, folded, clock-like dropped (for notes only)


def _amount_key(value: float, currency: str) -> str:
    symbol = {"元": "¥", "块": "¥", "rmb": "¥", "cny": "¥", "￥": "¥", "usd": "$", "美元": "$"}.get(
        currency, currency
    )
    return f"{symbol}{value:.2f}"


def _amounts_in(texts: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    return tuple(sorted(_amount_key(a.value, a.currency) for text in texts for a in amounts(text)))


def _folded_texts(texts: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    return tuple(t for t in naming_labels(list(texts)) if not CLOCKLIKE.match(t))


def read_touched(xml: str | None, point: Point | None, screen: Size | None = None) -> Touched:
    """``xml`` read around ``point`` (None: an action without a point, only the screen's amounts and focus)."""
    tree = ViewTree.parse(xml) if xml else None
    if tree is None:
        return Touched(readable=False)
    reader = ScreenReader(tree, screen)
    focused_field = reader.focused_field()
    focused = f"{short_class(focused_field)} {focused_field.resource_id}".strip() if focused_field else ""
    screen_texts = reader.texts()
    whole = {
        "amounts": _amounts_in(screen_texts),
        "focused": focused,
        "title": _folded_texts(reader.page_title()),
        "texts": _folded_texts(screen_texts),
    }
    if point is None:
        return Touched(readable=True, **whole)
    ctx = reader.at(point)
    target = ctx.target
    if target is None:
        return Touched(readable=True, element="nothing", pointed=True, **whole)
    local = [*ctx.labels, *labels_of(target), *(ctx.context_texts if ctx.container is not None else ())]
    dialog = tuple(sorted(set(_folded_texts(ctx.context_texts)))) if ctx.container is not None else ()
    return Touched(
        readable=True,
        element=ctx.describe(),
        class_name=short_class(target),
        resource_id=target.resource_id,
        name=name_of(reader, target),
        control=naming_labels(control_labels(reader, target)),
        in_dialog=ctx.container is not None,
        dialog=dialog,
        local_amounts=_amounts_in(list(dict.fromkeys(local))),
        pointed=True,
        **whole,
    )


def _texts(items: tuple[str, ...] | list[str]) -> str:
    return " ".join(f"'{t}'" for t in items) if items else "(none)"


def _amount_difference(where: str, recorded: tuple[str, ...], live: tuple[str, ...]) -> list[str]:
    if recorded == live:
        return []
    gone = sorted((Counter(recorded) - Counter(live)).elements())
    new = sorted((Counter(live) - Counter(recorded)).elements())
    return [f"amounts {where}: recorded {_texts(gone)}, now {_texts(new)}"]


def _target_differences(recorded: Touched, live: Touched) -> list[str]:
    what = f"target {recorded.element}"
    differences = []
    if recorded.name != live.name:
        differences.append(
            f"target {_texts(recorded.name)} is now {_texts(live.name)} ({live.element or 'nothing'})"
        )
    for field_name, value, now in (
        ("class", recorded.class_name, live.class_name),
        ("resource-id", recorded.resource_id, live.resource_id),
    ):
        if value != now:
            differences.append(f"{what}: {field_name} {value or '(none)'} is now {now or '(none)'}")
    if recorded.in_dialog != live.in_dialog:
        differences.append(
            f"{what}: {'was in a dialog and is not now' if recorded.in_dialog else 'now sits in a dialog'}"
        )
    elif recorded.dialog != live.dialog:
        gone = sorted(set(recorded.dialog) - set(live.dialog))
        new = sorted(set(live.dialog) - set(recorded.dialog))
        differences.append(f"the dialog around the target said {_texts(gone)}, now {_texts(new)}")
    return differences


def compare_touched(recorded: Touched, live: Touched, *, money_moves: bool = False) -> list[str]:
    """Sentences naming each way ``live`` differs from ``recorded`` where it touches the action; empty when the
    replay touches the same thing. ``money_moves``: the action is consequential, so every amount on the screen and
    the page's title (the recipient) are compared too."""
    if not recorded.readable:
        return []  # nothing to compare against: the caller falls back to the hash and says so
    if not live.readable:
        return ["the live view tree could not be read, so the target cannot be compared"]
    pointed = recorded.pointed and live.pointed
    differences = _target_differences(recorded, live) if pointed else []
    local = (
        _amount_difference("on the target and its dialog", recorded.local_amounts, live.local_amounts)
        if pointed
        else []
    )
    differences += local
    if money_moves and not local:
        differences += _amount_difference("on screen", recorded.amounts, live.amounts)
    if money_moves and recorded.title != live.title:
        differences.append(
            f"the page's title (whom it goes to) was {_texts(recorded.title)}, now {_texts(live.title)}"
        )
    if recorded.focused and recorded.focused != live.focused:
        differences.append(f"the focused field was {recorded.focused}, now {live.focused or '(none)'}")
    return differences


def notes_between(recorded: Touched, live: Touched) -> list[str]:
    """What differs away from what the action touches: the target's other labels (a chat row's new preview) and
    the texts elsewhere on the screen. Shown and recorded; never a reason to stop."""
    if not (recorded.readable and live.readable):
        return []
    notes = []
    if recorded.pointed and live.pointed and recorded.name == live.name and recorded.control != live.control:
        gone = [t for t in recorded.control if t not in live.control]
        new = [t for t in live.control if t not in recorded.control]
        notes.append(f"the target's other labels changed: {_texts(gone)} is now {_texts(new)}")
    gone = [t for t in recorded.texts if t not in set(live.texts)]
    new = [t for t in live.texts if t not in set(recorded.texts)]
    if gone or new:
        more = len(gone) + len(new) - len(gone[:_NOTED_TEXTS]) - len(new[:_NOTED_TEXTS])
        notes.append(
            f"elsewhere on the screen: gone {_texts(gone[:_NOTED_TEXTS])}, new {_texts(new[:_NOTED_TEXTS])}"
            + (f" and {more} more" if more > 0 else "")
        )
    return notes


def waiting_may_help(recorded: Touched, live: Touched) -> bool:
    """Whether the live screen may still become the recorded one: its tree could not be read, or the field to type
    into has no focus yet (a keyboard coming up)."""
    if not recorded.readable:
        return False
    return not live.readable or bool(recorded.focused and recorded.focused != live.focused)


__all__ = ["Touched", "compare_touched", "notes_between", "read_touched", "waiting_may_help"]
