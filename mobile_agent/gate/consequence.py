"""Is this action consequential, and why? The whole-screen reading the safety gate decides on.

A finding names a kind (pay, transfer, order, delete, send, post, call, share, security, sensitive) and the signals
that made it: which words on which element, which dialog title, which amount, which manifest rule, which OCR words,
what the model said. Text is compared in its folded form (see :mod:`mobile_agent.screen.text`), so width, script, case,
spacing and zero-width characters never hide a word.

The rules, in words:
- a control named by a consequential verb (支付, 发送, Delete all, Buy now ...) is that kind, wherever the finger
  lands on it, unless the words are a noun for a place to go (订单详情, 转账记录, Payment methods) or it is a tab;
- a generic yes (确定, 确认, OK, Confirm, 继续, 提交 ...) takes the kind its dialog (or, with no dialog, its screen)
  names (a dialog naming nothing: the title of the page under it; bulleted notes name nothing), and a yes under an
  amount is a payment: an amount the dialog states, or a few amounts a review page states over its main button;
- the dialog is the whole card (title, message, buttons), never a part of it that holds only buttons (AOSP's
  buttonPanel); a choice that is not a yes but goes on with what the dialog asks (나가기 beside 취소, a SIM row under
  "Choose SIM for this call") takes the dialog's kind;
- a no (取消, 返回, Cancel ...) is always safe; so is acknowledging a one-button notice that something was refused
  or failed ("当前时间不允许委托 / 确定");
- a yes carrying a count ("确定(1)", "OK (2)") commits a pick: under "添加群成员" / "Add members" it sends;
- a bare publish or money word opens the place where it happens when it sits in a strip of peers (tabs, a post's
  Reply | Repost | Like row) or floats over a feed with nothing written; under a filled form it submits it;
- a switch or check box is named by its row ("免密支付 [switch]"), never by the rest of the screen;
- the on-screen keyboard's keys only type, except an action key labelled Send;
- a control nothing names (icon only, an icon-font glyph, WebView, canvas, empty tree) is read from the pixels when
  OCR is available, and otherwise fails closed in an app or on a screen that can pay, send or delete; so is an
  untouchable unnamed surface of a sheet that names a payment (a PIN pad drawn as one image), and the action key of
  a keyboard that shows no keys; the last control of a written message's row sends, whatever it says ("SMS");
- Enter on a focused button presses it;
- a page's last wide button, under one to three amounts the page states and a payee (or a title that names a
  payment), commits them whatever it says ("Xfer"); under a price that renews ("€10.99/month after") it orders; a
  receipt (支付成功, "sent you $250.00") or a carousel (page dots) only moves on; a row of a statement ("-500.00")
  is a record; a long press on a list row selects it (see :mod:`consequence_page`);
- the share sheet's direct-share targets (a person) send, its app targets open the app; a yes or Share under a
  request to share a phone number or a location sends; Share on a filled composer posts; "Video" beside "Call"
  calls (see :mod:`consequence_share`);
- gestures: a slider whose track (the box around the thumb that holds the gesture's end, either direction) or dialog
  names a kind is that kind, and a track that only says confirm commits the screen; dropping an item onto a "drag
  here to delete" zone of an unpublished draft only takes it out of the draft; a drag is read where it ends (a
  launcher's Uninstall zone deletes, its Remove only takes the shortcut off); a slider on a priced page orders;
  long presses are classified like taps and by their own words (长按清理, 按住说话);
- a password flag or a bare "Password" hint is a payment secret only where money is on screen (a Wi-Fi key is not);
- keys and typing: Enter or a typed newline in a chat or comment field sends; typing into a password or PIN field,
  (named by its hint, its password flag, the caption above it, or a row of one-character boxes), or digits while a
  PIN pad (not an amount pad: something on screen asks for a secret) and a payment are on screen, pays;
- launching a deep link (tel:, sms:, alipays://, weixin://, intent:// ...) is the kind its scheme names, and any
  other non-web link is asked;
- the device's protection lowered (a protection switched off, a grant that opens the device switched on, a yes that
  removes the screen lock) is ``security`` (see :mod:`protection`); a macro's Run takes its steps' kind; a number row
  or a held dialpad digit in a phone app calls, a messaging app's quick reply sends (see :mod:`surfaces`);
- the model's own words (AutoGLM's sensitive message, a thought that says it is about to pay or send) raise a
  finding on their own for generic, blind and unknown targets, and are recorded with every finding.
"""

