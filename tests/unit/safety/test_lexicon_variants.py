"""Labels written the ways an attacker (or an app) might write them: the folded form names the same kind."""

import pytest

from mobile_agent.gate.lexicon import is_no, is_yes, verb_kind


@pytest.mark.parametrize(
    ("label", "kind"),
    [
        ("P-a-y", "pay"),
        ("S.E.N.D", "send"),
        ("ＰＡＹ ＮＯＷ", "pay"),
        ("Ρау nоw", "pay"),  # Greek Rho, Cyrillic а, у, о
        ("确认\u200b支付", "pay"),
        ("確認付款", "pay"),
        ("發 送", "send"),
        ("¥99.00 立即支付", "pay"),
        ("同意并支付", "pay"),
        ("Send money", "transfer"),
        ("Delete all", "delete"),
        ("一键清理", "delete"),
        ("视频通话", "call"),
        ("送信", "send"),
        ("今すぐ購入", "order"),
        ("決済する", "pay"),
        ("削除", "delete"),
        ("결제하기", "pay"),
        ("송금", "transfer"),
        ("삭제", "delete"),
    ],
)
def test_variants_name_their_kind(label, kind):
    found = verb_kind(label)
    assert found is not None and found[0] == kind, (label, found)


@pytest.mark.parametrize(
    "label",
    [
        "Display",
        "Payment methods",
        "查看订单",
        "订单详情",
        "支付宝",
        "转账记录",
        "记得转账AA",
        "[转账]",
        "发送验证码",
    ],
)
def test_places_and_running_text_name_no_control(label):
    assert verb_kind(label) is None


def test_yes_and_no_survive_width_and_case():
    assert is_yes("ＯＫ") and is_yes("Confirm") and is_yes("确 定")
    assert is_no("Cancel") and is_no("取 消") and not is_no("确定")
