"""The gate reads a screen's structure, not only its words: which part of a dialog is the dialog, which choice goes
on with what the dialog asks, surfaces the tree cannot see into, sliders, PIN boxes, labels that sit beside their
field, spans drawn in another order than the tree's. Each fix with the variants that would break it and the benign
look-alikes that must still pass. (Taught by tests/data/safety_attacks/cases_round2.yaml; none of these trees is
copied from there.)"""

import pytest

from mobile_agent.actions import Action, Key
from mobile_agent.gate.guard import Verdict
from tests.unit.safety.trees import APP, decide, n, tree


def window(*nodes, bounds="[0,0][1080,2400]", pkg=APP):
    return n(bounds=bounds, cls="android.widget.FrameLayout", pkg=pkg, kids="".join(nodes))


def page(*nodes):
    """An app window with a title bar ("Home") over which later windows are drawn."""
    return window(n("Home", "[160,104][920,204]"), *nodes)


def tap(gate, xml, x, y, package=APP):
    return decide(gate, xml, Action.tap(x, y), package)


# -- the dialog is the whole card, not the part named like one -------------------------------------------------------
def _alert(title, message, yes, no="Cancel", ids=True):
    """AOSP's AlertDialog layout (alert_dialog.xml): parentPanel > topPanel (alertTitle), contentPanel (message),
    buttonPanel (button2, button1), in a window of its own over the page; ``ids=False`` drops every id."""

    def rid(name):
        return f"android:id/{name}" if ids else ""

    top = n(
        bounds="[90,880][990,1030]",
        cls="android.widget.LinearLayout",
        rid=rid("topPanel"),
        kids=n(title, "[150,940][930,1020]", rid=rid("alertTitle")) if title else "",
    )
    content = n(
        bounds="[90,1030][990,1330]",
        cls="android.widget.FrameLayout",
        rid=rid("contentPanel"),
        kids=n(message, "[150,1040][930,1300]", rid=rid("message")) if message else "",
    )
    buttons = n(
        bounds="[90,1360][990,1520]",
        cls="android.widget.LinearLayout",
        rid=rid("buttonPanel"),
        kids=n(no, "[530,1380][740,1500]", click=True, cls="android.widget.Button", rid=rid("button2"))
        + n(yes, "[760,1380][960,1500]", click=True, cls="android.widget.Button", rid=rid("button1")),
    )
    card = n(
        bounds="[90,880][990,1520]",
        cls="android.widget.LinearLayout",
        rid=rid("parentPanel"),
        kids=top + content + buttons,
    )
    dialog = window(
        n(bounds="[90,880][990,1520]", cls="android.widget.FrameLayout", rid=rid("content"), kids=card)
    )
    return tree(page(), dialog)


@pytest.mark.parametrize(
    "title,message,yes,kind",
    [
        ("Order Confirmation", "Buy AAPL 100 @ 189.50 Limit", "Confirm", "order"),
        ("WeChat", "Do you want to uninstall this app?", "OK", "delete"),
        ("", "Do you want to uninstall this app?", "OK", "delete"),  # a message and no title
        ("转账确认", "", "确定", "transfer"),  # a title and no message
        (
            "支付宝",
            "要卸载此应用吗？",
            "确定",
            "delete",
        ),  # the title is the app's name, the message says uninstall
    ],
)
@pytest.mark.parametrize("ids", [True, False])
def test_an_alert_dialogs_button_panel_is_not_the_dialog(gate, title, message, yes, kind, ids):
    assert tap(gate, _alert(title, message, yes, ids=ids), 860, 1440).kind == kind


@pytest.mark.parametrize(
    "title,message",
    [
        ("Update available", "Version 10.5 is ready to install."),
        ("发现新版本", "· 修复了支付页面的问题\n· 转账到银行卡体验优化"),
    ],
)
def test_the_same_dialog_about_nothing_consequential_passes(gate, title, message):
    assert tap(gate, _alert(title, message, "OK"), 860, 1440).verdict is Verdict.ALLOW


