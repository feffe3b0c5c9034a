"""What is under and around the finger decides, not what else the screen holds (issue 17): an ad banner elsewhere does
not make a blind tap readable, a copy of a window does not make a button float, layout-only wrappers do not hide a
control's row or peers, and a sheet's prompt names the bare field it holds."""

import pytest

from mobile_agent.actions import Action
from mobile_agent.gate.guard import Verdict
from tests.unit.safety.trees import APP, decide, n, tree

AD = n("限时优惠", "[872,300][1072,356]")


def frame(*kids, bounds="[0,0][1080,2400]", pkg=APP, cls="android.widget.FrameLayout"):
    return n(bounds=bounds, cls=cls, pkg=pkg, kids="".join(kids))


def wrapped(node, depth, bounds):
    for i in range(depth):
        node = frame(
            node, bounds=bounds, cls=("android.widget.FrameLayout", "android.widget.LinearLayout")[i % 2]
        )
    return node


@pytest.mark.parametrize("ad", ["", AD])
def test_a_blind_tap_on_a_blank_surface_asks_whatever_is_drawn_elsewhere(gate, ad):
    xml = tree(frame(ad) if ad else frame())
    assert decide(gate, xml, Action.tap(540, 2200)).verdict is Verdict.ASK


@pytest.mark.parametrize("ad", ["", AD])
def test_a_blind_tap_on_an_opaque_webview_asks_whatever_is_drawn_elsewhere(gate, ad):
    web = (
        frame(ad, bounds="[0,224][1080,2400]", cls="android.webkit.WebView")
        if ad
        else n("", "[0,224][1080,2400]", cls="android.webkit.WebView")
    )
    xml = tree(frame(n("收银台", "[0,84][1080,224]"), web))
    assert decide(gate, xml, Action.tap(540, 2240)).verdict is Verdict.ASK


def test_text_under_the_finger_still_names_a_blank_surface(gate):
    xml = tree(frame(n("限时优惠", "[0,2100][1080,2300]")))
    assert decide(gate, xml, Action.tap(540, 2200)).verdict is Verdict.ALLOW


@pytest.mark.parametrize("ad", ["", AD])
def test_the_action_key_of_a_keyboard_without_keys_sends_a_written_message(gate, ad):
    chat = frame(
        n("张三", "[160,104][920,204]"),
        n("周末一起吃饭吧", "[20,1300][900,1400]", cls="android.widget.EditText", click=True, focused=True),
    )
    keyboard = frame(ad, bounds="[0,1450][1080,2400]", pkg="com.sohu.inputmethod.sogou")
    xml = tree(chat, keyboard)
    assert decide(gate, xml, Action.tap(1000, 2330)).verdict is Verdict.ASK


def _web_post():
    button = n(
        "",
        "[860,250][1040,340]",
        click=True,
        cls="android.widget.Button",
        kids=n("Post", "[900,270][1000,320]"),
    )
    page = frame(
        n("Create post", "[40,250][600,340]"),
        button,
        n("Title: Best hotpot in Chengdu?", "[40,400][1040,500]"),
        bounds="[0,234][1080,2400]",
        cls="android.webkit.WebView",
    )
    return frame(page, pkg="com.android.chrome")


@pytest.mark.parametrize("copies", [1, 2])
def test_a_copy_of_the_window_does_not_make_the_button_float(gate, copies):
    xml = tree(*[_web_post()] * copies)
    assert decide(gate, xml, Action.tap(950, 300), "com.android.chrome").verdict is Verdict.ASK


def test_a_button_floating_over_its_own_list_still_opens_the_composer(gate):
    rows = "".join(
        n(f"post {i}", f"[0,{300 + i * 200}][1080,{480 + i * 200}]", click=True) for i in range(10)
    )
    fab = n("Post", "[860,2000][1040,2160]", click=True, cls="android.widget.Button")
    xml = tree(
        frame(frame(rows, bounds="[0,234][1080,2400]", cls="androidx.recyclerview.widget.RecyclerView"), fab)
    )
    assert decide(gate, xml, Action.tap(950, 2080)).verdict is Verdict.ALLOW


@pytest.mark.parametrize("depth", [0, 1, 3])
def test_wrappers_do_not_hide_the_call_beside_video(gate, depth):
    video = wrapped(n("Video", "[720,600][1040,760]", click=True), depth, "[720,600][1040,760]")
    card = frame(
        n("Call", "[40,600][360,760]", click=True),
        n("Text", "[380,600][700,760]", click=True),
        video,
        bounds="[0,600][1080,760]",
        cls="android.widget.LinearLayout",
    )
    xml = tree(frame(n("王五", "[160,104][920,204]"), card, pkg="com.android.dialer"))
    assert decide(gate, xml, Action.tap(880, 680), "com.android.dialer").verdict is Verdict.ASK


@pytest.mark.parametrize("depth", [0, 1, 3])
@pytest.mark.parametrize(("row", "verdict"), [("免密支付", Verdict.ASK), ("深色模式", Verdict.ALLOW)])
def test_wrappers_do_not_hide_a_switchs_row(gate, depth, row, verdict):
    switch = n("", "[900,600][1040,700]", click=True, checkable=True, cls="android.widget.Switch")
    line = frame(
        n(row, "[40,600][800,700]"),
        wrapped(switch, depth, "[900,600][1040,700]"),
        bounds="[0,580][1080,720]",
        cls="android.widget.LinearLayout",
    )
    xml = tree(frame(n("设置", "[160,104][920,204]"), line))
    assert decide(gate, xml, Action.tap(970, 650)).verdict is verdict


def _pay_sheet(prompt, amount="23,000원"):
    page = frame(n("카카오페이", "[40,104][600,204]"))
    sheet = frame(
        frame(
            n(prompt, "[0,1230][1080,1310]"),
            n(amount, "[0,1340][1080,1450]") if amount else "",
            n("", "[140,1500][940,1620]", click=True, focused=True, cls="android.widget.EditText"),
            bounds="[0,1200][1080,2400]",
            cls="android.widget.LinearLayout",
        )
    )
    return tree(page, sheet)


@pytest.mark.parametrize("prompt", ["결제 비밀번호를 입력해 주세요", "请输入支付密码", "Enter your PIN"])
def test_a_sheets_prompt_names_the_bare_field_it_holds(gate, prompt):
    assert decide(gate, _pay_sheet(prompt), Action.type("246810")).verdict is Verdict.ASK


@pytest.mark.parametrize(
    ("prompt", "amount"), [("닉네임을 입력해 주세요", "23,000원"), ("Enter the code we sent", "")]
)
def test_a_sheet_asking_for_something_else_lets_typing_through(gate, prompt, amount):
    assert decide(gate, _pay_sheet(prompt, amount), Action.type("246810")).verdict is Verdict.ALLOW
