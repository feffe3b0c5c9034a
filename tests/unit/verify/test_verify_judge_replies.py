"""Judge replies, reconciliation, and a Judge against the scripted judge server."""

from __future__ import annotations

import pytest
from verify_helpers import screenshot

from mobile_agent.errors import ModelError
from mobile_agent.model.client import ModelClient
from mobile_agent.sim.servers.judge_server import JudgeScript, ScriptedJudge
from mobile_agent.verify.judges import (
    EXTRACT,
    STEP,
    TRAJECTORY,
    EpisodeView,
    Judge,
    JudgeReplyError,
    StepView,
    marker,
    parse_json_reply,
    reconcile,
    request_kind,
)
from mobile_agent.verify.verdict import CompletionPoint, Verdict

TASK = "给张三发微信说晚上好"


def _episode(outcome: str = "finished") -> EpisodeView:
    steps = [StepView(i, f"tap({i}, {i})", "", screenshot(i)) for i in range(9)]
    steps.append(StepView(9, "finish('done')", "", screenshot(9)))
    return EpisodeView("ep1", TASK, steps, outcome, "done")


@pytest.mark.parametrize(
    "text",
    [
        '{"verdict": "partial"}',
        '<think>hmm {not json}</think>\n{"verdict": "partial"}',
        'Here you go:\n```json\n{"verdict": "partial"}\n```\nbye',
        'The answer is {"verdict": "partial"} as asked.',
    ],
)
def test_json_is_found_in_common_reply_shapes(text):
    assert parse_json_reply(text) == {"verdict": "partial"}


@pytest.mark.parametrize("text", ["", "all good", "{'verdict': partial}", "[1, 2]"])
def test_replies_without_a_json_object_are_judge_reply_errors(text):
    with pytest.raises(JudgeReplyError) as caught:
        parse_json_reply(text)
    assert caught.value.reply == text


def test_a_judge_cannot_call_complete_with_an_unmet_point():
    points = [CompletionPoint("typed", True), CompletionPoint("sent", False)]
    assert reconcile("complete", points) is Verdict.PARTIAL
    assert reconcile("failed", points) is Verdict.FAILED
    assert reconcile("infeasible", points) is Verdict.INFEASIBLE
    assert reconcile("nonsense", points) is Verdict.PARTIAL
    with pytest.raises(JudgeReplyError):
        reconcile(None, [])


def test_request_kind_reads_the_marker():
    messages = [{"role": "system", "content": marker(STEP) + "\nrest"}]
    assert request_kind(messages) == STEP
    assert request_kind([{"role": "user", "content": [{"type": "text", "text": marker(EXTRACT)}]}]) == EXTRACT
    assert request_kind([{"role": "user", "content": "hello"}]) is None


def test_judge_extracts_points_then_judges_them_on_the_last_screenshots(judge_server, judge_client):
    judge_server.script = JudgeScript(
        points={"给张三": ["chat opened", "text typed", "message sent"]},
        verdicts={TASK: {"verdict": "complete", "met": [True, True, False], "rationale": "not sent"}},
    )
    vote = Judge(judge_client, max_images=4).judge(_episode())
    assert vote.verdict is Verdict.PARTIAL  # said complete, but a point is unmet
    assert [p.description for p in vote.points] == ["chat opened", "text typed", "message sent"]
    assert vote.rationale == "not sent" and vote.model == "judge-test"
    assert vote.judge == judge_server.base_url
    kinds = [(r.kind, r.images) for r in judge_server.requests]
    assert kinds == [(EXTRACT, 0), (TRAJECTORY, 4)]
    assert "Screenshot of step 9 (before: finish('done'))" in judge_server.requests[1].text
    assert "Screenshot of step 5 " not in judge_server.requests[1].text


def test_given_points_skip_extraction(judge_server, judge_client):
    vote = Judge(judge_client).judge(_episode(), ["a", "b"])
    assert vote.verdict is Verdict.COMPLETE
    assert [r.kind for r in judge_server.requests] == [TRAJECTORY]


def test_a_malformed_judge_reply_is_a_judge_reply_error(judge_server, judge_client):
    judge_server.script = JudgeScript(malformed=True)
    with pytest.raises(JudgeReplyError):
        Judge(judge_client).judge(_episode(), ["a"])


def test_an_unreachable_judge_is_a_model_error(judge_server):
    judge_server.script = JudgeScript(http_error=503)
    client = ModelClient([judge_server.base_url], "judge-test", max_retries=1, backoff_s=0.01, timeout=5)
    with pytest.raises(ModelError):
        Judge(client).judge(_episode(), ["a"])
    assert len(judge_server.requests) == 2  # retried once
    client.close()


def test_scripted_trusting_judge_believes_the_agent():
    judge = ScriptedJudge(JudgeScript(trust_agent=True))
    text = f"Task: {TASK}\nCompletion points:\n1. a\n2. b\nSteps (index: action):\n0: tap(1, 1)\n"
    said_done = judge.answer(TRAJECTORY, text + "The agent stopped with outcome finished", None)
    assert said_done["verdict"] == "complete" and [p["met"] for p in said_done["points"]] == [True, True]
    gave_up = judge.answer(TRAJECTORY, text + "The agent stopped with outcome max_steps", None)
    assert gave_up["verdict"] == "failed"


def test_scripted_verdicts_by_episode_come_before_task():
    judge = ScriptedJudge(JudgeScript(verdicts={"ep7": "failed", TASK: "complete"}))
    text = f"Task: {TASK}\nCompletion points:\n1. a\n2. b\n"
    assert judge.answer(TRAJECTORY, text, "ep7")["verdict"] == "failed"
    partial = judge.answer(TRAJECTORY, text.replace("failed", ""), "ep8")
    assert partial["verdict"] == "complete"
