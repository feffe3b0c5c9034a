"""The gate by design (issue 22): on a screen that could cost something, a primary control asks unless it is known
to be harmless, whatever language it speaks; surfaces that act by themselves; OCR that reads the whole sheet; the
re-check before acting. None of these trees is copied from tests/data/safety_attacks; every word under the finger
here is one the lexicon does not know."""

import pytest
from PIL import Image

from mobile_agent.actions import Action, Key, Size
from mobile_agent.gate.freshness import screen_change
from mobile_agent.gate.gate import SafetyGate
from mobile_agent.gate.guard import GuardContext, Verdict
from mobile_agent.gate.policy import parse_policy
from mobile_agent.gate.potential import money_figures, potential_of
from mobile_agent.screen.ocr import OcrWord
from tests.unit.safety.trees import APP, decide, n, tree

BTN = "android.widget.Button"
BOTTOM = "[60,2150][1020,2280]"


def window(*nodes, bounds="[0,0][1080,2400]", pkg=APP):
    return n(bounds=bounds, cls="android.widget.FrameLayout", pkg=pkg, kids="".join(nodes))


def checkout(*lines, button, back="返回"):
    """A page: a back arrow, lines of text top to bottom, and a wide button on the bottom bar."""
    body = [n("", "[0,110][130,230]", click=True, desc=back, cls="android.widget.ImageButton")]
    body += [n(t, f"[60,{320 + 110 * i}][1020,{400 + 110 * i}]") for i, t in enumerate(lines)]
    body.append(n(button, BOTTOM, click=True, cls=BTN))
    return tree(window(*body))


def tap(gate, xml, x=540, y=2215, package=APP):
    return decide(gate, xml, Action.tap(x, y), package)


@pytest.fixture(scope="module")
def deny_gate(gate):
    return SafetyGate(parse_policy(["deny"]), registry=gate.registry)


# -- precaution: a screen with potential and a control nobody named --------------------------------------------------
UNKNOWN_VERBS = [  # (page lines, the main button's label): Chinese, English, Turkish, Persian, Swahili
    (("订单确认", "合计 ¥99.00", "付款方式 零钱"), "马上办妥"),
    (("Review", "Total $49.00", "Card •••• 4242"), "Let's do it"),
    (("Özet", "Toplam 1.249,90 TL", "Kart: •••• 3391"), "Tamamla"),
    (("صورتحساب", "۲۵۰٬۰۰۰ تومان", "کارت: ۶۰۳۷ **** **** ۴۴۲۱"), "انجام"),
    (("Kwa: JUMA", "Kiasi Ksh 5,000.00"), "Endelea sasa"),
]


@pytest.mark.parametrize(("lines", "button"), UNKNOWN_VERBS)
def test_an_unknown_main_button_on_a_page_with_money_asks_and_deny_refuses(gate, deny_gate, lines, button):
    xml = checkout(*lines, button=button)
    decision = tap(gate, xml)
    assert decision.verdict is Verdict.ASK
    assert decision.kind in ("pay", "transfer", "order")
    assert decision.source in ("precaution", "screen") and decision.signals
    assert tap(deny_gate, xml).verdict is Verdict.BLOCK


@pytest.mark.parametrize(("lines", "button"), UNKNOWN_VERBS)
def test_the_same_pages_back_arrow_passes(gate, lines, button):
    assert tap(gate, checkout(*lines, button=button), 65, 170).verdict is Verdict.ALLOW


@pytest.mark.parametrize(
    "button", ["加入购物车", "Add to cart", "カートに入れる", "장바구니 담기", "查看详情", "View details"]
)
def test_known_harmless_main_buttons_pass_on_a_priced_page(gate, button):
    assert tap(gate, checkout("商品", "¥128.00", button=button)).verdict is Verdict.ALLOW


def test_a_page_without_potential_lets_an_unknown_button_through(gate):
    assert tap(gate, checkout("设置", "深色模式", button="马上办妥")).verdict is Verdict.ALLOW


def test_a_receipt_only_moves_on(gate):
    assert tap(gate, checkout("支付成功", "实付 ¥99.00", button="马上办妥")).verdict is Verdict.ALLOW


