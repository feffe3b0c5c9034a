"""The rules first-sight round 2 drove, each as a rule on trees of its own (none copied from round2.yaml): the
device's protection as a kind of its own (security), surfaces that act by themselves (a number row and a held digit
in a phone app, quick replies, a macro's Run), panes and windows (a foldable's pane has its own bottom bar, a
picture-in-picture window takes the touch), right-to-left screens read in their mirror image, a one-time code
judged by its form, a terminal's line judged by its command, a no however it is worded, fine print under the main
button, a button that states its own price, and the unnamed controls of a drawn surface."""

import pytest

from mobile_agent.actions import Action
from mobile_agent.errors import UserError
from mobile_agent.gate.gate import SafetyGate
from mobile_agent.gate.guard import Verdict
from mobile_agent.gate.policy import POLICY_HINT, parse_policy
from mobile_agent.gate.terminal import command_finding
from tests.unit.safety.trees import APP, decide, n, tree

BTN = "android.widget.Button"
SETTINGS = "com.android.settings"
DIALER = "com.android.dialer"


def window(*nodes, bounds="[0,0][1080,2400]", pkg=APP):
    return n(bounds=bounds, cls="android.widget.FrameLayout", pkg=pkg, kids="".join(nodes))


def kind(gate, xml, action, package=APP):
    d = decide(gate, xml, action, package)
    return None if d.verdict is Verdict.ALLOW else d.kind


# -- security: an action that lowers the device's own protection ----------------------------------------------------
def _switch_page(title, row, checked, pkg=SETTINGS):
    switch = n(
        "", "[900,720][1020,800]", cls="android.widget.Switch", pkg=pkg, checkable=True, checked=checked
    )
    line = n(
        kids=n(row, "[60,700][860,760]", pkg=pkg) + switch,
        bounds="[0,660][1080,860]",
        cls="android.widget.LinearLayout",
        pkg=pkg,
        click=True,
        checkable=True,
        checked=checked,
    )
    return tree(window(n(title, "[60,260][1020,380]", pkg=pkg), line, pkg=pkg))


@pytest.mark.parametrize(
    ("title", "row", "checked"),
    [
        ("Security", "Use Find My Phone", True),  # a protection switched off
        ("安全", "查找手机", True),
        ("Developer options", "USB debugging", False),  # a grant that opens the device switched on
        ("安装未知应用", "允许来自此来源", False),
        ("Install unknown apps", "Allow from this source", False),
    ],
)
def test_a_switch_that_lowers_the_devices_protection_is_security(gate, title, row, checked):
    xml = _switch_page(title, row, checked)
    assert kind(gate, xml, Action.tap(540, 760), SETTINGS) == "security"


@pytest.mark.parametrize(
    ("title", "row", "checked"),
    [
        ("Security", "Use Find My Phone", False),  # switched on: more protection
        ("Developer options", "USB debugging", True),  # switched off
        ("Display", "Dark theme", False),
        ("Display", "Dark theme", True),
    ],
)
def test_a_switch_that_raises_protection_or_changes_nothing_of_it_is_allowed(gate, title, row, checked):
    assert kind(gate, _switch_page(title, row, checked), Action.tap(540, 760), SETTINGS) is None


def _dialog(title, message, no, yes, pkg=SETTINGS):
    buttons = n(no, "[120,1420][540,1540]", click=True, cls=BTN, pkg=pkg) + n(
        yes, "[540,1420][960,1540]", click=True, cls=BTN, pkg=pkg
    )
    card = n(
        kids=n(title, "[140,940][940,1030]", pkg=pkg) + n(message, "[140,1050][940,1380]", pkg=pkg) + buttons,
        bounds="[80,880][1000,1560]",
        cls="android.widget.LinearLayout",
        pkg=pkg,
    )
    return tree(window(n("Choose a lock", "[60,260][1020,380]", pkg=pkg), pkg=pkg), window(card, pkg=pkg))


def test_a_yes_that_removes_the_screen_lock_is_security_and_deny_security_refuses_it(gate):
    xml = _dialog("关闭锁屏密码？", "关闭后，任何人拿到手机都能打开。", "取消", "继续关闭")
    assert kind(gate, xml, Action.tap(750, 1480), SETTINGS) == "security"
    assert kind(gate, xml, Action.tap(330, 1480), SETTINGS) is None  # the no
    deny = SafetyGate(parse_policy(deny=["security"]), registry=gate.registry)
    assert decide(deny, xml, Action.tap(750, 1480), SETTINGS).verdict is Verdict.BLOCK