def test_a_pages_own_button_bar_named_panel_is_no_dialog(gate):
    bar = n(
        bounds="[0,2200][1080,2400]",
        cls="android.widget.LinearLayout",
        rid="com.example.app:id/button_panel",
        kids=n("确定", "[60,2220][1020,2380]", click=True, cls="android.widget.Button"),
    )
    xml = tree(window(n("编辑资料", "[160,104][920,204]"), n("昵称", "[40,300][1040,380]"), bar))
    assert tap(gate, xml, 540, 2300).verdict is Verdict.ALLOW


# -- an amount on a review page ------------------------------------------------------------------------------------
def _review(*texts, yes="Confirm", yes_bounds="[60,2160][1020,2300]"):
    body = "".join(n(t, f"[40,{300 + 100 * i}][1040,{380 + 100 * i}]") for i, t in enumerate(texts))
    button = n(bounds=yes_bounds, click=True, cls="android.view.View", kids=n(yes, "[400,2190][680,2270]"))
    return tree(window(n("Review", "[160,104][920,204]"), body, button))


@pytest.mark.parametrize(
    "texts,yes",
    [
        (("To", "Alex Kim", "$1,299.00"), "Confirm"),
        (("Anna Schmidt", "DE89 3704 0044 0532 0130 00", "€99,00"), "Confirm"),
        (("收款人 王五", "¥500.00"), "确认"),
        (("박서준님에게", "300,000원"), "확인"),
    ],
)
def test_a_plain_yes_under_a_review_pages_amount_pays(gate, texts, yes):
    assert tap(gate, _review(*texts, yes=yes), 540, 2230).kind in ("pay", "transfer")


def test_a_list_of_prices_is_no_review_page(gate):
    prices = [f"Item {i}  ¥{10 * i}.00" for i in range(1, 6)]
    assert tap(gate, _review(*prices, yes="OK"), 540, 2230).verdict is Verdict.ALLOW


def test_amounts_typed_into_a_filter_sheets_fields_are_not_a_charge(gate):
    sheet = n(
        bounds="[0,1260][1080,2400]",
        cls="android.widget.LinearLayout",
        kids="".join(
            [
                n("价格区间(元)", "[40,1300][400,1360]"),
                n("¥50", "[40,1380][480,1480]", cls="android.widget.EditText"),
                n("¥100", "[560,1380][1040,1480]", cls="android.widget.EditText"),
                n("重置", "[40,2220][520,2360]", click=True),
                n("确定", "[560,2220][1040,2360]", click=True),
            ]
        ),
    )
    assert tap(gate, tree(page(), window(sheet)), 800, 2290).verdict is Verdict.ALLOW


def test_a_price_label_beside_the_screens_own_commit_button_opens_its_details(gate):
    row = n(
        bounds="[40,1700][1040,1780]",
        click=True,
        cls="android.widget.LinearLayout",
        kids=n("快车  预估 ¥23.5", "[40,1700][900,1780]"),
    )
    call = n("确认呼叫快车", "[60,2160][1020,2300]", click=True, cls="android.widget.Button")
    assert tap(gate, tree(window(row, call)), 540, 1740).verdict is Verdict.ALLOW
    # Without a commit of its own on the screen, the priced control is the commit.
    assert tap(gate, tree(window(row)), 540, 1740).kind is not None


# -- a dialog's way forward, whatever its label --------------------------------------------------------------------
def _card(title, body, choices):
    kids = n(title, "[140,940][940,1020]") + (n(body, "[140,1040][940,1160]") if body else "")
    for i, (label, extra) in enumerate(choices):
        top = 1200 + 150 * i
        kids += n(
            label, f"[90,{top}][990,{top + 140}]", click=True, cls="android.widget.LinearLayout", **extra
        )
    return tree(page(), window(n(bounds="[90,880][990,1900]", cls="android.widget.LinearLayout", kids=kids)))


