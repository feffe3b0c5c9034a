"""Verification against the trajectory store: run checks and judges on stored episodes, keep every judgment in the
judgments table, and read back one verdict per episode.

    check = run_and_record_checks(store, ep, task_check, final_hierarchy=xml, final_package=pkg,
                                  phone_state=sim_phone.state.as_dict())      # right after the episode
    judge_episode(store, ep, [Judge(client_a), Judge(client_b), Judge(client_c)])
    episode_verdict(store, ep)     # -> FinalVerdict | None; what reports, exports and batch summaries use
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from mobile_agent.errors import ModelError, StoreError, UserError
from mobile_agent.model.client import ModelClient
from mobile_agent.store.judgments import JudgmentRecord, judgments, latest_per_judge, record_judgment
from mobile_agent.store.store import TrajectoryStore
from mobile_agent.verify.checks import TaskCheck, run_checks
from mobile_agent.verify.judges import PROMPT_VERSION, EpisodeView, Judge, JudgeReplyError, StepView
from mobile_agent.verify.labels import Label, StepEvidence, StepLabel, label_step, rule_label
from mobile_agent.verify.verdict import (
    CheckVerdict,
    CompletionPoint,
    FinalVerdict,
    JudgeVote,
    Verdict,
    combine,
)

log = logging.getLogger(__name__)

CHECKS_NAME = "checks"
RULES_NAME = "rules"


# ----- reading episodes -----------------------------------------------------------------------------------------
def load_episode_view(store: TrajectoryStore, episode_id: str) -> EpisodeView:
    """The episode as judges see it: task, steps with their action descriptions and screenshots, outcome."""
    episode = store.episode(episode_id)
    steps = []
    for step in store.steps(episode.id):
        path = store.screenshot_path(step)
        shot = _read(path)
        if step.action is not None:
            action = step.action.describe()
        else:
            action = f"no action ({step.error_kind or 'error'}: {step.error_text or 'unusable reply'})"
        steps.append(StepView(step.index, action, step.thought or "", shot))
    return EpisodeView(episode.id, episode.task, steps, episode.outcome, episode.answer)


def _read(path: Any) -> bytes | None:
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError as exc:
        log.warning("screenshot %s is missing: %s", path, exc)
        return None


# ----- checks ---------------------------------------------------------------------------------------------------
def record_check(store: TrajectoryStore, episode_id: str, check: CheckVerdict) -> None:
    verdict = check.verdict
    record_judgment(
        store,
        JudgmentRecord(
            episode_id=episode_id,
            source="check",
            judge=CHECKS_NAME,
            verdict=verdict.value if verdict else None,
            points=[p.to_dict() for p in check.points],
            rationale="; ".join(check.reasons) or "no point could be evaluated",
            meta={"authoritative": check.authoritative},
        ),
    )


def run_and_record_checks(
    store: TrajectoryStore,
    episode_id: str,
    check: TaskCheck,
    *,
    final_hierarchy: str | None,
    final_package: str | None,
    final_activity: str | None = None,
    phone_state: Mapping[str, Any] | None = None,
) -> CheckVerdict:
    """Run a task's check at the end of an episode (the phone still in its final state) and store the result."""
    episode = store.episode(episode_id)
    result = run_checks(
        check,
        final_hierarchy=final_hierarchy,
        final_package=final_package,
        final_activity=final_activity,
        phone_state=phone_state,
        final_step=episode.step_count - 1 if episode.step_count else None,
    )
    record_check(store, episode.id, result)
    return result


def check_stored_episode(store: TrajectoryStore, episode_id: str, check: TaskCheck) -> CheckVerdict:
    """Run a check after the fact on what the store kept: the last step's app, activity and view tree (if any).

    State predicates cannot be evaluated here (the phone has moved on); those points stay unevaluated.
    """
    steps = store.steps(episode_id)
    last = steps[-1] if steps else None
    hierarchy = None
    if last is not None and last.hierarchy_path is not None:
        data = _read(store.hierarchy_path(last))
        hierarchy = data.decode("utf-8", "replace") if data is not None else None
    return run_checks(
        check,
        final_hierarchy=hierarchy,
        final_package=last.foreground_app if last else None,
        final_activity=last.foreground_activity if last else None,
        final_step=last.index if last else None,
    )