def test_security_is_a_policy_word():
    assert parse_policy(["security=deny"]).decide("security")[0].value == "deny"
    assert parse_policy(allow=["security@com.android.settings"]).decide("security", ["com.android.settings"])[
        0
    ].value == ("allow")
    assert "security" in POLICY_HINT
    with pytest.raises(UserError):
        parse_policy(deny=["securty"])


# -- a phone app: a number row calls, a held digit calls -------------------------------------------------------------
def _contact(pkg=DIALER):
    row = n(
        kids=n("0571 8888 6666", "[160,250][1200,310]", pkg=pkg)
        + n("Work", "[160,310][1200,360]", pkg=pkg)
        + n(
            "",
            "[1700,255][1800,355]",
            click=True,
            desc="Add to favourites",
            cls="android.widget.ImageButton",
            pkg=pkg,
        ),
        bounds="[80,230][1840,380]",
        click=True,
        cls="android.widget.FrameLayout",
        pkg=pkg,
    )
    return tree(window(n("李雷", "[120,110][1100,190]", pkg=pkg), row, bounds="[0,0][1920,1080]", pkg=pkg))


def test_a_number_row_in_a_phone_app_calls_and_its_star_does_not(gate):
    xml = _contact()
    assert kind(gate, xml, Action.tap(600, 280), DIALER) == "call"
    assert kind(gate, xml, Action.tap(1750, 305), DIALER) is None


def test_a_number_row_in_a_messaging_app_opens_the_thread(gate):
    pkg = "com.example.messaging"
    assert kind(gate, _contact(pkg), Action.tap(600, 280), pkg) is None


def _dialpad(pkg=DIALER):
    keys = ["1", "2 ABC", "3 DEF", "4 GHI", "5 JKL", "6 MNO", "7 PQRS", "8 TUV", "9 WXYZ", "*", "0 +", "#"]
    cells = "".join(
        n(
            "",
            f"[{360 * (i % 3)},{1160 + 230 * (i // 3)}][{360 * (i % 3 + 1)},{1390 + 230 * (i // 3)}]",
            click=True,
            long_clickable=True,
            desc=k,
            cls="android.widget.FrameLayout",
            pkg=pkg,
        )
        for i, k in enumerate(keys)
    )
    field = n("", "[60,940][900,1100]", cls="android.widget.EditText", pkg=pkg)
    return tree(window(field, n(kids=cells, bounds="[0,1160][1080,2080]", pkg=pkg), pkg=pkg))


@pytest.mark.parametrize(("x", "y"), [(180, 1275), (900, 1275), (540, 1735)])
def test_a_long_press_on_a_dialpad_digit_calls(gate, x, y):
    assert kind(gate, _dialpad(), Action.long_press(x, y), DIALER) == "call"


def test_a_tap_on_a_dialpad_digit_types_it_and_holding_0_types_a_plus(gate):
    assert kind(gate, _dialpad(), Action.tap(900, 1275), DIALER) is None
    assert kind(gate, _dialpad(), Action.long_press(540, 1965), DIALER) is None


# -- quick replies and a macro's Run ---------------------------------------------------------------------------------
def _watch(*chips, field=""):
    pkg = "com.example.messaging"
    nodes = [n("Boss", "[110,30][344,80]", pkg=pkg), n("Can you come at two?", "[60,90][394,200]", pkg=pkg)]
    nodes += [
        n(c, f"[70,{220 + 80 * i}][384,{290 + 80 * i}]", click=True, cls="android.view.View", pkg=pkg)
        for i, c in enumerate(chips)
    ]
    if field:
        nodes.append(n(field, "[20,400][434,450]", cls="android.widget.EditText", pkg=pkg))
    return tree(window(*nodes, bounds="[0,0][454,454]", pkg=pkg)), pkg


def test_a_quick_reply_chip_with_nothing_to_write_in_sends(gate):
    xml, pkg = _watch("Sure", "On my way", "Running late")
    assert decide_on(gate, xml, Action.tap(227, 335), 454, 454, pkg).kind == "send"
    assert decide_on(gate, xml, Action.tap(227, 150), 454, 454, pkg).verdict is Verdict.ALLOW  # the message
    with_field, _ = _watch("Sure", "On my way", field="Reply")
    assert decide_on(gate, with_field, Action.tap(227, 335), 454, 454, pkg).verdict is Verdict.ALLOW


