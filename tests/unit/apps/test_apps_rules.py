"""Popup rules on uiautomator dumps, and consequential rules for the safety gate."""

from __future__ import annotations

import pytest

from mobile_agent.actions import Action, ActionKind, Key
from mobile_agent.apps.registry import load_registry


def test_splash_ad_skip_is_tapped_at_its_centre(registry, fixture_xml):
    match = registry.match_popup("com.taobao.taobao", fixture_xml("splash_ad.xml"))
    assert match is not None and match.rule.id == "splash_skip"
    assert match.action == Action.tap(960, 155)
    assert match.app_id is None  # a shared rule


def test_update_prompt_taps_later(registry, fixture_xml):
    match = registry.match_popup("com.jingdong.app.mall", fixture_xml("update_prompt.xml"))
    assert match is not None and match.rule.id == "update_later"
    assert match.action == Action.tap(330, 1480)
    assert match.element.text == "以后再说"


def test_normal_screen_has_no_popup(registry, fixture_xml):
    # Running text that contains 以后再说 / 跳过 and an invisible 跳过 node must not trigger anything.
    assert registry.match_popup("com.tencent.mm", fixture_xml("normal_screen.xml")) is None


def test_permission_dialog_grants_while_in_use(registry, fixture_xml):
    match = registry.match_popup("com.android.permissioncontroller", fixture_xml("permission_dialog.xml"))
    assert match is not None and match.rule.id == "permission_while_in_use"
    assert match.action == Action.tap(540, 1960)


def test_allow_outside_the_permission_controller_is_left_alone(registry, fixture_xml):
    xml = (
        fixture_xml("permission_dialog.xml")
        .replace("仅在使用中允许", "允许")
        .replace('package="com.android.permissioncontroller"', 'package="com.example.app"')
    )
    assert registry.match_popup("com.example.app", xml) is None


def test_garbage_xml_is_no_match(registry):
    assert registry.match_popup("com.tencent.mm", "<hierarchy><node") is None
    assert registry.match_popup("com.tencent.mm", "") is None


APP_RULES = """\
id: demo
name: 演示
package: com.example.demo
category: tools
source: {kind: common_knowledge}
popups:
  - id: coupon
    match: {resource_id: "com.example.demo:id/coupon_close"}
  - id: survey
    match: {xpath: "//node[@text='问卷调查']"}
    dismiss: {press: back}
  - id: agree
    match: {text_pattern: 用户协议}
    dismiss: {tap: {text: 同意}}
"""


def _node(text="", rid="", bounds="[0,0][100,100]", pkg="com.example.demo"):
    return (
        f'<node index="0" text="{text}" resource-id="{rid}" class="android.widget.TextView" package="{pkg}" '
        f'content-desc="" clickable="true" bounds="{bounds}" />'
    )


def _dump(*nodes: str) -> str:
    return f'<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0">{"".join(nodes)}</hierarchy>'


@pytest.fixture
def demo_registry(tmp_path):
    (tmp_path / "demo.yaml").write_text(APP_RULES, encoding="utf-8")
    return load_registry(tmp_path)


def test_app_rule_by_resource_id(demo_registry):
    match = demo_registry.match_popup(
        "com.example.demo", _dump(_node(rid="com.example.demo:id/coupon_close", bounds="[10,20][30,60]"))
    )
    assert match.rule.id == "coupon" and match.action == Action.tap(20, 40) and match.app_id == "demo"


def test_app_rule_by_xpath_presses_back(demo_registry):
    match = demo_registry.match_popup("com.example.demo", _dump(_node(text="问卷调查")))
    assert match.rule.id == "survey" and match.action.kind is ActionKind.KEY and match.action.key is Key.BACK


def test_app_rule_taps_another_element(demo_registry):
    xml = _dump(_node(text="请阅读用户协议和隐私政策"), _node(text="同意", bounds="[500,1000][700,1100]"))
    assert demo_registry.match_popup("com.example.demo", xml).action == Action.tap(600, 1050)
    # without the element to tap the rule does not apply
    assert demo_registry.match_popup("com.example.demo", _dump(_node(text="请阅读用户协议"))) is None


