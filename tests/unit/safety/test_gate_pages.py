"""The gate reads what a whole page says its main button does: a review page that states an amount and a payee, a
price that renews, a receipt of something already done, a carousel, the system share sheet, a request to share a
phone number or a location, a drag onto a drop target, a slider under a price, a password field outside a payment,
a long press on a list row, a call medium beside Call, Share on a composer. Each with the variants that would break
it and the look-alikes that must pass. (Taught by tests/data/safety_attacks/cases_round3.yaml; no tree is copied
from there.)"""

import pytest

from mobile_agent.actions import Action, ActionKind, Point
from mobile_agent.gate.guard import Verdict
from tests.unit.safety.trees import APP, decide, n, tree

MAIN = "[60,2160][1020,2300]"  # a page's wide bottom button
BTN = "android.widget.Button"


def window(*nodes, pkg=APP):
    return n(bounds="[0,0][1080,2400]", cls="android.widget.FrameLayout", pkg=pkg, kids="".join(nodes))


def page(title, *lines, button="", pkg=APP, rid=""):
    """A page: a title bar, lines of text top to bottom, and (``button``) a wide main button at the bottom."""
    body = [n(title, "[160,104][700,204]", pkg=pkg, rid=f"{pkg}:id/title")]
    body += [n(t, f"[40,{300 + 100 * i}][1040,{380 + 100 * i}]", pkg=pkg) for i, t in enumerate(lines)]
    if button:
        body.append(n(button, MAIN, click=True, cls=BTN, pkg=pkg, rid=rid))
    return window(*body, pkg=pkg)


def kind(gate, xml, action=None, package=APP):
    d = decide(gate, xml, action or Action.tap(540, 2230), package)
    return None if d.verdict is Verdict.ALLOW else d.kind


# -- a review page's main button commits the amount it states, in any app, whatever the button says ---------------
@pytest.mark.parametrize(
    "title,lines,button,expect",
    [
        ("Review", ["From: Brokerage ••1120", "To: Checking ••8841", "$5,000.00"], "Xfer", "pay"),
        ("Review", ["Recipient: J. Doe", "€120.00"], "Go", "pay"),
        ("确认信息", ["收款人：王五", "¥2,000.00"], "好的", "pay"),
        ("Confirm", ["Account xxx-x-x1234-x", "฿1,500.00"], "OK!", "pay"),
        ("转账", ["张三", "¥300.00"], "下一步吧", "transfer"),
        ("Review", ["To: Alex", "$5.00"], "确认", "pay"),  # a plain yes too
    ],
)
def test_the_main_button_of_a_review_page_commits_its_amount(gate, title, lines, button, expect):
    found = kind(gate, tree(page(title, *lines, button=button)))
    assert found == expect or (
        expect == "pay" and found in ("pay", "transfer")
    )  # a payee's page may say transfer


@pytest.mark.parametrize(
    "title,lines,button",
    [
        ("Product", ["Backpack", "$49.00"], "Details"),  # a price, nobody paid
        ("Review", ["To: Checking ••8841", "$5,000.00"], "Cancel"),  # a no is a no
        ("Prices", ["To: Alex", "$1.00", "$2.00", "$3.00", "$4.00"], "More"),  # a list of prices
        ("Review", ["To: Checking ••8841"], "Xfer"),  # no amount stated
    ],
)
def test_a_page_button_without_a_stated_payment_passes(gate, title, lines, button):
    assert kind(gate, tree(page(title, *lines, button=button))) is None


def test_a_row_of_a_form_on_a_review_page_is_no_main_button(gate):
    row = n(
        kids=n("To: Checking ••8841", "[40,430][1000,490]") + n("Change account", "[40,500][1000,560]"),
        bounds="[0,420][1080,580]",
        click=True,
        cls="android.widget.LinearLayout",
    )
    xml = tree(window(n("Review", "[160,104][700,204]"), n("$5,000.00", "[40,300][1040,380]"), row))
    assert kind(gate, xml, Action.tap(540, 500)) is None


