"""Asking the model about a step's frame: the request leaves as soon as the frame is in, the reply is read later.

The loop sends the request (:func:`send_question`) right after the frame arrives, then waits for the view tree and
the foreground app that the phone reads meanwhile (the popup rules, the walls and the guards need them, the model
does not), and only then reads the reply and parses it (:func:`parse_reply`, inside the step's deadline like every
other wait of the step). When a popup rule or a wall acts on the frame
instead, the question is discarded: its request is cut if it is still on its way, and the episode's next request
tells the server that one reply went unused. On a real endpoint that costs the prompt of one request per popup; in
exchange, the view-tree dump (0.5–2 s on many phones) no longer waits in front of every model call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mobile_agent.actions import Size
from mobile_agent.agent.overrun import StepClock
from mobile_agent.agent.step import StepDraft
from mobile_agent.gate.guard import Decision, Verdict
from mobile_agent.model.base import HistoryTurn, ModelFamily, Parsed, PromptOptions
from mobile_agent.model.client import ModelClient, PendingReply, Reply
from mobile_agent.model.images import Geometry, PreparedImage, prepare_image
from mobile_agent.waits.deadlines import Abandoned, Deadline, call_within

if TYPE_CHECKING:  # the critic's module (judges, verdicts) is only needed when a critic is given
    from mobile_agent.verify.labels import Critic


@dataclass
class Question:
    """A request on its way about one frame."""

    pending: PendingReply
    prepared: PreparedImage
    geometry: Geometry

    def discard(self) -> None:
        self.pending.discard()


def send_question(
    family: ModelFamily,
    client: ModelClient,
    *,
    task: str,
    history: list[HistoryTurn],
    screenshot: bytes,
    size: Size,
    options: PromptOptions,
    hints: str | None,
    correction: str | None,
    episode_id: str,
    clock: StepClock,
) -> Question:
    prepared = prepare_image(screenshot, family)
    messages = family.build_messages(
        task, history, prepared, options=options, hints=hints, correction=correction
    )
    pending = client.submit(messages, episode_id=episode_id, deadline=clock.deadline)
    clock.question = Question(pending, prepared, Geometry(device=size, image=prepared.size))
    return clock.question


def parse_reply(family: ModelFamily, reply: Reply, geometry: Geometry, deadline: Deadline) -> Parsed:
    """The family's reading of ``reply`` (ParseError as the family raises it), or DeadlineExceeded when the parse
    runs past the step's deadline: the step then ends like any other wait that overran it. An abandoned parse
    finishes on its helper thread (the parsers are linear in the reply, which is capped) and its result is dropped.
    """
    if deadline.expired:
        raise deadline.exceeded("parsing the model's reply")
    try:
        return call_within(
            lambda: family.parse(reply.text, geometry, reasoning=reply.reasoning),
            deadline.remaining(),
            name="reply-parse",
        )
    except Abandoned:
        raise deadline.exceeded(f"parsing the model's reply ({len(reply.text)} characters)") from None


def critic_label(
    critic: Critic, task: str, history: list[HistoryTurn], draft: StepDraft, episode_id: str, clock: StepClock
) -> tuple[Any, Decision]:
    """The critic's label for the step's proposed action, and the decision it is recorded as."""
    action = draft.action
    assert action is not None
    label = critic.label(
        task,
        [turn.reply for turn in history],
        draft.observation.screenshot,
        action.describe(),
        action=action,
        episode_id=episode_id,
        deadline=clock.deadline,
    )
    name = label.label.value if label.label is not None else "unavailable"
    verdict = Verdict.HINT if label.is_wrong else Verdict.ALLOW
    return label, Decision("critic", verdict, f"{name}: {label.rationale}", kind=name)


__all__ = ["Question", "critic_label", "parse_reply", "send_question"]
