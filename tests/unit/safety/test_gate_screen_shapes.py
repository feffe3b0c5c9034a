"""The gate on the shapes real screens come in (tests/data/real_viewtrees taught each of these), with the variants
that would break a fix made for one app only: other scripts, traditional Chinese, English, other layouts, and the
benign look-alikes that must still pass."""

import pytest

from mobile_agent.actions import Action, Size
from mobile_agent.apps.registry import load_registry
from mobile_agent.gate.gate import SafetyGate
from mobile_agent.gate.guard import GuardContext, Verdict
from mobile_agent.gate.lexicon import is_yes
from tests.unit.safety.trees import APP, n, tree


def page(*nodes, bounds="[0,0][1080,2400]"):
    return n(bounds=bounds, cls="android.widget.FrameLayout", kids="".join(nodes))


@pytest.fixture(scope="module")
def gate():
    return SafetyGate(registry=load_registry())


def decide(gate, xml, x, y, package=APP, size=(1080, 2400)):
    """The tap at (x, y) with the trees' app nodes belonging to ``package``."""
    xml = xml.replace(f'package="{APP}"', f'package="{package}"')
    ctx = GuardContext("t", Action.tap(x, y), Size(*size), package, 0, hierarchy_source=lambda: xml)
    return gate.check(ctx)


# -- where the touch lands -----------------------------------------------------------------------------------------
def _editor(button_text, button_desc=""):
    """Controls, then a hidden gallery drawer drawn after them over the whole page (takes no touches)."""
    controls = n(
        bounds="[0,0][1080,2400]",
        cls="android.widget.FrameLayout",
        rid="com.example.app:id/post_capture_controls_container",
        kids=n(
            button_text, "[20,140][160,280]", click=True, desc=button_desc, cls="android.widget.ImageView"
        ),
    )
    drawer = n(
        bounds="[0,100][1080,2300]", cls="android.widget.LinearLayout", rid="com.example.app:id/gallery"
    )
    root = n(
        bounds="[0,0][1080,2400]",
        click=True,
        cls="android.widget.FrameLayout",
        rid="com.example.app:id/capture_root_container",
        kids=controls + drawer,
    )
    return tree(root)


def test_an_overlay_that_takes_no_touch_lets_the_tap_through_to_the_control_under_it(gate):
    assert decide(gate, _editor("", "Cancel"), 90, 210).verdict is Verdict.ALLOW
    assert decide(gate, _editor("", "取消"), 90, 210).verdict is Verdict.ALLOW
    # ... and it hides no consequence either: the control under it is what is judged.
    assert decide(gate, _editor("", "Delete"), 90, 210).kind == "delete"
    assert decide(gate, _editor("删除"), 90, 210).kind == "delete"


def test_a_caption_drawn_over_a_button_still_names_it(gate):
    xml = tree(
        page(
            n(bounds="[100,2200][980,2340]", click=True, cls="android.widget.Button"),
            n("立即支付", "[400,2240][680,2300]"),
        )
    )
    assert decide(gate, xml, 540, 2270).kind == "pay"


@pytest.mark.parametrize(
    "rid,expect",
    [
        ("com.kakao.talk:id/select_order", None),  # the order of a pick, not a purchase
        ("com.example.app:id/sort_order", None),
        ("com.example.app:id/post_capture_button_container", None),
        ("com.example.app:id/btn_order", "order"),
        ("com.example.app:id/send_btn", "send"),
    ],
)
def test_layout_words_in_a_resource_id_name_no_action(gate, rid, expect):
    xml = tree(
        page(
            n(
                bounds="[300,1200][700,1600]",
                click=True,
                cls="android.widget.Button",
                rid=rid,
                desc="12월 15일 오후 9:02, 사진",
            )
        )
    )
    assert decide(gate, xml, 500, 1400).kind == expect


# -- a yes that commits a pick ------------------------------------------------------------------------------------
def _picker(title, yes):
    return tree(
        page(
            n(title, "[275,101][445,147]"),
            n("张三", "[100,300][600,380]", click=True),
            n(
                bounds="[0,1396][720,1608]",
                rid="com.example.app:id/bottom_bar",
                cls="android.widget.LinearLayout",
                kids=n(yes, "[530,1526][698,1590]", click=True),
            ),
            bounds="[0,0][720,1608]",
        )
    )


