"""Readings of a screen's structure that the label rules lean on: which choice of a dialog commits what the dialog
asks, whether a digit pad asks for a PIN, whether a page's button confirms the amount the page states, and which of
a dialog's texts are its question rather than notes."""

from __future__ import annotations

import re

from mobile_agent.gate.finding import Finding
from mobile_agent.gate.lexicon import PASSWORD_HINT, is_no, is_refusal, is_yes, topic_kind, verb_kind
from mobile_agent.gate.pages import past_event
from mobile_agent.screen.context import ScreenReader, TargetContext
from mobile_agent.screen.fields import pin_boxes
from mobile_agent.screen.labels import layout_parent, readable
from mobile_agent.screen.text import amounts, fold

# A line of a list of notes ("· 修复了支付页面的问题", "1. Faster transfers"): release notes and tips describe things,
# they do not ask for anything.
_CARD_MAX = 0.6  # of the screen's area: a dialog card or sheet is smaller than this
_NOTE_LINE = re.compile(r"^\s*([·•●▪◦‣∙*\-–—]|\d{1,2}[.、)）])\s*")


def questions(texts: tuple[str, ...] | list[str]) -> list[str]:
    """The texts with the lines of bulleted or numbered notes taken out."""
    out = []
    for t in texts:
        lines = [line for line in t.splitlines() if line.strip() and not _NOTE_LINE.match(line)]
        if lines:
            out.append("\n".join(lines))
    return out


def asks_for_pin(reader: ScreenReader) -> bool:
    """The screen asks for a secret, so a digit pad on it types one: a password field, a row of PIN boxes, or text or
    a hint that names a password or PIN. An amount pad (Cash App's "$0" over ten digits) asks for none."""
    if reader.password_fields() or pin_boxes(reader):
        return True
    words = [*reader.texts(), *(e.node.get("hint") or "" for e in reader.edit_fields())]
    return any(PASSWORD_HINT.search(fold(t)) for t in words if t)


def dialog_choice(reader: ScreenReader, ctx: TargetContext, labels: list[str]) -> Finding | None:
    """A choice that is not a yes but commits what its dialog asks: the one way forward beside a no ("채팅방 나가기"
    whose body says the history is deleted: [취소] [나가기]), or one of a chooser's options under a title that names
    the action ("Choose SIM for this call": each SIM row places the call)."""
    container, target = ctx.container, ctx.target
    if (
        container is None
        or target is None
        or target.node.get("checkable") == "true"
        or container.bounds is None
    ):
        return None
    c = container.bounds
    if (c.right - c.left) * (c.bottom - c.top) >= _CARD_MAX * reader.screen.width * reader.screen.height:
        return None  # a layer as big as a page (a chat's coordinator layout) is no dialog card
    if any(is_no(t) for t in labels):
        return None
    choices = [
        e
        for e in reader.visible
        if e.node.get("clickable") == "true"
        and container.node in e.node.iterancestors()
        and e.node.get("checkable") != "true"
    ]
    others = [e for e in choices if e.node is not target.node and target.node not in e.node.iterancestors()]
    forward_beside_no = len(others) == 1 and any(is_no(t) for t in _labels(others[0]))
    title = _title(reader, ctx)
    option = _look_alike(target, others) and title is not None
    if forward_beside_no:
        topic = topic_kind(questions(ctx.statements))
    elif option:
        topic = topic_kind([title]) if title else None
    else:
        return None
    if topic is None or is_refusal(topic[1]):
        return None  # "支付失败 [取消] [查看详情]": a way out of a notice that nothing happened
    label = " ".join(labels)
    return Finding(
        topic[0],
        "dialog",
        ctx.describe(),
        f"'{label[:30]}' goes on with '{topic[1][:40]}'",
        (f"dialog text '{topic[1][:60]}'", "the dialog's way forward"),
    )


def _labels(e) -> list[str]:  # noqa: ANN001 - an Element
    return [
        t
        for n in e.node.iter("node")
        for t in (readable(n.get("text", "")), readable(n.get("content-desc", "")))
        if t
    ]


def _title(reader: ScreenReader, ctx: TargetContext) -> str | None:
    """The dialog's first statement, top to bottom."""
    container = ctx.container
    if container is None:
        return None
    tops = []
    for e in reader.visible:
        if (
            e.bounds is None
            or container.node not in e.node.iterancestors()
            or e.node.get("clickable") == "true"
        ):
            continue
        if any(n.get("clickable") == "true" for n in e.node.iterancestors("node")):
            continue
        text = readable(e.text) or readable(e.content_desc)
        if text:
            tops.append((e.bounds.top, text))
    return min(tops)[1] if tops else None


