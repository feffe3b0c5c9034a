import io
import time

import pytest
from PIL import Image, ImageStat

from mobile_agent.errors import ConfigError, UserError
from mobile_agent.sim.phone.phone import Phone, PhoneConfig
from mobile_agent.sim.profiles import LatencyProfile
from mobile_agent.sim.scenario import list_scenarios, load_scenario, make_scenario, scenario_from_yaml

from .helpers import find, nodes, tap

SHIPPED = {
    "wechat_send",
    "meituan_order",
    "alipay_transfer",
    "settings_dark_mode",
    "settings_wifi_off",
    "wechat_partial",
    "wechat_send_splash",
    "meituan_update",
}


def test_shipped_scenarios_load():
    assert SHIPPED <= set(list_scenarios())
    for name in list_scenarios():
        scenario = load_scenario(name)
        assert scenario.name == name and scenario.task and scenario.checks


def test_unknown_scenario_is_a_user_error_with_the_choices():
    with pytest.raises(UserError) as err:
        load_scenario("nope")
    assert "wechat_send" in err.value.hint


def test_a_bad_check_names_file_and_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        "name: bad\ntask: t\ncheck:\n  - 'messages_sent contains {contact: 张三}'\n  - 'inbox has x'\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as err:
        load_scenario(str(path))
    assert err.value.path == str(path) and err.value.line == 5
    assert "inbox has x" in err.value.message


def test_unknown_fields_and_popups_are_reported_with_lines():
    with pytest.raises(ConfigError) as err:
        scenario_from_yaml("name: x\npopups:\n  com.tencent.mm:\n    - {kind: fireworks}\n", "x.yaml")
    assert err.value.line == 4 and "fireworks" in err.value.message
    with pytest.raises(ConfigError) as err:
        scenario_from_yaml("name: x\nstrat: {app: launcher}\n", "x.yaml")
    assert err.value.line == 2


def test_broken_yaml_is_a_config_error_with_a_line():
    with pytest.raises(ConfigError) as err:
        scenario_from_yaml("name: x\ncheck: [a\n", "x.yaml")
    assert err.value.line is not None


def test_checks_report_what_failed():
    scenario = make_scenario(
        name="t",
        check=[
            "messages_sent contains {contact: 张三, text: 晚上好}",
            "len(orders) == 0",
            "balance >= 100",
            "foreground == com.android.launcher3",
        ],
    )
    phone = Phone(scenario=scenario)
    result = scenario.check(phone)
    assert not result.ok and (result.passed, result.total) == (3, 4)
    assert "✗ messages_sent contains" in result.detail and "actual: []" in result.detail


def test_seed_start_screen_and_removed_packages():
    scenario = make_scenario(
        name="seeded",
        start={"app": "com.tencent.mm", "screen": "chat", "params": {"contact": "老板"}},
        seed={"wechat_chats": {"老板": [{"from": "老板", "text": "方案发我"}]}},
        removed_packages=["com.taobao.taobao"],
    )
    phone = Phone(scenario=scenario)
    assert phone.screen() == ("com.tencent.mm", "chat")
    assert find(phone, "方案发我")
    assert "com.taobao.taobao" not in phone.installed_packages()


def test_apply_scenario_resets_state():
    phone = Phone()
    phone.launch("com.tencent.mm")
    phone.state.messages_sent.append({"contact": "x"})
    phone.apply_scenario("wechat_send")
    assert phone.state.messages_sent == [] and phone.current()[0] == "com.android.launcher3"
    assert phone.scenario.name == "wechat_send"


def popup_phone(*kinds, seconds=3.0):
    scenario = make_scenario(
        name="p", popups={"com.sankuai.meituan": [{"kind": k, "seconds": seconds} for k in kinds]}
    )
    phone = Phone(scenario=scenario)
    assert phone.launch("com.sankuai.meituan")
    return phone


def test_splash_counts_down_and_dismisses_itself():
    phone = popup_phone("splash", seconds=0.3)
    assert phone.screen()[1] == "popup:splash"
    assert any(n["text"] == "跳过 1" for n in nodes(phone))
    time.sleep(0.35)
    assert phone.screen() == ("com.sankuai.meituan", "home")
    assert phone.state.popups_dismissed == [
        {"package": "com.sankuai.meituan", "popup": "splash", "how": "timeout"}
    ]


