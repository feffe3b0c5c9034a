"""A task run again after an attempt that stopped part-way asks before anything consequential: the earlier
attempt's send (done) or any action whose outcome is unknown (intent, failed) turns every allow into ask."""

from __future__ import annotations

from mobile_agent.actions import Action
from mobile_agent.farm.scheduler.prior import (
    asking,
    asking_for,
    consequential_kinds,
    prior_effects,
    prior_steps,
)
from mobile_agent.gate.policy import PolicyAction, parse_policy
from mobile_agent.store import queue as q
from mobile_agent.store.records import StepRecord
from mobile_agent.store.store import TrajectoryStore


def _claim(run_id: str, attempt: int) -> q.Claim:
    return q.Claim(1, run_id, 0, "t:1", "send", None, {}, attempt, "tok", "w", "dev")


def test_earlier_attempts_with_unsure_or_consequential_steps_are_found(tmp_path) -> None:
    with TrajectoryStore.open(root=tmp_path) as store:
        run = store.create_run("r")
        first = store.start_episode(
            "send", device="d", family="f", model="m", run_id=run.id, meta={"queue_task": 1, "attempt": 1}
        )
        tap = Action.tap(500, 900)
        store.record_step(first.id, StepRecord(index=0, action=Action.launch("wechat"), status="done"))
        sent = [{"guard": "safety", "verdict": "allow", "kind": "send"}]
        store.record_step(first.id, StepRecord(index=1, action=tap, guard_decisions=sent, status="done"))
        store.record_step(first.id, StepRecord(index=2, action=tap, status="intent"))
        assert prior_effects(store, _claim(run.id, 1)) == []  # a first attempt has no past
        effects = prior_effects(store, _claim(run.id, 2))
        assert len(effects) == 2
        assert (
            "step 1" in effects[0]
            and "send" in effects[0]
            and "step 2" in effects[1]
            and "intent" in effects[1]
        )


def test_asking_turns_every_allow_into_ask_and_keeps_deny() -> None:
    policy = parse_policy(["default=allow"], allow=["send@com.tencent.mm"], deny=["pay"])
    strict = asking(policy)
    assert strict.default is PolicyAction.ASK
    assert strict.decide("send", ["com.tencent.mm"])[0] is PolicyAction.ASK
    assert strict.decide("pay")[0] is PolicyAction.DENY


def test_only_consequential_kinds_ask_again_and_an_unknown_harmless_tap_asks_nothing(tmp_path) -> None:
    with TrajectoryStore.open(root=tmp_path) as store:
        run = store.create_run("r")
        first = store.start_episode(
            "send", device="d", family="f", model="m", run_id=run.id, meta={"queue_task": 1, "attempt": 1}
        )
        store.record_step(first.id, StepRecord(index=0, action=Action.tap(500, 900), status="intent"))
        harmless = prior_steps(store, _claim(run.id, 2))
        assert [s.unsure for s in harmless] == [True] and consequential_kinds(harmless) == []
        sent = [{"guard": "safety", "verdict": "allow", "kind": "send"}]
        store.record_step(first.id, StepRecord(index=1, action=Action.tap(9, 9), guard_decisions=sent))
        assert consequential_kinds(prior_steps(store, _claim(run.id, 2))) == ["send"]

    policy = parse_policy(["default=allow"], allow=["send@com.tencent.mm"], deny=["pay"])
    careful = asking_for(policy, ["send"])
    assert careful.decide("send", ["com.tencent.mm"])[0] is PolicyAction.ASK  # the uncertain kind asks
    assert careful.decide("send")[0] is PolicyAction.ASK
    assert careful.decide("open_link")[0] is PolicyAction.ALLOW  # every other kind as before
    assert careful.decide("pay")[0] is PolicyAction.DENY
    assert asking_for(policy, []) is policy
