"""Human take-over: when a person must act (captcha, login wall, secure screen, the model's call-user / take-over,
a confirmation the policy asks for), what they are told, and how a paused episode is resumed.

    result = resume_episode("3f9a0c", reply="yes")        # the library side of `mobile-agent resume`

The loop itself (pausing, recording the person's step) lives in :mod:`mobile_agent.agent.loop`; the pause rows in
:mod:`mobile_agent.store.pauses`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mobile_agent.actions import Action
from mobile_agent.screen.viewtree import ViewTree
from mobile_agent.errors import UserError
from mobile_agent.agent.guards import Decision

if TYPE_CHECKING:
    from mobile_agent.agent.loop import EpisodeResult, StepEvent, UserChannel
    from mobile_agent.agent.safety import SafetyPolicy

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
    lines.append("Allow it? [y/N]")
    return "\n".join(lines)


def takeover_question(kind: str, evidence: str | None) -> str:
    what = {
        "secure_screen": "The phone shows a secure screen (payment or password) the agent cannot see.",
        "captcha": "A captcha is on the phone; automation must not solve it.",
        "login": "The app asks to log in.",
    }.get(kind, "The agent needs a person.")
    more = f" ({evidence})" if evidence else ""
    return f"{what}{more} Finish it on the phone, then press Enter (or type a reply for the agent)."


def resume_episode(
    episode: str,
    *,
    reply: str | None = None,
    db: str | None = None,
    data_dir: str | Path | None = None,
    device: str | None = None,
    adb: str | None = None,
    base_url: str | list[str] | None = None,
    model: str | None = None,
    family: str | None = None,
    apps_dir: str | Path | None = None,
    safety: SafetyPolicy | None = None,
    user: UserChannel | None = None,
    on_step: Callable[[StepEvent], None] | None = None,
    store: Any = None,
) -> EpisodeResult:
    """Continue a paused episode on the phone it ran on, with the model and settings it ran with.

    ``reply`` answers the question it paused on (yes/no for a confirmation, any text for a call-user); every other
    argument overrides what the pause recorded. UserError when the episode is not paused.
    """
    from dataclasses import replace

    from mobile_agent.agent.loop import Agent, AgentConfig
    from mobile_agent.device.android import AndroidDevice
    from mobile_agent.model.families import get_family
    from mobile_agent.model.client import ModelClient
    from mobile_agent.agent.runtime import load_registry
    from mobile_agent.store.store import TrajectoryStore
    from mobile_agent.store.pauses import open_pause

    own_store = store is None
    store = store or TrajectoryStore.open(db, root=Path(data_dir) if data_dir else None)
    try:
        info = store.episode(episode)
        pause = open_pause(store, info.id)
        if pause is None:
            raise UserError(
                f"episode {info.id} is not waiting for a person ({info.outcome or info.status})",
                "only an episode that paused as needs_user can be resumed; see `mobile-agent episodes`",
            )
        context = pause.context
        config = AgentConfig.from_snapshot(context.get("config", {}))
        if safety is not None:
            config = replace(config, safety=safety)
        urls = base_url if base_url is not None else context.get("base_urls") or []
        urls = [urls] if isinstance(urls, str) else list(urls)
        if not urls:
            raise UserError("the pause does not say which model endpoint to use", "pass --base-url")
        serial = device or pause.device
        agent = Agent(
            AndroidDevice(serial, adb=adb if adb is not None else pause.adb_server),
            get_family(family or context.get("family") or info.family),
            ModelClient(urls, model or context.get("model") or info.model),
            store,
            registry=load_registry(apps_dir),
            config=config,
            user=user,
            on_step=on_step,
        )
        return agent.resume(info.id, reply)
    finally:
        if own_store:
            store.close()


__all__ = [
    "Wall",
    "approval_from_reply",
    "confirmation_question",
    "detect_wall",
    "pause_kind_for_call",
    "resume_episode",
    "resume_hint",
    "takeover_question",
]
