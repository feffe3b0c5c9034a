"""What a launched link opens (mobile_agent/gate/links.py): a payment, transfer, call or message asks in every
spelling of it; a link that only opens an app, a page or a map does not."""

import pytest

from mobile_agent.gate.links import link_kind

ASK = [
    ("https://cash.app/$alicesmith/25", "transfer"),
    ("HTTPS://CASH.APP/$alicesmith/25", "transfer"),
    ("https://qr.95516.com/00010000/62220210103712345678901234567890", "pay"),
    ("https://qr.alipay.com/fkx17548vxgpd8v1b3cjp5b", "pay"),
    ("https://wx.tenpay.com/cgi-bin/mmpayweb-bin/checkmweb?prepay_id=wx1", "pay"),
    ("https://www.paypal.me/alice/20", "pay"),
    ("https://pay.example.com/invoice/1", "pay"),
    ("https://shop.example.com/checkout", "pay"),
    ("https://shop.example.com/cart?amount=20", "pay"),
    ("alipays://platformapi/startapp?appId=09999988&actionType=toAccount&amount=800", "transfer"),
    ("alipays://platformapi/startapp?appId=%30%39%39%39%39%39%38%38", "transfer"),
    (
        "https://ds.alipay.com/?scheme=alipays%253A%252F%252Fplatformapi%252Fstartapp%253FappId%253D20000116",
        "transfer",
    ),
    ("intent://platformapi/startapp?appId=20000056#Intent;scheme=alipays;end", "pay"),
    ("intent:13800138000#Intent;scheme=tel;action=android.intent.action.CALL;end", "call"),
    ("intent://x#Intent;scheme=foo;action=android.intent.action.CALL;end", "call"),
    ("TEL:%2B86%20138%200013%208000", "call"),
    ("smsto:10086?body=KTLL10", "send"),
    ("mailto:boss@example.com?body=hi", "send"),
    ("upi://pay?pa=merchant@okaxis&am=500.00", "pay"),
    ("bitcoin:bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq?amount=0.01", "pay"),
    ("weixin://wxpay/bizpayurl?pr=Qa1b2c3", "pay"),
    ("someapp://wallet/send?to=alice&amount=5", "pay"),
    ("someapp://chat?text=hello", "send"),
    # an amount filled in as a path segment, after the payee, on any host
    ("https://www.paypal.com/paypalme/alexkim/250USD", "pay"),
    ("https://www.paypal.com/paypalme/alexkim", "pay"),
    ("https://paypal.me/alexkim/250", "pay"),
    ("https://monzo.me/janedoe/10.00", "pay"),
    ("https://revolut.me/janedoe", "pay"),
    ("https://tip.example.com/u/jane/15eur", "pay"),
    ("https://example.com/jane/$25", "pay"),
    ("https://example.com/jane/%2425", "pay"),
    # intents that uninstall, call or send by themselves
    ("intent:#Intent;action=android.intent.action.DELETE;data=package:com.tencent.mm;end", "delete"),
    ("INTENT:#Intent;action=android.intent.action.UNINSTALL_PACKAGE;data=package:com.x;end", "delete"),
    ("intent:#Intent;action=android.intent.action.SENDTO;data=smsto:10086;end", "send"),
    ("intent:#Intent;action=android.intent.action.SEND_MULTIPLE;end", "send"),
]
OPEN = [
    "geo:0,0?q=coffee+near+me",
    "geo:37.42,-122.08",
    "https://maps.google.com/?q=cafe",
    "alipays://platformapi/startapp?appId=20000003",
    "alipays://platformapi/startapp?appId=60000002",
    "ALIPAYS://platformapi/startApp?appId=60000002",
    "https://m.alipay.com/",
    "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
    "https://m.taobao.com",
    "market://details?id=com.tencent.mm",
    "weixin://",
    "intent://scan#Intent;scheme=zxing;end",
    "https://hotel.example.com/rooms",
    "com.tencent.mm",
    "支付宝",
    # numbers in a path that are not amounts: a product, a year, a page, an event with a currency-like word
    "https://shop.example.com/products/250",
    "https://news.example.com/2026/12/01/story",
    "https://example.com/item/10eur-coupon",
    "https://www.paypal.com/us/home",
    "intent:#Intent;action=android.intent.action.VIEW;end",
    "intent:#Intent;action=android.intent.action.DIAL;end",  # opens the dialer, places nothing
]


@pytest.mark.parametrize(("link", "kind"), ASK)
def test_links_that_move_money_call_or_send_ask(link, kind):
    found = link_kind(link)
    assert found is not None and found[0] == kind, (link, found)


@pytest.mark.parametrize("link", OPEN)
def test_links_that_only_open_something_do_not(link):
    assert link_kind(link) is None, (link, link_kind(link))
