"""The inbox: every question a paused episode waits on, across runs and hosts, and the answers people give.

The CLI (`mobile-agent inbox`, `inbox answer`) and the console call exactly these functions::

    for q in list_waiting(store):
        print(q.episode_id, q.phone, q.question_line, q.proposed, q.screenshot, q.age_s)
    answer(store, ["3f9a0c"], "yes", who=os_user())   # the worker holding the phone continues the episode

An answer is recorded with who gave it and when (``store/answers.py``); a worker of the farm that holds the phone,
or the next free worker on that phone, takes it and continues the same episode. A pause outside any farm (from
`mobile-agent run`) has no worker: ``AnsweredQuestion.continues`` says so, and the CLI continues it itself.
"""

from __future__ import annotations

import getpass
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select

from mobile_agent.agent.takeover import approval_from_reply
from mobile_agent.errors import UserError
from mobile_agent.store import answers as answer_db
from mobile_agent.store.convert import now_utc
from mobile_agent.store.files import screenshot_name
from mobile_agent.store.pauses import OPEN, PauseInfo, PauseRow, open_pause
from mobile_agent.store.schema import EpisodeRow
from mobile_agent.store.store import TrajectoryStore

MAX_REPLY = 2000


@dataclass(frozen=True)
class WaitingQuestion:
    """One episode waiting for a person, with what the person needs to decide."""

    episode_id: str
    run_id: str | None
    task: str
    app: str | None
    phone: str
    adb_server: str | None
    kind: str  # confirm, call_user, take_over, captcha, login, secure_screen
    question: str
    proposed: str | None  # the action waiting for approval, as text
    action: dict[str, Any] | None  # the same, as a record (device pixels), for drawing it
    element: str | None  # what sits under the proposed tap
    why: str | None
    screenshot: Path | None
    step_index: int
    asked_at: datetime
    age_s: float
    answer_by: datetime | None  # the end of the farm's window (None: no farm waits)
    held: bool  # the phone is booked for the person now (its pause's reservation, which a farm keeps in step)
    reply: str | None  # already answered (and waiting for its phone)
    replied_by: str | None
    held_until: datetime | None = None  # until when it is booked (None: not booked now)

    @property
    def question_line(self) -> str:
        lines = [line for line in self.question.strip().splitlines() if line.strip()]
        return lines[0] if lines else self.kind

    @property
    def answer_command(self) -> str:
        reply = "yes|no" if self.kind == "confirm" else "TEXT"
        return f"mobile-agent inbox answer {self.episode_id} --reply {reply}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "episode": self.episode_id,
            "run": self.run_id,
            "task": self.task,
            "app": self.app,
            "phone": self.phone,
            "adb_server": self.adb_server,
            "kind": self.kind,
            "question": self.question,
            "proposed": self.proposed,
            "action": self.action,
            "element": self.element,
            "why": self.why,
            "screenshot": str(self.screenshot) if self.screenshot else None,
            "asked_at": self.asked_at.isoformat(),
            "age_s": round(self.age_s, 1),
            "answer_by": self.answer_by.isoformat() if self.answer_by else None,
            "held": self.held,
            "held_until": self.held_until.isoformat() if self.held_until else None,
            "reply": self.reply,
            "replied_by": self.replied_by,
            "answer": self.answer_command,
        }


def _question(
    store: TrajectoryStore, pause: PauseRow, episode: EpisodeRow, got: Any, now: datetime
) -> WaitingQuestion:
    decision = pause.decision or {}
    action = pause.pending_action
    proposed = None
    if action:
        from mobile_agent.actions import Action

        try:
            proposed = Action.from_dict(action).describe()
        except ValueError:
            proposed = None
    shot = store.root / episode.id / screenshot_name(pause.step_index)
    # Booked while the pause's reservation lasts: `run` books the phone for --reserve seconds, a farm moves the
    # reservation to its answer window when a worker keeps the phone and to now when it lets go (store/answers).
    held_until = pause.reserved_until if pause.reserved_until and pause.reserved_until > now else None
    return WaitingQuestion(
        episode_id=episode.id,
        run_id=episode.run_id,
        task=episode.task,
        app=decision.get("app") or episode.app,
        phone=pause.device,
        adb_server=pause.adb_server,
        kind=pause.kind,
        question=pause.question,
        proposed=proposed,
        action=action,
        element=decision.get("element"),
        why=decision.get("reason"),
        screenshot=shot if shot.is_file() else None,
        step_index=pause.step_index,
        asked_at=pause.created_at,
        age_s=max(0.0, (now - pause.created_at).total_seconds()),
        answer_by=got.answer_by if got is not None else None,
        held=held_until is not None,
        held_until=held_until,
        reply=got.reply if got is not None and got.replied_at else None,
        replied_by=got.replied_by if got is not None and got.replied_at else None,
    )


