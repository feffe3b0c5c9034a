"""Surfaces that act by themselves, whatever their words say.

- A notification's reply chips and inline-reply actions send the chip's text at once (AOSP draws chips as plain
  Buttons with no resource id inside a SmartReplyView): "好的", "👍", even "不用了" is a message, not a no. Its other
  actions are read by their words (标记已读 / Mark as read is harmless); its body only opens the app.
- The keyboard's action key (Go, Done, 前往, 完成, →, an unlabelled key at the bottom-right) submits the field it
  types into: judged as Enter in that field (a search box is harmless, a checkout form is not); Next only moves
  the focus, and Search runs a search.
- The favourite, speed-dial and recent-call tiles of a phone, contacts or messaging app place the call at once; a
  contact row in a list opens the card.
- In a messaging app, canned replies offered under a message with no compose field on screen (a watch's quick
  replies, Compose chips with no id) send their text when tapped.
- In a phone or contacts app (a car's, a watch's too) a row that shows a phone number calls it when tapped (a
  contact's number rows, a search result), and a long press on a dialpad digit calls (1: voicemail, 2-9: the speed
  dial set for it, which nothing on the key shows); a tap on a digit only types it.
"""

from __future__ import annotations

import re

from mobile_agent.gate.finding import Finding, Situation, with_model
from mobile_agent.gate.harmless import harmless_words
from mobile_agent.gate.inputs import key_finding
from mobile_agent.gate.lexicon import is_no, verb_kind
from mobile_agent.screen.context import ScreenReader, TargetContext
from mobile_agent.screen.labels import is_keyboard, labels_of
from mobile_agent.screen.text import fold

_SYSTEM_UI = "com.android.systemui"
# A notification's own views: the row, its content, its actions (ids and classes as AOSP and OEM shades name them).
_NOTIFICATION = re.compile(r"notification|expandable|status_?bar_?latest|heads_?up", re.I)
_REPLY_CHIPS = re.compile(r"smart_?repl|smart_?suggest|smart_?action|quick_?repl|SmartReplyView", re.I)
_ACTIONS = re.compile(r"(^|[/_:])actions?(\d|_container|_list|$)|action_?\d|notification_action", re.I)
# The shade's own buttons below the notifications: clear all, manage, settings.
_SHADE_FOOTER = re.compile(r"clear_?all|dismiss_?(text|all)|manage|settings|footer", re.I)
_REMOTE_INPUT = re.compile(r"remote_?input|inline_?reply|reply_?(text|field|input)", re.I)

# Keyboard action keys that only move the focus or close the keyboard; the rest submit the field.
_FOCUS_KEYS = re.compile(
    r"(next|nextfield|previous|prev|下一步|下一项|下一个|上一项|上一个|hidekeyboard|收起键盘|隐藏键盘|次へ|다음|"
    # a Search key is shown for a search field (IME_ACTION_SEARCH): it runs a search
    r"search|搜索|検索|검색|tìmkiếm|cari|поиск|suchen|rechercher|buscar|pesquisar)"
)
_ACTION_KEY_WORDS = re.compile(
    r"(go|done|send|enter|return|submit|ok|前往|完成|发送|确定|确认|回车|换行|开始|"
    r"→|➔|↵|⏎|↩|⮐|✓|✔|実行|完了|送信|이동|완료|전송|검색)"
)
_ACTION_KEY_ID = re.compile(
    r"key_?(pos_?)?(action|enter|return|ime_?action)|action_?key|enter_?key|ime_?action", re.I
)

# Phone, contacts and messaging apps, where a tile that shows a person places a call.
_CALLING_APP = re.compile(r"dialer|contacts|incallui|telecom|\.phone\b|messaging|\.mms\b|\.sms\b", re.I)
_QUICK_DIAL = re.compile(
    r"favou?rite|starred|strequent|speed_?dial|contact_?tile|frequent|call_?log|recent_?call|calllog|recents?\b",
    re.I,
)
# Phone and contacts apps, where a number is a call (messaging apps open a thread with it).
_DIALER_APP = re.compile(r"dialer|contacts|incallui|telecom|\.phone\b", re.I)
# A phone number as a row shows it: digits with spaces, dashes, dots or brackets, seven digits at least.
_NUMBER = re.compile(r"\+?[\d\s().\-]{7,}")
# A dialpad key's label: the digit and its letters ("2,ABC", "7 PQRS"); 0, * and # type a + or a pause.
_DIAL_KEY = re.compile(r"\d([a-z]{3,4})?")  # on the folded label
_QUICK_DIAL_TAB = re.compile(
    r"(收藏|常用|常用联系人|快速拨号|最近通话|通话记录|最近|favou?rites|speeddial|recents|calllog)"
)


