"""Human take-over: when a person must act (captcha, login wall, secure screen, the model's call-user / take-over,
a confirmation the policy asks for), how that is recognised and what they are told.

The loop itself (pausing, recording the person's step) lives in :mod:`mobile_agent.agent.loop`; resuming a paused
episode (``resume_episode``, the library side of `mobile-agent resume`) in :mod:`mobile_agent.agent.runtime`; the
pause rows in :mod:`mobile_agent.store.pauses`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mobile_agent.actions import POINT_KINDS, Action, Size
from mobile_agent.agent.loops import LoopDetector
from mobile_agent.gate.guard import Decision
from mobile_agent.gate.lexicon import KINDS
from mobile_agent.screen.viewtree import ViewTree

CAPTCHA_TEXT = re.compile(
    r"请完成(安全)?验证|安全验证|拖动(下方)?滑块|滑块验证|向右(拖动|滑动)|滑动验证|拼图|点击.*(图中|依次)|人机验证|"
    r"captcha|i'?m not a robot|verify you are human|slide to verify",
    re.IGNORECASE,
)
LOGIN_BUTTON = re.compile(
    r"^(一键登录|登录|立即登录|确认登录|本机号码一键登录|log ?in|sign in)$", re.IGNORECASE
)
LOGIN_CONTEXT = re.compile(
    r"登录即(表示)?同意|其他手机号登录|(密码|验证码|短信|手机号)登录|^登录.+|^请(先)?登录|forgot password|"
    r"sign in to|log in to",
    re.IGNORECASE,
)
YES = {"y", "yes", "ok", "allow", "approve", "confirm", "是", "好", "确认", "同意", "允许", "可以"}
NO = {"n", "no", "deny", "decline", "reject", "cancel", "否", "不", "不要", "拒绝", "取消", "不同意"}


@dataclass(frozen=True)
class Wall:
    kind: str  # captcha | login
    evidence: str


def detect_wall(xml: str, package: str, registry: Any = None) -> Wall | None:
    """A captcha or a login wall on this screen, from the view tree's labels (visible elements only)."""
    tree = ViewTree.parse(xml)
    if tree is None:
        return None
    labels = [
        (e.text.strip() or e.content_desc.strip(), e)
        for e in tree.elements
        if e.node.get("visible-to-user", "true") != "false" and e.bounds is not None and not e.bounds.empty
    ]
    for label, _ in labels:
        if label and CAPTCHA_TEXT.search(label):
            return Wall("captcha", f"captcha on screen: '{label}'")
    buttons = [label for label, e in labels if label and LOGIN_BUTTON.match(label)]
    if buttons:
        password_field = any(e.node.get("password") == "true" for _, e in labels)
        context = next((label for label, _ in labels if label and LOGIN_CONTEXT.search(label)), None)
        manifest = registry.by_package(package) if registry is not None and package else None
        needs_login = bool(manifest is not None and manifest.walls.login)
        if password_field or context or needs_login:
            return Wall("login", f"login wall: '{buttons[0]}'" + (f" ('{context}')" if context else ""))
    return None


def pause_kind_for_call(message: str) -> str:
    """The model's call-user / take-over, named by what it says it needs."""
    if CAPTCHA_TEXT.search(message) or "验证码" in message:
        return "captcha"
    if "登录" in message or re.search(r"log ?in|sign in", message, re.IGNORECASE):
        return "login"
    return "call_user"


def approval_from_reply(reply: str | None) -> bool | None:
    """yes -> True, no -> False, anything else (or nothing) -> None."""
    if reply is None:
        return None
    word = reply.strip().lower().rstrip(".!。！")
    if word in YES:
        return True
    if word in NO:
        return False
    return None


def resume_hint(episode_id: str, kind: str) -> str:
    if kind == "confirm":
        return f"resume with: mobile-agent resume {episode_id} --reply yes|no"
    if kind == "call_user":
        return f"resume with: mobile-agent resume {episode_id} --reply TEXT"
    return f"act on the phone, then: mobile-agent resume {episode_id}"


def confirmation_question(decision: Decision, action: Action, screenshot: Path | None) -> str:
    """What the terminal shows before a consequential action: what, on which element, where to look."""
    lines = [
        f"The agent is about to {(decision.kind or 'do something consequential').upper()} in {decision.app}."
    ]
    lines.append(
        f"  action:  {action.describe()}"
        + (f"  (the model says: {action.sensitive})" if action.sensitive else "")
    )
    if decision.element:
        lines.append(f"  element: {decision.element}")
    lines.append(f"  why:     {decision.reason}")
    if screenshot is not None:
        lines.append(f"  screen:  {screenshot}")
    lines.append(f"Type {confirm_word(decision.kind)!r} to allow it; anything else declines.")
    return "\n".join(lines)


# The word a person types to allow a consequential kind at the terminal: the kind itself, so a key pressed by habit
# (y, Enter) or typed before the question was shown never approves a payment.
_TYPED_WORDS = frozenset(KINDS) - {"sensitive"}  # every consequence kind is approved by its own word
_TYPED_ALSO = frozenset({"yes", "确认", "同意", "允许"})


def confirm_word(kind: str | None) -> str:
    """What the terminal asks the person to type to allow an action of ``kind``."""
    return kind if kind in _TYPED_WORDS else "yes"


def typed_approval(answer: str | None, kind: str | None) -> bool:
    """Whether a line typed at the terminal allows an action of ``kind``: the kind's word (or "yes", 确认), never a
    single key."""
    if answer is None:
        return False
    word = answer.strip().lower().rstrip(".!。！")
    return word == confirm_word(kind) or word in _TYPED_ALSO


def takeover_question(kind: str, evidence: str | None) -> str:
    what = {
        "secure_screen": "The phone shows a secure screen (payment or password) the agent cannot see.",
        "captcha": "A captcha is on the phone; automation must not solve it.",
        "login": "The app asks to log in.",
    }.get(kind, "The agent needs a person.")
    more = f" ({evidence})" if evidence else ""
    return f"{what}{more} Finish it on the phone, then press Enter (or type a reply for the agent)."


@dataclass
class Approval:
    """A person's yes while the episode was paused: it lets that one action through once, when the model proposes
    it again (on the same screen, for an action aimed at a point)."""

    action: Action
    screen_hash: int | None

    def matches(self, loops: LoopDetector, action: Action, screen_hash: int, size: Size) -> bool:
        same = loops.same_action(self.action, action, *size)
        if self.screen_hash is not None and action.kind in POINT_KINDS:
            same = same and loops.same_screen(self.screen_hash, screen_hash)
        return same


__all__ = [
    "Approval",
    "Wall",
    "approval_from_reply",
    "confirm_word",
    "typed_approval",
    "confirmation_question",
    "detect_wall",
    "pause_kind_for_call",
    "resume_hint",
    "takeover_question",
]
