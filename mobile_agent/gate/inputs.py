"""Keys, typing and links: Enter or a newline in a chat field sends, a PIN typed under a payment pays, a deep link
does what its scheme says."""

from __future__ import annotations

import re

from mobile_agent.gate.finding import Finding, Situation, fail_closed, with_model
from mobile_agent.gate.lexicon import (
    CHAT_FIELD,
    MONEY_KINDS,
    PASSWORD_HINT,
    SEARCH_FIELD,
    topic_kind,
    verb_kind,
)
from mobile_agent.gate.links import LINK, link_kind
from mobile_agent.gate.potential import Potential, potential_of
from mobile_agent.gate.terminal import command_finding, in_terminal, prompt_line
from mobile_agent.screen.context import TargetContext
from mobile_agent.screen.fields import caption_of, pin_boxes
from mobile_agent.screen.labels import labels_of
from mobile_agent.screen.text import amounts, first_line, fold, has_line_break

# A secret that pays wherever it is typed. A one-time code (验证码, OTP, an SMS code) is not one: it completes what its
# form submits, so it pays only where the screen carries money (a login code logs in, a transfer's code transfers).
_PAYMENT_SECRET = re.compile(
    r"pin\b|pin码|支付|交易|付款|cvv|cvc|securitycode|暗証|결제|платеж|оплат|passcode",
    re.I,
)


def _input_field(s: Situation) -> TargetContext | None:
    reader = s.reader
    if reader is None:
        return None
    field_ = reader.focused_field()
    if field_ is None:
        edits = reader.edit_fields()
        field_ = edits[-1] if len(edits) == 1 else None
    if field_ is None or field_.bounds is None:
        return None
    return reader.at(field_.bounds.centre)


def _field_words(ctx: TargetContext) -> str:
    e = ctx.target or ctx.hit
    if e is None:
        return ""
    hint = e.node.get("hint", "") or ""
    return " ".join([*ctx.labels, e.resource_id, hint, e.content_desc])


def key_finding(s: Situation, model: tuple[str, str] | None) -> Finding | None:
    terminal = in_terminal(s.reader, s.package)
    if terminal is not None:  # Enter runs the line typed after the prompt
        found = command_finding(prompt_line(terminal), "Enter")
        return with_model(found, model) if found is not None else None
    field_ctx = _input_field(s)
    if field_ctx is None:
        if s.reader is None or model is not None:
            return fail_closed(s, model, "Enter with no view tree") if (model or s.can_matter) else None
        return None
    return _submit_in_field(s, field_ctx, model, "key enter")


def _is_search_field(s: Situation, field_ctx: TargetContext) -> bool:
    """A search or address bar: named so, or a field in the top bar of the screen (chat inputs sit at the bottom)."""
    if SEARCH_FIELD.search(_field_words(field_ctx)):
        return True
    e = field_ctx.target or field_ctx.hit
    height = s.reader.screen.height if s.reader is not None else 2400
    return e is not None and e.bounds is not None and e.bounds.bottom <= 0.15 * height


def _submit_in_field(
    s: Situation, field_ctx: TargetContext, model: tuple[str, str] | None, how: str, typed: str = ""
) -> Finding | None:
    words = _field_words(field_ctx)
    described = field_ctx.describe()
    if _is_search_field(s, field_ctx):
        return None
    form = _form_potential(s)
    if form is not None:
        # Enter (or the keyboard's Go) submits the form the field belongs to, filled or not: a checkout, a transfer.
        return with_model(
            Finding(
                form.kind,
                "precaution",
                described,
                f"{how} submits a form with {form.describe()}",
                (*form.signals, f"{how} in a form"),
            ),
            model,
        )
    e = field_ctx.target or field_ctx.hit
    has_text = bool(typed.strip()) or (
        e is not None and bool(e.text.strip()) and e.text.strip() != (e.node.get("hint") or "")
    )
    if not has_text:
        return None  # Enter on an empty field sends nothing
    if PASSWORD_HINT.search(fold(words)) or (
        field_ctx.target is not None and field_ctx.target.node.get("password") == "true"
    ):
        return Finding("pay", "key", described, f"{how} in a password field", (f"field '{words[:40]}'",))
    e_box = (field_ctx.target or field_ctx.hit).bounds if (field_ctx.target or field_ctx.hit) else None
    height = s.reader.screen.height if s.reader is not None else 2400
    # A chat input sits at the bottom, or just above the keyboard when it is up (about mid-screen).
    at_bottom = e_box is not None and e_box.top >= 0.45 * height
    chat = CHAT_FIELD.search(words) or _screen_has_send(s) or (s.can_matter and at_bottom)
    if chat:
        return with_model(
            Finding("send", "key", described, f"{how} in a text field sends it", (f"field '{words[:40]}'",)),
            model,
        )
    return Finding(model[0], "model", described, model[1], (model[1],)) if model else None


