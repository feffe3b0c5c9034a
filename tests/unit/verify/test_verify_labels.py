"""Step labels: rules, the critic, its re-ask loop, failing open and closed."""

from __future__ import annotations

import pytest
from verify_helpers import screenshot

from mobile_agent.actions import Action
from mobile_agent.errors import ModelError
from mobile_agent.model.client import ModelClient
from mobile_agent.sim.farm import free_port
from mobile_agent.sim.servers.judge_server import JudgeScript
from mobile_agent.verify.judges import STEP
from mobile_agent.verify.labels import Critic, CriticUnavailable, Label, StepEvidence, rule_label


def test_label_parse():
    assert Label.parse(" Wrong ") is Label.WRONG
    assert Label.parse("INCORRECT") is Label.WRONG
    with pytest.raises(ValueError, match="unknown step label"):
        Label.parse("meh")


def test_rules_find_ineffective_steps_only_from_evidence():
    same, other = screenshot(1), screenshot(4)
    tap = Action.tap(10, 10)
    unchanged = rule_label(StepEvidence(0, tap, same), StepEvidence(1, tap, same))
    assert unchanged is not None and unchanged.label is Label.INEFFECTIVE and unchanged.source == "rule"
    assert rule_label(StepEvidence(0, tap, same), StepEvidence(1, tap, other)) is None
    no_action = rule_label(StepEvidence(0, None, same, "parse: bad"), None)
    assert no_action.label is Label.INEFFECTIVE and "parse: bad" in no_action.rationale
    assert rule_label(StepEvidence(0, Action.wait(), same), StepEvidence(1, tap, same)) is None
    assert rule_label(StepEvidence(0, Action.finish("ok"), same), None) is None
    assert rule_label(StepEvidence(0, tap, same), None) is None  # the last step has nothing to compare with


def test_critic_labels_the_proposed_action_on_the_marked_screenshot(judge_server, judge_client):
    judge_server.script = JudgeScript(labels={"tap(100, 200)": "wrong"})
    critic = Critic(judge_client)
    wrong = critic.label("task", ["launch(微信)"], screenshot(), "tap(100, 200)", action=Action.tap(100, 200))
    assert wrong.is_wrong and wrong.source == "critic" and "tap(100, 200)" in wrong.rationale
    assert critic.label("task", [], screenshot(), "tap(1, 2)").label is Label.CORRECT
    request = judge_server.requests_of(STEP)[0]
    assert request.images == 1 and "0: launch(微信)" in request.text


def test_review_re_asks_with_the_critique_until_not_wrong(judge_server, judge_client):
    judge_server.script = JudgeScript(labels={"tap(1, 1)": "wrong", "tap(2, 2)": "wrong"})
    corrections = []

    def propose(correction):
        corrections.append(correction)
        n = len(corrections)
        return f"proposal {n}", f"tap({n}, {n})", Action.tap(n, n)

    review = Critic(judge_client, max_reasks=2).review(
        propose, task="t", history_texts=[], screenshot_jpeg=None
    )
    assert review.proposal == "proposal 3" and review.reasks == 2 and review.allowed
    assert [x.label for x in review.labels] == [Label.WRONG, Label.WRONG, Label.CORRECT]
    assert corrections[0] is None and "tap(1, 1) as wrong" in corrections[1]


def test_review_gives_up_after_max_reasks(judge_server, judge_client):
    judge_server.script = JudgeScript(default_label="wrong")
    propose_calls = []

    def propose(correction):
        propose_calls.append(correction)
        return "p", "tap(5, 5)", None

    lenient = Critic(judge_client, max_reasks=1).review(
        propose, task="t", history_texts=[], screenshot_jpeg=None
    )
    assert lenient.allowed and lenient.reasks == 1 and len(propose_calls) == 2
    strict = Critic(judge_client, max_reasks=0, block_when_still_wrong=True)
    assert not strict.review(propose, task="t", history_texts=[], screenshot_jpeg=None).allowed


def test_review_passes_through_what_it_cannot_label(judge_client):
    review = Critic(judge_client).review(
        lambda correction: ("unparseable", None, None), task="t", history_texts=[], screenshot_jpeg=None
    )
    assert review.allowed and review.labels == [] and review.proposal == "unparseable"


def test_unreachable_critic_fails_open_or_closed():
    client = ModelClient([f"http://127.0.0.1:{free_port()}/v1"], "critic", max_retries=0, timeout=5)
    try:
        open_label = Critic(client).label("t", [], screenshot(), "tap(1, 1)")
        assert open_label.label is None and not open_label.reachable and not open_label.is_wrong
        assert "critic unavailable" in open_label.rationale
        with pytest.raises(CriticUnavailable) as caught:
            Critic(client, fail_closed=True).label("t", [], screenshot(), "tap(1, 1)")
        assert isinstance(caught.value, ModelError) and caught.value.kind == "critic_unavailable"
        assert "fails closed" in caught.value.message and caught.value.hint
    finally:
        client.close()


def test_a_critic_answering_nonsense_counts_as_unavailable(judge_server, judge_client):
    judge_server.script = JudgeScript(labels={"tap": "maybe"})
    assert Critic(judge_client).label("t", [], None, "tap(1, 1)").label is None
    with pytest.raises(CriticUnavailable):
        Critic(judge_client, fail_closed=True).label("t", [], None, "tap(1, 1)")