# -- a price that renews makes the button that starts it an order ---------------------------------------------------
@pytest.mark.parametrize(
    "lines,button",
    [
        (["1 month free", "€10.99/month after", "Cancel anytime"], "Start my free month"),
        (["首月免费", "之后 ¥25/月"], "立即体验"),
        (["7 days free", "then $59.99 per year"], "Try it free"),
        (["¥15 首月", "到期自动续费，可随时取消"], "开通"),
    ],
)
def test_a_button_under_a_renewing_price_orders(gate, lines, button):
    assert kind(gate, tree(page("Premium", *lines, button=button))) == "order"


def test_a_free_trial_that_states_no_price_passes(gate):
    assert (
        kind(gate, tree(page("Premium", "1 month free", "No card needed", button="Start my free month")))
        is None
    )


# -- a receipt reports a past event; a carousel's copy is not its button's action -----------------------------------
@pytest.mark.parametrize(
    "title,lines,button",
    [
        ("支付成功", ["滴滴出行", "¥36.50", "已支付"], "完成"),
        ("转账成功", ["王五  6222 **** 1234", "¥2,000.00"], "完成"),
        ("Payment sent", ["To: Alex ••1234", "$40.00"], "Done"),
        ("You've got money", ["Maria sent you $250.00", "Added to your balance"], "Continue"),
        ("下单成功", ["实付 ¥1,299.00"], "继续逛逛"),
    ],
)
def test_the_button_of_a_receipt_passes(gate, title, lines, button):
    assert kind(gate, tree(page(title, *lines, button=button))) is None


def test_a_receipt_still_asks_for_a_named_action(gate):
    assert kind(gate, tree(page("支付成功", "¥36.50", button="删除记录"))) == "delete"


def test_a_note_of_an_earlier_success_does_not_make_a_review_page_a_receipt(gate):
    assert (
        kind(gate, tree(page("确认转账", "收款人：王五", "¥300.00", "上次转账成功", button="确认")))
        is not None
    )


@pytest.mark.parametrize("dots", ["● ○ ○", "○ ● ○", "• • •"])
def test_continue_on_a_carousel_passes_whatever_its_copy_says(gate, dots):
    xml = tree(
        page("Welcome", "Split bills with friends", "Pay and get paid in a tap", dots, button="Continue")
    )
    assert kind(gate, xml) is None


def test_continue_on_a_payment_page_without_dots_still_asks(gate):
    assert kind(gate, tree(page("Pay Alex", "Pay $40.00 to Alex", button="Continue"))) is not None


# -- a dialog over a page that names what already happened ----------------------------------------------------------
def _dialog_over(title, message, yes="好", no="不了"):
    card = n(
        kids=n(message, "[160,1060][920,1320]", rid="android:id/message")
        + n(no, "[560,1380][780,1500]", click=True, cls=BTN, rid="android:id/button2")
        + n(yes, "[800,1380][1000,1500]", click=True, cls=BTN, rid="android:id/button1"),
        bounds="[100,880][980,1540]",
        cls="android.widget.FrameLayout",
        rid="android:id/parentPanel",
    )
    return tree(page(title, "已选择 5 项"), window(card))


def test_restoring_from_recently_deleted_passes(gate):
    assert kind(gate, _dialog_over("最近删除", "确定恢复这5张照片吗？"), Action.tap(900, 1440)) is None


def test_deleting_for_good_from_recently_deleted_still_asks(gate):
    assert (
        kind(gate, _dialog_over("最近删除", "确定永久删除这5张照片吗？"), Action.tap(900, 1440)) == "delete"
    )


def test_a_dialog_under_a_delete_page_still_takes_its_kind(gate):
    assert kind(gate, _dialog_over("删除成员", "确定将「李四」移出群聊？"), Action.tap(900, 1440)) == "delete"


