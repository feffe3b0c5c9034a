"""The episode loop: observe -> (popup rule | model) -> guards -> act -> settle -> record, until the task ends.

Data moves one way through a step (see DESIGN.md). The loop owns no I/O of its own: the device, the model client,
the store and the person at the terminal are passed in.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from mobile_agent.actions import Action, ActionKind, Outcome, Size
from mobile_agent.device.android import AndroidDevice, Observation
from mobile_agent.errors import DeviceError, DeviceLost, MobileAgentError, ModelError, ParseError
from mobile_agent.guards import Decision, Guard, GuardContext, ValidityGuard, Verdict, run_guards
from mobile_agent.model import Geometry, HistoryTurn, ModelFamily, PromptOptions, prepare_image
from mobile_agent.model.client import ModelClient, Reply
from mobile_agent.store import StepRecord, StepTimings, TrajectoryStore

log = logging.getLogger(__name__)


class UserChannel(Protocol):
    """The person behind the run. ``ask`` returns None when nobody can answer (batch, --non-interactive)."""

    def ask(self, question: str) -> str | None: ...


class NoUser:
    def ask(self, question: str) -> str | None:
        return None


@dataclass(frozen=True)
class AgentConfig:
    max_steps: int = 50
    timeout_s: float = 900.0
    max_parse_retries: int = 3  # consecutive unusable replies before the episode ends as error:parse
    prompt: PromptOptions = field(default_factory=PromptOptions)
    popup_rules: bool = True
    app_hints: bool = True


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


@dataclass
class _StepDraft:
    """Fields of one step, filled in as the step proceeds, then written once."""

    index: int
    started_at: float
    observation: Observation
    source: str = "model"
    reply: Reply | None = None
    thought: str = ""
    action: Action | None = None
    decisions: list[Decision] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    error_kind: str | None = None
    error: str | None = None
    hierarchy: str | None = None


class _EpisodeEnd(Exception):
    def __init__(self, outcome: Outcome, detail: str | None = None, answer: str | None = None) -> None:
        super().__init__(detail or outcome)
        self.outcome, self.detail, self.answer = outcome, detail, answer


class Agent:
    def __init__(
        self,
        device: AndroidDevice,
        family: ModelFamily,
        client: ModelClient,
        store: TrajectoryStore,
        *,
        registry: Any = None,
        config: AgentConfig | None = None,
        user: UserChannel | None = None,
        guards: list[Guard] | None = None,
        on_step: Callable[[StepEvent], None] | None = None,
    ) -> None:
        self.device = device
        self.family = family
        self.client = client
        self.store = store
        self.registry = registry
        self.config = config or AgentConfig()
        self.user = user or NoUser()
        self.guards: list[Guard] = guards if guards is not None else [ValidityGuard()]
        self.on_step = on_step

    # ----- the loop ---------------------------------------------------------------------------------------------
    def run(
        self, task: str, *, run_id: str | None = None, app: str | None = None, meta: dict | None = None
    ) -> EpisodeResult:
        episode = self.store.start_episode(
            task,
            device=self.device.serial,
            family=self.family.name,
            model=self.client.model,
            base_url=self.client.endpoints[0] if self.client.endpoints else None,
            run_id=run_id,
            app=app,
            meta=meta,
        )
        self._episode_id = episode.id
        self._task = task
        self._history: list[HistoryTurn] = []
        self._correction: str | None = None
        self._parse_failures = 0
        self._index = 0
        deadline = time.monotonic() + self.config.timeout_s
        end: _EpisodeEnd
        try:
            while True:
                if self._index >= self.config.max_steps:
                    raise _EpisodeEnd(Outcome.MAX_STEPS, f"no end after {self.config.max_steps} steps")
                if time.monotonic() > deadline:
                    raise _EpisodeEnd(Outcome.TIMEOUT, f"episode timeout of {self.config.timeout_s:.0f} s")
                self._step()
        except _EpisodeEnd as e:
            end = e
        except KeyboardInterrupt:
            end = _EpisodeEnd(Outcome.INTERRUPTED, "interrupted by the user")
            self._finish(end)
            raise
        except DeviceLost as e:
            end = _EpisodeEnd(Outcome.error("device_lost"), e.one_line())
        except ModelError as e:
            end = _EpisodeEnd(Outcome.error(getattr(e, "kind", "model")), e.one_line())
        except DeviceError as e:
            end = _EpisodeEnd(Outcome.error(getattr(e, "kind", "device")), e.one_line())
        except MobileAgentError as e:
            end = _EpisodeEnd(Outcome.error("runtime"), e.one_line())
        return self._finish(end)

    def _finish(self, end: _EpisodeEnd) -> EpisodeResult:
        self.store.finish_episode(self._episode_id, end.outcome, detail=end.detail, answer=end.answer)
        return EpisodeResult(self._episode_id, self._task, end.outcome, self._index, end.answer, end.detail)

    def _step(self) -> None:
        started = time.time()
        t0 = time.perf_counter()
        obs = self.device.observe()
        draft = _StepDraft(self._index, started, obs)
        draft.timings["screenshot"] = obs.screenshot_ms
        if obs.secure:
            self._secure_screen(draft)
            return
        if self.config.popup_rules and self._popup_rule(draft):
            return
        self._ask_model(draft)
        action = draft.action
        if action is None:  # unusable reply, already recorded
            return
        if action.kind is ActionKind.FINISH:
            self._record(draft, t0)
            raise _EpisodeEnd(Outcome.FINISHED, action.text, answer=action.text)
        if action.kind is ActionKind.ANSWER:
            self._record(draft, t0)
            raise _EpisodeEnd(Outcome.ANSWERED, action.text, answer=action.text)
        if action.kind is ActionKind.CALL_USER:
            self._call_user(draft, t0)
            return
        if not self._guarded(draft, t0):
            return
        package = self._resolve_launch(draft, t0) if action.kind is ActionKind.LAUNCH else None
        if action.kind is ActionKind.LAUNCH and package is None:
            return
        result = self.device.perform(action, package=package)
        draft.timings["act"] = result.act_ms
        draft.timings["settle"] = result.settle_ms
        self._record(draft, t0)

    # ----- step parts -------------------------------------------------------------------------------------------
    def _popup_rule(self, draft: _StepDraft) -> bool:
        if self.registry is None or not draft.observation.package:
            return False
        xml = self.device.hierarchy()
        match = self.registry.match_popup(draft.observation.package, xml)
        if match is None:
            return False
        draft.source = "rule"
        draft.hierarchy = xml
        draft.action = match.action
        draft.thought = f"popup rule: {match.rule.id if hasattr(match.rule, 'id') else match.rule}"
        t0 = time.perf_counter()
        result = self.device.perform(match.action)
        draft.timings["act"] = result.act_ms
        draft.timings["settle"] = result.settle_ms
        self._record(draft, t0)
        return True

    def _ask_model(self, draft: _StepDraft) -> None:
        obs = draft.observation
        prepared = prepare_image(obs.screenshot, self.family)
        hints = None
        if self.config.app_hints and self.registry is not None and obs.package:
            hints = self.registry.hints(obs.package)
        messages = self.family.build_messages(
            self._task,
            self._history,
            prepared,
            options=self.config.prompt,
            hints=hints,
            correction=self._correction,
        )
        reply = self.client.complete(messages, episode_id=self._episode_id)
        draft.reply = reply
        draft.timings["model"] = reply.latency_s * 1000
        geometry = Geometry(device=obs.size, image=prepared.size)
        try:
            parsed = self.family.parse(reply.text, geometry, reasoning=reply.reasoning)
        except ParseError as exc:
            self._unusable(draft, "parse", exc.message, f"your last reply could not be parsed: {exc.message}")
            return
        draft.action = parsed.action
        draft.thought = parsed.thought
        self._pending_turn = HistoryTurn(image=prepared.jpeg, reply=reply.text, action=parsed.action)

    def _unusable(self, draft: _StepDraft, kind: str, message: str, correction: str) -> None:
        """Record a step whose action cannot be executed, and ask the model again with a correction."""
        draft.error_kind, draft.error = kind, message
        draft.action = None
        self._record(draft, None, add_history=False)
        self._parse_failures += 1
        self._correction = correction + ". Answer again in the exact output format."
        if self._parse_failures > self.config.max_parse_retries:
            raise _EpisodeEnd(
                Outcome.error(kind), f"{self._parse_failures} unusable replies in a row: {message}"
            )

    def _guarded(self, draft: _StepDraft, t0: float) -> bool:
        obs = draft.observation
        ctx = GuardContext(self._task, draft.action, Size(*obs.size), obs.package, draft.index)
        decisions = run_guards(self.guards, ctx)
        draft.decisions.extend(decisions)
        blocked = next((d for d in decisions if d.verdict is Verdict.BLOCK), None)
        if blocked is not None:
            if blocked.guard == "validity":
                action = draft.action
                self._unusable(
                    draft,
                    "invalid_action",
                    blocked.reason,
                    f"the action {action.describe()} is invalid: {blocked.reason}",
                )
                return False
            self._record(draft, t0)
            raise _EpisodeEnd(Outcome.BLOCKED, f"{blocked.guard}: {blocked.reason}")
        asked = next((d for d in decisions if d.verdict is Verdict.ASK), None)
        if asked is not None:
            answer = self.user.ask(f"{asked.reason}\nAllow {draft.action.describe()}? [y/N]")
            if answer is None:
                self._record(draft, t0)
                raise _EpisodeEnd(Outcome.NEEDS_USER, f"needs confirmation: {asked.reason}")
            approved = answer.strip().lower() in ("y", "yes")
            draft.decisions.append(
                Decision("human", Verdict.ALLOW if approved else Verdict.BLOCK, answer.strip())
            )
            if not approved:
                self._record(draft, t0)
                raise _EpisodeEnd(Outcome.BLOCKED, f"the user declined: {asked.reason}")
        hints = [d.reason for d in decisions if d.verdict is Verdict.HINT]
        self._correction = "; ".join(hints) if hints else None
        return True

    def _resolve_launch(self, draft: _StepDraft, t0: float) -> str | None:
        app = draft.action.app or ""
        installed = self.device.installed_packages()
        if self.registry is not None:
            try:
                return self.registry.resolve_launch(app, installed)
            except MobileAgentError as exc:
                suggestions = getattr(exc, "suggestions", None) or []
                hint = f"; did you mean: {', '.join(suggestions)}" if suggestions else ""
                self._unusable(
                    draft,
                    "unknown_app",
                    f"unknown app {app!r}{hint}",
                    f"there is no app called {app!r}{hint}",
                )
                return None
        if app in installed:
            return app
        self._unusable(draft, "unknown_app", f"unknown app {app!r}", f"there is no app called {app!r}")
        return None

    def _call_user(self, draft: _StepDraft, t0: float) -> None:
        question = draft.action.text or "The agent needs your help."
        answer = self.user.ask(question)
        if answer is None:
            self._record(draft, t0)
            raise _EpisodeEnd(Outcome.NEEDS_USER, question)
        draft.decisions.append(Decision("human", Verdict.ALLOW, f"user replied: {answer}"))
        self._record(draft, t0)
        self._correction = f"The user replied: {answer}"

    def _secure_screen(self, draft: _StepDraft) -> None:
        draft.error_kind, draft.error = "secure_screen", "the screen is secure (black screenshot)"
        question = (
            "The phone shows a secure screen (payment or password). Finish it on the phone, then press Enter."
        )
        answer = self.user.ask(question)
        self._record(draft, None, add_history=False)
        if answer is None:
            raise _EpisodeEnd(Outcome.NEEDS_USER, "secure screen: a person must act on the phone")

    # ----- recording --------------------------------------------------------------------------------------------
    def _record(self, draft: _StepDraft, t0: float | None, *, add_history: bool = True) -> None:
        if t0 is not None:
            draft.timings["total"] = (time.perf_counter() - t0) * 1000
        obs = draft.observation
        reply = draft.reply
        record = StepRecord(
            index=draft.index,
            started_at=draft.started_at,
            ended_at=time.time(),
            screen=obs.size,
            foreground_app=obs.package,
            foreground_activity=obs.activity,
            raw_reply=reply.text if reply else None,
            reasoning=reply.reasoning if reply else None,
            thought=draft.thought or None,
            action=draft.action,
            action_source=draft.source,
            guard_decisions=[d.to_dict() for d in draft.decisions],
            timings=StepTimings.from_dict(draft.timings),
            prompt_tokens=reply.prompt_tokens if reply else None,
            completion_tokens=reply.completion_tokens if reply else None,
            model_latency_ms=reply.latency_s * 1000 if reply else None,
            error_kind=draft.error_kind,
            error_text=draft.error,
        )
        self.store.record_step(self._episode_id, record, screenshot=obs.screenshot, hierarchy=draft.hierarchy)
        if draft.action is not None and draft.error is None:
            self._parse_failures = 0
            if add_history and draft.source == "model":
                self._history.append(self._pending_turn)
        self._index += 1
        if self.on_step is not None:
            self.on_step(
                StepEvent(
                    self._episode_id,
                    draft.index,
                    draft.source,
                    draft.thought,
                    draft.action,
                    draft.error,
                    draft.timings,
                )
            )