@pytest.mark.parametrize(
    "title,yes",
    [
        ("添加群成员", "确定(1)"),
        ("添加群成員", "確定(1)"),
        ("发起群聊", "完成(2)"),
        ("Add members", "OK (1)"),
        ("Add participants", "Done (3)"),
    ],
)
def test_a_yes_with_a_count_under_an_add_people_title_sends(gate, title, yes):
    assert decide(gate, _picker(title, yes), 614, 1558, size=(720, 1608)).kind == "send"


@pytest.mark.parametrize("title", ["选择图片", "Select photos", "相册"])
def test_the_same_yes_on_a_photo_picker_passes(gate, title):
    assert decide(gate, _picker(title, "确定(1)"), 614, 1558, size=(720, 1608)).verdict is Verdict.ALLOW


def test_a_count_after_a_yes_keeps_it_a_yes():
    assert is_yes("OK (1)") and is_yes("Done（2）") and is_yes("确定(1)") and not is_yes("Delete (1)")


# -- check boxes and switches ---------------------------------------------------------------------------------------
def _toggle_row(label, cls="android.widget.Switch"):
    row = n(
        bounds="[0,330][1080,470]",
        cls="android.widget.LinearLayout",
        kids=n(label, "[40,360][700,440]")
        + n(bounds="[900,360][1040,440]", click=True, checkable=True, cls=cls),
    )
    return tree(page(n("发送", "[880,2230][1050,2320]", click=True, cls="android.widget.Button"), row))


@pytest.mark.parametrize(
    "label,kind", [("免密支付", "pay"), ("免密支付", "pay"), ("Auto-pay", "pay"), ("自動扣款", "pay")]
)
def test_a_switch_is_named_by_its_row(gate, label, kind):
    assert decide(gate, _toggle_row(label), 970, 400).kind == kind


@pytest.mark.parametrize("label", ["Also comment", "同时评论", "记住我", "胡章容 身份证 500***********"])
def test_a_check_box_that_sets_an_option_passes_even_beside_a_send_button(gate, label):
    assert decide(gate, _toggle_row(label, "android.widget.CheckBox"), 970, 400).verdict is Verdict.ALLOW


# -- tabs wrapped one by one ----------------------------------------------------------------------------------------
def _trade(submit):
    tabs = "".join(
        n(
            bounds=f"[{i * 144},132][{i * 144 + 144},212]",
            cls="android.widget.RelativeLayout",
            kids=n(
                t,
                f"[{i * 144},132][{i * 144 + 144},212]",
                click=True,
                selected=i == 0,
                rid="com.hexin.plat.android:id/btn",
            ),
        )
        for i, t in enumerate(["买入", "卖出", "撤单", "持仓", "查询"])
    )
    strip = n(bounds="[0,132][720,212]", cls="android.widget.LinearLayout", kids=tabs)
    form = n("12.42", "[104,358][397,430]", click=True, cls="android.widget.EditText") + n(
        bounds="[32,651][469,734]", click=True, kids=n(submit, "[32,651][469,734]", click=True)
    )
    return tree(page(strip, form, bounds="[0,0][720,1280]"))


@pytest.mark.parametrize("x", [72, 216])
def test_tabs_that_each_sit_in_a_wrapper_are_still_a_strip(gate, x):
    assert (
        decide(gate, _trade("买 入"), x, 172, "com.hexin.plat.android", (720, 1280)).verdict is Verdict.ALLOW
    )


@pytest.mark.parametrize("submit", ["买 入", "卖 出", "确认买入"])
def test_the_forms_own_submit_still_orders(gate, submit):
    assert decide(gate, _trade(submit), 250, 692, "com.hexin.plat.android", (720, 1280)).kind == "order"


# -- one-button notices ---------------------------------------------------------------------------------------------
def _window_dialog(*texts, buttons=("确定",)):
    body = "".join(n(t, f"[80,{600 + 60 * i}][639,{650 + 60 * i}]") for i, t in enumerate(texts))
    width = 559 // len(buttons)
    btns = "".join(
        n(b, f"[{80 + i * width},718][{80 + (i + 1) * width},806]", click=True, cls="android.widget.Button")
        for i, b in enumerate(buttons)
    )
    dialog = n(bounds="[80,510][639,806]", cls="android.widget.FrameLayout", kids=body + btns)
    status = n(
        bounds="[0,0][720,36]",
        pkg="com.android.systemui",
        cls="android.widget.FrameLayout",
        kids=n("4:56", "[21,0][100,36]", pkg="com.android.systemui"),
    )
    return tree(status, dialog)