def _look_alike(target, others) -> bool:  # noqa: ANN001 - Elements
    b = target.bounds
    if b is None:
        return False
    w, h = b.right - b.left, b.bottom - b.top
    return any(
        o.bounds is not None
        and o.class_name == target.class_name
        and abs((o.bounds.right - o.bounds.left) - w) <= 0.1 * w
        and abs((o.bounds.bottom - o.bounds.top) - h) <= 0.1 * h
        for o in others
    )


def commit_elsewhere(reader: ScreenReader, ctx: TargetContext, label: str) -> bool:
    """A priced label with words of its own ("快车 预估 ¥23.5", "1000+人付款 ¥128") on a screen whose commit is
    another control (确认呼叫快车): the label shows the price, the other control charges it."""
    rest = label
    for a in amounts(label):
        rest = rest.replace(a.text, " ")
    if not fold(rest) or is_yes(rest):
        return False
    target = ctx.target
    for e in reader.visible:
        if e.node.get("clickable") != "true" or target is None or e.node is target.node:
            continue
        words = " ".join(
            t for n in e.node.iter("node") for t in (n.get("text", ""), n.get("content-desc", "")) if t
        )
        if words and (verb_kind(words) is not None or is_yes(words)) and not amounts(words):
            return True
    return False


def page_amount(reader: ScreenReader, ctx: TargetContext) -> str | None:
    """The amount a full review page asks a generic yes to confirm ("Review: To Alex Kim, $1,299.00 [Confirm]"): the
    page's main button (wide, or on the bottom bar) under a few stated amounts, not a list of prices."""
    target = ctx.target
    if ctx.container is not None or target is None or target.bounds is None:
        return None
    b, screen = target.bounds, reader.screen
    main = b.right - b.left >= 0.6 * screen.width or b.top >= 0.85 * screen.height
    if not main:
        return None
    found = [a for t in ctx.statements for a in amounts(t)]
    distinct = {(a.currency, a.value) for a in found}
    if not found or len(distinct) > 3:
        return None
    return found[0].text


_MEDIUM = re.compile(r"(video|视频|視訊|ビデオ|영상|видео|vidéo|vídeo|audio|voice|语音|音声|음성)")


def call_peer(reader: ScreenReader, ctx: TargetContext, labels: list[str]) -> Finding | None:
    """ "Video" beside "Call" on a contact card (Call | Text | Video): a medium named among the card's call actions
    places a call in that medium."""
    target = ctx.target
    if target is None or len(labels) != 1 or _MEDIUM.fullmatch(fold(labels[0])) is None:
        return None
    node = target.node
    for _ in range(2):  # the action may sit in a wrapper of its own
        parent = layout_parent(node)
        if parent is None:
            return None
        peers = [p for p in parent.iterchildren("node") if p is not node and _clickable_box(p)]
        if len(peers) >= 1:
            for p in peers:
                words = " ".join(_labels(reader.element(p))) if reader.element(p) is not None else ""
                found = verb_kind(words) if words else None
                if found is not None and found[0] == "call":
                    return Finding(
                        "call",
                        "label",
                        ctx.describe(),
                        f"'{labels[0]}' beside '{found[1]}' places a call",
                        (f"label '{labels[0]}'", f"peer '{found[1]}'"),
                    )
        node = parent
    return None


def _clickable_box(node) -> bool:  # noqa: ANN001 - an lxml node
    return node.get("clickable") == "true" or any(n.get("clickable") == "true" for n in node.iter("node"))


def title_topic(reader: ScreenReader, ctx: TargetContext) -> tuple[str, str] | None:
    """What the page under a dialog is about, from its title bar ("删除成员" under "确定将「李四」移出群聊？")."""
    if ctx.container is None:
        return None
    title = reader.page_title(outside=ctx.container)
    if past_event(title):
        return None  # 最近删除 under "确定恢复这5张照片吗？": what the page names already happened
    return topic_kind(title)


__all__ = [
    "asks_for_pin",
    "call_peer",
    "commit_elsewhere",
    "dialog_choice",
    "page_amount",
    "questions",
    "title_topic",
]
