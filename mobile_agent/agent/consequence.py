"""Is this action consequential, and why? The whole-screen reading the safety gate decides on.

A finding names a kind (pay, transfer, order, delete, send, post, call, sensitive) and the signals that made it:
which words on which element, which dialog title, which amount, which manifest rule, which OCR words, what the
model said. Text is compared in its folded form (see :mod:`mobile_agent.screen.text`), so width, script, case,
spacing and zero-width characters never hide a word.

The rules, in words:
- a control named by a consequential verb (支付, 发送, Delete all, Buy now ...) is that kind, wherever the finger
  lands on it, unless the words are a noun for a place to go (订单详情, 转账记录, Payment methods) or it is a tab;
- a generic yes (确定, 确认, OK, Confirm, 继续, 提交 ...) takes the kind its dialog (or, with no dialog, its screen)
  names, and a yes under an amount is a payment;
- a no (取消, 返回, Cancel ...) is always safe;
- a control nothing names (icon only, WebView, canvas, empty tree) is read from the pixels when OCR is available,
  and otherwise fails closed in an app or on a screen that can pay, send or delete;
- gestures: a slider whose track or dialog names a kind is that kind; long presses are classified like taps and by
  their own words (长按清理, 按住说话);
- keys and typing: Enter or a typed newline in a chat or comment field sends; typing into a password or PIN field,
  or digits while a number pad and a payment are on screen, pays;
- launching a deep link (tel:, sms:, alipays://, weixin://, intent:// ...) is the kind its scheme names, and any
  other non-web link is asked;
- the model's own words (AutoGLM's sensitive message, a thought that says it is about to pay or send) raise a
  finding on their own for generic, blind and unknown targets, and are recorded with every finding.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mobile_agent.actions import GESTURE_KINDS, POINT_KINDS, Action, ActionKind, Key, Point
from mobile_agent.agent.consequence_input import key_finding, launch_finding, type_finding
from mobile_agent.agent.finding import Finding, Situation, fail_closed, with_model
from mobile_agent.agent.lexicon import (
    AVATAR,
    ENTRY_WORDS,
    HOLD,
    MONEY_KINDS,
    SLIDER,
    id_kind,
    id_words,
    intent_kind,
    is_no,
    is_yes,
    is_yes_id,
    topic_kind,
    verb_kind,
)
from mobile_agent.screen.context import ScreenReader, TargetContext
from mobile_agent.screen.text import amounts, fold, spaced

if TYPE_CHECKING:
    from mobile_agent.screen.ocr import OcrWord


def classify(s: Situation) -> Finding | None:
    a = s.action
    model = _model_signal(s)
    if a.kind is ActionKind.LAUNCH:
        return launch_finding(a.app or "", model)
    if a.kind in POINT_KINDS:
        return _point(s, a.point, model)  # type: ignore[arg-type]
    if a.kind in GESTURE_KINDS:
        return _gesture(s, model)
    if a.kind is ActionKind.KEY:
        return key_finding(s, model) if a.key is Key.ENTER else None
    if a.kind is ActionKind.TYPE:
        return type_finding(s, model)
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
    digit = _pin_digit(reader, ctx, labels)
    if digit is not None:
        return with_model(digit, model)
    # A control is named by all its labels together, or by a label under the finger (a row's preview never names it).
    named = next((k for t in [label, *ctx.under_finger] if (k := verb_kind(t)) is not None), None)
    if named is not None and not ctx.is_tab and not _entry_tile(reader, ctx, named):
        return with_model(
            Finding(named[0], "label", described, f"label '{named[1][:60]}'", (f"label '{named[1][:60]}'",)),
            model,
        )
    by_id = id_kind(ctx.ids)
    if by_id is not None and not ctx.is_tab:
        return with_model(
            Finding(by_id[0], "label", described, f"resource-id {by_id[1]}", (f"resource-id {by_id[1]}",)),
            model,
        )
    pin_key = (
        len(labels) == 1
        and re.fullmatch(r"\d", fold(labels[0])) is not None
        and (m := topic_kind(reader.texts())) is not None
        and m[0] in MONEY_KINDS
    )
    yes_like = bool(labels) and (
        any(is_yes(t) for t in labels) or _has_money(label) or _yes_prefix(label) or pin_key
    )
    if yes_like or (not labels and is_yes_id(ctx.ids)):
        found = _yes_in_context(ctx)
        if found is not None:
            return with_model(found, model)
    if not labels:
        return _blind(s, ctx, model)
    if s.manifest_screen is not None and not ctx.is_tab and yes_like:
        screen = s.manifest_screen()
        if screen is not None:
            return with_model(
                Finding(screen[0], "screen", described, screen[1], (f"screen rule: {screen[1]}",)), model
            )
    if model is not None:
        return Finding(model[0], "model", described, model[1], (model[1],))
    return None


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
    return not any(amounts(t) for t in reader.texts()) and not reader.password_fields()


def _in_strip(target) -> bool:  # noqa: ANN001 - an Element
    """Three or more clickable peers side by side in one row (a tab strip or segmented control)."""
    parent, b = target.node.getparent(), target.bounds
    if parent is None or b is None:
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


def _has_money(label: str) -> bool:
    return bool(amounts(label))


def _yes_in_context(ctx: TargetContext) -> Finding | None:
    texts = ctx.context_texts if ctx.container is not None else ctx.screen_texts
    where = "dialog" if ctx.container is not None else "screen"
    described = ctx.describe()
    topic = topic_kind(texts)
    label = " ".join(ctx.labels)
    money = [m.text for t in (label, *texts) for m in amounts(t)]
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
    return None


def _choices(container) -> int:  # noqa: ANN001 - an Element
    return sum(
        1 for n in container.node.iter("node") if n.get("clickable") == "true" and n is not container.node
    )


def _blind(s: Situation, ctx: TargetContext, model: tuple[str, str] | None) -> Finding | None:
    """Nothing in the tree names the control under the finger: read the pixels, then what surrounds it."""
    described = ctx.describe()
    reader = s.reader
    if reader is not None and not ctx.takes_touch and not reader.is_empty() and _any_clickable(reader):
        return Finding(model[0], "model", described, model[1], (model[1],)) if model else None
    if s.ocr_words is not None:
        words = s.ocr_words(ctx.point)
        if words is not None:
            read, finding = _from_ocr(ctx, words, model)
            if read:  # the pixels name the control (or its dialog): that settles it
                return finding
    if model is not None:
        return Finding(model[0], "model", described, model[1], (model[1], "no label under the finger"))
    if reader is None or reader.is_empty() or not _any_clickable(reader):
        # Flutter, canvas, a web page drawn without nodes: nothing can be read, so nothing can be cleared.
        if not s.can_matter:
            return None
        return Finding(
            "sensitive",
            "blind",
            described,
            "the view tree names nothing here, in an app that can pay, send or delete",
            ("no readable node", f"app {s.package or 'unknown'}"),
        )
    target = ctx.target
    area = (
        (target.bounds.right - target.bounds.left) * (target.bounds.bottom - target.bounds.top)
        if target and target.bounds
        else 0
    )
    if area > 0.5 * reader.screen.width * reader.screen.height:
        return None  # a scrim behind a sheet or a page background: a tap there closes or does nothing
    if ctx.container is not None:
        texts = [*ctx.context_texts]
        where = "in a dialog that mentions"
    else:
        wide = (
            target is not None
            and target.bounds is not None
            and (target.bounds.right - target.bounds.left >= 0.4 * reader.screen.width)
        )
        # A wide button is the page's main action: the whole page says what it does. A small icon: what is near it.
        texts = reader.statements_near(ctx.point, band=reader.screen.height if wide else 420)
        where = "on a screen that mentions"
    topic = topic_kind(texts)
    money = [m.text for t in texts for m in amounts(t)] if ctx.container is not None else []
    if topic is not None or money:
        kind = topic[0] if topic else "pay"
        said = topic[1] if topic else money[0]
        return Finding(
            kind,
            "blind",
            described,
            f"an unlabelled control {where} '{said}'",
            ("no label under the finger", f"text '{said}'"),
        )
    if (
        ctx.blind
        and s.can_matter
        and target is not None
        and _action_bar(reader, target)
        and not _collection_item(target)
    ):
        # No text, no description, no id: nothing at all says what this control does, in an app that can.
        return Finding(
            "sensitive",
            "blind",
            described,
            "a control with no text, description or id, in an app that can pay, send or delete",
            ("no label, no id", f"app {s.package or 'unknown'}"),
        )
    if target is not None and reader.beside_filled_edit(target):
        return Finding(
            "send",
            "blind",
            described,
            "an unlabelled button beside a filled text field",
            ("no label", "filled field"),
        )
    return None


def _action_bar(reader: ScreenReader, target) -> bool:  # noqa: ANN001 - an Element
    """Where screens put their actions: the right of the title bar (check mark, send, trash) and the bottom bar.
    Its top-left corner is back, close or the drawer in every Android app."""
    b = target.bounds
    if b is None:
        return False
    w, h = reader.screen.width, reader.screen.height
    title_bar = b.bottom <= 0.12 * h and b.left >= 0.2 * w
    bottom_bar = b.top >= 0.85 * h
    return title_bar or bottom_bar


def _collection_item(target) -> bool:  # noqa: ANN001 - an Element
    """One of a row or grid of look-alike items (avatars in a selection strip, chips, thumbnails): tapping one picks
    or opens it. Action buttons stand alone."""
    b, parent = target.bounds, target.node.getparent()
    if b is None or parent is None:
        return False
    w, h = b.right - b.left, b.bottom - b.top
    alike = 0
    for sibling in parent.iterchildren("node"):
        m = re.fullmatch(
            r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]", (sibling.get("bounds") or "").replace(" ", "")
        )
        if m is None or sibling.get("class") != target.class_name:
            continue
        sw, sh = int(m.group(3)) - int(m.group(1)), int(m.group(4)) - int(m.group(2))
        alike += abs(sw - w) <= 0.15 * max(w, 1) and abs(sh - h) <= 0.15 * max(h, 1)
    return alike >= 3


def _any_clickable(reader: ScreenReader) -> bool:
    return any(e.node.get("clickable") == "true" for e in reader.visible)


def _from_ocr(
    ctx: TargetContext, words: list[OcrWord], model: tuple[str, str] | None
) -> tuple[bool, Finding | None]:
    """(whether the pixels settled it, the finding). Nothing legible under the finger and nothing said around it
    settles nothing: the caller goes on reading the tree's structure."""
    described = ctx.describe()
    # An icon's caption sits under it (40-80 px on a 1080-wide frame): that is still the control's name.
    # An icon read as a lone character ("口" for a trash can) is a guess at a shape, not a name.
    words = [w for w in words if w.score >= 0.75 and (len(fold(w.text)) > 1 or fold(w.text).isdigit())]
    near = [w for w in words if _box_contains(w.box, ctx.point, pad=24, below=90)]
    near_text = " ".join(w.text for w in near)
    signals = tuple(f"ocr '{w.text}'" for w in words[:6])
    named = verb_kind(near_text) if near else None
    if near and is_no(near_text):
        return True, None
    if named is not None:
        return True, with_model(
            Finding(named[0], "ocr", described, f"OCR under the finger: '{near_text[:40]}'", signals), model
        )
    topic = topic_kind([w.text for w in words])
    if topic is not None and (not near or is_yes(near_text) or _has_money(near_text)):
        return True, with_model(
            Finding(topic[0], "ocr", described, f"OCR around the finger: '{topic[1]}'", signals), model
        )
    if model is not None:
        return True, Finding(model[0], "model", described, model[1], (*signals, model[1]))
    return bool(near), None