def _sheet(*lines, yes, no):
    body = "".join(n(t, f"[100,{1500 + 90 * i}][980,{1570 + 90 * i}]") for i, t in enumerate(lines))
    buttons = n(no, "[100,2150][520,2280]", click=True, cls=BTN) + n(
        yes, "[560,2150][980,2280]", click=True, cls=BTN
    )
    sheet = n(bounds="[60,1420][1020,2320]", cls="android.widget.LinearLayout", kids=body + buttons)
    return tree(window(n("小程序", "[160,104][920,204]")), window(sheet, bounds="[60,1420][1020,2320]"))


def test_a_sheet_that_hands_over_a_phone_number_asks_share(gate):
    xml = _sheet("申请获取你的手机号", "138****8000 微信绑定号码", yes="好嘞", no="拒绝")
    assert tap(gate, xml, 770, 2215).kind == "share"
    assert tap(gate, xml, 310, 2215).verdict is Verdict.ALLOW


def test_a_sheet_with_a_number_and_a_question_calls(gate):
    xml = _sheet("要给张伟打电话吗？", "手机 139 1234 5678", yes="嗯", no="取消")
    assert tap(gate, xml, 770, 2215).kind == "call"


def test_buttons_side_by_side_under_a_consent_page_are_its_commit(gate):
    body = [
        n("Shopmate wants to access your Google Account", "[60,420][1020,540]"),
        n("See and download your contacts", "[60,600][1020,680]"),
        n("Abbrechen", "[80,1900][500,2020]", click=True, cls=BTN),
        n("Weiter so", "[580,1900][1000,2020]", click=True, cls=BTN),
    ]
    assert tap(gate, tree(window(*body)), 790, 1960).kind == "share"


def test_a_card_that_states_a_password_free_charge_makes_its_button_a_commit(gate):
    card = n(
        bounds="[40,500][1040,860]",
        cls="android.widget.LinearLayout",
        kids=n("咖啡", "[80,530][500,600]", click=True)
        + n("¥13.9 · 免密支付", "[80,700][700,770]")
        + n("来一杯", "[720,700][1000,810]", click=True, cls=BTN),
    )
    assert tap(gate, tree(window(card)), 860, 755).verdict is Verdict.ASK
    plain = n(
        bounds="[40,500][1040,860]",
        cls="android.widget.LinearLayout",
        kids=n("咖啡", "[80,530][500,600]", click=True)
        + n("¥13.9", "[80,700][700,770]")
        + n("来一杯", "[720,700][1000,810]", click=True, cls=BTN),
    )
    assert tap(gate, tree(window(plain)), 860, 755).verdict is Verdict.ALLOW  # a feed's price alone


def test_money_shaped_figures_and_masked_accounts():
    assert money_figures("1.249,90 TL") == ["1.249,90"]
    assert money_figures("Ksh 87.00") == ["87.00"]
    assert money_figures("12,345 views") == [] and money_figures("v2.10 beta") == []
    assert potential_of(["Kart: •••• 3391"]) is not None
    assert potential_of(["138****8000"]) is None  # a masked phone number is no card


# -- surfaces that act by themselves ---------------------------------------------------------------------------------
SYSUI = "com.android.systemui"


def _notification(chips=("好的", "不用了"), actions=("回复", "标记为已读")):
    content = n(
        bounds="[0,340][1080,610]",
        pkg=SYSUI,
        rid=f"{SYSUI}:id/status_bar_latest_event_content",
        kids=n("李经理", "[120,436][900,490]", pkg=SYSUI)
        + n("晚上一起吃饭？", "[120,490][960,602]", pkg=SYSUI),
    )
    acts = "".join(
        n(
            a,
            f"[{100 + 260 * i},620][{340 + 260 * i},730]",
            click=True,
            cls=BTN,
            pkg=SYSUI,
            rid="android:id/action0",
        )
        for i, a in enumerate(actions)
    )
    row = n(bounds="[0,610][1080,740]", pkg=SYSUI, rid="android:id/actions", kids=acts)
    chip_row = n(
        bounds="[0,740][1080,870]",
        pkg=SYSUI,
        rid=f"{SYSUI}:id/smart_reply_view",
        kids="".join(
            n(c, f"[{100 + 220 * i},750][{300 + 220 * i},860]", click=True, cls=BTN, pkg=SYSUI)
            for i, c in enumerate(chips)
        ),
    )
    notif = n(
        bounds="[0,340][1080,870]",
        click=True,
        pkg=SYSUI,
        rid=f"{SYSUI}:id/expandableNotificationRow",
        kids=content + row + chip_row,
    )
    shade = n(bounds="[0,0][1080,2400]", pkg=SYSUI, rid=f"{SYSUI}:id/notification_panel", kids=notif)
    return tree(window(n("桌面", "[0,2000][1080,2200]", click=True), pkg="com.example.launcher"), shade)


