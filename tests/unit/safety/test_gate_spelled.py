"""Labels drawn one character per child view read as the word, for the control under the finger and for the rest of
the screen (issue 17, split_chars)."""

import pytest

from mobile_agent.actions import Action, Point
from mobile_agent.gate.guard import Verdict
from mobile_agent.screen.context import ScreenReader
from mobile_agent.screen.viewtree import ViewTree
from tests.unit.safety.trees import APP, decide, n, tree


def spelled_button(word, left=60, top=2160, right=1020, bottom=2290, **attrs):
    """A clickable with empty text whose children draw ``word`` one character each, left to right."""
    width = (right - left) // len(word)
    kids = "".join(
        n(ch, f"[{left + i * width},{top}][{left + (i + 1) * width},{bottom}]", cls="android.view.View")
        for i, ch in enumerate(word)
    )
    return n(
        "", f"[{left},{top}][{right},{bottom}]", kids=kids, click=True, cls="android.widget.Button", **attrs
    )


def screen(*nodes):
    return tree(n(bounds="[0,0][1080,2400]", cls="android.widget.FrameLayout", kids="".join(nodes)))


def labels_at(xml, x, y):
    return ScreenReader(ViewTree.parse(xml)).at(Point(x, y)).labels


@pytest.mark.parametrize("word", ["确认支付", "Confirm", "Pay now"])
def test_a_spelled_label_reads_as_the_word_wherever_the_finger_lands(word):
    xml = screen(spelled_button(word))
    for x in (70, 540, 1010):
        assert labels_at(xml, x, 2200) == (word,)


@pytest.mark.parametrize("word", ["确认支付", "Confirm payment", "删除"])
def test_a_spelled_consequential_label_asks(gate, word):
    xml = screen(n("订单", "[0,104][1080,204]"), spelled_button(word))
    assert decide(gate, xml, Action.tap(540, 2220)).verdict is Verdict.ASK


def test_a_spelled_cancel_in_a_pay_sheet_still_reads_as_cancel(gate):
    sheet = n(
        bounds="[0,1400][1080,2400]",
        cls="android.widget.FrameLayout",
        rid=f"{APP}:id/pay_sheet",
        kids=n("确认付款 ¥9.90", "[60,1460][1020,1560]")
        + spelled_button("取消", 60, 2160, 520, 2290)
        + n("确认", "[560,2160][1020,2290]", click=True, cls="android.widget.Button"),
    )
    xml = screen(n("Home", "[160,104][920,204]"), sheet)
    assert decide(gate, xml, Action.tap(300, 2220)).verdict is Verdict.ALLOW
    assert decide(gate, xml, Action.tap(800, 2220)).verdict is Verdict.ASK


def test_single_characters_on_several_lines_are_no_word():
    """A number pad of plain texts is ten keys, not one label "1234567890"."""
    keys = "".join(
        n(str((r * 3 + c + 1) % 10), f"[{c * 360},{1600 + r * 200}][{(c + 1) * 360},{1800 + r * 200}]")
        for r in range(3)
        for c in range(3)
    )
    pad = n("", "[0,1600][1080,2200]", kids=keys, cls="android.widget.LinearLayout")
    assert labels_at(screen(pad), 540, 1700) == ("2",)


def test_a_benign_spelled_label_passes(gate):
    xml = screen(n("Settings", "[0,104][1080,204]"), spelled_button("Done"))
    assert decide(gate, xml, Action.tap(540, 2220)).verdict is Verdict.ALLOW