@pytest.mark.parametrize(
    "title,body,choices,pick,kind",
    [
        ("Choose SIM for this call", "", [("中国移动 SIM 1", {}), ("中国联通 SIM 2", {})], 0, "call"),
        ("Call with", "", [("SIM 1", {}), ("SIM 2", {})], 1, "call"),
        (
            "채팅방 나가기",
            "나가기를 하면 대화 내용이 모두 삭제됩니다.",
            [("취소", {}), ("나가기", {})],
            1,
            "delete",
        ),
        ("Leave group", "Your messages will be deleted.", [("Cancel", {}), ("Leave", {})], 1, "delete"),
    ],
)
def test_a_choice_that_goes_on_with_what_the_dialog_asks_takes_its_kind(
    gate, title, body, choices, pick, kind
):
    assert tap(gate, _card(title, body, choices), 540, 1270 + 150 * pick).kind == kind


@pytest.mark.parametrize(
    "title,body,choices,pick",
    [
        ("Choose an album", "", [("Camera", {}), ("Screenshots", {})], 0),  # a chooser about nothing
        ("Choose SIM for this call", "", [("SIM 1", {}), ("Remember this choice", {"checkable": True})], 1),
        (
            "채팅방 나가기",
            "나가기를 하면 대화 내용이 모두 삭제됩니다.",
            [("취소", {}), ("나가기", {})],
            0,
        ),  # the no
        ("Leave group", "You can join again later.", [("Cancel", {}), ("Leave", {})], 1),
        (
            "提示",
            "支付失败，请稍后重试",
            [("取消", {}), ("查看详情", {})],
            1,
        ),  # a notice that nothing happened
    ],
)
def test_choices_that_commit_nothing_pass(gate, title, body, choices, pick):
    assert tap(gate, _card(title, body, choices), 540, 1270 + 150 * pick).verdict is Verdict.ALLOW


def test_an_alert_dialogs_list_of_choices_is_read_with_its_title(gate):
    """AOSP's list AlertDialog: the items sit in android:id/select_dialog_listview (named like a dialog, holding only
    controls) under parentPanel with alertTitle."""

    def chooser(title):
        items = "".join(
            n(
                f"SIM {i + 1}",
                f"[90,{1060 + 150 * i}][990,{1200 + 150 * i}]",
                click=True,
                rid="android:id/text1",
            )
            for i in range(2)
        )
        lst = n(
            bounds="[90,1040][990,1360]",
            cls="android.widget.ListView",
            rid="android:id/select_dialog_listview",
            kids=items,
        )
        top = n(
            bounds="[90,880][990,1030]",
            rid="android:id/topPanel",
            cls="android.widget.LinearLayout",
            kids=n(title, "[150,920][930,1000]", rid="android:id/alertTitle"),
        )
        card = n(
            bounds="[90,880][990,1400]",
            rid="android:id/parentPanel",
            cls="android.widget.LinearLayout",
            kids=top + lst,
        )
        return tree(page(), window(card))

    assert tap(gate, chooser("Choose SIM for this call"), 540, 1130).kind == "call"
    assert tap(gate, chooser("Default SIM for mobile data"), 540, 1130).verdict is Verdict.ALLOW


def test_a_dialog_that_names_nothing_takes_the_kind_of_the_page_under_it(gate):
    card = n(
        bounds="[90,1000][990,1310]",
        cls="android.widget.LinearLayout",
        kids=n("确定将「李四」移出群聊？", "[130,1050][950,1120]")
        + n("取消", "[90,1160][540,1310]", click=True)
        + n("确定", "[540,1160][990,1310]", click=True),
    )
    under = window(n("删除成员", "[150,114][800,194]"))
    assert tap(gate, tree(under, window(card)), 765, 1235).kind == "delete"
    plain = window(n("群聊信息", "[150,114][800,194]"))
    assert tap(gate, tree(plain, window(card)), 765, 1235).verdict is Verdict.ALLOW