def test_a_reply_chip_sends_even_when_it_reads_like_a_no(gate):
    xml = _notification()
    assert tap(gate, xml, 200, 805, "com.example.launcher").kind == "send"
    assert tap(gate, xml, 420, 805, "com.example.launcher").kind == "send"  # 不用了: a message, not a no


def test_mark_as_read_and_the_body_of_a_notification_pass(gate):
    xml = _notification()
    assert tap(gate, xml, 480, 675, "com.example.launcher").verdict is Verdict.ALLOW
    assert tap(gate, xml, 540, 470, "com.example.launcher").verdict is Verdict.ALLOW


IME = "com.google.android.inputmethod.latin"


def _form_with_keyboard(field_words, *lines, key_desc=""):
    keys = "".join(
        n("", f"[{108 * i},1700][{108 * (i + 1)},1860]", click=True, desc=c, pkg=IME)
        for i, c in enumerate("qwertyuiop")
    )
    keys += n("", "[0,2230][800,2400]", click=True, desc="空格", pkg=IME)
    keys += n("", "[820,2230][1080,2400]", click=True, desc=key_desc, pkg=IME)
    keyboard = n(bounds="[0,1560][1080,2400]", pkg=IME, kids=keys)
    body = [n(t, f"[60,{300 + 100 * i}][1020,{380 + 100 * i}]") for i, t in enumerate(lines)]
    body.append(
        n("123", "[60,1200][1020,1300]", cls="android.widget.EditText", focused=True, rid=field_words)
    )
    return tree(window(*body), keyboard)


@pytest.mark.parametrize("key", ["", "前往", "Go", "完成"])
def test_the_keyboards_action_key_submits_a_checkout_form(gate, key):
    xml = _form_with_keyboard("com.example.app:id/cvv", "结算", "应付 ¥2,000.00", key_desc=key)
    assert tap(gate, xml, 950, 2315).verdict is Verdict.ASK


def test_the_keyboards_action_key_on_a_search_box_and_its_letters_pass(gate):
    search = _form_with_keyboard("com.example.app:id/search_box", "商品", "¥99.00", key_desc="前往")
    assert tap(gate, search, 950, 2315).verdict is Verdict.ALLOW
    checkout_form = _form_with_keyboard("com.example.app:id/cvv", "结算", "应付 ¥2,000.00", key_desc="前往")
    assert tap(gate, checkout_form, 54, 1780).verdict is Verdict.ALLOW  # the letter q types


def test_enter_on_a_checkout_form_asks(gate):
    xml = _form_with_keyboard("com.example.app:id/cvv", "结算", "应付 ¥2,000.00")
    assert decide(gate, xml, Action.press(Key.ENTER)).verdict is Verdict.ASK


DIALER = "com.android.dialer"


def _dialer(tab):
    tiles = "".join(
        n(
            name,
            f"[{40 + 340 * i},400][{340 + 340 * i},700]",
            click=True,
            pkg=DIALER,
            rid=f"{DIALER}:id/contact_tile",
        )
        for i, name in enumerate(("妈妈", "张伟"))
    )
    grid = n(bounds="[0,380][1080,1600]", pkg=DIALER, rid=f"{DIALER}:id/favorites_grid", kids=tiles)
    tabs = "".join(
        n(t, f"[{360 * i},2200][{360 * (i + 1)},2400]", click=True, selected=(t == tab), pkg=DIALER)
        for i, t in enumerate(("收藏", "最近通话", "联系人"))
    )
    return tree(window(grid, n(bounds="[0,2200][1080,2400]", pkg=DIALER, kids=tabs), pkg=DIALER))


def test_a_favourite_tile_calls_but_a_long_press_only_opens_its_menu(gate):
    xml = _dialer("收藏")
    assert tap(gate, xml, 190, 550, DIALER).kind == "call"
    assert decide(gate, xml, Action.long_press(190, 550), DIALER).verdict is Verdict.ALLOW