def _form_potential(s: Situation) -> Potential | None:
    """The money or personal data a form on screen could hand over (what is typed in its fields included: Enter
    submits it)."""
    reader = s.reader
    if reader is None:
        return None
    texts = [t for e in reader.visible for t in labels_of(e)]
    found = potential_of(texts)
    return found if found is not None and (found.kind in MONEY_KINDS or found.kind == "share") else None


def _screen_has_send(s: Situation) -> bool:
    return s.reader is not None and any(
        verb_kind(t) and verb_kind(t)[0] in ("send", "post") for t in s.reader.texts()
    )  # type: ignore[index]


def type_finding(s: Situation, model: tuple[str, str] | None) -> Finding | None:
    text = s.action.text or ""
    terminal = in_terminal(s.reader, s.package)
    if terminal is not None and has_line_break(text):
        # A terminal runs each line typed: what is on the prompt already, then every line of the text.
        lines = re.split(r"\r\n|[\n\r\u2028\u2029\u0085]", prompt_line(terminal) + text)[:-1]
        found = command_finding("\n".join(lines), "a typed newline")
        return with_model(found, model) if found is not None else None
    field_ctx = _input_field(s)
    if has_line_break(text):  # \n, \r, U+2028, U+2029, U+0085 ...: any of them submits a one-line field
        if field_ctx is None:
            return fail_closed(s, model, "a typed newline with no field to read") or Finding(
                "send", "type", "", "typed text holds a newline, and no field can be read", ("newline",)
            )
        found = _submit_in_field(s, field_ctx, model, "a typed newline", typed=first_line(text))
        if found is not None:
            return found
    if s.reader is None:
        return fail_closed(s, model, "the view tree is unavailable") if model else None
    screen = s.reader.texts()
    money_topic = topic_kind(screen)
    if field_ctx is not None:
        field_ = field_ctx.target or field_ctx.hit
        # A field labelled from outside (a "暗証番号" caption over an empty box) is named by that caption too.
        caption = " ".join(caption_of(s.reader, field_)) if field_ is not None else ""
        own = " ".join((_field_words(field_ctx), caption))
        # A sheet or dialog that holds the field asks for what goes in it ("결제 비밀번호를 입력해 주세요" over a bare
        # box): its statements say the field takes a secret; that it pays, only money on screen says.
        prompt = " ".join(field_ctx.statements) if field_ctx.container is not None else ""
        words = " ".join((own, prompt))
        is_secret = PASSWORD_HINT.search(fold(words)) is not None or (
            field_ctx.target is not None and field_ctx.target.node.get("password") == "true"
        )
        if is_secret and not SEARCH_FIELD.search(words):
            login = re.search(r"登录|登陆|log ?in|sign ?in|注册", " ".join(screen), re.I)
            # A password flag or a bare "Password" hint is a payment secret only where money is on screen (a
            # Wi-Fi key, an account password are not); a PIN, 支付密码, a CVV name one wherever they are.
            paying = (
                money_topic is not None and money_topic[0] in MONEY_KINDS or any(amounts(t) for t in screen)
            )
            if paying or (not login and _PAYMENT_SECRET.search(fold(own))):
                kind = money_topic[0] if money_topic and money_topic[0] in MONEY_KINDS else "pay"
                return with_model(
                    Finding(
                        kind,
                        "type",
                        field_ctx.describe(),
                        "typing into a password or PIN field",
                        (f"field '{words[:40]}'",),
                    ),
                    model,
                )
        if _is_search_field(s, field_ctx):
            return None
    digits = re.fullmatch(r"\d{4,8}", text.strip()) is not None
    paying = money_topic is not None and money_topic[0] in MONEY_KINDS
    if digits and paying and pin_boxes(s.reader):
        # A row of one-character boxes under a payment: a PIN typed box by box (whichever view holds the focus,
        # often a hidden field laid over the boxes).
        return with_model(
            Finding(
                money_topic[0],  # type: ignore[index]
                "type",
                "",
                "digits typed into a row of PIN boxes under a payment",
                (f"screen text '{money_topic[1]}'", "PIN boxes"),  # type: ignore[index]
            ),
            model,
        )
    if digits and s.reader.digit_keys() >= 10 and paying:
        return with_model(
            Finding(
                money_topic[0],
                "type",
                "",
                "digits typed while a number pad and a payment are up",
                (f"screen text '{money_topic[1]}'",),
            ),
            model,
        )
    if digits and s.reader.password_fields() and field_ctx is None:
        return with_model(
            Finding(
                "pay", "type", "", "digits typed while a password field is on screen", ("password field",)
            ),
            model,
        )
    return None


def launch_finding(target: str, model: tuple[str, str] | None) -> Finding | None:
    target = target.strip()
    if not LINK.match(target) or re.match(r"^[a-z][\w]*(\.[\w]+)+$", target, re.I):
        return None  # a package name
    found = link_kind(target)  # what the link opens (see mobile_agent/gate/links.py)
    if found is None:
        return None
    return Finding(found[0], "link", target[:80], found[1], (f"link {target[:80]}",))


__all__ = ["key_finding", "launch_finding", "type_finding"]
