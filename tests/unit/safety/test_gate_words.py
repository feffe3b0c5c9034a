"""The gate on words, characters and links written to slip past it: a typed line separator submits, a "Clear all"
takes the meaning of the dialog it sits in, a link is judged by what it opens."""

import pytest

from mobile_agent.actions import Action, Size
from mobile_agent.gate.gate import SafetyGate
from mobile_agent.gate.guard import GuardContext, Verdict
from tests.unit.safety.trees import n, tree

PKG = "org.telegram.messenger"


def node(text="", bounds="[0,0][100,100]", clickable=False, cls="android.widget.TextView", kids="", **extra):
    more = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in extra.items())
    return (
        f'<node text="{text}" resource-id="" class="{cls}" package="{PKG}" content-desc="" '
        f'clickable="{str(clickable).lower()}" bounds="{bounds}" visible-to-user="true"{more}>{kids}</node>'
    )


def dump(*nodes):
    return f'<hierarchy rotation="0">{node(bounds="[0,0][1080,2400]", kids="".join(nodes))}</hierarchy>'


def check(action, xml=None):
    ctx = GuardContext("t", action, Size(1080, 2400), PKG, 0, hierarchy_source=lambda: xml)
    return SafetyGate(registry=None).check(ctx)


CHAT = dump(
    node("Alice", "[0,84][1080,224]"),
    node("", "[20,2200][900,2320]", True, cls="android.widget.EditText", focused="true", hint="Message"),
)


@pytest.mark.parametrize("sep", ["\n", "\r", "\u2028", "\u2029", "\u0085"])
def test_any_line_separator_typed_into_a_chat_sends(sep):
    decision = check(Action.type(f"see you{sep}"), CHAT)
    assert decision.verdict is Verdict.ASK and decision.kind == "send", decision


def test_typing_without_a_line_break_sends_nothing():
    assert check(Action.type("see you"), CHAT).verdict is Verdict.ALLOW


def _dialog(body: str) -> str:
    return dump(
        node(
            bounds="[80,900][1000,1500]",
            cls="android.widget.LinearLayout",
            kids=node(body, "[120,950][960,1200]")
            + node("Cancel", "[120,1350][500,1450]", True, cls="android.widget.Button")
            + node("Clear all", "[560,1350][960,1450]", True, cls="android.widget.Button"),
        )
    )


def test_clear_all_under_a_delete_question_asks_and_over_notifications_does_not():
    asked = check(Action.tap(760, 1400), _dialog("Delete all messages in this chat? This cannot be undone."))
    assert asked.verdict is Verdict.ASK and asked.kind == "delete", asked
    assert check(Action.tap(760, 1400), _dialog("3 new notifications")).verdict is Verdict.ALLOW


@pytest.mark.parametrize(
    ("link", "verdict"),
    [
        ("https://cash.app/$alicesmith/25", Verdict.ASK),
        ("https://qr.95516.com/00010000/6222", Verdict.ASK),
        ("alipays://platformapi/startapp?appId=20000003", Verdict.ALLOW),
        ("geo:0,0?q=coffee+near+me", Verdict.ALLOW),
    ],
)
def test_a_link_is_judged_by_what_it_opens(link, verdict):
    assert check(Action.launch(link)).verdict is verdict


def _review(title: str, lines: list[str], button: str, pkg: str = "com.example.wallet") -> str:
    """A page with a back arrow, a title, lines of text and one wide button at the bottom."""
    kids = n("", "[0,84][140,224]", click=True, cls="android.widget.ImageButton", desc="Navigate up", pkg=pkg)
    kids += n(title, "[160,104][700,204]", rid=f"{pkg}:id/title", pkg=pkg)
    for i, line in enumerate(lines):
        kids += n(line, f"[40,{300 + 100 * i}][1040,{380 + 100 * i}]", pkg=pkg)
    kids += n(
        button, "[60,2160][1020,2300]", click=True, cls="android.widget.Button", rid=f"{pkg}:id/btn", pkg=pkg
    )
    return tree(n("", "[0,0][1080,2400]", cls="android.widget.FrameLayout", kids=kids, pkg=pkg))