# -- the system share sheet ----------------------------------------------------------------------------------------
def _chooser(pkg="com.android.intentresolver", rid_prefix=None):
    rp = rid_prefix or f"{pkg}:id/"

    def target(x, y, *labels):
        kids = n(bounds=f"[{x + 60},{y + 10}][{x + 180},{y + 130}]", cls="android.widget.ImageView", pkg=pkg)
        kids += "".join(
            n(t, f"[{x},{y + 140 + 60 * i}][{x + 240},{y + 200 + 60 * i}]", pkg=pkg, rid=f"{rp}text{i + 1}")
            for i, t in enumerate(labels)
        )
        return n(
            kids=kids,
            bounds=f"[{x},{y}][{x + 240},{y + 270}]",
            click=True,
            pkg=pkg,
            rid=f"{rp}chooser_target",
        )

    sheet = n(
        kids=n("Share 1 image", "[40,1240][1040,1300]", pkg=pkg)
        + target(40, 1330, "妈妈", "微信")
        + target(290, 1330, "Alex", "Messages")
        + target(40, 1700, "Nearby Share")
        + target(290, 1700, "Gmail")
        + target(540, 1700, "Copy"),
        bounds="[0,1200][1080,2400]",
        cls="android.widget.LinearLayout",
        pkg=pkg,
        rid=f"{rp}contentPanel",
    )
    photos = "com.google.android.apps.photos"
    return tree(
        window(n("IMG_2031.jpg", "[40,300][1040,400]", pkg=photos), pkg=photos), window(sheet, pkg=pkg)
    )


@pytest.mark.parametrize("pkg,prefix", [("com.android.intentresolver", None), ("android", "android:id/")])
@pytest.mark.parametrize("point", [(160, 1460), (410, 1500)])
def test_a_direct_share_target_sends(gate, pkg, prefix, point):
    assert kind(gate, _chooser(pkg, prefix), Action.tap(*point), "com.google.android.apps.photos") == "send"


@pytest.mark.parametrize("point", [(160, 1830), (410, 1830), (660, 1830)])
def test_an_app_target_of_the_share_sheet_only_opens_the_app(gate, point):
    assert kind(gate, _chooser(), Action.tap(*point), "com.google.android.apps.photos") is None


def _aosp_chooser(pkg="com.android.intentresolver", rid="com.android.intentresolver:id/chooser_target"):
    """AOSP's shape: every target one line (a person's name under a badged avatar, or an app's name); the people
    in the top row, the apps below."""

    def target(x, y, label):
        kids = n(bounds=f"[{x + 60},{y + 10}][{x + 180},{y + 130}]", cls="android.widget.ImageView", pkg=pkg)
        kids += n(label, f"[{x},{y + 140}][{x + 240},{y + 200}]", pkg=pkg)
        return n(kids=kids, bounds=f"[{x},{y}][{x + 240},{y + 270}]", click=True, pkg=pkg, rid=rid)

    cells = [
        target(40, 1330, "Alex Kim"),
        target(290, 1330, "妈妈"),
        target(40, 1700, "Gmail"),
        target(290, 1700, "Drive"),
    ]
    sheet = n(kids="".join(cells), bounds="[0,1200][1080,2400]", cls="android.widget.LinearLayout", pkg=pkg)
    photos = "com.google.android.apps.photos"
    return tree(window(n("IMG_1.jpg", "[40,300][1040,400]", pkg=photos), pkg=photos), window(sheet, pkg=pkg))


@pytest.mark.parametrize(
    "point,expect", [((160, 1460), "send"), ((410, 1460), "send"), ((160, 1830), None), ((410, 1830), None)]
)
def test_aosp_share_sheet_people_in_the_top_row_send_apps_below_open(gate, point, expect):
    assert kind(gate, _aosp_chooser(), Action.tap(*point), "com.google.android.apps.photos") == expect


def test_open_with_lists_of_apps_are_no_share_sheet(gate):
    xml = _aosp_chooser(pkg="android", rid="android:id/resolver_item")
    assert kind(gate, xml, Action.tap(160, 1460), "com.google.android.apps.photos") is None


def test_two_line_rows_outside_a_share_sheet_are_no_share_targets(gate):
    xml = _chooser(pkg="com.google.android.apps.photos")
    assert kind(gate, xml, Action.tap(160, 1460), "com.google.android.apps.photos") is None


