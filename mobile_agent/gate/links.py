"""What a launched link opens: a call, a message, a payment or a transfer, or only an app or a page.

The decision reads the link as the phone will (percent-decoded, any case, an ``intent:`` URL's own scheme and
action, links carried inside another link's parameters) and asks only where the link names a consequence:

- a scheme that calls, messages or pays (``tel:``, ``sms:``, ``mailto:``, ``upi:``, ``bitcoin:`` ...);
- a payment host or path (``qr.alipay.com``, ``wx.tenpay.com``, ``cash.app/$name/25``, a ``/pay`` or ``/checkout``
  segment), an Alipay mini-program that moves money (转账, 付款码, 扫一扫 ...);
- a parameter that carries an amount, a payee, a phone number or a message body, or an opaque payment ticket.

Everything else opens something (an app, a shop, a map search, a video) and is allowed: ``geo:0,0?q=coffee``,
``alipays://platformapi/startapp?appId=60000002`` (Ant Forest), ``market://details?id=...``. Words are matched as
whole tokens of the link, so "pay" inside "alipays" names nothing.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import unquote

from mobile_agent.screen.text import shown

LINK = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)

_SCHEME_KINDS: dict[str, str] = {
    **dict.fromkeys(
        ("tel", "voicemail", "callto", "facetime", "facetime-audio", "sip", "sips", "skype"), "call"
    ),
    **dict.fromkeys(("sms", "smsto", "mms", "mmsto", "mailto", "whatsapp", "tg", "viber"), "send"),
    **dict.fromkeys(
        (
            "upi",
            "paypal",
            "venmo",
            "cashme",
            "wxpay",
            "unionpay",
            "upwallet",
            "alipayqr",
            "bitcoin",
            "bitcoincash",
            "ethereum",
            "litecoin",
            "dogecoin",
            "monero",
            "solana",
            "lightning",
        ),
        "pay",
    ),
}
# Hosts whose pages are a payment or a transfer: Alipay's QR codes and cashier, WeChat Pay's H5 pay, UnionPay's QR
# payments (95516), Cash App, Venmo, PayPal.Me, Stripe's payment links and checkout.
_PAYMENT_HOSTS = re.compile(
    r"//(?:www\.)?(qr\.alipay\.com|(?:m|ex)?cashier\.alipay\.com|mclient\.alipay\.com|wx\.tenpay\.com|"
    r"pay\.weixin\.qq\.com|qr\.95516\.com|cash\.app|venmo\.com|paypal\.me|buy\.stripe\.com|checkout\.stripe\.com|"
    r"revolut\.me|monzo\.me|payme\.hsbc)"
    r"(?=[/?#:]|$)"
)
# A host whose first label is a payment word (pay.google.com, checkout.example.com).
_PAYMENT_SUBDOMAIN = re.compile(r"//(pay|payment|payments|checkout|cashier)\.[a-z0-9-]+\.")
# Path or host tokens that name the consequence; a token is a run of letters and digits, so "alipays" is one token.
_TOKEN_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("transfer", re.compile(r"^(transfer|transfers|remit|withdraw|sendmoney|toaccount|tocard)$")),
    (
        "pay",
        re.compile(
            r"^(pay|payment|payments|paycharge|paynow|checkout|cashier|purchase|bizpayurl|mmpayweb|paypalme|donate)$"
        ),
    ),
    ("order", re.compile(r"^(order|buy|buynow|placeorder|submitorder)$")),
    ("send", re.compile(r"^(send|sendmessage|compose)$")),
    ("delete", re.compile(r"^(delete|remove|uninstall)$")),
    ("call", re.compile(r"^(call|dial)$")),
    ("sensitive", re.compile(r"^(business)$")),  # weixin://dl/business/?t=...: an opaque mini-program ticket
)
# Query parameters that carry what a consequence needs.
_PARAM_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "transfer",
        re.compile(r"^(payee|pa|recipient|recipients|receiver|to_?account|card_?no|biz_?data|userid)$"),
    ),
    (
        "pay",
        re.compile(
            r"^(amount|amt|am|value|money|price|total|total_?fee|prepay_?id|trade_?no|out_?trade_?no)$"
        ),
    ),
    ("send", re.compile(r"^(body|text|message|msg|content|phone|number|mobile)$")),
)
# Alipay mini-programs that move money: 20000123 收钱/扫码转账, 20000116 转账, 20000056 付款码, 09999988 转账到银行卡,
# 10000007 扫一扫 (scanning a payment code pays).
_ALIPAY_APP_KINDS = {
    "20000123": "transfer",
    "20000116": "transfer",
    "09999988": "transfer",
    "20000056": "pay",
    "10000007": "pay",
}
_ALIPAY_ACTIONS = re.compile(r"[?&;](actiontype)=(toaccount|tocard|scan|pay)\b")
_CASHTAG = re.compile(r"/\$[a-z][\w-]*(/\d|[?&]amount=|$)")
# A path segment that is an amount with its currency ("/alexkim/250USD", "/10.00eur", "/$25", "/€5"): a link that
# fills in how much to pay (PayPal.Me, Monzo.me and their like put the payee before it).
_AMOUNT_SEGMENT = re.compile(
    r"/(?:[$€£¥₹₩]\d+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?(?:usd|eur|gbp|jpy|cny|inr|aud|cad|chf|brl|mxn|sgd|hkd))(?=[/?#]|$)"
)
# Intent actions that do the thing themselves (an uninstall prompt, a call, a message sent to someone).
_INTENT_ACTIONS = {
    **dict.fromkeys(("call", "call_privileged", "call_emergency"), ("call", "places a call")),
    **dict.fromkeys(("sendto", "send", "send_multiple"), ("send", "sends")),
    **dict.fromkeys(("delete", "uninstall_package"), ("delete", "uninstalls a package")),
}


def _decoded(target: str) -> str:
    text = unicodedata.normalize("NFKC", target.strip())
    for _ in range(3):  # links inside links are encoded once per level
        decoded = unquote(text)
        if decoded == text:
            break
        text = decoded
    return shown(text).lower()  # a percent-encoded U+200B or full-width letter reads as nothing / its letter


def _intent_parts(url: str) -> tuple[str, str | None]:
    """``intent://host/path#Intent;scheme=alipays;action=...;end`` as ``alipays://host/path`` and its action."""
    body, _, extras = url.partition("#intent;")
    scheme = re.search(r"(?:^|;)scheme=([a-z][a-z0-9+.-]*)", extras)
    action = re.search(r"(?:^|;)action=([\w.]+)", extras)
    rest = body.split(":", 1)[1] if ":" in body else ""
    return f"{scheme.group(1) if scheme else 'https'}:{rest}", action.group(1) if action else None


