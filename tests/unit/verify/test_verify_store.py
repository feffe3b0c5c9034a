"""The judgments table and the verdict read back from it."""

from __future__ import annotations

import pytest
from verify_helpers import screenshot

from mobile_agent.actions import Action, Outcome
from mobile_agent.errors import StoreError
from mobile_agent.sim.servers.judge_server import JudgeScript
from mobile_agent.store.judgments import JudgmentRecord, judgments, latest_per_judge, record_judgment
from mobile_agent.store.records import StepRecord
from mobile_agent.store.store import TrajectoryStore
from mobile_agent.verify.judges import Judge
from mobile_agent.verify.labels import Label
from mobile_agent.verify.service import (
    episode_verdict,
    judge_episode,
    label_episode,
    record_check,
    run_verdicts,
    step_labels,
)
from mobile_agent.verify.verdict import CheckVerdict, CompletionPoint, Verdict, summarize


@pytest.fixture
def store(tmp_path):
    with TrajectoryStore.open(f"sqlite:///{tmp_path}/t.db", root=tmp_path) as opened:
        yield opened


def _episode(store, screens=(0, 1, 1, 2), run_id=None):
    episode = store.start_episode(
        "给张三发微信说晚上好", device="sim", family="ui-venus-2", model="m", run_id=run_id
    )
    actions = [
        Action.launch("com.tencent.mm"),
        Action.tap(10, 10),
        Action.type("晚上好"),
        Action.finish("ok"),
    ]
    for index, (mark, action) in enumerate(zip(screens, actions, strict=False)):
        store.record_step(episode.id, StepRecord(index=index, action=action), screenshot=screenshot(mark))
    store.finish_episode(episode.id, Outcome.FINISHED, answer="ok")
    return episode.id


def test_judgments_round_trip_and_newest_per_judge(store):
    ep = _episode(store)
    first = record_judgment(store, JudgmentRecord(ep, "judge", "http://user:pw@j1/v1", verdict="complete"))
    record_judgment(store, JudgmentRecord(ep, "judge", "http://user:pw@j1/v1", verdict="partial", model=None))
    record_judgment(store, JudgmentRecord(ep, "rule", "rules", step_index=1, label="ineffective"))
    rows = judgments(store, ep)
    assert [r.verdict or r.label for r in rows] == ["complete", "partial", "ineffective"]
    assert first.judge == "http://***@j1/v1" and first.created_at.tzinfo is not None
    assert [r.verdict for r in latest_per_judge(judgments(store, ep, steps=False))] == ["partial"]
    assert [r.label for r in judgments(store, ep, steps=True)] == ["ineffective"]


@pytest.mark.parametrize(
    ("record", "needle"),
    [
        (JudgmentRecord("nope", "judge", "j", verdict="complete"), "no episode"),
        (JudgmentRecord("EP", "oracle", "j"), "unknown judgment source"),
        (JudgmentRecord("EP", "judge", "j", label="wrong"), "needs a step index"),
        (JudgmentRecord("EP", "judge", "j", step_index=0, verdict="complete"), "whole episode"),
    ],
)
def test_inconsistent_judgments_are_refused(store, record, needle):
    ep = _episode(store)
    fixed = JudgmentRecord(**{**record.__dict__, "episode_id": ep if record.episode_id == "EP" else "nope"})
    with pytest.raises(StoreError, match=needle):
        record_judgment(store, fixed)


def test_episode_verdict_prefers_a_state_check_and_shows_the_judges(store):
    ep = _episode(store)
    assert episode_verdict(store, ep) is None
    record_judgment(store, JudgmentRecord(ep, "judge", "j1", verdict="complete", model="a"))
    record_judgment(store, JudgmentRecord(ep, "judge", "j2", verdict="complete", model="b"))
    assert episode_verdict(store, ep).verdict is Verdict.COMPLETE
    record_check(
        store, ep, CheckVerdict([CompletionPoint("typed", True), CompletionPoint("sent", False)], True)
    )
    final = episode_verdict(store, ep)
    assert final.verdict is Verdict.PARTIAL and final.source == "check" and not final.is_success
    assert final.agreement == 0.0 and [p.met for p in final.points] == [True, False]


def test_judge_episode_stores_votes_and_failures(store, judge_server, judge_client):
    from mobile_agent.model.client import ModelClient

    ep = _episode(store)
    judge_server.script = JudgeScript(default_verdict="partial")
    broken = ModelClient(["http://127.0.0.1:1/v1"], "x", max_retries=0, timeout=2)
    votes = judge_episode(store, ep, [Judge(judge_client), Judge(broken, name="broken")])
    broken.close()
    assert [v.verdict for v in votes] == [Verdict.PARTIAL]
    rows = judgments(store, ep, source="judge")
    assert {r.judge: (r.verdict, bool(r.error)) for r in rows} == {
        judge_server.base_url: ("partial", False),
        "broken": (None, True),
    }
    assert rows[0].prompt_version == "judge-v1" and rows[0].points
    assert episode_verdict(store, ep).verdict is Verdict.PARTIAL


def test_label_episode_uses_rules_then_the_judge(store, judge_server, judge_client):
    ep = _episode(store, screens=(0, 1, 1, 2))
    judge_server.script = JudgeScript(labels={"launch": "correct", "type": "wrong"})
    labels = label_episode(store, ep, judge_client=judge_client)
    assert labels[1].label is Label.INEFFECTIVE and labels[1].source == "rule"  # screen 1 -> screen 1
    assert labels[0].label is Label.CORRECT and labels[2].label is Label.WRONG
    assert labels[3].label is Label.CORRECT  # finish: no rule, the judge decides
    stored = step_labels(store, ep)
    assert stored[1][0].source == "rule" and stored[2][0].label is Label.WRONG
    without_judge = _episode(store, screens=(3, 3, 4, 5))
    assert set(label_episode(store, without_judge)) == {0}


def test_run_verdicts_and_summary_count_complete_only(store):
    run = store.create_run("batch")
    done, half, unverified = (_episode(store, run_id=run.id) for _ in range(3))
    record_check(store, done, CheckVerdict([CompletionPoint("sent", True)], True))
    record_check(
        store, half, CheckVerdict([CompletionPoint("typed", True), CompletionPoint("sent", False)], True)
    )
    verdicts = run_verdicts(store, run.id)
    assert verdicts[unverified] is None
    summary = summarize(verdicts.values())
    assert (summary.successes, summary.unverified, summary.counts["partial"]) == (1, 1, 1)