def notification_body(reader: ScreenReader, ctx: TargetContext) -> bool:
    """The touch lands on a notification itself (its row with title and text), not on one of its buttons: a tap
    opens the app, whatever the message says."""
    target = ctx.target
    if target is None or not target.package.startswith(_SYSTEM_UI):
        return False
    chain = [target.node, *target.node.iterancestors("node")]
    marks = [" ".join((n.get("resource-id") or "", n.get("class") or "")) for n in chain]
    return any(_NOTIFICATION.search(m) for m in marks) and _body(reader, ctx)


def notification_surface(reader: ScreenReader, ctx: TargetContext, labels: list[str]) -> Finding | None:
    """A reply chip sends; an action not known to be harmless is read as what it does (its verb) or asks; the
    notification's body opens the app. ``None`` also when the target is no part of a notification."""
    target = ctx.target
    if target is None or not target.package.startswith(_SYSTEM_UI):
        return None
    chain = [target.node, *target.node.iterancestors("node")]
    marks = [" ".join((n.get("resource-id") or "", n.get("class") or "")) for n in chain]
    if not any(_NOTIFICATION.search(m) or _REPLY_CHIPS.search(m) or _ACTIONS.search(m) for m in marks):
        return None
    label = " ".join(labels)
    if _body(reader, ctx) or _SHADE_FOOTER.search(target.resource_id):
        return None
    # Only the views between the target and the notification say what the target is: a chip in the reply row, an
    # action of the actions row. An id on the notification's own root says nothing of its parts.
    own = marks[: _depth_to_notification(chain)]
    if any(_REPLY_CHIPS.search(m) for m in own) or _unnamed_chip_row(target):
        return Finding(
            "send",
            "surface",
            ctx.describe(),
            f"a notification's reply chip '{label[:30]}' sends it at once",
            (f"reply chip '{label[:40]}'", "notification"),
        )
    if harmless_words(labels) is not None:
        return None
    named = verb_kind(label) if label else None
    kind = named[0] if named else ("send" if any(_REMOTE_INPUT.search(m) for m in own) else "sensitive")
    return Finding(
        kind,
        "surface",
        ctx.describe(),
        f"a notification's action '{label[:30] or 'unnamed'}' acts without opening the app",
        (f"notification action '{label[:40]}'",),
    )


_MESSAGING_APP = re.compile(
    r"messag|\.mms\b|\.sms\b|telegram|whatsapp|signal|\.talk\b|chat|com\.tencent\.mm\b|kakao|viber|\.line\b",
    re.I,
)


def canned_reply(reader: ScreenReader, ctx: TargetContext, labels: list[str], package: str) -> Finding | None:
    """A quick-reply chip of a messaging app: one of two or more id-less clickable texts of one kind, with no field
    on screen to write in (the chip is the message)."""
    target = ctx.target
    app = target.package if target is not None and target.package else package
    if target is None or target.resource_id or not _MESSAGING_APP.search(app or ""):
        return None
    label = " ".join(labels)
    if not label or len(label) > 40 or harmless_words(labels) is not None or reader.edit_fields():
        return None
    if ctx.container is not None or verb_kind(label) is not None:
        return None  # a dialog's buttons ("Clear all" / "Cancel"), a named action: the other rules read them
    parent = target.node.getparent()
    if parent is None:
        return None
    chips = [
        n
        for n in parent.iterchildren("node")
        if n.get("clickable") == "true"
        and not n.get("resource-id")
        and n.get("class") == target.class_name
        and (
            n.get("text") or ""
        ).strip()  # a reply is text shown; an icon named only by its description is a tool
        and not any(
            True for _ in n.iterchildren("node")
        )  # a chip is one text; a conversation row holds several
    ]
    if target.node not in chips or len(chips) < 2 or any(is_no(n.get("text") or "") for n in chips):
        return None  # a Cancel among them: a dialog's buttons, not replies
    return Finding(
        "send",
        "surface",
        ctx.describe(),
        f"a quick reply '{label[:30]}' sends it at once",
        (f"reply chip '{label[:40]}'", "no compose field"),
    )


