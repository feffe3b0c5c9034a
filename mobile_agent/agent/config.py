"""What an episode is run with and what it gives back: the settings, the person behind the run, the stop flag, the
live step events and the result. The loop (:mod:`mobile_agent.agent.loop`), the take-over helpers and the entry points
(:mod:`mobile_agent.agent.runtime`) all import these; they import nothing of the loop.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from mobile_agent.actions import Action, Outcome
from mobile_agent.agent.loops import LoopConfig
from mobile_agent.gate.policy import SafetyPolicy
from mobile_agent.model.base import PromptOptions


class UserChannel(Protocol):
    """The person behind the run. ``ask`` returns None when nobody can answer (batch, --non-interactive). A channel
    may also offer ``ask_until(question, stopped)``, which gives up (None) once ``stopped()`` is true."""

    def ask(self, question: str) -> str | None: ...


class NoUser:
    def ask(self, question: str) -> str | None:
        return None


class EpisodeStopped(KeyboardInterrupt):
    """The episode was stopped from outside its loop (its phone was taken over by another process). A
    KeyboardInterrupt, so that it takes Ctrl-C's path: the episode ends as ``interrupted`` with ``detail``, and the
    command exits as interrupted."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class StopFlag:
    """Set from another thread to stop an episode: the loop calls ``check`` at the start of a step, before it asks
    the model and right before it acts, and ``check`` raises EpisodeStopped once the flag is set. No I/O: the
    thread that sets it (the phone lease's renewal) has already done the looking."""

    def __init__(self) -> None:
        self._set = threading.Event()
        self.reason = ""

    def set(self, reason: str) -> None:
        self.reason = reason
        self._set.set()

    def is_set(self) -> bool:
        return self._set.is_set()

    def check(self) -> None:
        if self._set.is_set():
            raise EpisodeStopped(self.reason)

    def ask(self, user: UserChannel, question: str) -> str | None:
        """``user.ask(question)``; EpisodeStopped instead once the flag is set — before the question, while it waits
        (a channel with ``ask_until(question, stopped)`` gives up when the flag is set: a displaced run does not
        wait on a person about a phone that is no longer its own), or when the answer comes too late."""
        self.check()
        ask_until = getattr(user, "ask_until", None)
        answer = ask_until(question, self.is_set) if ask_until is not None else user.ask(question)
        self.check()
        return answer


@dataclass(frozen=True)
class AgentConfig:
    max_steps: int = 50
    timeout_s: float = 900.0
    step_timeout_s: float = 300.0  # no step (its model request with retries, its device calls) waits longer
    max_parse_retries: int = 3  # consecutive unusable replies before the episode ends as error:parse
    prompt: PromptOptions = field(default_factory=PromptOptions)
    popup_rules: bool = True
    app_hints: bool = True
    safety: SafetyPolicy = field(default_factory=SafetyPolicy)  # ask for every consequential action
    loops: LoopConfig = field(default_factory=LoopConfig)
    detect_walls: bool = True  # captcha and login screens hand over to a person
    reserve_s: float = 1800.0  # how long a paused episode keeps its phone reserved for the person
    # Before acting, the screen is read again (one request) when the gate saw something that could matter there,
    # and before any action this long after its observation: the phone does not wait while the model thinks.
    recheck_after_s: float = 3.0
    # A phone that leaves the adb bus (DeviceLost) is waited for this long before the episode ends device_lost;
    # when it is back, the step starts again from a fresh frame (mobile_agent.agent.blinks).
    reconnect_wait_s: float = 60.0

    def snapshot(self) -> dict[str, Any]:
        """What a resumed episode needs to run with the same settings (JSON-safe)."""
        return {
            "max_steps": self.max_steps,
            "timeout_s": self.timeout_s,
            "step_timeout_s": self.step_timeout_s,
            "max_parse_retries": self.max_parse_retries,
            "popup_rules": self.popup_rules,
            "app_hints": self.app_hints,
            "detect_walls": self.detect_walls,
            "reserve_s": self.reserve_s,
            "recheck_after_s": self.recheck_after_s,
            "reconnect_wait_s": self.reconnect_wait_s,
            "prompt": asdict(self.prompt),
            "loops": asdict(self.loops),
            "safety": self.safety.to_dict(),
        }

    @classmethod
    def from_snapshot(cls, data: dict[str, Any]) -> AgentConfig:
        plain = {
            k: data[k] for k in ("max_steps", "timeout_s", "max_parse_retries", "popup_rules") if k in data
        }
        plain |= {k: data[k] for k in ("step_timeout_s",) if k in data}
        plain |= {
            k: data[k]
            for k in ("app_hints", "detect_walls", "reserve_s", "recheck_after_s", "reconnect_wait_s")
            if k in data
        }
        return cls(
            **plain,
            prompt=PromptOptions(**data.get("prompt", {})),
            loops=LoopConfig(**data.get("loops", {})),
            safety=SafetyPolicy.from_dict(data["safety"]) if "safety" in data else SafetyPolicy(),
        )


@dataclass(frozen=True)
class StepEvent:
    """What the live display shows after each recorded step."""

    episode_id: str
    index: int
    source: str
    thought: str
    action: Action | None
    error: str | None
    timings: dict[str, float]


@dataclass(frozen=True)
class EpisodeResult:
    episode_id: str
    task: str
    outcome: Outcome
    steps: int
    answer: str | None = None
    detail: str | None = None

    @property
    def ok(self) -> bool:
        return self.outcome.ended_by_agent


__all__ = ["AgentConfig", "EpisodeResult", "EpisodeStopped", "NoUser", "StepEvent", "StopFlag", "UserChannel"]