# ----- judges ---------------------------------------------------------------------------------------------------
def judge_episode(
    store: TrajectoryStore,
    episode_id: str,
    judges: Sequence[Judge],
    *,
    points: Sequence[str] | None = None,
) -> list[JudgeVote]:
    """Ask every judge (in parallel) and store each vote, or the reason a judge gave none. Returns the votes."""
    view = load_episode_view(store, episode_id)
    if not judges:
        return []
    with ThreadPoolExecutor(max_workers=len(judges), thread_name_prefix="judge") as pool:
        outcomes = list(pool.map(lambda judge: _ask_judge(judge, view, points), judges))
    votes = []
    for judge, outcome in zip(judges, outcomes, strict=True):
        if isinstance(outcome, JudgeVote):
            votes.append(outcome)
            record_judgment(store, _vote_record(view.episode_id, outcome))
        else:
            log.warning("judge %s gave no verdict on %s: %s", judge.name, view.episode_id, outcome)
            record_judgment(
                store,
                JudgmentRecord(
                    episode_id=view.episode_id,
                    source="judge",
                    judge=judge.name,
                    model=judge.model,
                    prompt_version=PROMPT_VERSION,
                    error=outcome,
                ),
            )
    return votes


def _ask_judge(judge: Judge, view: EpisodeView, points: Sequence[str] | None) -> JudgeVote | str:
    try:
        return judge.judge(view, points)
    except (ModelError, JudgeReplyError) as exc:
        return exc.one_line()


def _vote_record(episode_id: str, vote: JudgeVote) -> JudgmentRecord:
    return JudgmentRecord(
        episode_id=episode_id,
        source="judge",
        judge=vote.judge,
        model=vote.model,
        prompt_version=PROMPT_VERSION,
        verdict=vote.verdict.value,
        points=[p.to_dict() for p in vote.points],
        rationale=vote.rationale,
        latency_s=vote.latency_s,
    )


# ----- step labels ----------------------------------------------------------------------------------------------
def label_episode(
    store: TrajectoryStore,
    episode_id: str,
    *,
    judge_client: ModelClient | None = None,
    max_distance: int = 1,
) -> dict[int, StepLabel]:
    """Label every step after the fact and store the labels; returns {step index: label}.

    Rules first (no action, or the screen did not change -> ineffective); a judge model labels the rest when given.
    """
    episode = store.episode(episode_id)
    stored = store.steps(episode.id)
    evidence = [
        StepEvidence(s.index, s.action, _read(store.screenshot_path(s)), s.error_text or s.error_kind)
        for s in stored
    ]
    history: list[str] = []
    labels: dict[int, StepLabel] = {}
    for position, step in enumerate(evidence):
        following = evidence[position + 1] if position + 1 < len(evidence) else None
        description = step.action.describe() if step.action else "no action"
        label = rule_label(step, following, max_distance=max_distance)
        if label is None and judge_client is not None:
            label = _judge_label(judge_client, episode.task, history, step, following, episode.id)
        if label is not None:
            labels[step.index] = label
            _record_label(store, episode.id, step.index, label, judge_client)
        history.append(description)
    return labels


def _judge_label(
    client: ModelClient,
    task: str,
    history: list[str],
    step: StepEvidence,
    following: StepEvidence | None,
    episode_id: str,
) -> StepLabel | None:
    try:
        return label_step(
            client,
            task,
            history,
            step.screenshot,
            step.action.describe() if step.action else "no action",
            action=step.action,
            next_screenshot=following.screenshot if following else None,
            episode_id=episode_id,
        )
    except (ModelError, JudgeReplyError) as exc:
        log.warning("no label for step %d of %s: %s", step.index, episode_id, exc.one_line())
        return None


def _record_label(
    store: TrajectoryStore, episode_id: str, index: int, label: StepLabel, client: ModelClient | None
) -> None:
    by_rule = label.source == "rule"
    record_judgment(
        store,
        JudgmentRecord(
            episode_id=episode_id,
            source="rule" if by_rule else "judge",
            judge=RULES_NAME if by_rule or client is None else client.endpoints[0],
            model=None if by_rule or client is None else client.model,
            prompt_version=None if by_rule else PROMPT_VERSION,
            step_index=index,
            label=label.label.value if label.label else None,
            rationale=label.rationale,
            latency_s=label.latency_s,
        ),
    )


