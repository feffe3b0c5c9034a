"""Step labels — correct, exploratory, ineffective, wrong — before a step runs (the critic) and after the fact.

Before: ``Critic`` asks a judge model about the action the GUI model just proposed, on the current screenshot with
the action drawn on it. The episode loop re-asks the model with the critique when the label is ``wrong``, at most
``max_reasks`` times. An unreachable critic either lets the action through with no label (default) or, with
``fail_closed=True``, raises ``CriticUnavailable`` (a ModelError), which ends the episode before anything runs.
The critic's request is bounded by the step's ``deadline`` like the GUI model's: a critic still silent when it
passes raises DeadlineExceeded, and the episode ends as ``timeout`` whether the critic fails open or closed.

After: ``rule_labels`` marks a step ``ineffective`` when its screenshot and the next one show the same screen (dHash,
see images.py) although the action should have changed something, and a judge labels the rest (``label_step``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Generic, TypeVar

from mobile_agent.actions import Action, ActionKind
from mobile_agent.errors import ModelError, ModelUnavailable
from mobile_agent.model.client import ModelClient
from mobile_agent.verify.images import mark_action, same_screen, shrink_jpeg
from mobile_agent.verify.judges import STEP, JudgeReplyError, ask_json, image_part, text_part
from mobile_agent.waits.deadlines import Deadline

log = logging.getLogger(__name__)

T = TypeVar("T")
HISTORY_SHOWN = 10
# Actions that are meant to change the screen; an unchanged screen after one of them means it did nothing.
SCREEN_CHANGING = frozenset(
    {
        ActionKind.TAP,
        ActionKind.DOUBLE_TAP,
        ActionKind.LONG_PRESS,
        ActionKind.SWIPE,
        ActionKind.DRAG,
        ActionKind.TYPE,
        ActionKind.KEY,
        ActionKind.LAUNCH,
    }
)


class Label(str, Enum):
    CORRECT = "correct"  # moves the task forward
    EXPLORATORY = "exploratory"  # looks around (scroll, open a menu) without harm
    INEFFECTIVE = "ineffective"  # changes nothing
    WRONG = "wrong"  # moves away from the task or does something the task did not ask for

    def __str__(self) -> str:
        return str(self.value)

    @classmethod
    def parse(cls, value: object) -> Label:
        text = str(value).strip().lower()
        aliases = {"incorrect": "wrong"}
        try:
            return cls(aliases.get(text, text))
        except ValueError:
            known = ", ".join(label.value for label in cls)
            raise ValueError(f"unknown step label {value!r} (known: {known})") from None


@dataclass(frozen=True)
class StepLabel:
    """A label and why. ``label`` is None when the critic could not be reached and failed open."""

    label: Label | None
    rationale: str
    source: str = "critic"  # critic | judge | rule
    latency_s: float | None = None

    @property
    def is_wrong(self) -> bool:
        return self.label is Label.WRONG

    @property
    def reachable(self) -> bool:
        return self.label is not None


class CriticUnavailable(ModelUnavailable):
    """A fail-closed critic could not be asked: the action must not run."""

    kind = "critic_unavailable"


STEP_PROMPT = """You check one action a phone agent is about to take (or took) towards a user's task.
The screenshot is the screen before the action; a red circle marks where a tap or gesture lands.
Label the action:
- "correct": it moves the task forward;
- "exploratory": it looks for the way forward (scroll, open a menu, go back from a dead end) without harm;
- "ineffective": it will change nothing (tapping empty space, typing where there is no text field);
- "wrong": it moves away from the task or does something the task did not ask for (wrong contact, wrong item,
  sending or paying too early).