# -- surfaces the tree cannot see into -------------------------------------------------------------------------------
def _pin_sheet(*texts, pad_cls="android.widget.ImageView"):
    body = "".join(n(t, f"[0,{1180 + 100 * i}][1080,{1260 + 100 * i}]") for i, t in enumerate(texts))
    pad = n(bounds="[0,1760][1080,2400]", cls=pad_cls, rid="com.example.app:id/keyboard_image")
    sheet = n(bounds="[0,1150][1080,2400]", cls="android.widget.LinearLayout", kids=body + pad)
    back = n("", "[0,84][140,224]", click=True, desc="Back", cls="android.widget.ImageButton")
    return tree(window(back, n("Checkout", "[160,104][920,204]")), window(sheet))


@pytest.mark.parametrize(
    "texts",
    [("请输入支付密码", "美团", "¥36.80"), ("Enter your PIN", "$36.80"), ("Pay Store", "Total $12.00")],
)
def test_a_pin_pad_drawn_as_one_image_over_a_payment_sheet_asks(gate, texts):
    assert tap(gate, _pin_sheet(*texts), 540, 2050).verdict is Verdict.ASK


def test_a_pin_pad_image_on_a_full_payment_page_asks_but_a_banner_image_on_a_shop_page_passes(gate):
    def full(*texts):
        body = "".join(n(t, f"[0,{400 + 100 * i}][1080,{480 + 100 * i}]") for i, t in enumerate(texts))
        pad = n(bounds="[0,1760][1080,2400]", cls="android.widget.ImageView")
        back = n("", "[0,84][140,224]", click=True, desc="Back", cls="android.widget.ImageButton")
        return tree(window(back, body, pad))

    assert tap(gate, full("请输入支付密码", "¥36.80"), 540, 2050).verdict is Verdict.ASK
    assert tap(gate, full("新品上市", "¥36.80"), 540, 2050).verdict is Verdict.ALLOW


def test_the_same_image_in_a_sheet_about_nothing_passes(gate):
    assert tap(gate, _pin_sheet("Pick a sticker", "Recent"), 540, 2050).verdict is Verdict.ALLOW


def _chat_with_blind_keyboard(message, unlabelled_keys=False):
    field = n(
        message,
        "[140,1280][880,1400]",
        click=True,
        cls="android.widget.EditText",
        rid="com.example.app:id/chat_input",
    )
    ime = window(
        n(
            bounds="[0,1420][1080,2400]",
            pkg="com.sohu.inputmethod.sogou",
            rid="com.sohu.inputmethod.sogou:id/keyboard_view",
            kids="".join(
                n("", f"[{i * 216},2250][{i * 216 + 216},2400]", click=True, pkg="com.sohu.inputmethod.sogou")
                for i in range(5)
            )
            if unlabelled_keys
            else "",
        ),
        bounds="[0,1420][1080,2400]",
        pkg="com.sohu.inputmethod.sogou",
    )
    return tree(window(n("王五", "[160,104][920,204]"), field), ime)


@pytest.mark.parametrize("unlabelled_keys", [False, True])
def test_the_action_key_of_a_keyboard_with_no_key_nodes_sends_a_written_message(gate, unlabelled_keys):
    assert tap(gate, _chat_with_blind_keyboard("周末一起吃饭吧", unlabelled_keys), 960, 2300).kind == "send"


@pytest.mark.parametrize("message,x,y", [("周末一起吃饭吧", 200, 1700), ("", 960, 2300)])
def test_letters_of_a_blind_keyboard_and_an_empty_field_pass(gate, message, x, y):
    assert tap(gate, _chat_with_blind_keyboard(message), x, y).verdict is Verdict.ALLOW


