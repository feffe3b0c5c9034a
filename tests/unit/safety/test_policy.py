import pytest

from mobile_agent.errors import UserError
from mobile_agent.gate.policy import PolicyAction, SafetyPolicy, parse_policy


def test_default_is_ask():
    assert SafetyPolicy().decide("pay", ["com.x"]) == (PolicyAction.ASK, "default=ask")


def test_most_specific_rule_wins():
    policy = parse_policy(["deny", "pay=ask", "pay@com.sankuai.meituan=allow", "*@com.tencent.mm=deny"])
    assert policy.decide("pay", ["com.sankuai.meituan"])[0] is PolicyAction.ALLOW
    assert policy.decide("pay", ["com.other"])[0] is PolicyAction.ASK
    assert policy.decide("send", ["com.other"])[0] is PolicyAction.DENY
    assert policy.decide("pay", ["com.tencent.mm"])[0] is PolicyAction.DENY  # *@app beats a bare kind


def test_allow_list_names_kind_and_app_and_matches_app_names():
    policy = parse_policy(allow=["send@com.tencent.mm", "pay@美团"])
    assert policy.decide("send", ["com.tencent.mm"])[0] is PolicyAction.ALLOW
    assert policy.decide("transfer", ["com.tencent.mm"])[0] is PolicyAction.ASK
    assert policy.decide("send", ["com.other"])[0] is PolicyAction.ASK
    assert policy.decide("pay", ["com.sankuai.meituan", "meituan", "美团"])[0] is PolicyAction.ALLOW


def test_round_trip_through_a_dict():
    policy = parse_policy(["deny,send@com.tencent.mm=allow"], ask=["pay"])
    assert SafetyPolicy.from_dict(policy.to_dict()) == policy


@pytest.mark.parametrize("bad", ["sometimes", "pay=maybe", "teleport=allow", "pay@=allow"])
def test_bad_policy_is_a_user_error_with_a_hint(bad):
    with pytest.raises(UserError) as err:
        parse_policy([bad])
    assert err.value.hint


def test_bad_allow_item_is_a_user_error():
    with pytest.raises(UserError):
        parse_policy(allow=["fly@com.x"])
