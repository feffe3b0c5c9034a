"""Every shipped model script solves (or, for wechat_partial, deliberately half-solves) its scenario on a Phone."""

from pathlib import Path

import pytest
import yaml

from mobile_agent.actions import Action, ActionKind
from mobile_agent.sim.phone.phone import Phone
from mobile_agent.sim.scenario import list_scenarios, load_scenario

from .helpers import tap

SCRIPTS = Path(__file__).parents[3] / "mobile_agent" / "sim" / "scripts"
APP_PACKAGES = {
    "微信": "com.tencent.mm",
    "美团": "com.sankuai.meituan",
    "支付宝": "com.eg.android.AlipayGphone",
    "设置": "com.android.settings",
}
# What the app manifests' popup rules do before the model is asked (the scripts of popup variants rely on it).
POPUP_RULES = {"splash": "跳过", "update": "以后再说", "permission": "允许"}


def dismiss_popups(phone: Phone) -> None:
    for _ in range(5):
        package, screen = phone.screen()
        if not screen.startswith("popup:"):
            return
        kind = screen.split(":", 1)[1]
        if kind == "splash":
            skip = next(n for n in _nodes(phone) if n["text"].startswith("跳过"))
            phone.tap(*skip["center"])
        else:
            tap(phone, POPUP_RULES[kind])


def _nodes(phone):
    from .helpers import nodes

    return nodes(phone)


def perform(phone: Phone, action: Action) -> bool:
    """Do one action like the runtime would; False once the episode ends."""
    width, height = phone.window_size()

    def px(point):
        return round(point.x * width / 1000), round(point.y * height / 1000)

    kind = action.kind
    if kind is ActionKind.LAUNCH:
        assert phone.launch(APP_PACKAGES.get(action.app, action.app))
    elif kind is ActionKind.TAP:
        phone.tap(*px(action.point))
    elif kind is ActionKind.DOUBLE_TAP:
        phone.tap(*px(action.point))
        phone.tap(*px(action.point))
    elif kind is ActionKind.LONG_PRESS:
        phone.long_press(*px(action.point), action.duration_ms or 800)
    elif kind in (ActionKind.SWIPE, ActionKind.DRAG):
        phone.swipe(*px(action.point), *px(action.end), action.duration_ms or 300)
    elif kind is ActionKind.TYPE:
        phone.input_text(action.text)
    elif kind is ActionKind.KEY:
        phone.key(action.key.value)
    elif kind in (ActionKind.FINISH, ActionKind.ANSWER, ActionKind.CALL_USER):
        return False
    return True


def run_script(name: str):
    script = yaml.safe_load((SCRIPTS / f"{name}.yaml").read_text(encoding="utf-8"))
    scenario = load_scenario(script["scenario"])
    assert script["task"] == scenario.task
    phone = Phone(scenario=scenario)
    last = None
    for turn in script["turns"]:
        dismiss_popups(phone)
        if "action" not in turn:
            continue
        last = Action.from_dict(turn["action"])
        if not perform(phone, last):
            break
    return scenario, phone, last


def test_every_scenario_has_a_script_and_every_script_a_scenario():
    assert sorted(p.stem for p in SCRIPTS.glob("*.yaml")) == list_scenarios()


@pytest.mark.parametrize("name", [n for n in list_scenarios() if n != "wechat_partial"])
def test_script_solves_its_scenario(name):
    scenario, phone, last = run_script(name)
    result = scenario.check(phone)
    assert result.ok, result.detail
    expected_last = ActionKind.CALL_USER if scenario.expect_outcome == "needs_user" else ActionKind.FINISH
    assert last.kind is expected_last


def test_partial_script_leaves_one_of_two_checks():
    scenario, phone, last = run_script("wechat_partial")
    result = scenario.check(phone)
    assert not result.ok and (result.passed, result.total) == (1, 2)
    assert last.kind is ActionKind.FINISH


def test_alipay_script_ends_on_a_black_secure_screen():
    _, phone, _ = run_script("alipay_transfer")
    from io import BytesIO

    from PIL import Image

    image = Image.open(BytesIO(phone.screenshot("jpeg")))
    assert max(hi for _, hi in image.getextrema()) <= 8  # JPEG of an all-black frame