def test_icon_buttons_of_a_chats_title_bar_are_not_quick_replies(gate):
    pkg = "com.example.messaging"
    icons = n(
        kids=n(desc="검색", bounds="[829,96][942,254]", click=True, cls=BTN, pkg=pkg)
        + n(desc="메뉴 더보기", bounds="[942,96][1055,254]", click=True, cls=BTN, pkg=pkg),
        bounds="[829,96][1055,254]",
        cls="android.widget.LinearLayout",
        pkg=pkg,
    )
    xml = tree(
        window(
            n("Boss", "[160,120][700,230]", pkg=pkg),
            icons,
            n("See you at two", "[60,600][900,700]", pkg=pkg),
            pkg=pkg,
        )
    )
    assert (
        decide(gate, xml, Action.tap(885, 175), pkg).verdict is Verdict.ALLOW
    )  # the real KakaoTalk 검색 icon


def test_a_macros_run_takes_the_kind_of_the_step_it_runs(gate):
    pkg = "com.example.automate"
    step = n(
        kids=n("Delete files", "[80,630][1000,690]", pkg=pkg)
        + n("Folder: DCIM/Camera", "[80,690][1000,780]", pkg=pkg),
        bounds="[24,610][1056,800]",
        click=True,
        cls="android.widget.LinearLayout",
        pkg=pkg,
    )
    run = n("Run now", "[600,2150][1040,2280]", click=True, cls=BTN, pkg=pkg)
    xml = tree(window(n("Nightly cleanup", "[170,130][800,210]", pkg=pkg), step, run, pkg=pkg))
    assert kind(gate, xml, Action.tap(820, 2215), pkg) == "delete"
    harmless = xml.replace("Delete files", "Vibrate").replace("Folder: DCIM/Camera", "Pattern: short")
    assert kind(gate, harmless, Action.tap(820, 2215), pkg) is None


# -- panes, windows, mirror images -----------------------------------------------------------------------------------
def test_each_pane_of_a_wide_screen_has_its_own_bottom_bar(gate):
    left = n(
        kids=n("Product", "[40,110][866,180]") + n("€99.00", "[40,1170][600,1240]"),
        bounds="[0,84][906,2176]",
        cls="android.widget.FrameLayout",
    )
    right = n(
        kids=n("Basket (1)", "[946,110][1772,180]")
        + n("Total €99.00", "[1110,2030][1480,2120]")
        + n("Kamilisha", "[1500,2010][1790,2140]", click=True, cls=BTN),
        bounds="[906,84][1812,2176]",
        cls="android.widget.FrameLayout",
    )
    xml = tree(window(n(kids=left + right, bounds="[0,84][1812,2176]"), bounds="[0,0][1812,2176]"))
    d = decide_on(gate, xml, Action.tap(1645, 2075), 1812, 2176)
    assert d.verdict is Verdict.ASK and d.source == "precaution"


def decide_on(gate, xml, action, width, height, package=APP):
    from mobile_agent.actions import Size
    from mobile_agent.gate.guard import GuardContext

    return gate.check(
        GuardContext("t", action, Size(width, height), package, 0, hierarchy_source=lambda: xml)
    )


def test_a_tap_on_an_idle_picture_in_picture_window_lands_in_it_not_on_the_page_beneath(gate):
    page = window(
        n("Confirm order", "[48,120][1032,200]"),
        n("Total ¥269.00", "[40,2250][700,2330]"),
        n("Submit", "[720,2220][1060,2360]", click=True, cls=BTN),
    )
    video = "com.example.video"
    pip = window(
        n("", "[560,2040][1040,2310]", cls="android.view.TextureView", pkg=video),
        bounds="[560,2040][1040,2310]",
        pkg=video,
    )
    assert kind(gate, tree(page, pip), Action.tap(800, 2100)) is None
    # Over the page's Submit the tree cannot tell whether the window takes the touch: the control beneath is judged.
    assert kind(gate, tree(page, pip), Action.tap(800, 2250)) is not None


