"""What a replayed action is about to touch against what the recording touched (mobile_agent.replay.compare).

Attacks: another name in the same row, another amount in a dialog, a shuffled PIN pad, a dialog that appeared,
another control class or id, an unreadable live tree; and what must not stop a replay: the finger on another
child of the same row, a clock that moved on, a row's new preview, a home feed whose prices changed under a harmless
tap."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mobile_agent.actions import Point
from mobile_agent.replay.compare import compare_touched, notes_between, read_touched

from .trees import button, chat_row, dialog, node, screen

NAME = Point(400, 250)  # on the name of the first row
PREVIEW = Point(500, 340)  # on its preview


def differences(
    recorded_xml: str, live_xml: str | None, point: Point | None, *, money: bool = False
) -> list[str]:
    return compare_touched(
        read_touched(recorded_xml, point), read_touched(live_xml, point), money_moves=money
    )


def test_the_same_screen_touches_the_same_thing() -> None:
    xml = screen(chat_row("张三", "好的，收到", "10:21"), button("发送"))
    assert differences(xml, xml, NAME) == []
    assert differences(xml, xml, Point(500, 2250)) == []
    assert differences(xml, xml, None) == []


def test_another_name_in_the_same_row_is_another_target() -> None:
    recorded = screen(chat_row("张三", "好的，收到", "10:21"))
    live = screen(chat_row("李四", "好的，收到", "10:21"))  # the same preview: only the name tells them apart
    found = differences(recorded, live, NAME)
    assert len(found) == 1 and "'张三'" in found[0] and "'李四'" in found[0]
    assert differences(recorded, live, PREVIEW), "the preview is the same, but the row is 李四's"


def test_the_finger_on_another_child_of_the_same_row_or_a_moved_clock_is_the_same_target() -> None:
    recorded = screen(chat_row("张三", "好的，收到", "10:21"))
    assert differences(recorded, screen(chat_row("张三", "好的，收到", "昨天")), NAME) == []
    assert differences(recorded, screen(chat_row("张三", "好的，收到", "11:05")), PREVIEW) == []


def test_a_changed_preview_in_the_same_row_is_noted_not_a_stop() -> None:
    """The row of 张三 is still 张三's row when a new message changed its preview: noted, naming old and new."""
    recorded, live = (
        screen(chat_row("张三", "好的，收到", "10:21")),
        screen(chat_row("张三", "在吗", "10:22")),
    )
    assert differences(recorded, live, NAME) == []
    assert differences(recorded, live, PREVIEW) == []
    notes = notes_between(read_touched(recorded, NAME), read_touched(live, NAME))
    assert any("好的收到" in n and "在吗" in n for n in notes), notes


def test_a_shuffled_pin_pad_key_is_another_target() -> None:
    key = Point(540, 1500)
    recorded = screen(button("5", "[400,1400][680,1600]", "com.x:id/key"))
    live = screen(button("6", "[400,1400][680,1600]", "com.x:id/key"))
    assert differences(recorded, live, key), "a digit that is the whole label is compared"


def test_another_payee_or_amount_in_the_dialog_is_a_divergence() -> None:
    ok = Point(540, 1500)
    recorded = screen(
        dialog(
            node("[100,850][980,950]", "转账确认"),
            node("[100,960][980,1060]", "向张三转账 ¥25.00"),
            button("确定", "[100,1400][980,1560]"),
        )
    )
    payee = screen(
        dialog(
            node("[100,850][980,950]", "转账确认"),
            node("[100,960][980,1060]", "向李四转账 ¥25.00"),
            button("确定", "[100,1400][980,1560]"),
        )
    )
    amount = screen(
        dialog(
            node("[100,850][980,950]", "转账确认"),
            node("[100,960][980,1060]", "向张三转账 ¥91.00"),
            button("确定", "[100,1400][980,1560]"),
        )
    )
    assert any("李四" in d for d in differences(recorded, payee, ok))
    found = differences(recorded, amount, ok)
    assert any("¥25.00" in d and "¥91.00" in d for d in found), found


def test_amounts_elsewhere_count_only_where_money_moves() -> None:
    tap = Point(540, 2250)
    recorded = screen(node("[0,300][1080,400]", "招牌黄焖鸡 ¥22"), button("搜索"))
    live = screen(node("[0,300][1080,400]", "招牌黄焖鸡 ¥88"), button("搜索"))
    assert differences(recorded, live, tap) == []  # a harmless tap on a feed whose prices changed
    found = differences(recorded, live, tap, money=True)
    assert found == ["amounts on screen: recorded '¥22.00', now '¥88.00'"]
    # Written differently, the same amount: ￥25 (full width), 25元, ¥25.00.
    same = [screen(node("[0,300][1080,400]", t), button("支付")) for t in ("￥25", "25元", "¥25.00")]
    assert all(differences(same[0], other, tap, money=True) == [] for other in same[1:])
    assert differences(recorded, live, None, money=True), "typing on a payment screen compares amounts too"


def test_another_class_id_or_a_new_dialog_over_the_target() -> None:
    tap = Point(540, 2250)
    recorded = screen(button("确认"))
    assert any(
        "resource-id" in d for d in differences(recorded, screen(button("确认", rid="com.x:id/pay")), tap)
    )
    image = node(
        "[100,2200][980,2330]", "确认", rid="com.x:id/ok", cls="android.widget.ImageView", clickable="true"
    )
    assert any("class" in d for d in differences(recorded, screen(image), tap))
    covered = screen(dialog(button("确认", "[100,2200][980,2330]")))
    assert any("dialog" in d for d in differences(recorded, covered, tap))


def test_trees_that_cannot_be_read() -> None:
    xml = screen(button("发送"))
    assert differences(xml, None, Point(540, 2250)) == [
        "the live view tree could not be read, so the target cannot be compared"
    ]
    assert differences(xml, "<not xml", Point(540, 2250))
    assert differences("<not xml", xml, Point(540, 2250)) == []  # no recording to compare: the caller says so
    nothing = screen(node("[0,0][10,10]", "x"))
    assert differences(nothing, nothing, Point(900, 1200)) == []  # nothing under the finger on both sides


@given(
    names=st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=5),
    row=st.integers(0, 4),
    on_preview=st.booleans(),
    hour=st.integers(0, 23),
)
def test_a_screen_compared_with_itself_at_another_time_never_diverges(names, row, on_preview, hour) -> None:
    def rows(time: str) -> str:
        return screen(*(chat_row(n, f"消息{i}", time, top=200 + 200 * i) for i, n in enumerate(names)))

    point = Point(500, 200 + 200 * min(row, len(names) - 1) + (140 if on_preview else 50))
    assert differences(rows("10:21"), rows(f"{hour}:05"), point) == []