from __future__ import annotations

import re

from mobile_agent.actions import GESTURE_KINDS, POINT_KINDS, ActionKind, Key, Point
from mobile_agent.gate.automation import runs_steps
from mobile_agent.gate.blind import blind_finding
from mobile_agent.gate.dialogs import (
    asks_for_pin,
    call_peer,
    commit_elsewhere,
    dialog_choice,
    page_amount,
    questions,
    title_topic,
)
from mobile_agent.gate.finding import Finding, Situation, fail_closed, with_model
from mobile_agent.gate.gestures import gesture_finding
from mobile_agent.gate.inputs import key_finding, launch_finding, type_finding
from mobile_agent.gate.lexicon import (
    AUDIENCE,
    AVATAR,
    BARE_POST,
    ENTRY_WORDS,
    HOLD,
    MONEY_KINDS,
    SEARCH_FIELD,
    SEND_POST,
    id_kind,
    intent_kind,
    is_no,
    is_refusal,
    is_yes,
    is_yes_id,
    topic_kind,
    verb_kind,
)
from mobile_agent.gate.pages import ledger_row, list_row, menu_row, review_commit, settled
from mobile_agent.gate.precaution import precaution
from mobile_agent.gate.protection import protection_finding
from mobile_agent.gate.sharing import composer_share, direct_share, shares_personal_data
from mobile_agent.gate.surfaces import (
    call_tile,
    canned_reply,
    dialer_surface,
    keyboard_key,
    notification_body,
    notification_surface,
)
from mobile_agent.gate.terminal import in_terminal
from mobile_agent.screen.context import ScreenReader, TargetContext
from mobile_agent.screen.fields import ends_input_row
from mobile_agent.screen.labels import is_keyboard
from mobile_agent.screen.text import amounts, fold, spaced


def classify(s: Situation) -> Finding | None:
    a = s.action
    model = _model_signal(s)
    if a.kind is ActionKind.LAUNCH:
        return launch_finding(a.app or "", model)
    if a.kind in POINT_KINDS:
        return _point(s, a.point, model)  # type: ignore[arg-type]
    if a.kind in GESTURE_KINDS:
        return gesture_finding(s, model, _point)
    if a.kind is ActionKind.KEY:
        if a.key is not Key.ENTER:
            return None
        focused = None if in_terminal(s.reader, s.package) else _focused_control(s.reader)
        if focused is not None:  # Enter on a focused button presses it (keyboard navigation on a web page)
            return _point(s, focused, model)
        return key_finding(s, model)
    if a.kind is ActionKind.TYPE:
        return type_finding(s, model)
    return None


def _focused_control(reader: ScreenReader | None) -> Point | None:
    """The centre of a focused control that is not a text field (the focused view, or the control it is part of):
    Enter activates it."""
    if reader is None:
        return None
    for e in reader.visible:
        if e.node.get("focused") != "true" or reader.is_edit(e):
            continue
        for node in (e.node, *e.node.iterancestors("node")):
            control = reader.element(node)
            if control is not None and node.get("clickable") == "true" and control.bounds is not None:
                return None if reader.is_edit(control) else control.bounds.centre
    return None


def _model_signal(s: Situation) -> tuple[str, str] | None:
    sensitive = (s.action.sensitive or "").strip()
    if sensitive:
        found = intent_kind(sensitive) or topic_kind([sensitive])
        return (found[0] if found else "sensitive", f"model: {sensitive[:80]}")
    found = intent_kind(s.thought)
    return (found[0], f"thought: {found[1]}") if found else None


def _point(s: Situation, point: Point, model: tuple[str, str] | None) -> Finding | None:
    reader = s.reader
    if reader is None:
        return fail_closed(s, model, "the view tree is unavailable")
    found = _point_on_tree(s, reader, point, model)
    if found is None and s.package and reader.packages() and s.package not in reader.packages():
        # The dump is of another app (a stale tree): what it shows says nothing about what the finger will hit.
        reason = f"the view tree shows {sorted(reader.packages())[0]}, not {s.package}"
        return fail_closed(s, model, reason) or Finding(
            "sensitive", "fail_closed", "", reason, ("stale view tree",)
        )
    return found


