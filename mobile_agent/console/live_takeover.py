"""Taking over a paused episode from the live page, and handing it back.

An episode paused for a person's hands (a captcha, a login, a secure screen, the model's call-user: any pause but
a ``confirm``, which the inbox approves or denies) links from the inbox to ``/live?episode=ID``: the page of the
phone the pause names (its adb server and serial come from the pause row, never from the request). The person
takes control, acts (each action a ``human`` step of the live session, whose ``meta.live.takeover`` names the
paused episode), then **hands back**: control is released and the question is answered through the inbox
(farm/inbox.answer) with what was done, so the worker holding the phone (or ``mobile-agent resume``) continues the
same episode on the screen the person left, records the person's step in it, and tells the model what they did.
"""

from __future__ import annotations

from mobile_agent.console.live import Control
from mobile_agent.errors import MobileAgentError
from mobile_agent.farm.inbox import WaitingQuestion, answer, list_waiting
from mobile_agent.store import phones as phone_db
from mobile_agent.store.store import TrajectoryStore

MAX_REPLY = 1800  # the inbox takes replies up to 2000 characters


def waiting_for_hands(store: TrajectoryStore, episode_id: str) -> WaitingQuestion | None:
    """The unanswered, non-confirm question episode ``episode_id`` waits on, or None."""
    try:
        full = store.episode(episode_id).id
    except MobileAgentError:  # an unknown or ambiguous id: no question to take over
        return None
    for q in list_waiting(store, include_answered=False):
        if q.episode_id == full and q.kind != "confirm":
            return q
    return None


def phone_key(store: TrajectoryStore, q: WaitingQuestion) -> tuple[str, str, str | None]:
    """(the console's key for the question's phone, its serial, its adb server)."""
    if q.adb_server:
        key = f"{q.adb_server}/{q.phone}"
        if phone_db.farm_device(store, key) is not None:
            return key, q.phone, q.adb_server
    return q.phone, q.phone, q.adb_server


def hand_back_reply(control: Control) -> str:
    """What the model is told: who acted from the console and what they did, in order."""
    if not control.done:
        return f"{control.who} looked at the phone from the console and did nothing on it"
    text = f"done on the phone from the console by {control.who}: " + "; ".join(control.done)
    return text if len(text) <= MAX_REPLY else text[: MAX_REPLY - 1] + "…"


def hand_back(store: TrajectoryStore, q: WaitingQuestion, control: Control) -> str:
    reply = hand_back_reply(control)
    answer(store, [q.episode_id], reply, who=control.who)
    return reply


__all__ = ["hand_back", "hand_back_reply", "phone_key", "waiting_for_hands"]