def _check_in(xml: str, action: Action, pkg: str = "com.example.wallet"):
    ctx = GuardContext("t", action, Size(1080, 2400), pkg, 0, hierarchy_source=lambda: xml)
    return SafetyGate(registry=None).check(ctx)


@pytest.mark.parametrize(
    ("title", "lines", "button", "kind"),
    [
        ("Thanh toán", ["Cửa hàng ABC", "Tổng tiền: 250.000 ₫"], "Xác nhận", "pay"),
        ("Chuyển khoản", ["Người nhận: Trần B", "Số tiền 1.000.000 VND"], "Tiếp tục", "transfer"),
        ("ชำระเงิน", ["ร้าน ABC", "ยอดชำระ ฿350.00"], "ตกลง", "pay"),
        ("Transfer", ["Ke: Siti", "Rp 1.000.000"], "Konfirmasi", "transfer"),
        ("تحويل", ["إلى: أحمد", "SAR ٣٠٠"], "تأكيد", "transfer"),
        ("دفع الفاتورة", ["المبلغ ١٢٠٫٥٠ ر.س"], "موافق", "pay"),
        ("Überweisung", ["Empfänger: Max", "49,90 €"], "Freigeben", "transfer"),
        ("송금 확인", ["받는 분 김철수", "50,000원"], "확인", "transfer"),
        (
            "Set up automatic payments",
            ["Netflix may charge your account for future purchases"],
            "Agree and Continue",
            "pay",
        ),
    ],
)
def test_a_generic_yes_on_a_review_page_in_any_language_asks(title, lines, button, kind):
    decision = _check_in(_review(title, lines, button), Action.tap(540, 2230))
    assert decision.verdict is Verdict.ASK and decision.kind == kind, decision


@pytest.mark.parametrize(
    ("title", "lines", "button"),
    [
        ("Đăng nhập", ["Nhập số điện thoại"], "Tiếp tục"),
        ("ยินดีต้อนรับ", ["เริ่มต้นใช้งาน"], "ถัดไป"),
        ("Selamat datang", ["Masuk dengan nomor HP"], "Lanjut"),
        ("Registrierung", ["E-Mail-Adresse bestätigen"], "Freigeben"),
        ("تسجيل الدخول", ["رقم الجوال"], "متابعة"),
        ("Terms", ["In order to provide our services we need your consent"], "Agree and Continue"),
        # receipts: the money already moved, the button only leaves the page
        ("支付成功", ["¥36.50", "已支付"], "完成"),
        ("转账成功", ["¥200.00 已转出"], "完成"),
        ("Payment sent", ["You sent $40.00 to Alex"], "Done"),
        ("You've got money", ["Maria Lopez sent you $250.00"], "Continue"),
    ],
)
def test_the_same_yes_where_nothing_is_paid_is_let_through(title, lines, button):
    decision = _check_in(_review(title, lines, button), Action.tap(540, 2230))
    assert decision.verdict is Verdict.ALLOW, decision


@pytest.mark.parametrize(("label", "kind"), [("🗑️", "delete"), ("🗑", "delete"), ("📞", "call"), ("☎️", "call")])
def test_a_pictograph_label_asks_like_its_word(label, kind):
    xml = tree(n(label, "[940,84][1080,224]", click=True, rid="com.example.app:id/menu_item"))
    decision = _check_in(xml, Action.tap(1010, 154), "com.example.app")
    assert decision.verdict is Verdict.ASK and decision.kind == kind, decision


def test_an_unrelated_pictograph_label_does_not_ask():
    xml = tree(
        n("⭐", "[940,84][1080,224]", click=True, rid="com.example.app:id/menu_item"),
        n("Notes", "[0,300][1080,400]"),
    )
    assert _check_in(xml, Action.tap(1010, 154), "com.example.app").verdict is Verdict.ALLOW


