"""Asking the person, never the calling model, about an action the gate holds.

Where the client supports MCP elicitation the question goes to its user as a form: they type the kind's word (pay,
send, transfer ... as at the terminal, never a single key) to allow the action; anything else, a decline or a
cancel declines. Where it does not, the question goes to the inbox: the episode pauses as ``needs_user`` with the
action pending (the same pause a farm episode makes), the console and ``mobile-agent inbox answer`` show and answer
it, and the tool call waits for that answer within ``timeout_s``. Nobody answering in time declines, and the episode
ends as ``needs_user:expired``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import anyio
from pydantic import BaseModel, Field

from mobile_agent.actions import Outcome
from mobile_agent.agent.takeover import (
    approval_from_reply,
    confirm_word,
    confirmation_question,
    typed_approval,
)
from mobile_agent.gate.guard import Decision, Verdict
from mobile_agent.mcp.drive import Drive, Proposal
from mobile_agent.store import answers as answer_db
from mobile_agent.store import pauses as pause_store
from mobile_agent.store.convert import now_utc


class Confirmation(BaseModel):
    """The form a person fills in (the only field: the word that allows the action)."""

    answer: str = Field(
        default="", description="Type the word shown in the question to allow it; anything else declines."
    )


@dataclass(frozen=True)
class Answer:
    """The person's word: the decision recorded with the step, and whether the action may go ahead."""

    allowed: bool
    decision: Decision
    detail: str


def question_for(drive: Drive, proposal: Proposal) -> str:
    asked = proposal.asked
    assert asked is not None
    staged = pause_store.stage_screenshot(
        drive.store, drive.episode_id, proposal.draft.index, proposal.draft.observation.screenshot
    )
    return confirmation_question(asked, proposal.draft.action, staged)


def supports_elicitation(ctx: Any) -> bool:
    try:
        caps = ctx.client_capabilities
    except (ValueError, AttributeError):
        return False
    return bool(caps is not None and caps.elicitation is not None)


async def ask_by_elicitation(ctx: Any, proposal: Proposal, question: str, timeout_s: float) -> Answer:
    asked = proposal.asked
    assert asked is not None
    word = confirm_word(asked.kind)
    try:
        with anyio.fail_after(timeout_s):
            result = await ctx.elicit(question, Confirmation)
    except TimeoutError:
        return Answer(
            False, Decision("human", Verdict.BLOCK, "no answer", kind=asked.kind), "nobody answered in time"
        )
    typed = result.data.answer if result.action == "accept" and result.data is not None else ""
    if result.action == "accept" and typed_approval(typed, asked.kind):
        return Answer(
            True, Decision("human", Verdict.ALLOW, typed.strip(), kind=asked.kind, source="elicitation"), ""
        )
    said = typed.strip() or result.action
    why = (
        f"the person did not type {word!r} ({said})"
        if result.action == "accept"
        else f"the person chose {said}"
    )
    return Answer(False, Decision("human", Verdict.BLOCK, said, kind=asked.kind, source="elicitation"), why)


def ask_by_inbox(
    drive: Drive, proposal: Proposal, question: str, timeout_s: float, poll_s: float = 0.2
) -> Answer:
    """Pause the episode on the question (the inbox and the console show it) and wait for the reply. The step
    that was asked about is recorded now; an approved action becomes the next step."""
    asked = proposal.asked
    assert asked is not None
    store = drive.store
    drive.refuse(proposal)  # the asked step, recorded as the loop records a step it pauses on
    pause = pause_store.create_pause(
        store,
        pause_store.PauseRecord(
            episode_id=drive.episode_id,
            step_index=proposal.draft.index,
            kind="confirm",
            question=question,
            device=drive.hold.serial,
            adb_server=drive.hold.adb,
            reserve_s=timeout_s,
            pending_action=proposal.draft.action,
            decision=asked.to_dict(),
            screen_hash=proposal.screen_hash,
            context={"source": "mcp"},
        ),
    )
    drive.paused()
    first = question.strip().splitlines()[0]
    store.finish_episode(
        drive.episode_id,
        Outcome.NEEDS_USER,
        detail=f"confirm: {first} — mobile-agent inbox answer {drive.episode_id}",
    )
    answer_db.open_window(
        store,
        pause.id,
        drive.episode_id,
        answer_by=now_utc() + timedelta(seconds=timeout_s),
        held_by=drive.hold.me,
    )
    deadline = time.monotonic() + timeout_s
    reply = None
    while reply is None and time.monotonic() < deadline:
        time.sleep(poll_s)
        reply = answer_db.take_reply(store, pause.id, worker=drive.hold.me)
    if reply is None:
        answer_db.expire_window(store, pause.id, f"nobody answered within {timeout_s:.0f} s: {first[:200]}")
        drive.end(str(Outcome.NEEDS_USER_EXPIRED), "nobody answered")
        return Answer(
            False, Decision("human", Verdict.BLOCK, "no answer", kind=asked.kind), "nobody answered in time"
        )
    text = reply.reply or ""
    pause_store.mark_resumed(store, pause.id, text)
    pause_store.reopen_episode(store, drive.episode_id)
    drive.running_again()
    allowed = approval_from_reply(text) is True
    decision = Decision(
        "human",
        Verdict.ALLOW if allowed else Verdict.BLOCK,
        f"{text} ({reply.replied_by})",
        kind=asked.kind,
        source="inbox",
    )
    return Answer(allowed, decision, "" if allowed else f"{reply.replied_by} answered {text!r}")


__all__ = [
    "Answer",
    "Confirmation",
    "ask_by_elicitation",
    "ask_by_inbox",
    "question_for",
    "supports_elicitation",
]
