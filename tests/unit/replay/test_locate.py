"""Finding a recorded target on a live screen (mobile_agent.replay.identity, mobile_agent.replay.locate).

What must still be found: the same row with a new preview, at another resolution, moved down by a new row above it,
moved up by a scroll; what must not be acted on: a row of another name in the target's place where the list was
reordered around it (李四 where 张三 was), a target that is gone, two look-alikes, a target under a splash ad."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mobile_agent.actions import Point, Size
from mobile_agent.replay.identity import PathStep, identify
from mobile_agent.replay.locate import locate

from .trees import button, chat_list, node, screen, splash

CHATS = [("张三", "好的，收到"), ("李四", "周末一起打球吗？"), ("王五", "[图片]"), ("妈妈", "晚上回家吃饭吗")]
FIRST_ROW = Point(400, 250)  # on 张三's name, in the first row of CHATS from y=200


def recorded(rows=CHATS, point: Point = FIRST_ROW):
    identity = identify(screen(chat_list(*rows)), point)
    assert identity is not None
    return identity


def test_a_row_is_named_by_its_title_and_a_button_by_its_labels() -> None:
    row = recorded()
    assert row.name == ("张三",) and row.labels == ("张三", "好的收到")
    assert row.class_name == "LinearLayout" and row.resource_id == "com.x:id/row"
    assert row.path == (PathStep("RecyclerView", "com.x:id/list"),)  # from the list, whose id is unique
    assert row.peers == (("张三",), ("李四",), ("王五",), ("妈妈",)) and row.rank == 0
    send = identify(screen(button("发送")), Point(500, 2250))
    assert send is not None and send.name == ("发送",)
    assert identify(screen(button("发送")), Point(500, 100)) is None  # nothing takes a touch there


def test_the_same_row_with_a_new_preview_is_found_in_its_place() -> None:
    live = screen(chat_list(("张三", "晚上好"), *CHATS[1:]))
    found = locate(recorded(), live, FIRST_ROW)
    assert found.found and not found.moved and found.point == FIRST_ROW


def test_another_resolution_acts_on_the_live_box_at_the_same_spot_within_it() -> None:
    small = screen(
        node(
            "[0,133][720,1466]",
            rid="com.x:id/list",
            cls="android.widget.ListView",
            children="".join(
                node(
                    f"[0,{133 + 127 * i}][720,{260 + 127 * i}]",
                    rid="com.x:id/row",
                    cls="android.widget.LinearLayout",
                    clickable="true",
                    children=node(f"[133,{146 + 127 * i}][466,{193 + 127 * i}]", name, rid="com.x:id/name")
                    + node(f"[133,{200 + 127 * i}][600,{246 + 127 * i}]", preview, rid="com.x:id/preview"),
                )
                for i, (name, preview) in enumerate(CHATS)
            ),
        )
    )
    identity = recorded()
    # Another list class is another path: the row is still found (the only one of its name), in its place.
    found = locate(identity, small, Point(267, 167), Size(720, 1600))
    assert found.found and found.point is not None and 133 <= found.point.y < 260


def test_a_row_pushed_down_by_a_new_chat_on_top_is_followed() -> None:
    live = screen(chat_list(("陈晨", "在吗"), *CHATS))
    found = locate(recorded(), live, FIRST_ROW)
    assert found.found and found.moved and found.problem is None
    assert found.point == Point(400, 250 + 190) and found.bounds.top == 390


def test_a_row_moved_up_by_a_scroll_is_followed() -> None:
    identity = recorded(point=Point(400, 250 + 2 * 190))  # 王五, the third row
    assert identity.name == ("王五",)
    live = screen(chat_list(*CHATS[1:]))  # scrolled by one row: 李四 first, 王五 second
    found = locate(identity, live, Point(400, 250 + 2 * 190))
    assert found.found and found.moved and found.point == Point(400, 250 + 190)


def test_another_row_in_the_targets_place_of_a_reordered_list_stops() -> None:
    live = screen(chat_list(CHATS[1], CHATS[0], *CHATS[2:]))  # 李四 first, 张三 second
    found = locate(recorded(), live, FIRST_ROW)
    assert not found.found and not found.waiting_helps
    assert "'张三' is now '李四'" in found.problem and "reordered" in found.problem


def test_a_target_that_is_gone_is_waited_for_and_named() -> None:
    live = screen(chat_list(*CHATS[1:]))  # 张三's chat deleted: 李四 in the first row
    found = locate(recorded(), live, FIRST_ROW)
    assert not found.found and found.waiting_helps
    assert "张三" in found.problem and "not on the screen" in found.problem and "李四" in found.problem


def test_two_look_alikes_are_not_guessed_between() -> None:
    live = screen(chat_list(*CHATS, ("张三", "另一个张三")))
    found = locate(recorded(), live, Point(400, 1900))  # the recorded spot holds neither
    assert not found.found and "2 elements look like" in found.problem


def test_a_target_under_a_splash_ad_is_covered_and_waited_for() -> None:
    live = screen(chat_list(*CHATS), splash())
    found = locate(recorded(), live, FIRST_ROW)
    assert not found.found and found.waiting_helps and "covered by" in found.problem
    # What the recording itself had over the target covers nothing new.
    identity = identify(live, FIRST_ROW)
    assert identity is not None and identity.cover == "ImageView com.x:id/splash_ad"
    assert locate(identity, live, FIRST_ROW).found


def test_an_unreadable_live_tree_is_waited_for() -> None:
    for bad in (None, "", "<hierarchy"):
        found = locate(recorded(), bad, FIRST_ROW)
        assert not found.found and found.waiting_helps and "could not be read" in found.problem


@given(
    names=st.lists(
        st.sampled_from(["张三", "李四", "王五", "妈妈", "赵六", "陈晨"]), min_size=2, max_size=6, unique=True
    ),
    pick=st.integers(0, 5),
    shift=st.integers(-3, 3),
)
def test_found_means_the_same_name_and_never_a_reordered_neighbour(names, pick, shift) -> None:
    """Whatever the live list: a found target is the row of the recorded name, and a row that jumped over the
    target never gets the tap in its place."""
    pick = min(pick, len(names) - 1)
    rows = [(n, f"消息{i}") for i, n in enumerate(names)]
    identity = identify(screen(chat_list(*rows)), Point(400, 250 + 190 * pick))
    assert identity is not None and identity.name == (names[pick],)
    live_rows = rows[shift:] if shift >= 0 else [("新" * (i + 1), "新消息") for i in range(-shift)] + rows
    live = screen(chat_list(*live_rows))
    found = locate(identity, live, Point(400, 250 + 190 * pick))
    if names[pick] not in [n for n, _ in live_rows]:
        assert not found.found
        return
    assert found.found, found.problem
    row = [n for n, _ in live_rows].index(names[pick])
    assert found.point == Point(400, 250 + 190 * row)


def test_a_settings_row_is_named_by_its_title_not_its_summary() -> None:
    def settings_row(summary: str) -> str:
        return screen(
            node(
                "[0,300][1080,460]",
                rid="",
                cls="android.widget.LinearLayout",
                clickable="true",
                children=node("[50,300][700,460]", "WLAN", rid="android:id/title")
                + node("[720,300][1030,460]", summary, rid="android:id/summary"),
            )
        )

    identity = identify(settings_row("已关闭"), Point(300, 380))
    assert identity is not None and identity.name == ("wlan",)
    assert locate(identity, settings_row("SimNet-5G"), Point(300, 380)).found