def test_popups_queue_in_order_and_dismiss_by_their_buttons():
    phone = popup_phone("splash", "permission", "update")
    tap(phone, "跳过 3")
    assert phone.screen()[1] == "popup:permission"
    assert find(phone, rid="com.android.permissioncontroller:id/permission_allow_button")["package"] == (
        "com.android.permissioncontroller"
    )
    tap(phone, "允许")
    tap(phone, "以后再说")
    assert phone.screen()[1] == "home"
    assert [d["how"] for d in phone.state.popups_dismissed] == ["skipped", "allowed", "later"]


def test_back_dismisses_update_but_not_captcha():
    phone = popup_phone("update", "captcha")
    phone.key("back")
    assert phone.screen()[1] == "popup:captcha"
    phone.key("back")
    assert phone.screen()[1] == "popup:captcha"


def test_captcha_needs_the_right_drag():
    phone = popup_phone("captcha")
    handle = find(phone, desc="滑块")
    track = find(phone, rid="com.sankuai.meituan:id/captcha_track")
    x, y = handle["center"]
    left, right = (int(v) for v in track["bounds"].strip("[]").replace("][", ",").split(",")[0:3:2])
    phone.drag(x, y, x + 50, y, 500)
    assert phone.screen()[1] == "popup:captcha"
    phone.drag(x, y, x + round((right - left) * 0.62), y, 500)
    assert phone.screen()[1] == "home"


def test_login_wall_logs_in():
    phone = popup_phone("login")
    tap(phone, "一键登录")
    assert phone.state.logged_in == {"com.sankuai.meituan": True} and phone.screen()[1] == "home"


def test_generic_app_shows_its_name_and_searches():
    phone = Phone(PhoneConfig(extra_packages=["com.example.notes"]))
    phone.install("com.example.notes", label="记事本")
    assert phone.launch("com.example.notes")
    assert find(phone, "记事本")
    tap(phone, rid="com.example.notes:id/search_box")
    phone.input_text("周报")
    phone.key("enter")
    assert phone.screen() == ("com.example.notes", "search") and find(phone, "“周报”的搜索结果")


def test_recents_and_lockscreen():
    phone = Phone()
    phone.launch("com.tencent.mm")
    phone.key("home")
    phone.key("recent")
    assert phone.screen() == ("com.android.launcher3", "recents")
    tap(phone, desc="微信")
    assert phone.current()[0] == "com.tencent.mm"
    phone.key("power")
    assert not phone.screen_on
    assert Image.open(io.BytesIO(phone.screenshot("png"))).getextrema() == ((0, 0), (0, 0), (0, 0))
    phone.key("wakeup")
    assert phone.screen() == ("com.android.systemui", "lockscreen")
    phone.swipe(540, 2000, 540, 600, 300)
    assert phone.current()[0] == "com.tencent.mm" and not phone.locked


def test_dark_mode_changes_every_app_rendering():
    phone = Phone()
    phone.launch("com.tencent.mm")
    light = ImageStat.Stat(Image.open(io.BytesIO(phone.screenshot("jpeg"))).convert("L")).mean[0]
    phone.settings[("secure", "ui_night_mode")] = "2"
    dark = ImageStat.Stat(Image.open(io.BytesIO(phone.screenshot("jpeg"))).convert("L")).mean[0]
    assert dark < light * 0.5


def test_a_screenshot_mid_transition_is_an_intermediate_frame():
    phone = Phone()
    phone.profile = LatencyProfile("test", transition=0.4)
    phone.launch("com.tencent.mm")
    before = Image.open(io.BytesIO(phone.screenshot("png"))).convert("RGB")
    tap(phone, "张三")
    mid = Image.open(io.BytesIO(phone.screenshot("png"))).convert("RGB")
    time.sleep(0.45)
    after = Image.open(io.BytesIO(phone.screenshot("png"))).convert("RGB")
    assert mid.tobytes() not in (before.tobytes(), after.tobytes())