# -- sharing a phone number or a location --------------------------------------------------------------------------
def _alert(title, message, yes="OK", no="Cancel"):
    card = n(
        kids=n(title, "[160,940][920,1010]", rid="android:id/alertTitle")
        + n(message, "[160,1060][920,1320]", rid="android:id/message")
        + n(no, "[560,1380][780,1500]", click=True, cls=BTN, rid="android:id/button2")
        + n(yes, "[800,1380][1000,1500]", click=True, cls=BTN, rid="android:id/button1"),
        bounds="[100,880][980,1540]",
        cls="android.widget.FrameLayout",
        rid="android:id/parentPanel",
    )
    return tree(window(n("Chat", "[160,104][700,204]")), window(card))


@pytest.mark.parametrize(
    "title,yes",
    [
        ("Share your phone number?", "OK"),
        ("Share my location?", "Allow"),
        ("共享位置", "确定"),
        ("分享您的手机号给对方？", "好"),
        ("Share your live location?", "Share"),
    ],
)
def test_a_yes_to_sharing_personal_data_sends(gate, title, yes):
    assert kind(gate, _alert(title, "The other side will see it.", yes=yes), Action.tap(900, 1440)) == "send"


@pytest.mark.parametrize("title", ["Rate this app?", "Turn on location?", "Share feedback?"])
def test_a_yes_to_something_else_passes(gate, title):
    assert kind(gate, _alert(title, "You can change this later."), Action.tap(900, 1440)) is None


def test_share_on_a_location_sharing_page_sends(gate):
    xml = tree(page("Share location", "For 1 hour", "Bob Smith  bob@example.com", button="Share"))
    assert kind(gate, xml) == "send"


def test_share_in_a_viewer_toolbar_opens_the_share_sheet(gate):
    xml = tree(window(n("IMG_1.jpg", "[160,104][700,204]"), n("Share", "[860,94][1060,214]", click=True)))
    assert kind(gate, xml, Action.tap(960, 154)) is None


# -- Share on a composer publishes --------------------------------------------------------------------------------
def _composer(caption):
    edit = n(
        caption,
        "[240,260][1040,500]",
        cls="android.widget.EditText",
        rid=f"{APP}:id/caption",
        hint="Write a caption…",
    )
    return tree(
        window(n("New post", "[160,104][700,204]"), n("Share", "[860,94][1060,214]", click=True), edit)
    )


def test_share_on_a_filled_composer_posts(gate):
    assert kind(gate, _composer("Sunset at the beach"), Action.tap(960, 154)) == "post"


def test_share_on_an_empty_composer_is_not_read_as_a_post(gate):
    assert kind(gate, _composer(""), Action.tap(960, 154)) is None


# -- a drag is read where it ends --------------------------------------------------------------------------------
def _home(zones, pkg="com.google.android.apps.nexuslauncher"):
    bar = "".join(
        n(t, f"[{100 + 480 * i},120][{500 + 480 * i},260]", click=True, pkg=pkg, desc=t)
        for i, t in enumerate(zones)
    )
    icons = "".join(
        n(t, f"[{40 + 260 * i},1900][{280 + 260 * i},2140]", click=True, pkg=pkg, long_clickable=True, desc=t)
        for i, t in enumerate(["Phone", "Messages", "WeChat", "Alipay"])
    )
    return tree(
        window(
            n(kids=bar, bounds="[0,84][1080,300]", pkg=pkg),
            n(kids=icons, bounds="[0,300][1080,2300]", pkg=pkg),
            pkg=pkg,
        )
    )


@pytest.mark.parametrize(
    "zones,end",
    [(["Remove", "Uninstall"], (800, 190)), (["移除", "卸载"], (800, 190)), (["Uninstall"], (300, 190))],
)
def test_a_drag_onto_an_uninstall_zone_deletes(gate, zones, end):
    a = Action(ActionKind.DRAG, point=Point(680, 2020), end=Point(*end), duration_ms=1200)
    assert kind(gate, _home(zones), a, "com.google.android.apps.nexuslauncher") == "delete"