def _point_on_tree(
    s: Situation, reader: ScreenReader, point: Point, model: tuple[str, str] | None
) -> Finding | None:
    ctx = reader.at(point)
    described = ctx.describe()
    labels = [t for t in ctx.labels if fold(t)]
    label = " ".join(labels)
    if ctx.target is not None and ctx.target.package != s.package and is_keyboard(ctx.target.package):
        return keyboard_key(s, reader, ctx, label, model)
    if notification_body(reader, ctx):
        # The notification itself opens its app, whatever its message says.
        return Finding(model[0], "model", ctx.describe(), model[1], (model[1],)) if model else None
    tapped = s.action.kind in (ActionKind.TAP, ActionKind.DOUBLE_TAP)
    held = s.action.kind is ActionKind.LONG_PRESS
    surface = (
        notification_surface(reader, ctx, labels)
        or (call_tile(reader, ctx, labels, s.package) if tapped else None)
        or (dialer_surface(reader, ctx, labels, s.package, held) if tapped or held else None)
        or (canned_reply(reader, ctx, labels, s.package) if tapped else None)
    )
    if surface is not None:
        return with_model(surface, model)
    lowered = protection_finding(reader, ctx, labels) or runs_steps(reader, ctx, labels)
    if lowered is not None:  # the screen lock removed, Find My Device off; a macro's Run that sends an SMS
        return with_model(lowered, model)
    if s.manifest_element is not None:
        rule = s.manifest_element(ctx)
        strip_entry = bool(labels) and _entry_tile(reader, ctx, (rule[0], labels[0])) if rule else False
        if (
            rule is not None
            and not ctx.is_tab
            and not strip_entry
            and not _harmless_control(reader, ctx, labels)
        ):
            return with_model(
                Finding(rule[0], "manifest", described, rule[1], (f"manifest rule: {rule[1]}",)), model
            )
    if labels and all(is_no(t) for t in labels) and not id_kind(ctx.ids):
        return None  # a no is always safe, whatever the model says
    if ctx.is_edit and s.action.kind is ActionKind.TAP:
        return None  # focusing a text field; what is typed there is judged when it is typed
    if _harmless_control(reader, ctx, labels):
        return None
    if s.action.kind is ActionKind.LONG_PRESS and HOLD.search(fold(label)):
        hold = verb_kind(label, anywhere=True) or ("send", label)
        return with_model(
            Finding(hold[0], "label", described, f"long press on '{label[:40]}'", (f"label '{label[:60]}'",)),
            model,
        )
    if s.action.kind is ActionKind.DOUBLE_TAP and any(AVATAR.search(w) for w in (*ctx.ids, *labels)):
        return with_model(
            Finding("send", "gesture", described, "a double tap on an avatar nudges (拍一拍)", ("avatar",)),
            model,
        )
    if s.action.kind is ActionKind.LONG_PRESS and list_row(ctx):
        # A long press on a row of a list selects it or opens its menu; its subject line is content, not a label.
        return Finding(model[0], "model", described, model[1], (model[1],)) if model else None
    shared = (
        direct_share(reader, ctx)
        or shares_personal_data(reader, ctx, labels)
        or composer_share(reader, ctx, labels)
        or call_peer(reader, ctx, labels)
    )
    if shared is not None:
        return with_model(shared, model)
    digit = _pin_digit(reader, ctx, labels)
    if digit is not None:
        return with_model(digit, model)
    # A control is named by all its labels together, or by a label under the finger (a row's preview never names it).
    named = next((k for t in [label, *ctx.under_finger] if (k := verb_kind(t)) is not None), None)
    if named is None and _audience_in_share_bar(ctx, labels):
        named = ("post", label)
    if (
        named is not None
        and not ctx.is_tab
        and not ledger_row(ctx)  # "转账-王五 -500.00" in a bill: the record of a transfer, opened to read
        and not (named[0] in MONEY_KINDS and menu_row(reader, ctx))  # 自动续费 in 支付设置: the page it opens
        and not _entry_tile(reader, ctx, named)
        and not _opens_composer(reader, ctx, named)
    ):
        return with_model(
            Finding(named[0], "label", described, f"label '{named[1][:60]}'", (f"label '{named[1][:60]}'",)),
            model,
        )
    by_id = id_kind(ctx.ids)
    # "payment_button" labelled "Payment": the id says no more than the label, an entry to the payments page.
    id_entry = by_id is not None and bool(labels) and _entry_tile(reader, ctx, (by_id[0], labels[0]))
    if by_id is not None and not ctx.is_tab and not id_entry:
        return with_model(
            Finding(by_id[0], "label", described, f"resource-id {by_id[1]}", (f"resource-id {by_id[1]}",)),
            model,
        )
    pin_key = (
        len(labels) == 1
        and re.fullmatch(r"\d", fold(labels[0])) is not None
        and (m := topic_kind(reader.texts())) is not None
        and m[0] in MONEY_KINDS
        and asks_for_pin(reader)
    )
    yes_like = bool(labels) and (
        any(is_yes(t) for t in labels)
        or (_priced(label) and not commit_elsewhere(reader, ctx, label))
        or _yes_prefix(label)
        or pin_key
    )
    if yes_like and settled(reader, ctx) is not None:
        # 完成 under 支付成功, Continue under page dots: the money already moved, or the copy is not the action.
        return Finding(model[0], "model", described, model[1], (model[1],)) if model else None
    if yes_like or (not labels and is_yes_id(ctx.ids)):
        found = _yes_in_context(reader, ctx, main=yes_like and any(is_yes(t) for t in labels))
        if found is not None:
            return with_model(found, model)
    commit = review_commit(reader, ctx) if labels else None
    if (
        commit is not None
    ):  # "Xfer" under "To: Checking ••8841 / $5,000.00": the page's main button commits it
        return with_model(
            Finding(
                commit[0],
                "screen",
                described,
                f"'{label[:30]}' is the main button of a page stating '{commit[1][:40]}'",
                (f"page text '{commit[1][:60]}'", "main button"),
            ),
            model,
        )
    if not labels:
        return blind_finding(s, ctx, model) or _precaution(reader, ctx, labels, model)
    choice = dialog_choice(reader, ctx, labels)
    if choice is not None:
        return with_model(choice, model)
    if s.manifest_screen is not None and not ctx.is_tab and yes_like:
        screen = s.manifest_screen()
        if screen is not None:
            return with_model(
                Finding(screen[0], "screen", described, screen[1], (f"screen rule: {screen[1]}",)), model
            )
    if (
        ctx.target is not None
        and not yes_like
        and not ctx.is_tab
        and not reader.is_edit(ctx.target)
        and ends_input_row(reader, ctx.target)
    ):
        # "SMS" / "RCS" under Messages' arrow: whatever it says, the last control of a written message's row sends it.
        return with_model(
            Finding(
                "send",
                "label",
                described,
                f"'{label[:30]}' ends the row of a written message",
                (f"label '{label[:40]}'", "filled field"),
            ),
            model,
        )
    # A word the rules above read and set aside for the screen's structure (an entry tile, a composer's opener, a
    # statement's row) was judged already; precaution is for controls no word names.
    cautious = None if named is not None or by_id is not None else _precaution(reader, ctx, labels, model)
    if cautious is not None:
        return cautious
    if model is not None:
        return Finding(model[0], "model", described, model[1], (model[1],))
    return None