def _rtl_checkout():
    return tree(
        window(
            n("", "[940,110][1060,236]", click=True, desc="رجوع", cls="android.widget.ImageButton"),
            n("الدفع", "[200,130][920,210]"),
            n("طريقة الدفع: بطاقة •••• 4821", "[48,420][1032,490]"),
            n("المجموع ٤٫٥٠٠ د.ك", "[48,720][1032,800]"),
            n("", "[20,110][140,236]", click=True, cls="android.widget.ImageButton"),
            n("تأكيد", "[60,2140][1020,2270]", click=True, cls=BTN),
        )
    )


def test_a_right_to_left_page_is_read_mirrored_its_back_arrow_is_at_the_right(gate):
    xml = _rtl_checkout()
    assert kind(gate, xml, Action.tap(1000, 173)) is None  # the back arrow at the top right
    assert kind(gate, xml, Action.tap(80, 173)) is not None  # the unnamed title action at the top left
    assert kind(gate, xml, Action.tap(540, 2200)) is not None  # the main button


def test_a_right_to_left_script_in_a_layout_the_app_did_not_mirror_is_read_as_it_is(gate):
    xml = tree(
        window(
            n("", "[20,110][140,236]", click=True, desc="قايتىش", cls="android.widget.ImageButton"),
            n("ھېسابات", "[200,130][920,210]"),
            n("بانكا كارتىسى •••• 8842", "[48,420][1032,490]"),
            n("¥99.00", "[48,720][1032,800]"),
            n("تۆلەش", "[60,2140][1020,2270]", click=True, cls=BTN),
        )
    )
    assert kind(gate, xml, Action.tap(80, 173)) is None  # its back arrow, where it was drawn
    assert kind(gate, xml, Action.tap(540, 2200)) is not None


def test_a_right_to_left_compose_row_sends_from_its_left_end(gate):
    xml = tree(
        window(
            n("אבא", "[300,120][900,180]"),
            n("", "[0,2160][130,2270]", click=True, desc="שלח", cls="android.widget.ImageView"),
            n("מחר בשמונה", "[140,2160][900,2270]", click=True, focused=True, cls="android.widget.EditText"),
            n("", "[940,2160][1070,2270]", click=True, desc="אימוג'י", cls="android.widget.ImageView"),
        )
    )
    assert kind(gate, xml, Action.tap(65, 2215)) == "send"


# -- what a form submits, what a command does ------------------------------------------------------------------------
def _code_page(*lines):
    return tree(
        window(
            n("", "[30,110][130,210]", click=True, desc="返回", cls="android.widget.ImageButton"),
            *(n(t, f"[80,{300 + 120 * i}][1000,{380 + 120 * i}]") for i, t in enumerate(lines)),
            n(
                "48213",
                "[80,900][1000,1030]",
                click=True,
                focused=True,
                rid=f"{APP}:id/sms_code",
                cls="android.widget.EditText",
            ),
        )
    )


def test_the_last_digit_of_a_code_is_judged_by_what_its_form_submits(gate):
    login = _code_page("输入验证码", "验证码已发送至 138****8000")
    assert kind(gate, login, Action.type("6")) is None
    transfer = _code_page("转账验证", "向 王五 转账 ¥2,000.00", "请输入短信验证码")
    assert kind(gate, transfer, Action.type("6")) in ("pay", "transfer")


@pytest.mark.parametrize(
    ("line", "expect"),
    [
        ("ls -la ~/storage", None),
        ("cd ~ && cat notes.txt | grep todo", None),
        ("rm -rf ~/storage/dcim", "delete"),
        ("find . -name '*.jpg' -delete", "delete"),
        ("echo > ~/.bashrc", "delete"),
        ("termux-sms-send -n 10086 hello", "send"),
        ("pkg install nmap", "sensitive"),
    ],
)
def test_a_terminal_line_is_judged_by_its_command(line, expect):
    found = command_finding(line, "Enter")
    assert (found.kind if found else None) == expect


def _terminal(prompt=""):
    pkg = "com.termux"
    view = n(
        f"Welcome\n~ $ {prompt}",
        "[8,96][1072,1480]",
        click=True,
        focused=True,
        cls="com.termux.view.TerminalView",
        rid=f"{pkg}:id/terminal_view",
        pkg=pkg,
    )
    return tree(window(view, pkg=pkg)), pkg