def step_labels(store: TrajectoryStore, episode_id: str) -> dict[int, list[StepLabel]]:
    """Stored labels of each step (newest per source and judge), for reports."""
    out: dict[int, list[StepLabel]] = {}
    for row in latest_per_judge(judgments(store, store.episode(episode_id).id, steps=True)):
        if row.label is None or row.step_index is None:
            continue
        out.setdefault(row.step_index, []).append(
            StepLabel(Label.parse(row.label), row.rationale or "", row.source, row.latency_s)
        )
    return out


# ----- the verdict ----------------------------------------------------------------------------------------------
def episode_verdict(store: TrajectoryStore, episode_id: str) -> FinalVerdict | None:
    """The episode's verdict from its newest stored check and each judge's newest vote; None if never verified.

    How they combine (verdict.combine): a check that ran on the phone's state or a hook decides; a check that only
    saw the screen and the judges' vote give the more conservative of the two; otherwise whichever exists.
    """
    rows = latest_per_judge(judgments(store, store.episode(episode_id).id, steps=False))
    check: CheckVerdict | None = None
    votes: list[JudgeVote] = []
    for row in rows:
        if row.verdict is None:
            continue
        points = [CompletionPoint.from_dict(p) for p in row.points]
        if row.source == "check":
            check = CheckVerdict(points, authoritative=bool(row.meta.get("authoritative")))
        elif row.source == "judge":
            try:
                verdict = Verdict.parse(row.verdict)
            except ValueError as exc:
                raise StoreError(f"judgment {row.id} has {exc}") from None
            votes.append(
                JudgeVote(row.judge, row.model or "", verdict, points, row.rationale or "", row.latency_s)
            )
    return combine(check, votes)


def run_verdicts(store: TrajectoryStore, run_id: str) -> dict[str, FinalVerdict | None]:
    """episode id -> verdict (None: not verified) for every episode of a run."""
    run = store.run(run_id)
    episodes = store.list_episodes(run_id=run.id, limit=None)
    return {episode.id: episode_verdict(store, episode.id) for episode in episodes}


def verify_episode(
    store: TrajectoryStore,
    episode_id: str,
    *,
    judges: Sequence[Judge] = (),
    check: TaskCheck | None = None,
    labels_client: ModelClient | None = None,
    label_steps: bool = False,
) -> FinalVerdict | None:
    """Verify one stored episode: checks (from ``check`` or the episode's ``meta["check"]``, unless a check result
    is already stored), judges, optional step labels; returns the combined verdict."""
    episode = store.episode(episode_id)
    if check is None and episode.meta.get("check"):
        check = TaskCheck.parse(episode.meta["check"], path=f"episode {episode.id} meta.check")
    if check is not None and not judgments(store, episode.id, steps=False, source="check"):
        result = check_stored_episode(store, episode.id, check)
        if result.verdict is not None:
            record_check(store, episode.id, result)
    if judges:
        judge_episode(store, episode.id, judges)
    if label_steps:
        label_episode(store, episode.id, judge_client=labels_client)
    return episode_verdict(store, episode.id)


def episodes_of(store: TrajectoryStore, episode: str | None, run: str | None) -> list[str]:
    """The episode ids a command names: one episode, or every episode of a run."""
    if (episode is None) == (run is None):
        raise UserError("name one episode or one run", hint="mobile-agent verify EPISODE  or  --run RUN")
    if episode is not None:
        return [store.episode(episode).id]
    run_info = store.run(run)  # type: ignore[arg-type]
    ids = [e.id for e in store.list_episodes(run_id=run_info.id, limit=None)]
    return sorted(ids)


__all__ = [
    "check_stored_episode",
    "episode_verdict",
    "episodes_of",
    "judge_episode",
    "label_episode",
    "load_episode_view",
    "record_check",
    "run_and_record_checks",
    "run_verdicts",
    "step_labels",
    "verify_episode",
]