def _precaution(
    reader: ScreenReader, ctx: TargetContext, labels: list[str], model: tuple[str, str] | None
) -> Finding | None:
    found = precaution(reader, ctx, labels)
    return with_model(found, model) if found is not None else None


def _yes_prefix(label: str) -> bool:
    """ "Submit 订单", "确认 order": a yes word opening a label that goes on to name a thing."""
    return re.match(r"(确认|确定|提交|submit|confirm)", fold(label)) is not None and (
        topic_kind([label]) is not None
        or re.search(
            r"订单|order|付款|支付|payment|转账|transfer|删除|delete|发送|send|购买|purchase", fold(label)
        )
        is not None
    )


_ERASE_LABEL = re.compile(
    r"^(删除|清除|清空|退格|delete|del|clear|backspace|⌫|x|×|removelastcharacter|deletelastcharacter|cleartext|"
    r"clearinput|clearquery|清除输入|清空输入|删除输入)$"
)


def _harmless_control(reader: ScreenReader, ctx: TargetContext, labels: list[str]) -> bool:
    """A text field's clear (×) button, a number pad's backspace: they erase what was typed, nothing stored."""
    target = ctx.target
    if target is None:
        return False
    folded = fold(" ".join(labels))
    by_id = any(
        re.search(r"clear|erase|delete|del|backspace", rid.rsplit("/", 1)[-1], re.I)
        and not re.search(r"history|record|all|chat|msg|message|account|friend|order", rid, re.I)
        for rid in ctx.ids
    )
    by_label = _ERASE_LABEL.fullmatch(folded) is not None
    if not (by_label or (by_id and not labels)):
        return False
    return reader.beside_edit(target) or reader.digit_keys() >= 10


