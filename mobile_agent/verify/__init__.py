"""Verification: trajectory verdicts (complete, partial, infeasible, failed) and step labels (correct,
exploratory, ineffective, wrong), from checks declared with a task and from judge models that vote.

Only ``complete`` is success: use ``Verdict.is_success`` / ``FinalVerdict.is_success`` / ``summarize`` for every
count of successes.

    from mobile_agent.verify.checks import TaskCheck, run_checks
    from mobile_agent.verify.judges import Judge
    from mobile_agent.verify.service import episode_verdict
    from mobile_agent.verify.verdict import summarize
"""