def test_a_contact_row_in_the_contacts_list_opens_the_card(gate):
    rows = "".join(
        n(name, f"[0,{400 + 150 * i}][1080,{550 + 150 * i}]", click=True, pkg="com.android.contacts")
        for i, name in enumerate(("妈妈", "张伟", "李四"))
    )
    xml = tree(
        window(
            n(bounds="[0,380][1080,2000]", pkg="com.android.contacts", kids=rows), pkg="com.android.contacts"
        )
    )
    assert tap(gate, xml, 540, 475, "com.android.contacts").verdict is Verdict.ALLOW


# -- where the tree is blind, the pixels of the whole sheet -----------------------------------------------------------
class FakeOcr:
    """Reads what a test says the frame shows (the OCR engine itself is tested in tests/unit/screen)."""

    def __init__(self, words):
        self._words = words

    def words_near(self, image, point, **_):
        return self._words


def _opaque_page():
    back = n("", "[0,110][130,230]", click=True, desc="返回", cls="android.widget.ImageButton")
    return tree(window(back, n(bounds="[0,240][1080,2400]", cls="android.webkit.WebView")))


def _drawn(gate, words):
    ocr_gate = SafetyGate(registry=gate.registry, ocr=FakeOcr(words))
    frame = Image.new("RGB", (1080, 2400), "white")
    xml = _opaque_page()
    ctx = GuardContext(
        "t",
        Action.tap(540, 1765),
        Size(1080, 2400),
        APP,
        0,
        hierarchy_source=lambda: xml,
        screenshot_source=lambda: frame,
    )
    return ocr_gate.check(ctx)


def test_fine_print_far_from_a_drawn_button_decides(gate):
    words = [
        OcrWord("立即领取", (140, 1700, 940, 1830), 0.98),
        OcrWord("开通后 ¥19.9/月 自动续费", (160, 2240, 920, 2280), 0.95),
    ]
    assert _drawn(gate, words).verdict is Verdict.ASK


def test_a_drawn_page_without_potential_is_cleared_by_ocr_but_not_without_it(gate):
    words = [
        OcrWord("立即领取", (140, 1700, 940, 1830), 0.98),
        OcrWord("免费挂件 · 限时", (160, 600, 920, 680), 0.95),
    ]
    assert _drawn(gate, words).verdict is Verdict.ALLOW
    blind_gate = SafetyGate(registry=gate.registry, ocr=None)
    assert tap(blind_gate, _opaque_page(), 540, 1765).verdict is Verdict.ASK  # nothing can be read: ask


# -- act only on the screen the model saw ------------------------------------------------------------------------------
def _list_page(clock="10:42", extra=""):
    status = n(
        bounds="[0,0][1080,96]",
        pkg=SYSUI,
        rid=f"{SYSUI}:id/status_bar",
        kids=n(clock, "[48,18][170,78]", pkg=SYSUI),
    )
    card = n("查看详情", "[700,900][1020,1000]", click=True)
    return tree(
        window(n("订单", "[160,104][920,204]"), n("¥25.00", "[60,900][600,1000]"), card), status, *extra
    )


SIZE = Size(1080, 2400)


def test_a_sheet_that_arrived_after_the_observation_is_a_change():
    sheet = window(
        n("免密支付", "[100,1500][980,1570]") + n("立即支付", "[100,900][980,1000]", click=True, cls=BTN),
        bounds="[0,800][1080,2400]",
    )
    change = screen_change(_list_page(), _list_page(extra=(sheet,)), Action.tap(860, 950), APP, SIZE)
    assert change is not None and "window" in change.reason


def test_a_new_control_under_the_finger_is_a_change():
    seen = _list_page()
    live = seen.replace("查看详情", "确认转账")
    assert "确认转账" in screen_change(seen, live, Action.tap(860, 950), APP, SIZE).reason


def test_the_clock_a_toast_or_an_unreadable_screen():
    seen = _list_page()
    assert screen_change(seen, _list_page(clock="10:43"), Action.tap(860, 950), APP, SIZE) is None
    toast = window(n("已复制", "[300,2000][780,2080]"), bounds="[300,2000][780,2080]")
    assert screen_change(seen, _list_page(extra=(toast,)), Action.tap(860, 950), APP, SIZE) is None
    assert screen_change(seen, None, Action.tap(860, 950), APP, SIZE) is not None