def list_waiting(
    store: TrajectoryStore,
    *,
    run_ids: Sequence[str] | None = None,
    limit: int | None = None,
    include_answered: bool = True,
) -> list[WaitingQuestion]:
    """Every episode waiting for a person now (open pauses of ended needs_user episodes), oldest question first."""
    now = now_utc()
    query = (
        select(PauseRow, EpisodeRow)
        .join(EpisodeRow, EpisodeRow.id == PauseRow.episode_id)
        .where(PauseRow.status == OPEN, EpisodeRow.outcome == "needs_user")
        .order_by(PauseRow.created_at, PauseRow.id)
    )
    if run_ids is not None:
        query = query.where(EpisodeRow.run_id.in_(list(run_ids)))
    if limit is not None:
        query = query.limit(limit)
    with store.read_session() as session:
        rows = list(session.execute(query))
    got = answer_db.answers(store, [pause.id for pause, _ in rows])
    out = [_question(store, pause, episode, got.get(pause.id), now) for pause, episode in rows]
    return out if include_answered else [q for q in out if q.reply is None]


def waiting_question(store: TrajectoryStore, episode: str) -> WaitingQuestion:
    """The question one episode (id or unique prefix) waits on; UserError when it waits on none."""
    info = store.episode(episode)
    for question in list_waiting(store, run_ids=None):
        if question.episode_id == info.id:
            return question
    raise UserError(
        f"episode {info.id} is not waiting for a person ({info.outcome or info.status})",
        "see what waits with `mobile-agent inbox`",
    )


@dataclass(frozen=True)
class AnsweredQuestion:
    episode_id: str
    reply: str
    who: str
    at: datetime
    continues: str  # "worker": a farm worker continues it; "none": nobody will unless `resume` is run


def check_reply(pause: PauseInfo, reply: str) -> str:
    """The reply, trimmed; UserError when it cannot answer this kind of question."""
    text = reply.strip()
    if len(text) > MAX_REPLY:
        raise UserError(f"the reply is {len(text)} characters long", f"keep it under {MAX_REPLY}")
    if pause.kind == "confirm" and approval_from_reply(text) is None:
        raise UserError(
            f"episode {pause.episode_id} waits for a yes or no, not {text[:40]!r}",
            f"answer it with --reply yes or --reply no (mobile-agent inbox answer {pause.episode_id} --reply yes)",
        )
    if pause.kind == "call_user" and not text:
        raise UserError(f"episode {pause.episode_id} asked a question", "give the answer with --reply TEXT")
    return text


def answer(
    store: TrajectoryStore, episodes: Sequence[str], reply: str, *, who: str
) -> list[AnsweredQuestion]:
    """Answer one or many waiting episodes with the same reply. Every episode is checked first (known, waiting, a
    reply it can take), so a bad one answers none. Each answer records who and when."""
    if not episodes:
        raise UserError(
            "no episode to answer", "name one or more: mobile-agent inbox answer EPISODE --reply yes"
        )
    if not who.strip():
        raise UserError("an answer needs to say who gives it", "pass who= (the OS user or the console user)")
    checked: list[tuple[PauseInfo, str]] = []
    seen: set[str] = set()
    for name in episodes:
        info = store.episode(name)
        if info.id in seen:
            continue
        seen.add(info.id)
        pause = open_pause(store, info.id)
        if pause is None or str(info.outcome) != "needs_user":
            raise UserError(
                f"episode {info.id} is not waiting for a person ({info.outcome or info.status})",
                "see what waits with `mobile-agent inbox`",
            )
        checked.append((pause, check_reply(pause, reply)))
    windows = answer_db.answers(store, [pause.id for pause, _ in checked])
    out = []
    for pause, text in checked:
        at = answer_db.record_reply(store, pause.id, pause.episode_id, text, who=who)
        window = windows.get(pause.id)
        in_farm = window is not None and window.answer_by is not None and window.answer_by > at
        out.append(AnsweredQuestion(pause.episode_id, text, who, at, "worker" if in_farm else "none"))
    return out


def os_user() -> str:
    """Who is answering from this terminal: the OS user (and host)."""
    import socket

    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        user = "uid-unknown"
    return f"{user}@{socket.gethostname()}"


__all__ = [
    "AnsweredQuestion",
    "WaitingQuestion",
    "answer",
    "check_reply",
    "list_waiting",
    "os_user",
    "waiting_question",
]