@pytest.mark.parametrize(
    "texts",
    [
        ("系统信息", "当前时间不允许委托"),
        ("系統信息", "當前時間不允許委託"),
        ("提示", "支付失败，请稍后重试"),
        ("Notice", "Transfer failed. Try again later."),
    ],
)
def test_acknowledging_a_refusal_does_nothing(gate, texts):
    assert decide(gate, _window_dialog(*texts), 359, 762, size=(720, 1280)).verdict is Verdict.ALLOW


@pytest.mark.parametrize(
    "texts,buttons,kind",
    [
        (("委托确认", "买入 603936 博敏电子 100股"), ("取消", "确定"), "order"),
        (("删除后无法恢复",), ("确定",), "delete"),
        (("转账确认", "向王五转账 ¥500.00"), ("确定",), "transfer"),
        (("This cannot be undone. Delete chat?",), ("Cancel", "OK"), "delete"),
    ],
)
def test_a_confirmation_in_its_own_window_takes_its_kind(gate, texts, buttons, kind):
    x = 80 + (559 // len(buttons)) * (len(buttons) - 1) + 40
    assert decide(gate, _window_dialog(*texts, buttons=buttons), x, 762, size=(720, 1280)).kind == kind


def test_a_notice_window_over_a_payment_page_reads_only_its_own_words(gate):
    pay_page = page(n("确认支付 ¥99.00", "[40,900][1040,1000]"), bounds="[0,0][720,1280]")
    notice = n(
        bounds="[80,510][639,806]",
        cls="android.widget.FrameLayout",
        kids=n("已保存", "[80,600][639,650]") + n("确定", "[80,718][639,806]", click=True),
    )
    assert decide(gate, tree(pay_page, notice), 359, 762, size=(720, 1280)).verdict is Verdict.ALLOW


# -- bars that are not dialogs -------------------------------------------------------------------------------------
def _chat_bar(extra_text=""):
    stub = n(bounds="[11,2058][925,2194]", rid="com.whatsapp:id/voice_note_stub", cls="android.view.View")
    bar = n(
        bounds="[11,2058][925,2194]",
        rid="com.whatsapp:id/input_layout",
        cls="android.widget.LinearLayout",
        kids=n(
            "", "[135,2080][533,2170]", click=True, cls="android.widget.EditText", rid="com.whatsapp:id/entry"
        )
        + n(
            bounds="[669,2061][793,2193]",
            click=True,
            cls="android.widget.ImageButton",
            desc="Payment",
            rid="com.whatsapp:id/payment_button",
        ),
    )
    footer = n(
        bounds="[0,2049][1080,2205]",
        rid="com.whatsapp:id/emoji_popup_anchor",
        cls="android.widget.LinearLayout",
        kids=stub + bar,
    )
    background = n(
        bounds="[0,238][1080,2205]",
        rid="com.whatsapp:id/conversation_background",
        cls="android.widget.ImageView",
    )
    layout = n(
        bounds="[0,238][1080,2205]",
        rid="com.whatsapp:id/conversation_layout",
        cls="android.widget.RelativeLayout",
        kids=n(extra_text, "[48,300][700,400]") + footer,
    )
    return tree(page(background, layout, bounds="[0,0][1080,2340]"))


def test_a_payments_entry_in_a_chat_bar_is_not_a_payment(gate):
    assert decide(gate, _chat_bar(), 731, 2127, "com.whatsapp", (1080, 2340)).verdict is Verdict.ALLOW


def test_the_same_entry_with_an_amount_on_screen_asks(gate):
    assert (
        decide(gate, _chat_bar("Request ₹500.00 · $25.00"), 731, 2127, "com.whatsapp", (1080, 2340)).kind
        == "pay"
    )


# -- publish buttons that only open the composer -------------------------------------------------------------------
def _feed(fab_label, with_editor=False):
    row = n(
        bounds="[138,2381][1200,2513]",
        cls="android.view.View",
        kids="".join(
            n(
                bounds=f"[{138 + i * 211},2381][{349 + i * 211},2513]",
                click=True,
                cls="android.view.View",
                kids=n(t, f"[{160 + i * 211},2420][{330 + i * 211},2470]"),
            )
            for i, t in enumerate(["Reply", "Repost", "Like", "Views", "Share"])
        ),
    )
    fab = n(
        bounds="[984,2312][1152,2480]",
        click=True,
        cls="android.view.View",
        kids=n(fab_label, "[1000,2330][1130,2460]"),
    )
    editor = (
        n("What is happening?", "[40,300][1040,600]", click=True, cls="android.widget.EditText")
        if with_editor
        else ""
    )
    return tree(
        page(
            n("Search deepseek", "[168,158][1032,302]", click=True, cls="android.view.View"),
            row,
            editor,
            fab,
            bounds="[0,0][1200,2670]",
        )
    )


@pytest.mark.parametrize("label,x", [("Repost", 454), ("转发", 454), ("Retweet", 454)])
def test_a_repost_in_a_posts_action_row_opens_the_sheet(gate, label, x):
    xml = _feed("Post").replace(">Repost<", f">{label}<").replace('text="Repost"', f'text="{label}"')
    assert decide(gate, xml, x, 2400, "com.twitter.android", (1200, 2670)).verdict is Verdict.ALLOW


@pytest.mark.parametrize("label", ["Post", "发布", "New post"])
def test_a_floating_post_button_over_a_feed_opens_the_composer(gate, label):
    assert (
        decide(gate, _feed(label), 1068, 2350, "com.twitter.android", (1200, 2670)).verdict is Verdict.ALLOW
    )


def test_the_post_button_of_a_composer_publishes(gate):
    assert (
        decide(gate, _feed("Post", with_editor=True), 1068, 2350, "com.twitter.android", (1200, 2670)).kind
        == "post"
    )


def test_a_fixed_post_button_on_a_page_with_no_field_still_publishes(gate):
    # A web composer whose text is drawn as plain views: the button is not floating over anything.
    xml = tree(
        page(
            n("Create post", "[40,250][600,340]"),
            n(
                bounds="[860,250][1040,340]",
                click=True,
                cls="android.widget.Button",
                kids=n("Post", "[900,270][1000,320]"),
            ),
        )
    )
    assert decide(gate, xml, 950, 295, "com.android.chrome").kind == "post"


# -- who will see it ------------------------------------------------------------------------------------------------
def _share_bar(label, bar_id):
    bar = n(
        bounds="[36,1608][1044,1740]",
        click=True,
        cls="android.view.ViewGroup",
        rid=f"com.instagram.android:id/{bar_id}",
        kids=n(
            bounds="[36,1608][456,1740]",
            click=True,
            cls="android.widget.Button",
            desc=label,
            kids=n(label, "[117,1638][374,1710]"),
        ),
    )
    return tree(page(bar, bounds="[0,0][1080,1920]"))


@pytest.mark.parametrize("label", ["Your story", "Close Friends", "你的快拍"])
def test_an_audience_button_in_a_share_bar_publishes(gate, label):
    assert (
        decide(
            gate,
            _share_bar(label, "story_share_controls_action_bar"),
            246,
            1674,
            "com.instagram.android",
            (1080, 1920),
        ).kind
        == "post"
    )


def test_your_story_in_the_stories_tray_opens_the_camera(gate):
    assert (
        decide(
            gate,
            _share_bar("Your story", "reels_tray_container"),
            246,
            1674,
            "com.instagram.android",
            (1080, 1920),
        ).verdict
        is Verdict.ALLOW
    )


# -- the on-screen keyboard ------------------------------------------------------------------------------------------
IME = "com.google.android.inputmethod.latin"


def _with_keyboard(key_desc):
    app = page(
        n(
            bounds="[837,98][969,230]",
            click=True,
            desc="Send",
            rid="com.google.android.gm:id/send",
            pkg="com.google.android.gm",
        ),
        n(
            "Compose email",
            "[44,761][1039,816]",
            click=True,
            cls="android.widget.EditText",
            pkg="com.google.android.gm",
        ),
        bounds="[0,0][1080,2340]",
    )
    keys = n(
        bounds="[0,1550][1080,2220]",
        pkg=IME,
        cls="android.widget.FrameLayout",
        kids=n(
            bounds="[913,2017][1074,2178]",
            click=True,
            desc=key_desc,
            pkg=IME,
            cls="android.widget.FrameLayout",
            rid=f"{IME}:id/key_pos_del",
        )
        + n(bounds="[432,1696][539,1856]", click=True, desc="t", pkg=IME, cls="android.widget.FrameLayout"),
    )
    return tree(app, keys)


@pytest.mark.parametrize("key", ["Delete", "删除", "Next", "下一步", "Search", "搜索"])
def test_keyboard_keys_only_type_move_the_focus_or_search(gate, key):
    assert (
        decide(gate, _with_keyboard(key), 993, 2097, "com.google.android.gm", (1080, 2340)).verdict
        is Verdict.ALLOW
    )


@pytest.mark.parametrize("key", ["Send", "发送", "Done", "完成", "Go", "前往"])
def test_a_keyboards_action_key_submits_the_field_like_enter(gate, key):
    assert decide(gate, _with_keyboard(key), 993, 2097, "com.google.android.gm", (1080, 2340)).kind == "send"


def test_an_app_named_like_a_keyboard_is_judged_as_an_app(gate):
    xml = tree(
        page(
            n(
                bounds="[300,1200][700,1320]",
                click=True,
                cls="android.widget.Button",
                desc="Delete",
                pkg="com.evil.keyboard",
            )
        )
    )
    assert decide(gate, xml, 500, 1260, "com.evil.keyboard").kind == "delete"


# -- amounts on cards, paper planes, page-sized containers ----------------------------------------------------------
@pytest.mark.parametrize(
    "label,expect",
    [
        ("¥99.00", "pay"),
        ("¥99.00 确认", "pay"),
        ("$25.00", "pay"),
        ("零钱 ¥25.00 余额 查看明细", None),
        ("Основной счёт 10 ₽ Bank Card 0813", None),
        ("Checking account $1,204.33 Savings $220.00", None),
    ],
)
def test_a_control_that_is_its_price_pays_but_a_balance_card_does_not(gate, label, expect):
    xml = tree(
        page(
            n(label, "[32,170][1048,520]", click=True, cls="android.widget.Button"),
            n("收银台", "[40,100][400,160]"),
        )
    )
    assert decide(gate, xml, 540, 345).kind == expect


@pytest.mark.parametrize("label", ["Send post", "Enviar post", "Share post", "分享给朋友"])
def test_the_paper_plane_in_a_posts_action_row_opens_the_recipient_pick(gate, label):
    row = "".join(
        n(
            bounds=f"[{20 + i * 120},1307][{120 + i * 120},1373]",
            click=True,
            cls="android.view.ViewGroup",
            desc=t,
        )
        for i, t in enumerate(["Like", "Comment", label, "Save"])
    )
    xml = tree(
        page(
            n(bounds="[0,1307][720,1373]", cls="android.widget.LinearLayout", kids=row),
            bounds="[0,0][720,1483]",
        )
    )
    assert decide(gate, xml, 310, 1340, size=(720, 1483)).verdict is Verdict.ALLOW


def test_send_in_a_chat_input_row_still_sends(gate):
    row = n("", "[100,2200][700,2300]", click=True, cls="android.widget.EditText") + "".join(
        n(
            bounds=f"[{700 + i * 120},2200][{820 + i * 120},2300]",
            click=True,
            cls="android.widget.ImageButton",
            desc=t,
        )
        for i, t in enumerate(["Emoji", "Attach", "Send"])
    )
    xml = tree(page(n(bounds="[0,2200][1080,2300]", cls="android.widget.LinearLayout", kids=row)))
    assert decide(gate, xml, 1000, 2250).kind == "send"


def test_a_page_wrapped_in_a_keyboard_layout_is_not_a_dialog(gate):
    strip = "".join(
        n(
            bounds=f"[{60 + i * 180},223][{240 + i * 180},355]",
            click=True,
            cls="android.widget.RelativeLayout",
            kids=n(t, f"[{80 + i * 180},260][{220 + i * 180},320]"),
        )
        for i, t in enumerate(["回复 41", "赞", "转发", "收藏 1"])
    )
    body = n(bounds="[60,223][804,355]", cls="android.widget.LinearLayout", kids=strip)
    wrapper = n(
        bounds="[0,81][1080,2259]",
        cls="android.widget.RelativeLayout",
        rid="com.douban.frodo:id/keyboard_container_layout",
        kids=body,
    )
    assert (
        decide(gate, tree(page(wrapper, bounds="[0,0][1080,2340]")), 510, 289, size=(1080, 2340)).verdict
        is Verdict.ALLOW
    )