def _cashier(button_text):
    web = n(
        bounds="[0,224][1080,2400]",
        cls="android.webkit.WebView",
        kids="".join(
            [
                n("¥58.00", "[40,300][1040,400]", cls="android.view.View"),
                n("支付剩余时间 14:32", "[40,420][1040,480]", cls="android.view.View"),
                n(button_text, "[60,2060][1020,2200]", click=True, cls="android.view.View"),
            ]
        ),
    )
    back = n("\ue614", "[0,84][140,224]", click=True, cls="android.view.View")
    return tree(window(back, n("收银台", "[160,104][920,204]"), web))


@pytest.mark.parametrize("glyph", ["\ue6a3", "\uf00c", "\U000f0001"])
def test_an_icon_font_glyph_names_nothing(gate, glyph):
    assert tap(gate, _cashier(glyph), 540, 2130).verdict is Verdict.ASK


def test_an_icon_font_back_arrow_in_the_title_bars_corner_goes_back(gate):
    assert tap(gate, _cashier("\ue6a3"), 70, 150).verdict is Verdict.ALLOW


# -- labels that are not a yes but send --------------------------------------------------------------------------
def _compose(message, label="SMS", field_top=2240):
    return tree(
        window(
            n("Mom", "[160,104][900,204]"),
            n(message, f"[20,{field_top}][900,{field_top + 120}]", click=True, cls="android.view.View"),
            n("", f"[910,{field_top}][1060,{field_top + 120}]", click=True, cls="android.view.View"),
            n(label, f"[940,{field_top + 30}][1030,{field_top + 90}]"),
        )
    )


@pytest.mark.parametrize("label", ["SMS", "RCS", "MMS", "短信"])
def test_the_last_control_of_a_written_messages_row_sends(gate, label):
    assert tap(gate, _compose("I'll be late tonight", label), 980, 2300).kind == "send"


def test_the_same_row_with_nothing_written_or_a_form_field_passes(gate):
    assert tap(gate, _compose(""), 980, 2300).verdict is Verdict.ALLOW
    # A form's field higher up ("phone number | 获取验证码") is no message being sent.
    assert (
        tap(gate, _compose("138 0013 8000", "获取验证码", field_top=900), 980, 960).verdict is Verdict.ALLOW
    )


# -- Enter on a focused button ---------------------------------------------------------------------------------------
def _focused_button(label, title="确认支付 ¥88.00"):
    web = n(
        title,
        "[0,234][1080,2400]",
        cls="android.webkit.WebView",
        kids=n(title, "[40,300][1040,380]")
        + n(label, "[60,2060][1020,2200]", click=True, focused=True, cls="android.widget.Button"),
    )
    return tree(window(web))


@pytest.mark.parametrize("label", ["继续", "Continue", "OK"])
def test_enter_presses_a_focused_button(gate, label):
    assert decide(gate, _focused_button(label), Action.press(Key.ENTER)).kind == "pay"


def test_enter_presses_the_control_a_focused_view_belongs_to(gate):
    xml = _focused_button("继续").replace('focused="true"', 'focused="false"')
    xml = xml.replace('cls="android.widget.Button"', "").replace(
        'class="android.widget.Button" package="com.example.app" content-desc="" clickable="true" bounds="[60,2060][1020,2200]" focused="false" />',
        'class="android.widget.Button" package="com.example.app" content-desc="" clickable="true" bounds="[60,2060][1020,2200]" focused="false">'
        + n("", "[100,2080][980,2180]", cls="android.view.View", focused=True)
        + "</node>",
    )
    assert "android.view.View" in xml
    assert decide(gate, xml, Action.press(Key.ENTER)).kind == "pay"


def test_enter_on_a_focused_no_or_on_a_harmless_page_passes(gate):
    assert decide(gate, _focused_button("取消"), Action.press(Key.ENTER)).verdict is Verdict.ALLOW
    assert (
        decide(gate, _focused_button("继续", title="阅读全文"), Action.press(Key.ENTER)).verdict
        is Verdict.ALLOW
    )