def test_a_drag_onto_a_launchers_remove_zone_only_takes_the_shortcut_off(gate):
    a = Action(ActionKind.DRAG, point=Point(680, 2020), end=Point(300, 190), duration_ms=1200)
    assert kind(gate, _home(["Remove", "Uninstall"]), a, "com.google.android.apps.nexuslauncher") is None


def test_a_drag_onto_a_delete_zone_in_a_file_app_deletes(gate):
    xml = tree(
        window(
            n("Delete", "[100,120][980,260]", click=True), n("report.pdf", "[40,1900][1040,2100]", click=True)
        )
    )
    a = Action(ActionKind.DRAG, point=Point(540, 2000), end=Point(540, 190), duration_ms=1200)
    assert kind(gate, xml, a) == "delete"


def test_a_quick_scroll_that_ends_over_uninstall_is_no_drop(gate):
    a = Action.swipe(680, 2020, 800, 190, duration_ms=200)
    assert kind(gate, _home(["Remove", "Uninstall"]), a, "com.google.android.apps.nexuslauncher") is None


def test_a_drag_that_ends_on_the_workspace_passes(gate):
    a = Action(ActionKind.DRAG, point=Point(680, 2020), end=Point(540, 1200), duration_ms=1200)
    assert kind(gate, _home(["Remove", "Uninstall"]), a, "com.google.android.apps.nexuslauncher") is None


# -- a slider under a price -----------------------------------------------------------------------------------------
def _slider(label, *lines):
    track = n(
        kids=n(
            bounds="[70,2170][230,2290]",
            click=True,
            cls="android.widget.ImageView",
            rid=f"{APP}:id/slider_thumb",
        )
        + n(label, "[300,2200][900,2260]"),
        bounds=MAIN,
        cls="android.widget.FrameLayout",
        rid=f"{APP}:id/slider_track",
    )
    return tree(page("Choose a ride", *lines), window(track))


@pytest.mark.parametrize("label", ["Swipe to request UberX", "Slide to see more", "右滑继续"])
def test_a_slider_on_a_priced_page_orders(gate, label):
    assert (
        kind(gate, _slider(label, "UberX  4 min  $23.40", "Visa ••4242"), Action.swipe(150, 2230, 980, 2230))
        == "order"
    )


def test_a_slider_with_no_price_on_the_page_passes(gate):
    assert (
        kind(gate, _slider("Slide to see more", "UberX  4 min"), Action.swipe(150, 2230, 980, 2230)) is None
    )


# -- a password field is a payment secret only under a payment -------------------------------------------------------
def _password_dialog(title, *lines, hint="Password"):
    field_ = n(
        "",
        "[160,1100][920,1220]",
        cls="android.widget.EditText",
        rid="com.android.settings:id/password",
        password=True,
        focused=True,
        click=True,
        hint=hint,
    )
    body = "".join(n(t, f"[160,{940 + 60 * i}][920,{990 + 60 * i}]") for i, t in enumerate([title, *lines]))
    return tree(window(n(kids=body + field_, bounds="[100,880][980,1540]", cls="android.widget.FrameLayout")))


def test_a_wifi_password_is_no_payment(gate):
    assert kind(gate, _password_dialog("HomeNet-5G"), Action.type("hunter2024")) is None


@pytest.mark.parametrize(
    "title,lines,hint",
    [("Confirm payment", ["$25.00"], "Password"), ("HomeNet-5G", [], "支付密码"), ("Card", [], "CVV")],
)
def test_a_password_under_a_payment_or_named_for_paying_pays(gate, title, lines, hint):
    assert kind(gate, _password_dialog(title, *lines, hint=hint), Action.type("123456")) == "pay"


# -- a long press on a list row selects it ---------------------------------------------------------------------------
def _inbox(*subjects):
    rows = "".join(
        n(
            kids=n("Chen Wei", f"[180,{250 + 220 * i}][900,{310 + 220 * i}]")
            + n(s, f"[180,{320 + 220 * i}][1040,{380 + 220 * i}]"),
            bounds=f"[0,{224 + 220 * i}][1080,{444 + 220 * i}]",
            click=True,
            long_clickable=True,
            cls="android.widget.FrameLayout",
            desc=f"Chen Wei, {s}",
        )
        for i, s in enumerate(subjects)
    )
    lst = n(
        kids=rows,
        bounds="[0,224][1080,2400]",
        cls="androidx.recyclerview.widget.RecyclerView",
        scrollable=True,
    )
    return tree(window(n("Inbox", "[160,104][700,204]"), lst))


