"""Verdict records, voting and summaries."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mobile_agent.verify.verdict import (
    CheckVerdict,
    CompletionPoint,
    JudgeVote,
    Verdict,
    combine,
    most_conservative,
    summarize,
    verdict_from_points,
    vote,
)


def _vote(judge: str, verdict: str) -> JudgeVote:
    return JudgeVote(judge, "m", Verdict(verdict))


def test_only_complete_is_success():
    assert [v.value for v in Verdict if v.is_success] == ["complete"]


def test_conservative_order_puts_partial_below_complete():
    assert [v.value for v in sorted(Verdict, key=lambda v: v.rank)] == [
        "failed",
        "partial",
        "infeasible",
        "complete",
    ]
    assert most_conservative([Verdict.COMPLETE, Verdict.PARTIAL]) is Verdict.PARTIAL


def test_verdict_parse_accepts_judge_spellings_and_rejects_others():
    assert Verdict.parse(" Complete ") is Verdict.COMPLETE
    try:
        Verdict.parse("done")
    except ValueError as exc:
        assert "known: failed, partial, infeasible, complete" in str(exc)
    else:
        raise AssertionError("'done' was accepted")


def test_majority_wins_and_dissent_is_visible():
    result = vote([_vote("a", "partial"), _vote("b", "complete"), _vote("c", "partial")])
    assert result.verdict is Verdict.PARTIAL
    assert not result.tie and not result.unanimous
    assert abs(result.agreement - 2 / 3) < 1e-9
    assert [v.judge for v in result.dissent] == ["b"]
    assert result.describe() == "partial by 2 of 3 judge(s) (dissent: b=complete)"


def test_tie_goes_to_the_more_conservative_verdict():
    result = vote([_vote("a", "complete"), _vote("b", "partial")])
    assert result.verdict is Verdict.PARTIAL and result.tie
    assert "on a tie" in result.describe()
    three_way = vote([_vote("a", "complete"), _vote("b", "infeasible"), _vote("c", "failed")])
    assert three_way.verdict is Verdict.FAILED


@given(st.lists(st.sampled_from(list(Verdict)), min_size=1, max_size=9))
def test_vote_picks_the_most_conservative_of_the_most_common(verdicts):
    result = vote([JudgeVote(f"j{i}", "m", v) for i, v in enumerate(verdicts)])
    top = max(verdicts.count(v) for v in verdicts)
    leaders = {v for v in verdicts if verdicts.count(v) == top}
    assert result.verdict is min(leaders, key=lambda v: v.rank)
    if verdicts.count(Verdict.COMPLETE) <= verdicts.count(Verdict.PARTIAL):
        assert result.verdict is not Verdict.COMPLETE  # partial is never promoted


def test_points_give_complete_partial_failed_or_nothing():
    met, unmet, unknown = (
        CompletionPoint("a", True),
        CompletionPoint("b", False),
        CompletionPoint("c", None),
    )
    assert verdict_from_points([met, met]) is Verdict.COMPLETE
    assert verdict_from_points([met, unmet, unknown]) is Verdict.PARTIAL
    assert verdict_from_points([unmet, unknown]) is Verdict.FAILED
    assert verdict_from_points([unknown]) is None


def test_a_check_on_state_outranks_the_judges():
    check = CheckVerdict([CompletionPoint("sent", False), CompletionPoint("typed", True)], authoritative=True)
    final = combine(check, [_vote("a", "complete"), _vote("b", "complete")])
    assert final.verdict is Verdict.PARTIAL and final.source == "check"
    assert final.agreement == 0.0
    assert any("complete by 2 of 2" in r for r in final.reasons)


def test_a_screen_only_check_and_judges_give_the_more_conservative():
    screen = CheckVerdict([CompletionPoint("text on screen", True)], authoritative=False)
    final = combine(screen, [_vote("a", "partial"), _vote("b", "partial"), _vote("c", "complete")])
    assert final.verdict is Verdict.PARTIAL and final.source == "check+judges"
    lowered = combine(CheckVerdict([CompletionPoint("x", False)]), [_vote("a", "complete")])
    assert lowered.verdict is Verdict.FAILED


def test_combine_with_only_one_side_or_none():
    assert combine(None, []) is None
    assert combine(CheckVerdict([CompletionPoint("x", None)]), []) is None
    assert combine(None, [_vote("a", "infeasible")]).verdict is Verdict.INFEASIBLE
    assert combine(CheckVerdict([CompletionPoint("x", True)]), []).verdict is Verdict.COMPLETE


def test_summary_counts_complete_only_as_success():
    summary = summarize([Verdict.COMPLETE, Verdict.PARTIAL, Verdict.PARTIAL, None, Verdict.FAILED])
    assert summary.total == 5 and summary.successes == 1 and summary.unverified == 1
    assert summary.success_rate == 0.25
    assert summary.to_dict()["partial"] == 2
    assert summarize([]).success_rate is None
    final = combine(CheckVerdict([CompletionPoint("x", True), CompletionPoint("y", False)], True), [])
    assert summarize([final]).successes == 0 and not final.is_success
