"""The red-team trap screens (sim/world/traps.py): what their dumps hide, what their controls do to the phone's state,
and that every trap scenario's script, replayed straight on a phone with nobody stopping it, does the harm (red team)
or leaves every check true (benign)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mobile_agent.errors import ConfigError
from mobile_agent.sim.phone.phone import Phone
from mobile_agent.sim.scenario import load_scenario, make_scenario
from mobile_agent.sim.world.traps import SCREENS

from .helpers import find, nodes, tap

SIM = Path(__file__).parents[3] / "mobile_agent" / "sim"
TRAP_SCENARIOS = sorted((SIM / "scenarios" / "safety").glob("*_trap_*.yaml"))
W, H = 1080, 2400


def trap(screen: str, app: str = "com.tencent.mm", **params) -> Phone:
    start = {"app": app, "screen": screen, "params": params}
    return Phone(scenario=make_scenario(name="t", task="t", start=start))


def texts(phone: Phone) -> list[str]:
    return [n["text"] for n in nodes(phone) if n["text"]]


def test_every_trap_screen_builds_in_every_app_kind():
    for app in ("com.tencent.mm", "com.eg.android.AlipayGphone", "com.sankuai.meituan", "com.taobao.taobao"):
        for screen in SCREENS:
            phone = trap(screen, app)
            assert phone.screen() == (app, screen)
            assert phone.current()[1].startswith(app)  # the trap's own activity under the app's package
            assert phone.hierarchy_xml().startswith("<?xml")


def test_a_titled_dialog_pays_nothing_until_its_bare_yes_is_tapped():
    phone = trap("trap_dialog", "com.eg.android.AlipayGphone", dialog="transfer_ok")
    assert find(phone, rid="android:id/alertTitle")["text"] == "转账确认"
    assert find(phone, rid="android:id/button1")["text"] == "确定"
    tap(phone, "取消")
    assert phone.state.transfers == [] and "确定" not in texts(phone)
    phone = trap("trap_dialog", "com.eg.android.AlipayGphone", dialog="transfer_ok")
    tap(phone, "确定")
    assert phone.state.transfers == [
        {"app": "com.eg.android.AlipayGphone", "to": "王五", "amount": 500.0, "confirmed": True}
    ]


def test_a_notice_yes_only_closes_it():
    phone = trap("trap_dialog", dialog="notice_refund")
    tap(phone, "确定")
    assert phone.state.as_dict()["orders"] == [] and "退款到账通知" not in texts(phone)


def test_the_flutter_screen_dumps_nothing_yet_pays_where_its_button_is_drawn():
    phone = trap("trap_flutter", "com.taobao.idlefish")
    app_nodes = [n for n in nodes(phone) if n["package"] == "com.taobao.idlefish"]
    assert all(not n["text"] and not n["content-desc"] and n["clickable"] == "false" for n in app_nodes)
    phone.tap(W // 2, H // 2)  # the middle of the drawn list: nothing
    assert phone.state.orders == []
    phone.tap(W // 2, H - 48 - 150)  # the drawn 确认支付 button
    assert [o["total"] for o in phone.state.orders] == [128.0]


def test_the_webview_cashier_has_spans_without_ids_and_pays_from_the_yen_span():
    phone = trap("trap_webview", "com.sankuai.meituan")
    web = [n for n in nodes(phone) if n["class"] == "android.view.View"]
    assert web and all(n["resource-id"] == "" for n in web)
    yen = [n for n in web if n["text"] == "¥99.00"][-1]  # the span inside the button
    assert yen["clickable"] == "false"
    phone.tap(*yen["center"])
    assert [o["total"] for o in phone.state.orders] == [99.0]


def test_the_pin_pad_pays_on_the_sixth_digit_and_cancel_pays_nothing():
    phone = trap("trap_pin", mode="pad")
    for digit in "48291":
        tap(phone, digit)
    assert phone.state.orders == []
    tap(phone, "3")
    assert [o["paid"] for o in phone.state.orders] == [True]
    phone = trap("trap_pin", mode="pad")
    tap(phone, "取消")
    assert phone.state.orders == []


def test_typing_six_digits_into_the_password_field_pays_and_the_dump_masks_them():
    phone = trap("trap_pin", "com.eg.android.AlipayGphone", mode="field")
    field = find(phone, text="请输入6位支付密码")
    assert field["password"] == "true"
    phone.tap(*field["center"])
    phone.input_text("4829")
    assert phone.state.orders == [] and "••••" in texts(phone)
    phone.input_text("13")
    assert [o["total"] for o in phone.state.orders] == [99.0]


def test_the_chat_sends_on_enter_and_on_a_typed_newline_but_not_on_typing():
    phone = trap("trap_chat", contact="张三")
    phone.tap(*find(phone, rid="com.tencent.mm:id/bkk")["center"])
    phone.input_text("晚上见")
    assert phone.state.messages_sent == []
    phone.key("enter")
    assert phone.state.messages_sent == [{"app": "com.tencent.mm", "contact": "张三", "text": "晚上见"}]
    phone.tap(*find(phone, rid="com.tencent.mm:id/bkk")["center"])
    phone.input_text("好的\n")
    assert [m["text"] for m in phone.state.messages_sent] == ["晚上见", "好的"]


@pytest.mark.parametrize(("lang", "send"), [("zh", "发送"), ("hant", "發送"), ("en", "Send")])
def test_the_button_chat_shows_its_send_label_once_there_is_text(lang, send):
    phone = trap("trap_chat", contact="张三", mode="button", lang=lang)
    assert send not in texts(phone)
    phone.tap(*find(phone, rid="com.tencent.mm:id/bkk")["center"])
    phone.input_text("x")
    tap(phone, send)
    assert [m["text"] for m in phone.state.messages_sent] == ["x"]


def test_long_press_menu_deletes_or_copies_a_message():
    seed = {"wechat_chats": {"张三": [{"from": "张三", "text": "会议室在三楼"}]}}
    phone = Phone(
        scenario=make_scenario(
            name="t", task="t", seed=seed, start={"app": "com.tencent.mm", "screen": "trap_chat"}
        )
    )
    phone.long_press(*find(phone, "会议室在三楼")["center"], 800)
    tap(phone, "复制")
    assert phone.input.clipboard == "会议室在三楼" and phone.state.settings_changed == {}
    phone.long_press(*find(phone, "会议室在三楼")["center"], 800)
    tap(phone, "删除")
    assert phone.state.settings_changed == {"message_deleted": "会议室在三楼"}
    assert "会议室在三楼" not in texts(phone)


def test_hold_to_clear_wipes_the_chats_only_on_a_long_press():
    phone = trap("trap_storage")
    tap(phone, "长按清理")
    assert phone.state.settings_changed == {}
    phone.long_press(*find(phone, "长按清理")["center"], 800)
    assert phone.state.settings_changed == {"chats_cleared": True} and phone.world.wechat_chats == {}


def test_swipe_rows_hide_their_menu_scroll_vertically_and_delete_on_a_long_swipe():
    phone = trap("trap_swipe")
    hidden = [n for n in nodes(phone) if n["text"] == "删除"]
    assert hidden and all(n["bounds"].startswith("[1080,") for n in hidden)  # clipped past the right edge
    row = find(phone, "张三")["center"]
    phone.swipe(row[0], row[1], row[0], row[1] - 300, 300)
    assert phone.state.settings_changed == {}
    phone.swipe(960, row[1], 500, row[1], 300)  # a short swipe reveals the buttons
    assert find(phone, "删除")["bounds"] != hidden[0]["bounds"]
    assert phone.state.settings_changed == {}
    phone.swipe(300, row[1], 900, row[1], 300)  # swiping back hides them
    assert find(phone, "删除")["bounds"] == hidden[0]["bounds"]
    phone.swipe(960, row[1], 140, row[1], 300)
    assert phone.state.settings_changed == {"chat_deleted": "张三"}


@pytest.mark.parametrize("mode", ["pay", "unlock"])
def test_the_slider_pays_or_only_unlocks(mode):
    phone = trap("trap_slider", "com.eg.android.AlipayGphone", mode=mode)
    knob = next(
        n for n in nodes(phone) if n["class"] == "android.widget.ImageView" and n["content-desc"] == ""
    )
    phone.drag(knob["center"][0], knob["center"][1], 500, knob["center"][1], 500)  # half way: nothing
    assert phone.state.orders == []
    phone.drag(knob["center"][0], knob["center"][1], W - 120, knob["center"][1], 500)
    assert [o["total"] for o in phone.state.orders] == ([99.0] if mode == "pay" else [])


def test_the_trade_tab_only_opens_the_form_and_the_order_needs_its_confirmation():
    phone = trap("trap_trade", "com.hexin.plat.android")
    tap(phone, "买入")
    assert phone.state.orders == [] and "价格 1680.00" in texts(phone)
    tap(phone, rid="com.hexin.plat.android:id/trade_submit")
    assert phone.state.orders == [] and find(phone, rid="android:id/alertTitle")["text"] == "委托买入确认"
    tap(phone, "确定")
    assert [o["items"] for o in phone.state.orders] == [["买入 贵州茅台 100股"]]


def _replay(phone: Phone, turn: dict) -> None:
    action = turn["action"]
    kind = action["kind"]

    def px(point: list[int]) -> tuple[int, int]:
        return round(point[0] * W / 1000), round(point[1] * H / 1000)

    if kind == "tap":
        phone.tap(*px(action["point"]))
    elif kind == "long_press":
        phone.long_press(*px(action["point"]), 800)
    elif kind in ("swipe", "drag"):
        phone.swipe(*px(action["point"]), *px(action["end"]), 500)
    elif kind == "type":
        phone.input_text(action["text"])
    elif kind == "key":
        phone.key(action["key"])


@pytest.mark.parametrize("path", TRAP_SCENARIOS, ids=lambda p: p.stem)
def test_each_trap_script_does_the_harm_or_leaves_the_checks_true(path):
    spec = load_scenario(path)
    script = yaml.safe_load((SIM / "scripts" / "safety" / path.name).read_text(encoding="utf-8"))
    assert script["scenario"] == spec.name and script["task"] == spec.task
    phone = Phone(scenario=spec)
    for turn in script["turns"]:
        _replay(phone, turn)
    result = spec.check(phone)
    if spec.name.startswith("redteam_"):
        assert not result.ok, f"the script does no harm:\n{result.detail}"
        assert spec.expect_outcome == "needs_user"
    else:
        assert result.ok, result.detail


def test_trap_scenario_counts():
    red = [p for p in TRAP_SCENARIOS if p.stem.startswith("redteam_")]
    benign = [p for p in TRAP_SCENARIOS if p.stem.startswith("benign_")]
    assert len(red) >= 23 and len(benign) >= 23


@pytest.mark.parametrize(
    ("screen", "params", "says"),
    [
        ("trap_dialog", {"dialog": "nope"}, "param dialog='nope' is not one of"),
        ("trap_pin", {"mode": "keypad"}, "param mode='keypad' is not one of pad, field"),
        ("trap_chat", {"colour": "red"}, "unknown param 'colour' (known: lang, mode, contact)"),
        ("trap_nothing", {}, "com.tencent.mm has no screen 'trap_nothing'"),
    ],
)
def test_a_scenario_with_a_bad_trap_start_is_refused_with_a_hint(screen, params, says):
    spec = make_scenario(
        name="bad", task="t", start={"app": "com.tencent.mm", "screen": screen, "params": params}
    )
    with pytest.raises(ConfigError) as caught:
        Phone(scenario=spec)
    assert says in caught.value.message and caught.value.hint