def link_kind(target: str) -> tuple[str, str] | None:
    """(kind, why) when launching ``target`` (a URI) calls, messages, pays, transfers or orders; None when it only
    opens something. ``target`` that is not a URI (a package or an app's name) is None."""
    target = shown(target)  # "ｔｅｌ:\u200b10086" is tel:10086
    if not LINK.match(target.strip()):
        return None
    url = _decoded(target)
    scheme = url.split(":", 1)[0]
    if scheme == "intent":
        url, action = _intent_parts(url)
        scheme = url.split(":", 1)[0]
        if action and action.rsplit(".", 1)[-1] in _INTENT_ACTIONS:
            kind, what = _INTENT_ACTIONS[action.rsplit(".", 1)[-1]]
            return kind, f"an intent that {what} ({action})"
    if scheme in _SCHEME_KINDS:
        return _SCHEME_KINDS[scheme], f"a {scheme}: link"
    if url.startswith("weixin://wxpay"):
        return "pay", "a WeChat Pay link"
    for app_id in re.findall(r"[?&;](?:appid|said)=(\d+)", url):
        if app_id in _ALIPAY_APP_KINDS:
            return _ALIPAY_APP_KINDS[app_id], f"an Alipay mini-program that moves money ({app_id})"
    action = _ALIPAY_ACTIONS.search(url)
    if action:
        return ("pay" if action.group(2) in ("scan", "pay") else "transfer"), f"actionType={action.group(2)}"
    host = _PAYMENT_HOSTS.search(url) or _PAYMENT_SUBDOMAIN.search(url)
    if host:
        return ("transfer" if _CASHTAG.search(url) else "pay"), f"a payment page ({host.group(1)})"
    path = url.split("?", 1)[0].split("#", 1)[0]
    if scheme in ("http", "https") and _AMOUNT_SEGMENT.search(path):
        return "pay", f"the link fills in an amount ({_AMOUNT_SEGMENT.search(path).group(0)[1:]})"  # type: ignore[union-attr]
    for name, value in re.findall(r"[?&;#]([a-z_]+)=([^&;#]*)", url):
        for kind, pattern in _PARAM_KINDS:
            if value and pattern.match(name):
                return kind, f"the link carries {name}="
    for token in re.findall(r"[a-z0-9]+", url.split("?", 1)[0].split(":", 1)[-1]):
        for kind, pattern in _TOKEN_KINDS:
            if pattern.match(token):
                return kind, f"the link names '{token}'"
    return None


__all__ = ["LINK", "link_kind"]