Reply with JSON only: {"label": "correct|exploratory|ineffective|wrong", "rationale": "one sentence"}"""


def label_step(
    client: ModelClient,
    task: str,
    history_texts: Sequence[str],
    screenshot_jpeg: bytes | None,
    action_description: str,
    *,
    action: Action | None = None,
    next_screenshot: bytes | None = None,
    episode_id: str | None = None,
    deadline: Deadline | None = None,
) -> StepLabel:
    """Ask a judge model for one step's label. ModelError when unreachable, JudgeReplyError on a bad reply,
    DeadlineExceeded when ``deadline`` passes first."""
    recent = list(history_texts)[-HISTORY_SHOWN:]
    lines = [f"Task: {task}"]
    if recent:
        first = len(history_texts) - len(recent)
        lines.append("Earlier steps:")
        lines += [f"{first + i}: {text}" for i, text in enumerate(recent)]
    else:
        lines.append("Earlier steps: none")
    lines.append(f"Action to label: {action_description}")
    content = [text_part("\n".join(lines))]
    if screenshot_jpeg is not None:
        shown = mark_action(screenshot_jpeg, action) if action is not None else screenshot_jpeg
        content.append(image_part(shrink_jpeg(shown)))
    if next_screenshot is not None:
        content.append(text_part("The screen after the action:"))
        content.append(image_part(shrink_jpeg(next_screenshot)))
    data, latency = ask_json(client, STEP, STEP_PROMPT, content, episode_id=episode_id, deadline=deadline)
    try:
        label = Label.parse(data.get("label"))
    except ValueError as exc:
        raise JudgeReplyError(str(exc), reply=str(data)) from None
    return StepLabel(label, str(data.get("rationale") or ""), source="judge", latency_s=latency)


@dataclass(frozen=True)
class CriticReview(Generic[T]):
    """What ``Critic.review`` decided. ``proposal`` is the last one the model made; run it only when ``allowed``."""

    proposal: T
    labels: list[StepLabel] = field(default_factory=list)
    reasks: int = 0
    allowed: bool = True

    @property
    def last_label(self) -> StepLabel | None:
        return self.labels[-1] if self.labels else None


class Critic:
    """Labels a proposed action before it runs. See the module docstring for the loop it is made for.

    ``block_when_still_wrong``: after ``max_reasks`` re-asks that are all still ``wrong``, ``review`` returns
    ``allowed=False`` instead of letting the last proposal through.
    """

    def __init__(
        self,
        client: ModelClient,
        *,
        fail_closed: bool = False,
        max_reasks: int = 2,
        block_when_still_wrong: bool = False,
    ) -> None:
        if max_reasks < 0:
            raise ValueError("max_reasks must be >= 0")
        self.client = client
        self.fail_closed = fail_closed
        self.max_reasks = max_reasks
        self.block_when_still_wrong = block_when_still_wrong

    @property
    def name(self) -> str:
        return self.client.endpoints[0] if self.client.endpoints else "critic"

    def label(
        self,
        task: str,
        history_texts: Sequence[str],
        screenshot_jpeg: bytes | None,
        action_description: str,
        *,
        action: Action | None = None,
        episode_id: str | None = None,
        deadline: Deadline | None = None,
    ) -> StepLabel:
        """The critic's label of a proposed action.

        Unreachable (or answering nonsense): a StepLabel with ``label=None`` when failing open; CriticUnavailable
        when ``fail_closed``. Still unanswered when ``deadline`` (the step's) passes: DeadlineExceeded, either way.
        """
        try:
            result = label_step(
                self.client,
                task,
                history_texts,
                screenshot_jpeg,
                action_description,
                action=action,
                episode_id=episode_id,
                deadline=deadline,
            )
        except (ModelError, JudgeReplyError) as exc:  # not DeadlineExceeded: that ends the episode as timeout
            what = exc.message
            if self.fail_closed:
                raise CriticUnavailable(
                    f"the critic at {self.name} gave no label, and it fails closed: {what}",
                    hint="start the critic endpoint, or run without --critic-fail-closed",
                ) from exc
            log.warning("critic at %s gave no label, letting the action through: %s", self.name, what)
            return StepLabel(None, f"critic unavailable: {what}")
        return StepLabel(result.label, result.rationale, source="critic", latency_s=result.latency_s)

    @staticmethod
    def correction(label: StepLabel, action_description: str) -> str:
        """What to tell the GUI model when it is re-asked after a ``wrong`` label."""
        return (
            f"A reviewer judged your proposed action {action_description} as wrong: {label.rationale} "
            "Look at the screen again and choose a different action."
        )

    def review(
        self,
        propose: Callable[[str | None], tuple[T, str | None, Action | None]],
        *,
        task: str,
        history_texts: Sequence[str],
        screenshot_jpeg: bytes | None,
        episode_id: str | None = None,
        deadline: Deadline | None = None,
    ) -> CriticReview[T]:
        """Propose, label, and re-propose with the critique while the label is ``wrong``.

        ``propose(correction)`` asks the GUI model (``correction`` is None the first time) and returns
        ``(proposal, action_description, action)``; a None description means there is nothing to label (an
        unparseable reply, a finish), and the proposal is returned as it is.
        """
        labels: list[StepLabel] = []
        correction: str | None = None
        for attempt in range(self.max_reasks + 1):
            proposal, description, action = propose(correction)
            if description is None:
                return CriticReview(proposal, labels, attempt, True)
            verdict = self.label(
                task,
                history_texts,
                screenshot_jpeg,
                description,
                action=action,
                episode_id=episode_id,
                deadline=deadline,
            )
            labels.append(verdict)
            if not verdict.is_wrong:
                return CriticReview(proposal, labels, attempt, True)
            if attempt < self.max_reasks:
                log.info("critic: %s is wrong (%s); asking the model again", description, verdict.rationale)
                correction = self.correction(verdict, description)
        return CriticReview(proposal, labels, self.max_reasks, not self.block_when_still_wrong)


@dataclass(frozen=True)
class StepEvidence:
    """What the after-the-fact labelling knows about one stored step."""

    index: int
    action: Action | None
    screenshot: bytes | None
    error: str | None = None


def rule_label(
    step: StepEvidence, next_step: StepEvidence | None, *, max_distance: int = 1
) -> StepLabel | None:
    """``ineffective`` from evidence alone (no model), or None when the rules cannot tell.

    A step with no action did nothing. A screen-changing action whose next screenshot shows the same screen
    (dHash within ``max_distance`` bits of 256) changed nothing.
    """
    if step.action is None:
        return StepLabel(
            Label.INEFFECTIVE, f"no action was performed ({step.error or 'no usable reply'})", "rule"
        )
    if step.action.kind not in SCREEN_CHANGING or next_step is None:
        return None
    if step.screenshot is None or next_step.screenshot is None:
        return None
    if same_screen(step.screenshot, next_step.screenshot, max_distance=max_distance):
        return StepLabel(
            Label.INEFFECTIVE,
            f"the screen did not change after {step.action.describe()} (step {step.index} -> {next_step.index})",
            "rule",
        )
    return None


__all__ = [
    "Critic",
    "CriticReview",
    "CriticUnavailable",
    "Label",
    "SCREEN_CHANGING",
    "StepEvidence",
    "StepLabel",
    "label_step",
    "rule_label",
]