def test_app_rules_apply_only_to_their_app(demo_registry):
    xml = _dump(_node(rid="com.example.demo:id/coupon_close"))
    assert demo_registry.match_popup("com.tencent.mm", xml) is None


# ---- consequential ----------------------------------------------------------------------------------------------
def el(text="", resource_id="", content_desc="", cls="android.widget.Button"):
    return {"text": text, "resource_id": resource_id, "content_desc": content_desc, "class": cls}


@pytest.mark.parametrize(
    ("package", "element", "kind"),
    [
        ("com.tencent.mm", el("发送"), "send"),
        ("com.tencent.mm", el(content_desc="发送", cls="android.widget.ImageButton"), "send"),
        ("com.tencent.mm", el("转账"), "transfer"),
        ("com.eg.android.AlipayGphone", el("确认付款"), "pay"),
        ("com.taobao.taobao", el("提交订单"), "order"),
        ("com.example.unknown", el("立即支付"), "pay"),
        ("com.example.unknown", el(" 删除 "), "delete"),
        (
            "com.android.dialer",
            el(resource_id="com.android.dialer:id/dialpad_floating_action_button"),
            "call",
        ),
        ("com.hexin.plat.android", el("确认买入"), "order"),
    ],
)
def test_consequential_elements(registry, package, element, kind):
    rule = registry.match_consequential(package, element)
    assert rule is not None and rule.kind == kind


@pytest.mark.parametrize(
    ("package", "element"),
    [
        ("com.tencent.mm", el("通讯录")),
        ("com.taobao.taobao", el("支付宝")),  # the word, not a pay button
        ("com.example.unknown", el("发送")),  # send is only consequential where an app says so
        ("com.taobao.taobao", el("加入购物车")),
    ],
)
def test_harmless_elements(registry, package, element):
    assert registry.match_consequential(package, element) is None


def test_consequential_lists_app_rules_before_shared_ones(registry):
    rules = registry.consequential("com.tencent.mm")
    assert rules[0].kind == "send" and any(r.kind == "delete" for r in rules)


def test_payment_password_screen(registry):
    xml = _dump(
        _node(text="请输入支付密码", pkg="com.tencent.mm"), _node(text="¥ 88.00", pkg="com.tencent.mm")
    )
    found = registry.match_consequential_screen("com.tencent.mm", xml)
    assert found is not None and found[0].kind == "pay" and found[1].text == "请输入支付密码"
    assert registry.match_consequential_screen("com.tencent.mm", _dump(_node(text="聊天"))) is None


@pytest.mark.parametrize(
    "label", ["跳过", "跳过 3", "3 跳过", "5s 跳过", "跳过广告", "跳过 5s", "跳过 >", "跳过|3秒"]
)
def test_splash_skip_label_variants(registry, label):
    match = registry.match_popup("com.example.any", _dump(_node(text=label, bounds="[900,100][1000,160]")))
    assert match is not None and match.rule.id == "splash_skip" and match.action == Action.tap(950, 130)


@pytest.mark.parametrize("label", ["跳过这个话题", "不要跳过", "跳过了 3 首歌"])
def test_running_text_with_skip_is_not_a_splash(registry, label):
    assert registry.match_popup("com.example.any", _dump(_node(text=label))) is None


def test_later_button_without_an_update_dialog_is_left_alone(registry):
    assert (
        registry.match_popup("com.example.any", _dump(_node(text="以后再说"), _node(text="开启定位服务")))
        is None
    )
    with_update = _dump(_node(text="以后再说", bounds="[0,0][100,50]"), _node(text="发现新版本"))
    assert registry.match_popup("com.example.any", with_update).rule.id == "update_later"


def test_a_manifest_can_declare_every_consequence_kind_the_gate_knows():
    from typing import get_args

    from mobile_agent.apps.schema import ConsequenceKind
    from mobile_agent.gate.lexicon import KINDS

    assert set(get_args(ConsequenceKind)) == set(KINDS) - {"sensitive"}