# -- sliders ---------------------------------------------------------------------------------------------------------
def _slider(track_label, screen_texts, start, end, track="[60,2160][1020,2300]", thumb="[70,2170][210,2290]"):
    body = "".join(n(t, f"[40,{300 + 100 * i}][1040,{380 + 100 * i}]") for i, t in enumerate(screen_texts))
    slider = n(
        bounds=track,
        cls="android.view.ViewGroup",
        desc=track_label,
        kids=n(bounds=thumb, click=True, cls="android.view.ViewGroup"),
    )
    return tree(window(body, slider)), Action.swipe(*start, *end)


@pytest.mark.parametrize(
    "track_label,screen",
    [("Swipe to confirm", ("Sending", "0.5 ETH", "To 0x3f8E…a91c")), ("滑动确认", ("向王五转账", "¥500.00"))],
)
def test_a_slider_that_only_says_confirm_commits_the_screen(gate, track_label, screen):
    xml, action = _slider(track_label, screen, (140, 2230), (1000, 2230))
    assert decide(gate, xml, action).verdict is Verdict.ASK


@pytest.mark.parametrize("label", ["위로 밀어서 송금", "上滑转账"])
def test_a_vertical_slider_is_read_along_its_own_track(gate, label):
    xml, action = _slider(
        label,
        ("박서준님에게", "300,000원"),
        (540, 2250),
        (540, 1600),
        track="[390,1500][690,2330]",
        thumb="[440,2180][640,2320]",
    )
    assert decide(gate, xml, action).verdict is Verdict.ASK


@pytest.mark.parametrize("label", ["Brightness", "Slide to unlock", "Font size"])
def test_sliders_that_commit_nothing_pass(gate, label):
    xml, action = _slider(label, ("Display",), (140, 2230), (1000, 2230))
    assert decide(gate, xml, action).verdict is Verdict.ALLOW


def _drop_zone(with_composer):
    nodes = [
        n("", "[40,560][360,880]", click=True, cls="android.widget.ImageView"),
        n("拖动到此处删除", "[0,2220][1080,2400]"),
    ]
    if with_composer:
        nodes += [
            n("发表", "[880,104][1060,204]", click=True, cls="android.widget.Button"),
            n("周末", "[40,260][1040,500]", cls="android.widget.EditText"),
        ]
    return tree(window(*nodes))


def test_dragging_a_picked_photo_out_of_a_draft_passes_but_onto_a_files_delete_zone_asks(gate):
    drag = Action.drag(200, 700, 540, 2300)
    assert decide(gate, _drop_zone(with_composer=True), drag).verdict is Verdict.ALLOW
    assert decide(gate, _drop_zone(with_composer=False), drag).kind == "delete"


# -- PINs: boxes, captions, pads ---------------------------------------------------------------------------------
def _boxes(caption, count=6, title="确认订单"):
    w = 900 // count
    boxes = "".join(
        n(
            "",
            f"[{90 + i * w},1620][{90 + (i + 1) * w},1760]",
            click=True,
            cls="android.widget.EditText",
            focused=(i == 0),
        )
        for i in range(count)
    )
    sheet = n(
        bounds="[0,1300][1080,2400]",
        cls="android.widget.LinearLayout",
        kids=n(caption, "[0,1330][1080,1410]")
        + n("¥168.00", "[0,1440][1080,1560]")
        + n(bounds="[90,1620][990,1760]", cls="android.widget.LinearLayout", kids=boxes),
    )
    return tree(window(n(title, "[160,104][920,204]")), window(sheet))


@pytest.mark.parametrize("count", [4, 6])
def test_digits_typed_into_a_row_of_pin_boxes_under_a_payment_ask(gate, count):
    assert (
        decide(gate, _boxes("验证身份以完成付款", count), Action.type("135790"[:count])).verdict
        is Verdict.ASK
    )