def _pin_digit(reader: ScreenReader, ctx: TargetContext, labels: list[str]) -> Finding | None:
    """A digit key of a PIN pad while a payment is up: one of these taps completes the payment."""
    if len(labels) != 1 or re.fullmatch(r"\d", fold(labels[0])) is None or reader.digit_keys() < 10:
        return None
    if not asks_for_pin(reader):
        return None  # an amount pad: the digits are the amount being typed
    topic = topic_kind(reader.texts())
    if topic is None or topic[0] not in MONEY_KINDS:
        return None
    return Finding(
        topic[0],
        "key",
        ctx.describe(),
        f"a PIN pad digit under '{topic[1]}'",
        (f"screen text '{topic[1]}'", "PIN pad"),
    )


def _entry_tile(reader: ScreenReader, ctx: TargetContext, named: tuple[str, str]) -> bool:
    if named[0] not in MONEY_KINDS or ctx.container is not None:
        return False
    if ENTRY_WORDS.fullmatch(fold(named[1])) is None and ENTRY_WORDS.fullmatch(spaced(named[1])) is None:
        return False
    if ctx.target is not None and _in_strip(ctx.target):
        return True  # 买入 | 卖出 | 撤单 | 持仓: a strip of peers switches the form, it places nothing
    if any(re.search(r"\d", e.text) for e in reader.edit_fields() if not SEARCH_FIELD.search(e.resource_id)):
        return False  # under a filled form (code 603936, price 12.42): the form's own submit
    return not any(amounts(t) for t in reader.texts()) and not reader.password_fields()


def _in_strip(target) -> bool:  # noqa: ANN001 - an Element
    """Three or more clickable peers side by side in one row (a tab strip or segmented control). Peers may each sit
    in a wrapper of their own size (RelativeLayout > TextView): the strip is the wrappers' parent."""
    node, b = target.node, target.bounds
    if b is None:
        return False
    parent = node.getparent()
    while (
        parent is not None
        and parent.tag == "node"
        and _bounds_of(parent) == (b.left, b.top, b.right, b.bottom)
    ):
        node, parent = parent, parent.getparent()
    if parent is None:
        return False
    peers = 0
    for sibling in parent.iterchildren("node"):
        m = re.fullmatch(
            r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]", (sibling.get("bounds") or "").replace(" ", "")
        )
        clickable = sibling.get("clickable") == "true" or any(
            n.get("clickable") == "true" for n in sibling.iter("node")
        )
        peers += bool(m) and clickable and int(m.group(2)) == b.top and int(m.group(4)) == b.bottom
    return peers >= 3


def _bounds_of(node) -> tuple[int, ...] | None:  # noqa: ANN001 - an lxml node
    m = re.fullmatch(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]", (node.get("bounds") or "").replace(" ", ""))
    return tuple(int(v) for v in m.groups()) if m else None


def _priced(label: str) -> bool:
    """A control that is its price ("¥99.00", "¥99.00 确认"): a yes. A card that shows a balance among other words
    ("Основной счёт 10 ₽ Bank Card 0813", "零钱 ¥25.00 >") is a place to go."""
    found = amounts(label)
    if not found:
        return False
    rest = label
    for a in found:
        rest = rest.replace(a.text, " ")
    return len(fold(rest)) <= 4 or is_yes(rest)


def _has_money(label: str) -> bool:
    return bool(amounts(label))