def _box_contains(box: tuple[int, int, int, int], p: Point, pad: int = 0, below: int = 0) -> bool:
    """Does the word's box, grown by ``pad`` (and upwards by ``below``, for captions under the point), hold p?"""
    left, top, right, bottom = box
    return left - pad <= p.x <= right + pad and top - pad - below <= p.y <= bottom + pad


def _gesture(s: Situation, model: tuple[str, str] | None) -> Finding | None:
    a = s.action
    start, end = a.point, a.end
    if start is not None and end is not None and abs(start.x - end.x) + abs(start.y - end.y) < 16:
        return _point(s, start, model)  # the phone sees a tap
    if s.reader is None:
        return fail_closed(s, model, "the view tree is unavailable") if model else None
    ctx = s.reader.at(start)  # type: ignore[arg-type]
    texts = [*ctx.labels, *(ctx.context_texts if ctx.container is not None else ())]
    near = _texts_near_row(s.reader, ctx)
    slider_words = [t for t in (*texts, *near) if SLIDER.search(fold(t))]
    row_action = _row_swipe_action(s.reader, ctx, a)
    if row_action is not None:
        return with_model(row_action, model)
    # Instructions anywhere on the screen that say what a swipe does ("Swipe a note left to delete it").
    told = [t for t in s.reader.texts() if SLIDER.search(fold(t)) and verb_kind(t, anywhere=True)]
    is_slider = (
        bool(slider_words)
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


__all__ = ["classify"]