def test_a_long_press_on_a_mail_row_selects_it_whatever_its_subject(gate):
    xml = _inbox("Delete the old contract", "Your payment of $1,200 is due", "Sunday lunch")
    assert kind(gate, xml, Action.long_press(540, 334)) is None


def test_a_long_press_on_a_delete_button_still_asks(gate):
    xml = tree(window(n("Delete", "[40,2160][1040,2300]", click=True, cls=BTN, long_clickable=True)))
    assert kind(gate, xml, Action.long_press(540, 2230)) == "delete"


# -- a call medium beside Call -----------------------------------------------------------------------------------
def _actions(*labels):
    cells = "".join(
        n(
            kids=n(t, f"[{110 + 310 * i},810][{350 + 310 * i},870]"),
            bounds=f"[{90 + 310 * i},700][{370 + 310 * i},900]",
            click=True,
            cls="android.widget.LinearLayout",
        )
        for i, t in enumerate(labels)
    )
    return tree(
        window(
            n("Mom", "[0,400][1080,520]"),
            n(kids=cells, bounds="[0,680][1080,920]", cls="android.widget.LinearLayout"),
        )
    )


@pytest.mark.parametrize("labels", [("Call", "Text", "Video"), ("拨打电话", "信息", "视频")])
def test_video_beside_call_places_a_call(gate, labels):
    assert kind(gate, _actions(*labels), Action.tap(850, 840)) == "call"


def test_video_beside_no_call_is_a_tab_or_a_player(gate):
    assert kind(gate, _actions("Photos", "Albums", "Video"), Action.tap(850, 840)) is None


# -- a row of a statement is the record of money that moved -------------------------------------------------------
def _bill(*rows, signed=True):
    cells = "".join(
        n(
            kids=n(name, f"[140,{260 + 180 * i}][700,{320 + 180 * i}]")
            + n(sum_ if signed else sum_.lstrip("+-"), f"[760,{260 + 180 * i}][1040,{320 + 180 * i}]"),
            bounds=f"[0,{240 + 180 * i}][1080,{400 + 180 * i}]",
            click=True,
            cls="android.widget.LinearLayout",
        )
        for i, (name, sum_) in enumerate(rows)
    )
    lst = n(kids=cells, bounds="[0,224][1080,2400]", cls="android.widget.ListView")
    return tree(window(n("账单", "[0,84][1080,224]"), lst))


def test_a_row_of_a_bill_opens_its_record(gate):
    xml = _bill(("转账-王五", "-500.00"), ("美团外卖", "-36.80"), ("退款-淘宝", "+128.00"))
    assert kind(gate, xml, Action.tap(400, 290)) is None


def test_a_list_of_actions_without_signed_sums_still_asks(gate):
    xml = _bill(("转账给王五", "500.00"), ("转账给李四", "36.80"), signed=False)
    assert kind(gate, xml, Action.tap(400, 290)) == "transfer"


# -- only the page's last wide button is its commit; a link to another page is none ----------------------------------
def test_a_wide_link_above_the_pay_button_opens_its_page(gate):
    xml = tree(
        window(
            n("收银台", "[160,104][700,204]"),
            n("收款方：美团", "[40,300][1040,380]"),
            n("¥32.50", "[40,400][1040,480]"),
            n("订单详情", "[60,736][1020,836]", click=True),
            n("Pay", MAIN, click=True, cls=BTN),
        )
    )
    assert kind(gate, xml, Action.tap(540, 788)) is None
    assert kind(gate, xml) == "pay"


@pytest.mark.parametrize("label", ["More details >", "订单详情 ›"])
def test_a_main_button_that_leads_elsewhere_is_no_commit(gate, label):
    assert kind(gate, tree(page("Review", "To: Alex ••1234", "$40.00", button=label))) is None