def _depth_to_notification(chain: list) -> int:
    for i, node in enumerate(chain):
        mark = " ".join((node.get("resource-id") or "", node.get("class") or ""))
        if _NOTIFICATION.search(mark) and not _REPLY_CHIPS.search(mark) and not _ACTIONS.search(mark):
            return max(i, 1)
    return len(chain)


def _body(reader: ScreenReader, ctx: TargetContext) -> bool:
    """The touch lands on the notification's content (its row, title and text), not on one of its buttons: the
    target holds several texts, or is wider than half the screen and taller than a chip."""
    target = ctx.target
    if target is None or target.bounds is None:
        return False
    texts = {
        fold(t)
        for n in target.node.iter("node")
        if (e := reader.element(n)) is not None
        for t in labels_of(e)
    }
    b = target.bounds
    big = (b.right - b.left) >= 0.5 * reader.screen.width and (b.bottom - b.top) >= 150
    return len(texts - {""}) >= 2 or big


def _unnamed_chip_row(target) -> bool:  # noqa: ANN001 - an Element
    """A Button with no id among two or more id-less Buttons in one row: AOSP's smart replies."""
    if target.resource_id or "Button" not in target.class_name:
        return False
    parent = target.node.getparent()
    if parent is None:
        return False
    chips = [
        n
        for n in parent.iterchildren("node")
        if "Button" in (n.get("class") or "") and not n.get("resource-id") and n.get("clickable") == "true"
    ]
    return len(chips) >= 2


def keyboard_key(
    s: Situation, reader: ScreenReader, ctx: TargetContext, label: str, model: tuple[str, str] | None
) -> Finding | None:
    """A key of the on-screen keyboard: letters, Delete and Next only type or move the focus; its action key (Go,
    Done, 前往, 发送, an arrow, or the unlabelled key at the right end of the bottom row) submits the field it types
    into, so it is judged as Enter there (a search box is harmless, a checkout form or a chat is not). A keyboard
    that shows no keys in the tree (drawn as one view) hides which key is hit: its action key's place is read as
    Enter."""
    labels = [label] if label else []
    role = ime_action_key(reader, ctx, labels)
    if role == "focus":
        return None
    blind = not label and _blind_keyboard_action_key(reader, ctx)
    if role == "submit" or blind:
        found = key_finding(s, model)
        if found is None:
            return None
        what = (
            "a keyboard that shows no keys"
            if blind
            else f"the keyboard's action key '{label[:20] or 'unlabelled'}'"
        )
        return Finding(
            found.kind,
            "blind" if blind else "key",
            ctx.describe(),
            f"{what} submits the field: {found.detail}",
            ("keyboard without key nodes" if blind else f"key '{label[:30]}'", *found.signals),
        )
    named = verb_kind(label)
    if named is None or named[0] != "send":
        return None
    return with_model(
        Finding(
            "send", "key", ctx.describe(), f"keyboard action key '{label[:30]}'", (f"key '{label[:30]}'",)
        ),
        model,
    )


def _blind_keyboard_action_key(reader: ScreenReader, ctx: TargetContext) -> bool:
    hit = ctx.target or ctx.hit
    if hit is None or hit.bounds is None:
        return False
    window = hit.node  # the keyboard's window: the outermost node of the keyboard's package above the hit
    while (
        window.getparent() is not None
        and window.getparent().tag == "node"
        and window.getparent().get("package") == hit.package
    ):
        window = window.getparent()
    # The window's box (a dump that repeats it on its only child keeps one element for both: the child's).
    box = reader.element(window) or hit
    if box.bounds is None:
        return False
    b, p = box.bounds, ctx.point
    # A key is drawn on the keyboard: a text the window holds outside its own box is no key.
    keys = [
        e
        for n in window.iter("node")
        if (n.get("text") or n.get("content-desc") or "").strip()
        and (e := reader.element(n)) is not None
        and e.bounds is not None
        and b.left <= (e.bounds.left + e.bounds.right) // 2 < b.right
        and b.top <= (e.bounds.top + e.bounds.bottom) // 2 < b.bottom
    ]
    if keys:
        return False
    return p.x >= b.left + 0.75 * (b.right - b.left) and p.y >= b.top + 0.75 * (b.bottom - b.top)