def test_a_korean_sell_tab_switches_the_form_and_the_sell_button_orders():
    pkg = "com.example.exchange"
    tabs = "".join(
        n(word, f"[{360 * i},300][{360 * (i + 1)},420]", click=True, pkg=pkg)
        for i, word in enumerate(("매수", "매도", "거래내역"))
    )
    page = n("비트코인 BTC", "[0,100][1080,200]", pkg=pkg)
    page += n("", "[0,300][1080,420]", cls="android.widget.LinearLayout", pkg=pkg, kids=tabs)
    page += n("주문가능 1,000,000원", "[0,500][1080,600]", pkg=pkg)
    page += n("전량 매도", "[60,2160][1020,2300]", click=True, cls="android.widget.Button", pkg=pkg)
    xml = tree(n("", "[0,0][1080,2400]", cls="android.widget.FrameLayout", pkg=pkg, kids=page))
    assert _check_in(xml, Action.tap(540, 360), pkg).verdict is Verdict.ALLOW
    sold = _check_in(xml, Action.tap(540, 2230), pkg)
    assert sold.verdict is Verdict.ASK and sold.kind == "order", sold


@pytest.mark.parametrize(
    ("question", "yes", "verdict"),
    [("โทรหา 081 234 5678 ใช่ไหม", "โทร", Verdict.ASK), ("บันทึกเบอร์โทรศัพท์นี้?", "ตกลง", Verdict.ALLOW)],
)
def test_a_thai_call_dialog_asks_and_saving_a_number_does_not(question, yes, verdict):
    box = n(question, "[160,1060][920,1320]", rid="android:id/message")
    box += n(
        "ยกเลิก", "[560,1380][780,1500]", click=True, cls="android.widget.Button", rid="android:id/button2"
    )
    box += n(yes, "[800,1380][1000,1500]", click=True, cls="android.widget.Button", rid="android:id/button1")
    xml = tree(n("", "[80,1000][1000,1540]", cls="android.widget.LinearLayout", kids=box))
    assert _check_in(xml, Action.tap(900, 1440), "com.example.app").verdict is verdict


def _red_packet(button: str, title: str = "发红包") -> str:
    return dump(
        node(title, "[160,104][920,204]"),
        node("200.00", "[40,300][1040,420]", True, cls="android.widget.EditText"),
        node("¥200.00", "[0,900][1080,1080]"),
        node(button, "[240,1230][840,1370]", True, cls="android.widget.Button"),
    )


@pytest.mark.parametrize(
    "button, title",
    [
        ("塞钱进红包", "发红包"),
        ("塞\u200b钱进红包", "发红包"),
        ("塞\u00a0钱进红包", "发\u00a0红包"),
        ("塞錢進紅包", "發紅包"),
        ("确定", "发红包"),
        ("確\u200b定", "發紅包"),
    ],
)
def test_a_red_packet_form_in_an_app_nobody_described_pays(button, title):
    decision = check(Action.tap(540, 1300), _red_packet(button, title))
    assert decision.verdict is Verdict.ASK and decision.kind == "pay", decision


@pytest.mark.parametrize("button", ["红包记录", "查看红包"])
def test_a_red_packet_history_button_does_not_pay(button):
    xml = dump(node("我的红包", "[160,104][920,204]"), node(button, "[240,1230][840,1370]", True))
    assert check(Action.tap(540, 1300), xml).verdict is Verdict.ALLOW


@pytest.mark.parametrize(
    "body",
    [
        "Share your phone number?",
        "Ｓｈａｒｅ ｙｏｕｒ ｐｈｏｎｅ ｎｕｍｂｅｒ?",
        "Share\u00a0your\u00a0phone\u00a0number?",
    ],
)
def test_a_request_for_the_phone_number_reads_the_same_in_every_width_and_space(body):
    xml = dump(
        node(
            bounds="[80,900][1000,1500]",
            cls="com.android.internal.app.AlertDialog",
            kids=node(body, "[120,950][960,1200]")
            + node("Cancel", "[120,1350][500,1450]", True, cls="android.widget.Button")
            + node("ＯＫ", "[560,1350][960,1450]", True, cls="android.widget.Button"),
        )
    )
    decision = check(Action.tap(760, 1400), xml)
    assert decision.verdict is Verdict.ASK and decision.kind == "send", decision


@pytest.mark.parametrize("link", ["ｔｅｌ:10086", "tel:\u200b10086", "weixin://wx\u200bpay/bizpayurl?pr=abc"])
def test_links_written_in_full_width_or_with_invisible_characters_are_read(link):
    from mobile_agent.gate.links import link_kind

    assert link_kind(link) is not None
