"""How much a screen (or the sheet a control sits in) could cost: its potential, read before any word under the
finger is.

A screen has potential when it carries what a consequential act needs, whatever language its buttons speak: an
amount, a payment method (a card tail, 余额, 免密), a price that renews (¥19.9/月), a recipient, a phone number or
other personal data asked for by a sheet, a written message waiting in a compose row, a PIN pad. On such a screen
the gate stops asking "is this word consequential?" and asks "is this control known to be harmless here?" (see
:mod:`mobile_agent.gate.precaution`).

The kind a potential carries is the kind the screen's words name when they name one (转账 → transfer), else the
kind its evidence implies: money → pay, a renewing price → order, personal data asked for → share, a written
message → send.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from mobile_agent.gate.dialogs import questions
from mobile_agent.gate.lexicon import CHAT_FIELD, MONEY_KINDS, SEARCH_FIELD, topic_kind
from mobile_agent.gate.pages import past_event
from mobile_agent.screen.context import ScreenReader
from mobile_agent.screen.text import amounts, fold, spaced
from mobile_agent.screen.viewtree import Element

# Where money comes from or goes to. Chinese on the folded form, the rest on the spaced form.
_PAYMENT_METHOD = re.compile(
    r"余额|零钱|银行卡|储蓄卡|信用卡|借记卡|花呗|借呗|白条|月付|云闪付|付款方式|支付方式|扣款方式|还款方式|免密|"
    r"实付|应付|需付|待付|合计|总计|总价|共计|应还|待还|还款|分期|先用后付|扣款|扣费|代扣|自动续费|连续包月|到期自动|"
    r"尾号\d{4}"
)
_PAYMENT_METHOD_SPACED = re.compile(
    r"\b(visa|mastercard|amex|american express|unionpay|discover|apple pay|google pay|g pay|paypal|venmo|"
    r"upi|paytm|gcash|ovo|dana|momo|zalopay|promptpay|pix|iban|sort code|routing number|"
    r"total|subtotal|order total|amount due|balance due|you pay|to pay|grand total|"
    r"pay with|paying with|payment method|charged to|billed to|debit|credit card|bank account|wallet balance|"
    r"card ending|ending in|installments?|pay later|buy now pay later)\b"
)
# A card or account number shown masked (•••• 8841, **** 1234, 6222 **** 0813), in any script's digits; a phone
# number masked in its middle (138****8000) is not one.
_MASKED_ACCOUNT = re.compile(r"(?<![\d*•·●])[x*•·●]{3,}[\s\-x*•·●]*\d{3,4}\b|尾号\s?\d{4}")
# A figure written the way money is, in any currency (1.249,90 TL, Ksh 5,000.00, ۲۵۰٬۰۰۰ تومان): grouped thousands or
# two decimals, beside a short word that is not Chinese or Japanese (a currency's name or code; counts in CJK apps
# read 1,234人 and their money carries ¥/元, which amounts() reads).
_FIGURE = re.compile(
    r"(?<![\w.,٫٬])\d{1,3}(?:[,.\s'٬\u00a0\u202f]\d{3})+(?:[.,٫]\d{2})?(?![\d])|(?<![\w.,])\d+[.,٫]\d{2}(?![\d])"
)
_CURRENCY_WORD = re.compile(r"^[^\W\d_]{1,6}\.?$")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
# A price that renews by itself.
_RECURRING = re.compile(
    r"[/／]\s*(月|年|周|季|天|month|mo|year|yr|week|wk|day)\b|[/／]\s*(月|年|周|季)|"
    r"\bper (month|year|week)\b|\b(a|each|every) (month|year|week)\b|每(月|年|周|期|季)|"
    r"(自动|到期)(续费|扣款|扣费|续订)|连续包(月|年|季)|auto-?renew|renews? (automatically|monthly|yearly|annually)|"
    r"\bthen [^\s]*\d",
    re.I,
)
# Someone the act reaches: a payee, a recipient.
_RECIPIENT = re.compile(
    r"^\s*((to|payee|recipient|beneficiary|send to|pay to)\s*[:：]|"
    r"(收款(人|方|账户|账号)?|转入|转给|付给|收方|发送给|发给|分享给|共享给|授权给|赠送给|转让给|对方)(?![账记]))",
    re.I,
)
# People a form will reach when it is saved or sent: a meeting's attendees, a mail's recipients.
_ADDRESSEES = re.compile(
    r"^\s*(与会者|参会人|参与者|收件人|抄送|密送|邀请对象|attendees|participants|guests|invitees|recipients|to|cc|bcc)\s*[:：]?\s*$",
    re.I,
)
# A phone number, whole or masked: a sheet that shows one is about to hand it over.
# Words of a sheet that hands something over: a grant, a login, a share.
_GRANT = re.compile(
    r"授权|允许|获取|申请|登录|登陆|共享|分享|提供|绑定|allow|grant|access|share|sign in|log in|login|continue with",
    re.I,
)
_PHONE = re.compile(
    r"(?<!\d)(\+?86[\s-]?)?1[3-9]\d[\s-]?(\d{4}|\*{4})[\s-]?\d{4}(?!\d)|\+\d{1,3}[\s-]?\d[\d\s*-]{6,}\d"
)
# Personal data a sheet asks for, in the words of authorisation sheets.
_PERSONAL = re.compile(
    r"(获取|使用|访问|读取|授权|绑定|共享|提供)(你|您)?(的)?(手机号|电话号码|手机号码|位置|地理位置|定位|通讯录|联系人|相册|照片|"
    r"身份证|实名|运动步数|微信运动|收货地址|发票抬头)|本机号码|"
    # a grant of the device itself, or of an account on another device
    r"全面控制|控制(你|您)的(设备|手机)|设备管理(应用|器)|(电脑|网页|windows|mac|ipad|平板|桌面|pc)\S{0,8}登录|登录确认|确认登录"
)
_PERSONAL_SPACED = re.compile(
    r"\b(wants? to|would like to|requests?|asks? for|is requesting) (access|use|see|read|know)\b|"
    r"\b(share|access|use) (your|my) (phone number|number|location|contacts|photos|profile|email|e-?mail address)\b|"
    r"\bsign in with\b|\bcontinue with (google|apple|facebook|wechat)\b|\bfull control\b|\bdevice admin|"
    r"\b(log|sign) ?in (on|to) (your |a )?(computer|desktop|pc|mac|web|tv)\b|\bconfirm (login|sign ?in)\b"
)


@dataclass(frozen=True)
class Potential:
    """What a scope of a screen could cost: ``kind`` (pay, transfer, order, send, share, ...) and the readings that
    say so."""

    kind: str
    signals: tuple[str, ...]

    def describe(self) -> str:
        return ", ".join(self.signals[:3])


def potential_of(
    texts: Sequence[str], reader: ScreenReader | None = None, *, in_sheet: bool = False
) -> Potential | None:
    """The potential carried by ``texts`` (a sheet's or a page's words), and, given ``reader``, by the screen's
    structure (a filled compose row, a password field). ``in_sheet``: the texts are a sheet's or dialog's, where a
    phone number shown beside a grant is the thing handed over (on a page it is the user's own, being entered)."""
    texts = questions([t for t in texts if t and t.strip()])  # bulleted notes describe, they do not ask
    if past_event(texts[:4]):
        return None  # a receipt: what it states already happened
    signals: list[str] = []
    kind: str | None = None
    found = [(a.currency, a.value, a.text) for t in texts for a in amounts(t)]
    found += [("", 0.0, f) for t in texts if not amounts(t) for f in money_figures(t)]
    money = [text for _, _, text in found] if len({(c, v, t) for c, v, t in found}) <= 3 else []
    if money:
        signals.append(f"amount {money[0]}")
        kind = "pay"
    method = next(
        (t for t in texts if _PAYMENT_METHOD.search(fold(t)) or _PAYMENT_METHOD_SPACED.search(spaced(t))),
        None,
    )
    if method is not None:
        signals.append(f"payment text '{method[:40]}'")
        kind = kind or "pay"
    masked = next((t for t in texts if _MASKED_ACCOUNT.search(t)), None)
    if masked is not None:
        signals.append(f"account '{masked[:30]}'")
        kind = kind or "pay"
    renewing = next(
        (t for t in texts if _RECURRING.search(t) and (amounts(t) or re.search(r"续|renew", t))), None
    )
    if renewing is not None:
        signals.append(f"renewing price '{renewing[:40]}'")
        kind = "order" if kind in (None, "pay") else kind
    recipient = next((t for t in texts if _RECIPIENT.search(t) or _ADDRESSEES.match(t)), None)
    if recipient is not None:
        signals.append(f"recipient '{recipient[:30]}'")
        kind = "transfer" if money else (kind or "send")
    personal = next(
        (t for t in texts if _PERSONAL.search(fold(t)) or _PERSONAL_SPACED.search(spaced(t))), None
    )
    granting = any(_GRANT.search(t) for t in texts)
    phone = next((t for t in texts if _PHONE.search(t)), None) if in_sheet else None
    if personal is not None or (phone is not None and granting):
        signals.append(f"personal data '{(personal or phone or '')[:40]}'")
        kind = kind or "share"
    elif phone is not None:
        signals.append(f"phone number '{phone[:30]}'")  # a sheet that shows a number and asks: a call
        kind = kind or "call"
    if reader is not None:
        if reader.password_fields():
            signals.append("password field")
            kind = kind or "pay"
        written = _written_message(reader)
        if written is not None:
            signals.append(f"written text '{written.text[:30]}'")
            kind = kind or "send"
    if kind is None:
        return None
    named = topic_kind(texts)
    if named is not None and named[0] in MONEY_KINDS and kind in MONEY_KINDS:
        kind = named[0]  # the screen's own words say which kind of money it is (转账: a transfer)
    return Potential(kind, tuple(signals))


def money_figures(text: str) -> list[str]:
    """Figures written like money in a short text with a currency word beside them (see ``_FIGURE``)."""
    words = text.split()
    if not text or len(words) > 6 or _CJK.search(text):
        return []
    out = []
    for m in _FIGURE.finditer(text):
        rest = (text[: m.start()] + " " + text[m.end() :]).replace(":", " ").split()
        cents = re.search(r"[.,٫]\d{2}$", m.group(0)) is not None
        # Without cents the word must look like a currency, not a count ("12,345 views"): a code or sign of up to
        # three letters (TL, Ksh, zł, kr), or a word of a script other than Latin (تومان, сум).
        if any(
            _CURRENCY_WORD.match(w) and (cents or len(w.rstrip(".")) <= 3 or not w.isascii()) for w in rest
        ):
            out.append(m.group(0))
    return out


def _written_message(reader: ScreenReader) -> Element | None:
    """A compose row that holds typed text (not its hint): a message about to go out. The field is the screen's
    only text field besides search boxes (a form has several), and named for messages or with a button beside it."""
    fields = [
        e
        for e in reader.edit_fields()
        if not SEARCH_FIELD.search(" ".join((e.resource_id, e.node.get("hint") or "", e.content_desc)))
    ]
    if len(fields) != 1:
        return None
    e = fields[0]
    if e.bounds is not None and e.bounds.top <= 0.12 * reader.screen.height:
        return None  # a field in the top bar: a search or address bar
    text = e.text.strip()
    if not fold(text) or text == (e.node.get("hint") or "").strip() or e.node.get("password") == "true":
        return None
    words = " ".join((e.resource_id, e.node.get("hint") or "", e.content_desc, e.class_name))
    # A compose row: named for messages, or with a control right beside the field (the send arrow).
    row = any(
        c.node.get("clickable") == "true" and c is not e and reader.beside_filled_edit(c)
        for c in reader.visible
    )
    return e if CHAT_FIELD.search(words) or row else None


__all__ = ["Potential", "money_figures", "potential_of"]