def _opens_composer(reader: ScreenReader, ctx: TargetContext, named: tuple[str, str]) -> bool:
    """A bare "Post"/"Repost"/"转发" in a feed item's action row, or on a screen where nothing is being written,
    opens the composer or the repost sheet; the publishing button is the one in there."""
    if named[0] not in ("post", "send") or ctx.container is not None or ctx.target is None:
        return False
    if _in_strip(ctx.target) and (
        BARE_POST.fullmatch(fold(named[1])) is not None or SEND_POST.fullmatch(fold(named[1])) is not None
    ):
        return True  # Reply | Repost | Like | Send post under a post: each opens its sheet or composer
    if named[0] != "post" or BARE_POST.fullmatch(fold(named[1])) is None:
        return False
    written = [
        e
        for e in reader.edit_fields()
        if not SEARCH_FIELD.search(" ".join((e.resource_id, e.node.get("hint") or "", e.content_desc)))
    ]
    return not written and _floating(reader, ctx.target)


def _floating(reader: ScreenReader, target) -> bool:  # noqa: ANN001 - an Element
    """A floating action button: drawn over the list it floats on, its box overlaps other controls' of its own
    window (a control of another window under it is that window's, not a list it floats on)."""
    b, node = target.bounds, target.node
    if b is None:
        return False
    related = {id(node), *(id(n) for n in node.iter("node")), *(id(n) for n in node.iterancestors())}
    window = [node, *node.iterancestors("node")][-1]
    for e in reader.visible:
        o = e.bounds
        if id(e.node) in related or o is None or e.node.get("clickable") != "true":
            continue
        if [e.node, *e.node.iterancestors("node")][-1] is not window:
            continue
        if o.left < b.right and b.left < o.right and o.top < b.bottom and b.top < o.bottom:
            return True
    return False


def _audience_in_share_bar(ctx: TargetContext, labels: list[str]) -> bool:
    """ "Your story" / "Close Friends" in the share bar of a story editor publish to that audience (the same words
    in a story tray open a camera). The bar is an ancestor whose resource-id names sharing or publishing."""
    if not labels or AUDIENCE.fullmatch(fold(labels[0])) is None or ctx.target is None:
        return False
    for depth, node in enumerate(ctx.target.node.iterancestors("node")):
        if depth >= 3:
            return False
        if re.search(r"share|publish|post", node.get("resource-id") or "", re.I):
            return True
    return False


def _yes_in_context(reader: ScreenReader, ctx: TargetContext, main: bool = False) -> Finding | None:
    """A yes takes the kind its dialog (or screen) names; with no name, the page under the dialog names it; an
    amount the dialog states, or the one a review page states over its main button (``main``: a plain yes), is a
    payment."""
    texts = ctx.context_texts if ctx.container is not None else ctx.screen_texts
    where = "dialog" if ctx.container is not None else "screen"
    described = ctx.describe()
    topic = topic_kind(questions(texts)) or title_topic(reader, ctx)
    if (
        topic is not None
        and ctx.container is not None
        and _choices(ctx.container) <= 1
        and is_refusal(topic[1])
    ):
        return None  # "当前时间不允许委托 [确定]": the only way out of a notice that it was refused
    label = " ".join(ctx.labels)
    money = [m.text for t in (label, *ctx.statements) for m in amounts(t)]
    if topic is not None:
        signals = (f"{where} text '{topic[1]}'", *(f"amount {m}" for m in money[:2]))
        return Finding(
            topic[0],
            "dialog" if where == "dialog" else "screen",
            described,
            f"'{label[:30]}' under '{topic[1]}'",
            signals,
        )
    # An amount alone makes a yes a payment only where it can be declined: a one-button notice ("退款 ¥25.00 已退回
    # / 确定") only acknowledges.
    if money and ctx.container is not None and _choices(ctx.container) >= 2:
        return Finding(
            "pay", "amount", described, f"'{label[:30]}' under the amount {money[0]}", (f"amount {money[0]}",)
        )
    if _has_money(label):
        return Finding(
            "pay",
            "amount",
            described,
            f"a control labelled with the amount {money[0]}",
            (f"amount {money[0]}",),
        )
    stated = page_amount(reader, ctx) if main else None
    if stated is not None:
        return Finding(
            "pay",
            "amount",
            described,
            f"'{label[:30]}' confirms the page's amount {stated}",
            (f"amount {stated}",),
        )
    return None


def _choices(container) -> int:  # noqa: ANN001 - an Element
    return sum(
        1 for n in container.node.iter("node") if n.get("clickable") == "true" and n is not container.node
    )


__all__ = ["classify"]