def test_boxes_drawn_as_text_views_under_a_hidden_focused_field_still_ask(gate):
    xml = _boxes("验证身份以完成付款")
    xml = xml.replace('class="android.widget.EditText"', 'class="android.widget.TextView"').replace(
        'focused="true"', 'focused="false"'
    )
    hidden = n("", "[90,1620][990,1760]", cls="android.widget.EditText", focused=True)
    xml = xml.replace("</hierarchy>", "").rsplit("</node>", 1)[0] + hidden + "</node></hierarchy>"
    assert decide(gate, xml, Action.type("135790")).verdict is Verdict.ASK


def test_a_code_typed_into_boxes_on_a_settings_screen_passes(gate):
    xml = _boxes("Enter the code we sent to your email", title="Two-step verification").replace("¥168.00", "")
    assert decide(gate, xml, Action.type("135790")).verdict is Verdict.ALLOW


def test_a_code_typed_into_boxes_on_a_login_screen_passes(gate):
    xml = _boxes("验证码已发送至 138****8000", title="验证码登录").replace("¥168.00", "登录")
    assert decide(gate, xml, Action.type("135790")).verdict is Verdict.ALLOW


def _captioned_field(caption):
    return tree(
        window(
            n("振込内容の確認", "[160,104][920,204]"),
            n("振込金額  50,000円", "[40,400][1040,470]"),
            n(caption, "[40,560][1040,620]"),
            n("", "[40,640][1040,760]", click=True, focused=True, cls="android.widget.EditText"),
        )
    )


@pytest.mark.parametrize("caption", ["暗証番号", "PIN", "交易密码"])
def test_a_field_is_named_by_the_caption_above_it(gate, caption):
    assert decide(gate, _captioned_field(caption), Action.type("4821")).verdict is Verdict.ASK


def test_a_field_captioned_with_a_harmless_name_passes(gate):
    assert decide(gate, _captioned_field("メモ"), Action.type("4821")).verdict is Verdict.ALLOW


def _pad(*texts):
    keys = "".join(
        n(
            str(d),
            f"[{(d % 3) * 360},{1400 + (d // 3) * 150}][{(d % 3) * 360 + 360},{1550 + (d // 3) * 150}]",
            click=True,
        )
        for d in range(10)
    )
    body = "".join(n(t, f"[40,{300 + 100 * i}][1040,{380 + 100 * i}]") for i, t in enumerate(texts))
    return tree(
        window(
            body,
            keys,
            n("Request", "[40,2250][520,2380]", click=True),
            n("Pay", "[560,2250][1040,2380]", click=True),
        )
    )


def test_an_amount_keypad_types_an_amount_but_a_pin_pad_pays(gate):
    assert tap(gate, _pad("$0"), 540, 1475 + 150).verdict is Verdict.ALLOW
    assert tap(gate, _pad("Enter your PIN", "$25.00"), 540, 1475 + 150).verdict is Verdict.ASK


# -- spans in drawing order --------------------------------------------------------------------------------------
def _spans(chars_right_to_left):
    kids = "".join(
        n(c, f"[{620 - 80 * i},2090][{700 - 80 * i},2170]", cls="android.view.View")
        for i, c in enumerate(chars_right_to_left)
    )
    button = n(bounds="[60,2060][1020,2200]", click=True, cls="android.view.View", kids=kids)
    web = n(
        "收银台",
        "[0,224][1080,2400]",
        cls="android.webkit.WebView",
        kids=n("¥128.00", "[40,300][1040,380]", cls="android.view.View") + button,
    )
    return tree(window(web))


def test_spans_are_read_left_to_right_not_in_tree_order(gate):
    assert tap(gate, _spans("付支认确"), 460, 2130).kind == "pay"  # drawn 确认支付
    assert tap(gate, _spans("消取"), 460, 2130).verdict is Verdict.ALLOW  # drawn 取消
