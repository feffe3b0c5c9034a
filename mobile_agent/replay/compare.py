"""What a replayed action is about to touch, compared with what the recorded action touched.

A screen hash says whether two screens look alike; it does not say whether the finger lands on the same thing. A
chat list whose first row is 李四 instead of 张三, or a cashier asking ¥91 instead of ¥25, hashes within a few bits of
the recording. So before acting, the replay reads both view trees around the action's point (the recorded tree at the
recorded point, the live tree at the scaled point) and compares:

- the element under the finger: its class, its resource-id, and the labels that name it (what is under the finger;
  for a whole button, all its labels), with clock times and unread counters dropped from a row's labels;
- the dialog or sheet it sits in, if any: its texts (who a transfer goes to, what a dialog asks);
- amounts (¥/$/元 patterns), as a multiset: always those in the touched control and its dialog, and those anywhere
  on the screen when the action can move money (the gate judged it consequential, live or in the recording).
  A shop's home feed whose prices changed does not stop a tap on its search box; a 提交订单 under ¥91 where the
  recording had ¥25 stops;
- for typing, the field that has the focus.

Each difference is a sentence naming what differed, recorded with the replayed step.

    recorded = read_touched(recorded_xml, Point(520, 294), Size(1080, 2400))
    live = read_touched(live_xml, Point(347, 196), Size(720, 1600))
    compare_touched(recorded, live)  # ["target '张三' is now '李四' (LinearLayout com.tencent.mm:id/cj1)"]
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from lxml import etree

from mobile_agent.actions import Point, Size
from mobile_agent.screen.context import ScreenReader
from mobile_agent.screen.labels import labels_of
from mobile_agent.screen.text import amounts, fold
from mobile_agent.screen.viewtree import Element, ViewTree

# Folded texts that change with the clock, not with what a control is: "10:21" (folded "1021"), "昨天", "3分钟前",
# "下午3:05", "星期一", unread counters "3" / "99+". Dropped from a composite row's labels only: a key labelled
# "5" on a (possibly shuffled) PIN pad is the whole label and stays compared.
_CLOCKLIKE = re.compile(
    r"^(?:\d+|刚刚|今天|昨天|前天|\d+(?:秒|分钟|小时|天|周|个月)前|(?:上午|下午|中午|晚上|凌晨)\d+"
    r"|(?:星期|周)[一二三四五六日天]|\d+月\d+日|\d+(?:am|pm)|(?:am|pm)\d+|yesterday|today|now|justnow)$"
)


@dataclass(frozen=True)
class Touched:
    """One screen as it concerns one action: what lies under the point and the money and names around it."""

    readable: bool  # False: the tree could not be parsed; nothing else is meaningful
    element: str = ""  # a short description for messages: label, class, resource-id
    class_name: str = ""
    resource_id: str = ""
    labels: tuple[str, ...] = ()  # what names it under the finger: folded, a row's clock-like texts dropped
    control: tuple[str, ...] = ()  # every label of the control (a whole chat row), folded the same way
    in_dialog: bool = False
    dialog: tuple[str, ...] = ()  # folded texts of the dialog or sheet around the target (sorted, unique)
    amounts: tuple[str, ...] = ()  # every amount on the screen, normalised ("¥25.00"), sorted
    local_amounts: tuple[str, ...] = ()  # the amounts in the touched control and its dialog, sorted
    focused: str = ""  # class and resource-id of the focused text field, for typing
    pointed: bool = False  # the action has a point and the tree was read at it


def _amount_key(value: float, currency: str) -> str:
    symbol = {"元": "¥", "块": "¥", "rmb": "¥", "cny": "¥", "￥": "¥", "usd": "$", "美元": "$"}.get(
        currency, currency
    )
    return f"{symbol}{value:.2f}"


def _amounts_in(texts: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    return tuple(sorted(_amount_key(a.value, a.currency) for text in texts for a in amounts(text)))


def _naming_labels(raw: tuple[str, ...]) -> tuple[str, ...]:
    folded = [f for f in (fold(t) for t in raw) if f]
    kept = [f for f in folded if not _CLOCKLIKE.match(f)]
    return tuple(dict.fromkeys(kept or folded))


def _short_class(e: Element | None) -> str:
    return e.class_name.rsplit(".", 1)[-1] if e is not None else ""


def _control_texts(target: Element) -> tuple[str, ...]:
    """The texts of the control and of its children that are not controls of their own (a row's name, preview and
    time; not the avatar button inside it)."""
    texts: list[str] = []

    def walk(node: etree._Element) -> None:
        if node.get("visible-to-user", "true") == "false":
            return
        texts.extend(t for t in (node.get("text", "").strip(), node.get("content-desc", "").strip()) if t)
        for child in node.iterchildren("node"):
            if child.get("clickable") != "true":
                walk(child)

    walk(target.node)
    return tuple(texts)


def read_touched(xml: str | None, point: Point | None, screen: Size | None = None) -> Touched:
    """``xml`` read around ``point`` (None: an action without a point, only the screen's amounts and focus)."""
    tree = ViewTree.parse(xml) if xml else None
    if tree is None:
        return Touched(readable=False)
    reader = ScreenReader(tree, screen)
    focused_field = reader.focused_field()
    focused = f"{_short_class(focused_field)} {focused_field.resource_id}".strip() if focused_field else ""
    screen_amounts = _amounts_in(reader.texts())
    if point is None:
        return Touched(readable=True, amounts=screen_amounts, focused=focused)
    ctx = reader.at(point)
    target = ctx.target
    if target is None:
        return Touched(
            readable=True, element="nothing", amounts=screen_amounts, focused=focused, pointed=True
        )
    raw = ctx.under_finger or ctx.labels or tuple(labels_of(target))
    local = [*ctx.labels, *labels_of(target), *(ctx.context_texts if ctx.container is not None else ())]
    dialog = (
        tuple(sorted({f for f in (fold(t) for t in ctx.context_texts) if f and not _CLOCKLIKE.match(f)}))
        if ctx.container is not None
        else ()
    )
    return Touched(
        readable=True,
        element=ctx.describe(),
        class_name=_short_class(target),
        resource_id=target.resource_id,
        labels=_naming_labels(raw),
        control=_naming_labels(_control_texts(target)),
        in_dialog=ctx.container is not None,
        dialog=dialog,
        amounts=screen_amounts,
        local_amounts=_amounts_in(list(dict.fromkeys(local))),
        focused=focused,
        pointed=True,
    )


def _texts(items: tuple[str, ...] | list[str]) -> str:
    return " ".join(f"'{t}'" for t in items) if items else "(none)"


def _amount_difference(where: str, recorded: tuple[str, ...], live: tuple[str, ...]) -> list[str]:
    if recorded == live:
        return []
    gone = sorted((Counter(recorded) - Counter(live)).elements())
    new = sorted((Counter(live) - Counter(recorded)).elements())
    return [f"amounts {where}: recorded {_texts(gone)}, now {_texts(new)}"]


def compare_touched(recorded: Touched, live: Touched, *, money_moves: bool = False) -> list[str]:
    """Sentences naming each way ``live`` differs from ``recorded``; empty when the replay touches the same thing.
    ``money_moves``: the action is consequential, so every amount on the screen is compared too."""
    if not recorded.readable:
        return []  # nothing to compare against: the caller falls back to the hash and says so
    if not live.readable:
        return ["the live view tree could not be read, so the target cannot be compared"]
    differences = []
    if recorded.pointed and live.pointed:
        what = f"target {recorded.element}"
        # The finger may land on another child of the same control (the name or the preview of one chat row):
        # the same target is the same control, all its labels alike, whichever of them is under the finger. A
        # preview that changed stops too: fail closed, the reason names what changed.
        if set(recorded.control) != set(live.control):
            before, after = (
                (recorded.labels, live.labels)
                if recorded.labels != live.labels
                else (recorded.control, live.control)
            )
            differences.append(
                f"target {_texts(before)} is now {_texts(after)} ({live.element or 'nothing'})"
            )
        if recorded.class_name != live.class_name:
            differences.append(
                f"{what}: class {recorded.class_name or '(none)'} is now {live.class_name or '(none)'}"
            )
        if recorded.resource_id != live.resource_id:
            differences.append(
                f"{what}: resource-id {recorded.resource_id or '(none)'} is now {live.resource_id or '(none)'}"
            )
        if recorded.in_dialog != live.in_dialog:
            differences.append(
                f"{what}: {'was in a dialog and is not now' if recorded.in_dialog else 'now sits in a dialog'}"
            )
        elif recorded.dialog != live.dialog:
            gone = sorted(set(recorded.dialog) - set(live.dialog))
            new = sorted(set(live.dialog) - set(recorded.dialog))
            differences.append(f"the dialog around the target said {_texts(gone)}, now {_texts(new)}")
    local = (
        _amount_difference("on the target and its dialog", recorded.local_amounts, live.local_amounts)
        if recorded.pointed and live.pointed
        else []
    )
    differences += local
    if money_moves and not local:
        differences += _amount_difference("on screen", recorded.amounts, live.amounts)
    if recorded.focused and recorded.focused != live.focused:
        differences.append(f"the focused field was {recorded.focused}, now {live.focused or '(none)'}")
    return differences


__all__ = ["Touched", "compare_touched", "read_touched"]