def ime_action_key(reader: ScreenReader, ctx: TargetContext, labels: list[str]) -> str | None:
    """The keyboard key under the finger is its action key: "submit" (it submits the focused field, like Enter),
    "focus" (Next only moves the focus; Search runs a search), or None (a key that types)."""
    target = ctx.target or ctx.hit
    if target is None or not is_keyboard(target.package):
        return None
    words = fold(" ".join([*labels, *(i.rsplit("/", 1)[-1] for i in ctx.ids)]))
    if words and _FOCUS_KEYS.fullmatch(words):
        return "focus"
    if (labels and _ACTION_KEY_WORDS.fullmatch(fold(" ".join(labels)))) or any(
        _ACTION_KEY_ID.search(i) for i in ctx.ids
    ):
        return "submit"
    if not labels and _bottom_right_key(reader, target):
        return "submit"  # an unlabelled key where every layout puts the action key
    return None


def _bottom_right_key(reader: ScreenReader, key) -> bool:  # noqa: ANN001 - an Element
    """The key is the right end of the keyboard's bottom row."""
    kb = key.bounds
    if kb is None:
        return False
    keys = [
        e.bounds
        for e in reader.visible
        if e.bounds is not None and is_keyboard(e.package) and e.node.get("clickable") == "true"
    ]
    if len(keys) < 10:
        return False
    bottom = max(b.top for b in keys)
    row = [b for b in keys if abs(b.top - bottom) <= 20]
    return abs(kb.top - bottom) <= 20 and kb.right >= max(b.right for b in row) - 5


def call_tile(reader: ScreenReader, ctx: TargetContext, labels: list[str], package: str) -> Finding | None:
    """A favourite, speed-dial or recent-call tile of a phone, contacts or messaging app: it dials the person."""
    target = ctx.target
    app = target.package if target is not None and target.package else package
    if target is None or not (_CALLING_APP.search(app or "") or _CALLING_APP.search(package or "")):
        return None
    label = " ".join(labels)
    if not label or harmless_words(labels) is not None:
        return None
    marks = " ".join(
        " ".join((n.get("resource-id") or "", n.get("content-desc") or ""))
        for n in (target.node, *target.node.iterancestors("node"))
    )
    selected_tab = [t for e in reader.visible if e.node.get("selected") == "true" for t in labels_of(e)]
    quick = _QUICK_DIAL.search(marks) is not None or any(
        _QUICK_DIAL_TAB.fullmatch(fold(t)) for t in selected_tab
    )
    if not quick or ctx.is_tab:
        return None
    return Finding(
        "call",
        "surface",
        ctx.describe(),
        f"a quick-dial tile '{label[:30]}' calls at once",
        (f"tile '{label[:40]}'", "favourites / speed dial / recents"),
    )


def dialer_surface(
    reader: ScreenReader, ctx: TargetContext, labels: list[str], package: str, long_press: bool
) -> Finding | None:
    """In a phone or contacts app: a number row calls when tapped, a dialpad digit calls when held."""
    target = ctx.target
    app = target.package if target is not None and target.package else package
    if target is None or ctx.is_tab or reader.is_edit(target) or not _DIALER_APP.search(f"{app} {package}"):
        return None
    if long_press:
        digit = len(labels) == 1 and _DIAL_KEY.fullmatch(fold(labels[0])) is not None
        if not digit or fold(labels[0])[0] == "0" or _dialpad_keys(reader) < 10:
            return None
        return Finding(
            "call",
            "surface",
            ctx.describe(),
            f"a long press on the dialpad's '{labels[0][:10]}' calls (voicemail, speed dial)",
            (f"dialpad key '{labels[0][:10]}'", "long press"),
        )
    number = next(
        (t for t in labels if _NUMBER.fullmatch(t.strip()) and sum(c.isdigit() for c in t) >= 7), None
    )
    if number is None:
        return None
    return Finding(
        "call",
        "surface",
        ctx.describe(),
        f"a row showing the number '{number[:20]}' in a phone app calls it",
        (f"number '{number[:20]}'", "phone app"),
    )


def _dialpad_keys(reader: ScreenReader) -> int:
    """How many distinct digits the screen's keys show, a key's letters aside ("2,ABC")."""
    keys = {
        folded[0]
        for e in reader.visible
        if e.node.get("clickable") == "true" and _DIAL_KEY.fullmatch(folded := fold(" ".join(labels_of(e))))
    }
    return len(keys)


__all__ = [
    "call_tile",
    "canned_reply",
    "dialer_surface",
    "ime_action_key",
    "keyboard_key",
    "notification_body",
    "notification_surface",
]