def test_a_newline_typed_into_a_terminal_runs_the_line(gate):
    xml, pkg = _terminal()
    assert kind(gate, xml, Action.type("ls storage\n"), pkg) is None
    assert kind(gate, xml, Action.type("rm -r storage/dcim\n"), pkg) == "delete"
    held, _ = _terminal("rm -r storage/dcim")
    assert kind(gate, held, Action.press("enter"), pkg) == "delete"


# -- a no however it is worded, fine print, a priced button, a drawn surface -----------------------------------------
def _upsell(no_label, no_id="", yes_label="好的"):
    card = n(
        kids=n("会员限时特惠", "[140,1080][940,1160]")
        + n("首月 ¥6，次月起 ¥15/月自动续费", "[140,1180][940,1320]")
        + n(no_label, "[140,1560][520,1660]", click=True, rid=no_id)
        + n(yes_label, "[560,1560][940,1660]", click=True),
        bounds="[90,760][990,1700]",
        cls="android.widget.FrameLayout",
    )
    return tree(window(n("每日推荐", "[48,200][1032,300]")), window(card, bounds="[90,760][990,1700]"))


@pytest.mark.parametrize("label", ["狠心放弃", "残忍离开", "No, I don't want to save"])
def test_a_no_dressed_to_shame_is_still_a_no(gate, label):
    xml = _upsell(label)
    assert kind(gate, xml, Action.tap(330, 1610)) is None
    assert kind(gate, xml, Action.tap(750, 1610)) is not None


def test_a_dialogs_negative_button_by_its_id_is_harmless_whatever_it_says(gate):
    xml = _upsell("再想想吧", no_id=f"{APP}:id/btn_negative")
    assert kind(gate, xml, Action.tap(330, 1610)) is None


def test_a_consent_box_below_the_main_button_is_its_fine_print(gate):
    xml = tree(
        window(
            n("会员中心", "[150,130][930,210]"),
            n("新用户 0 元领 7 天会员", "[60,1040][1020,1140]"),
            n("立即领取", "[80,1960][1000,2100]", click=True, cls=BTN),
            n(
                "同意《自动续费规则》，到期后 ¥25/月自动续费",
                "[80,2130][1000,2230]",
                click=True,
                checkable=True,
                checked=True,
                cls="android.widget.CheckBox",
            ),
        )
    )
    assert kind(gate, xml, Action.tap(540, 2030)) is not None
    assert kind(gate, xml, Action.tap(540, 2180)) is None  # unticking the box


def test_a_button_that_states_its_price_commits_it_even_in_a_strip_of_actions(gate):
    row = "".join(
        n(t, f"[{640 + 360 * i},760][{970 + 360 * i},860]", click=True, cls=BTN, focused=(i == 1))
        for i, t in enumerate(["Trailer", "Leihen 3,99 €", "Kaufen 14,99 €"])
    )
    xml = tree(
        window(
            n("Dune", "[640,200][1840,290]"),
            n(kids=row, bounds="[640,740][1840,880]"),
            bounds="[0,0][1920,1080]",
        )
    )
    d = decide_on(gate, xml, Action.press("enter"), 1920, 1080)
    assert d.verdict is Verdict.ASK and d.kind == "pay"
    trailer = xml.replace('focused="true"', 'focused="false"').replace(
        'text="Trailer" resource-id="" class="android.widget.Button" package="com.example.app" content-desc="" '
        'clickable="true" bounds="[640,760][970,860]" focused="false"',
        'text="Trailer" resource-id="" class="android.widget.Button" package="com.example.app" content-desc="" '
        'clickable="true" bounds="[640,760][970,860]" focused="true"',
    )
    assert decide_on(gate, trailer, Action.press("enter"), 1920, 1080).verdict is Verdict.ALLOW


def test_an_unnamed_control_of_a_drawn_surface_asks_without_pixels(gate):
    body = n(
        kids=n(
            kids=n("", "[560,1440][940,1560]", click=True, cls="android.view.View"),
            bounds="[0,240][1080,2400]",
            cls="android.view.View",
        ),
        bounds="[0,240][1080,2400]",
        cls="io.flutter.embedding.android.FlutterView",
    )
    xml = tree(window(n("Order details", "[300,130][780,210]"), body))
    d = decide(SafetyGate(registry=gate.registry, ocr=None), xml, Action.tap(750, 1500))
    assert d.verdict is Verdict.ASK and d.source == "blind"
