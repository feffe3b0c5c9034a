"""The critic's request is bounded by the caller's deadline (the step's): a critic still silent when it passes is a
DeadlineExceeded (the episode's timeout), whether the critic fails open or closed; any other failure is as before."""

from __future__ import annotations

import pytest
from verify_helpers import screenshot

from mobile_agent.actions import Action
from mobile_agent.errors import DeadlineExceeded
from mobile_agent.sim.servers.judge_server import JudgeScript
from mobile_agent.verify.labels import Critic
from mobile_agent.waits.deadlines import Deadline


@pytest.mark.parametrize("fail_closed", [False, True], ids=["fail-open", "fail-closed"])
def test_a_slow_critic_past_the_deadline_raises_deadline_exceeded(judge_server, judge_client, fail_closed):
    judge_server.script = JudgeScript(delay_ms=5000)
    critic = Critic(judge_client, fail_closed=fail_closed)
    deadline = Deadline.after(0.3, "the step limit of 0.3 s")
    with pytest.raises(DeadlineExceeded, match="step limit of 0.3 s"):
        critic.label("task", [], screenshot(), "tap(1, 2)", action=Action.tap(1, 2), deadline=deadline)


def test_a_critic_failing_otherwise_within_the_deadline_still_fails_open(judge_server, judge_client):
    judge_server.script = JudgeScript(malformed=True)
    label = Critic(judge_client).label(
        "task", [], screenshot(), "tap(1, 2)", deadline=Deadline.after(30, "x")
    )
    assert label.label is None and "critic unavailable" in label.rationale


def test_review_hands_the_deadline_to_every_label(judge_server, judge_client):
    judge_server.script = JudgeScript(delay_ms=5000)
    critic = Critic(judge_client, max_reasks=2)
    with pytest.raises(DeadlineExceeded):
        critic.review(
            lambda correction: ("p", "tap(1, 1)", Action.tap(1, 1)),
            task="t",
            history_texts=[],
            screenshot_jpeg=None,
            deadline=Deadline.after(0.3, "the step limit of 0.3 s"),
        )
