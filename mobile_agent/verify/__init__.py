"""Verification: trajectory verdicts (complete, partial, infeasible, failed) and step labels (correct,
exploratory, ineffective, wrong), from checks declared with a task and from judge models that vote.

Only ``complete`` is success: use ``Verdict.is_success`` / ``FinalVerdict.is_success`` / ``summarize`` for every
count of successes.

    from mobile_agent.verify import TaskCheck, run_checks, Judge, episode_verdict, summarize
"""

from mobile_agent.verify.checks import CheckContext, PointCheck, TaskCheck, run_checks
from mobile_agent.verify.judges import PROMPT_VERSION, EpisodeView, Judge, JudgeReplyError, StepView
from mobile_agent.verify.labels import (
    Critic,
    CriticReview,
    CriticUnavailable,
    Label,
    StepLabel,
    label_step,
    rule_label,
)
from mobile_agent.verify.service import (
    check_stored_episode,
    episode_verdict,
    judge_episode,
    label_episode,
    load_episode_view,
    record_check,
    run_and_record_checks,
    run_verdicts,
    step_labels,
    verify_episode,
)
from mobile_agent.verify.verdict import (
    CheckVerdict,
    CompletionPoint,
    FinalVerdict,
    JudgeVote,
    Summary,
    Verdict,
    VoteResult,
    combine,
    summarize,
    vote,
)

__all__ = [
    "PROMPT_VERSION",
    "CheckContext",
    "CheckVerdict",
    "CompletionPoint",
    "Critic",
    "CriticReview",
    "CriticUnavailable",
    "EpisodeView",
    "FinalVerdict",
    "Judge",
    "JudgeReplyError",
    "JudgeVote",
    "Label",
    "PointCheck",
    "StepLabel",
    "StepView",
    "Summary",
    "TaskCheck",
    "Verdict",
    "VoteResult",
    "check_stored_episode",
    "combine",
    "episode_verdict",
    "judge_episode",
    "label_episode",
    "label_step",
    "load_episode_view",
    "record_check",
    "rule_label",
    "run_and_record_checks",
    "run_checks",
    "run_verdicts",
    "step_labels",
    "summarize",
    "verify_episode",
    "vote",
]
