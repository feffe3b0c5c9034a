"""The episode loop: observe -> (popup rule | wall | model) -> guards -> act -> settle -> record, until the task ends.

Data moves one way through a step (see DESIGN.md). The loop owns no I/O of its own: the device, the model client,
the store and the person at the terminal are passed in.

Where a person is needed (a confirmation the policy asks for, the model's call-user / take-over, a captcha, a login
wall, a secure screen) the loop asks ``UserChannel.ask``; when nobody can answer (a batch, --non-interactive) the
episode pauses: it ends as ``needs_user`` with a ``pauses`` row, and ``Agent.resume`` continues the same episode.
What the person did is recorded as a step with source ``human`` whose screenshot is the screen they left behind
(the step before it holds the screen they were handed).

Imports run one way: the settings and results come from :mod:`mobile_agent.agent.config`, a step's screen, draft
and record from :mod:`mobile_agent.agent.step`, walls and questions from :mod:`mobile_agent.agent.takeover`; the
entry points that build an Agent (``run_task``, ``resume_episode``) sit above, in :mod:`mobile_agent.agent.runtime`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from mobile_agent.actions import Action, ActionKind, Outcome, Size
from mobile_agent.agent.acting import commit_step, error_outcome, finish_or_read, launch_package
from mobile_agent.agent.asking import Question, critic_label, parse_reply, send_question
from mobile_agent.agent.blinks import PhoneBlinks
from mobile_agent.agent.config import AgentConfig, EpisodeResult, NoUser, StepEvent, StopFlag, UserChannel
from mobile_agent.agent.loops import LoopDetector, LoopGuard
from mobile_agent.agent.overrun import StepClock
from mobile_agent.agent.recheck import stale_step
from mobile_agent.agent.sequence import FollowUps
from mobile_agent.agent.step import (
    StepDraft,
    StepScreen,
    device_frame,
    pause_context,
    rebuild_history,
    step_event,
)
from mobile_agent.agent.takeover import (
    Approval,
    Wall,
    approval_from_reply,
    confirmation_question,
    detect_wall,
    pause_kind_for_call,
    resume_hint,
    takeover_question,
    typed_approval,
)
from mobile_agent.device.android import AndroidDevice
from mobile_agent.errors import (
    DeadlineExceeded,
    MobileAgentError,
    ParseError,
    StoreError,
    UserError,
)
from mobile_agent.gate.gate import SafetyGate
from mobile_agent.gate.guard import Decision, Guard, GuardContext, ValidityGuard, Verdict, run_guards
from mobile_agent.model.base import HistoryTurn, ModelFamily
from mobile_agent.model.client import ModelClient
from mobile_agent.screen.imagehash import dhash
from mobile_agent.store import pauses as pause_store
from mobile_agent.store.owners import Heartbeat, claim_episode
from mobile_agent.store.store import TrajectoryStore
from mobile_agent.waits.deadlines import Deadline

if TYPE_CHECKING:  # the critic's module (judges, verdicts) is only needed when a critic is given
    from mobile_agent.verify.labels import Critic

log = logging.getLogger(__name__)
USER_ACTED = "The user has acted on the phone; continue from this screen."
FLUSH_S = 5.0  # what the end of an episode may wait for the phone (the user's clipboard put back)


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
        critic: Critic | None = None,
        stop: StopFlag | None = None,
    ) -> None:
        self.device = device
        self.family = family
        self.client = client
        self.store = store
        self.registry = registry
        self.config = config or AgentConfig()
        self.user = user or NoUser()
        self.loops = LoopDetector(self.config.loops)
        default = [ValidityGuard(), SafetyGate(self.config.safety, registry), LoopGuard(self.loops)]
        self.guards: list[Guard] = guards if guards is not None else default
        self.on_step = on_step
        self.critic = critic
        self.stop = stop or StopFlag()  # set from outside (the phone was taken over): see StopFlag
        self.screen = StepScreen(device, family, registry)
        self._approval: Approval | None = None

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
        self._begin(episode.id, task, index=0)
        return self._loop(lambda: None)

    def resume(self, episode_id: str, reply: str | None = None) -> EpisodeResult:
        """Continue a paused (needs_user) episode: record what the person did, then carry on with the model."""
        episode = self.store.episode(episode_id)
        pause = pause_store.open_pause(self.store, episode.id)
        if pause is None:
            raise UserError(
                f"episode {episode.id} is not waiting for a person ({episode.outcome or episode.status})",
                "only an episode that paused as needs_user can be resumed; see `mobile-agent episodes`",
            )
        approved: bool | None = None
        if pause.kind == "confirm":
            approved = approval_from_reply(reply)
            if approved is None:
                raise UserError(
                    f"episode {episode.id} waits for a yes or no: {pause.question.splitlines()[0]}",
                    f"resume it with --reply yes or --reply no (mobile-agent resume {episode.id} --reply yes)",
                )
        steps = self.store.steps(episode.id)
        claim_episode(self.store, episode.id)  # this process runs it now (others check its heartbeat)
        pause_store.reopen_episode(self.store, episode.id)
        pause_store.mark_resumed(self.store, pause.id, reply)
        self._begin(episode.id, episode.task, index=(steps[-1].index + 1) if steps else 0)
        self._history = rebuild_history(steps, self.store, self.family, self.config.prompt)
        self.client.restore_unused(episode.id, int(pause.context.get("unused_replies") or 0))
        return self._loop(lambda: self._after_pause(pause, reply, approved))

    def _begin(self, episode_id: str, task: str, *, index: int) -> None:
        self._episode_id = episode_id
        self._task = task
        self._history: list[HistoryTurn] = []
        self._correction: str | None = None
        self._parse_failures = 0
        self._index = index
        self._approval = None
        self._follow_ups = FollowUps()
        self.loops.reset()
        self._heartbeat = Heartbeat(self.store, episode_id).start()  # stopped by _finish
        self._blinks = PhoneBlinks(self.device, self.store, episode_id, self.config, self.stop)

    def _loop(self, first: Callable[[], None]) -> EpisodeResult:
        deadline = time.monotonic() + self.config.timeout_s
        self._clock = StepClock(self.device, self.config.timeout_s, self.config.step_timeout_s)
        end: _EpisodeEnd
        try:
            self._clock.next_step()
            first()
            while True:
                if self._index >= self.config.max_steps:
                    raise _EpisodeEnd(Outcome.MAX_STEPS, f"no end after {self.config.max_steps} steps")
                if time.monotonic() > deadline:
                    raise _EpisodeEnd(Outcome.TIMEOUT, f"episode timeout of {self.config.timeout_s:.0f} s")
                self._heartbeat.beat()
                self.stop.check()
                self._clock.next_step()
                if not self._blinks.through(self._step, self._clock):  # it left the bus and came back
                    self._index, self._follow_ups = self._blinks.index_after(self._index), FollowUps()
        except _EpisodeEnd as e:
            end = e
        except DeadlineExceeded as e:  # a wait ran past the step's deadline: write the step, then the end
            self._clock.record_overrun(self.store, self._episode_id, self._index, e)
            end = _EpisodeEnd(Outcome.TIMEOUT, e.one_line())
        except KeyboardInterrupt as e:  # Ctrl-C, SIGTERM, or the stop flag (EpisodeStopped says why)
            end = _EpisodeEnd(Outcome.INTERRUPTED, getattr(e, "detail", None) or "interrupted by the user")
            self._finish(end)
            raise
        except StoreError as e:  # disk full, read-only, locked: error:store where that can still be written
            return self._finish(_EpisodeEnd(error_outcome(e), e.one_line()), fault=e)
        except MobileAgentError as e:  # the phone, the model, the runtime: error:<kind>
            end = _EpisodeEnd(error_outcome(e), e.one_line())
        except Exception as e:  # a bug must not leave the episode "running" with its steps unexplained
            log.exception("episode %s failed unexpectedly", self._episode_id)
            end = _EpisodeEnd(Outcome.error("internal"), f"{type(e).__name__}: {e}")
        return self._finish(end)

    def _finish(self, end: _EpisodeEnd, fault: StoreError | None = None) -> EpisodeResult:
        self._heartbeat.stop()
        self.device.set_deadline(Deadline.after(FLUSH_S, "putting the clipboard back"))
        try:
            self.device.flush()  # the user's clipboard, when the last step typed
        except MobileAgentError as exc:
            log.warning("phone %s: %s", self.device.serial, exc.one_line())
        self.device.set_deadline(None)
        try:
            outcome, detail = finish_or_read(
                self.store, self._episode_id, end.outcome, end.detail, end.answer
            )
        except StoreError:
            if fault is None:
                raise
            raise fault from None  # the store cannot take the end either: report the first fault, in one line
        return EpisodeResult(self._episode_id, self._task, outcome, self._index, end.answer, detail)

    def _step(self) -> None:
        started = time.time()
        t0 = time.perf_counter()
        # The frame now; its view tree and foreground app follow in the background.
        capture = self.screen.capture()
        draft = StepDraft(self._index, started, capture.provisional())
        self._clock.draft = draft
        draft.timings["screenshot"] = capture.screenshot_ms
        if capture.secure:
            draft.observation = capture.observation()
            self._take_over(draft, None, "secure_screen", takeover_question("secure_screen", None))
            return
        screen_hash = dhash(capture.screenshot, self.config.loops.hash_size)
        loop_hint = self.loops.hint(screen_hash, *capture.size)
        if loop_hint:
            draft.decisions.append(Decision("loop", Verdict.HINT, loop_hint, kind="loop"))
        # The request leaves now (unless the last reply's next action is due): the tree is read while it is out.
        follow_up = self._follow_ups.ready(draft.index)
        question = None if follow_up else self._send(draft, loop_hint, capture.package_hint)
        draft.observation = capture.observation()  # the foreground app, read with the tree for this frame
        if self.config.popup_rules and self._popup_rule(draft, question):
            return
        if self.config.detect_walls and self._wall(draft, question):
            return
        self._follow_ups.fill(draft) or self._take_reply(draft, question)  # a follow-up, or the reply
        if self.critic is not None and draft.action is not None:
            self._critique(draft, loop_hint, t0)
        self.stop.check()  # the reply may end the episode (finish, answer, a question): not once the phone is gone
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
            question = action.text or "The agent needs your help."
            self._take_over(draft, t0, pause_kind_for_call(question), question)
            return
        if not self._guarded(draft, t0, screen_hash):
            return
        package = self._resolve_launch(draft, t0) if action.kind is ActionKind.LAUNCH else None
        if action.kind is ActionKind.LAUNCH and package is None:
            return
        self._act(draft, t0, package=package)
        self.loops.note(screen_hash, action)

    # ----- step parts -------------------------------------------------------------------------------------------
    def _popup_rule(self, draft: StepDraft, question: Question | None) -> bool:
        obs = draft.observation
        xml = self.screen.hierarchy() if self.registry is not None and obs.package else None
        match = self.registry.match_popup(obs.package, xml, activity=obs.activity) if xml else None
        if match is None:
            return False
        gate = GuardContext(
            self._task, match.action, Size(*obs.size), obs.package, draft.index, match.rule.id
        )
        gate = replace(gate, hierarchy_source=lambda: xml, screenshot_source=lambda: device_frame(obs))
        if any(d.verdict in (Verdict.BLOCK, Verdict.ASK) for d in run_guards(self.guards, gate)):
            return False  # a rule's tap is reviewed like a model's; on any objection the model decides
        if question is not None:
            question.discard()  # the rule acts on this frame instead of the model
        draft.source = "rule"
        draft.hierarchy = xml
        draft.action = match.action
        draft.thought = f"popup rule: {match.rule.id if hasattr(match.rule, 'id') else match.rule}"
        self._act(draft, time.perf_counter())
        return True

    def _wall(self, draft: StepDraft, question: Question | None) -> bool:
        """A captcha or a login wall: only judged when the tree is at hand already (popup rules waited for it)."""
        xml = self.screen.dumped
        if xml is None:
            return False
        wall: Wall | None = detect_wall(xml, draft.observation.package, self.registry)
        if wall is None:
            return False
        if question is not None:
            question.discard()  # a person takes over this frame
        draft.hierarchy = xml
        draft.source, draft.thought = "rule", wall.evidence
        draft.decisions.append(
            Decision("takeover", Verdict.ASK, wall.evidence, kind=wall.kind, source="screen")
        )
        self._take_over(draft, None, wall.kind, takeover_question(wall.kind, wall.evidence))
        return True

    def _send(self, draft: StepDraft, loop_hint: str | None, package: str | None) -> Question:
        """Send the step's question to the model (``package``: the app its hints are for)."""
        self.stop.check()
        obs = draft.observation
        hints = None
        if self.config.app_hints and self.registry is not None and package:
            hints = self.registry.hints(package)
        return send_question(
            self.family,
            self.client,
            task=self._task,
            history=self._history,
            screenshot=obs.screenshot,
            size=obs.size,
            options=self.config.prompt,
            hints=hints,
            correction="; ".join(c for c in (self._correction, loop_hint) if c) or None,
            episode_id=self._episode_id,
            clock=self._clock,
        )

    def _take_reply(self, draft: StepDraft, question: Question | None) -> None:
        assert question is not None  # asked unless a follow-up was ready
        reply = question.pending.result()
        self.screen.model_answered(reply.latency_s)
        draft.reply = reply
        draft.timings["model"] = reply.latency_s * 1000
        try:
            parsed = parse_reply(self.family, reply, question.geometry, self._clock.deadline)
        except ParseError as exc:
            self._unusable(draft, "parse", exc.message, f"your last reply could not be parsed: {exc.message}")
            return
        draft.action = parsed.action
        draft.thought, draft.follow_ups = parsed.thought, parsed.follow_ups
        self._pending_turn = HistoryTurn(image=question.prepared.jpeg, reply=reply.text, action=parsed.action)

    def _ask_model(self, draft: StepDraft, loop_hint: str | None = None) -> None:
        self._take_reply(draft, self._send(draft, loop_hint, draft.observation.package))

    def _critique(self, draft: StepDraft, loop_hint: str | None, t0: float) -> None:
        """The critic labels the proposed action before it runs; on ``wrong`` the model is asked again with the
        critique, up to ``critic.max_reasks`` times. Every label is recorded with the step."""
        critic = self.critic
        for reask in range(critic.max_reasks + 1):
            action = draft.action
            if action is None or action.kind in (ActionKind.FINISH, ActionKind.ANSWER, ActionKind.CALL_USER):
                return
            label, decision = critic_label(
                critic, self._task, self._history, draft, self._episode_id, self._clock
            )
            draft.decisions.append(decision)
            wrong = label.is_wrong
            if not wrong:
                return
            if reask == critic.max_reasks:
                if critic.block_when_still_wrong:
                    self._record(draft, t0)
                    raise _EpisodeEnd(
                        Outcome.BLOCKED, f"critic: {action.describe()} is still wrong: {label.rationale}"
                    )
                return
            self._correction = critic.correction(label, action.describe())
            draft.reply, draft.action, draft.thought = None, None, ""
            self._ask_model(draft, loop_hint)

    def _unusable(self, draft: StepDraft, kind: str, message: str, correction: str) -> None:
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

    def _guarded(self, draft: StepDraft, t0: float, screen_hash: int) -> bool:
        obs = draft.observation
        ctx = GuardContext(
            self._task,
            draft.action,
            Size(*obs.size),
            obs.package,
            draft.index,
            thought=draft.thought,
            screen_hash=screen_hash,
            hierarchy_source=self.screen.hierarchy,
            screenshot_source=lambda: device_frame(obs),
        )
        decisions = run_guards(self.guards, ctx)
        draft.decisions.extend(decisions)
        if any(d.kind and d.verdict is not Verdict.HINT and d.guard != "loop" for d in decisions):
            draft.hierarchy = self.screen.dumped  # the evidence for a safety decision goes with the step
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
            outcome = Outcome.LOOP if blocked.guard == "loop" else Outcome.BLOCKED
            raise _EpisodeEnd(outcome, f"{blocked.guard}: {blocked.reason}")
        asked = next((d for d in decisions if d.verdict is Verdict.ASK), None)
        if asked is not None and not self._confirmed(draft, asked, screen_hash, t0):
            return False
        hints = [d.reason for d in decisions if d.verdict is Verdict.HINT]
        self._correction = "; ".join(hints) if hints else None
        return True

    def _confirmed(self, draft: StepDraft, asked: Decision, screen_hash: int, t0: float) -> bool:
        """A person's yes (now, or given when the episode was resumed). No person: the episode pauses."""
        if self._approval is not None and self._approved_earlier(
            draft.action, screen_hash, draft.observation.size
        ):
            self._approval = None
            draft.decisions.append(Decision("human", Verdict.ALLOW, "confirmed by the person when resuming"))
            return True
        staged = pause_store.stage_screenshot(
            self.store, self._episode_id, draft.index, draft.observation.screenshot
        )
        question = confirmation_question(asked, draft.action, staged)
        answer = self.stop.ask(self.user, question)
        if answer is None:
            self._record(draft, t0)
            self._pause(
                draft, "confirm", question, pending=draft.action, decision=asked, screen_hash=screen_hash
            )
        approved = typed_approval(answer, asked.kind)
        draft.decisions.append(
            Decision("human", Verdict.ALLOW if approved else Verdict.BLOCK, answer.strip())
        )
        if not approved:
            self._record(draft, t0)
            raise _EpisodeEnd(Outcome.BLOCKED, f"the user declined: {asked.reason}")
        return True

    def _approved_earlier(self, action: Action, screen_hash: int, size: Size) -> bool:
        approval = self._approval
        assert approval is not None
        same = approval.matches(self.loops, action, screen_hash, size)
        if not same:
            log.info("the approved action was not proposed again; the approval is dropped")
            self._approval = None
        return same

    def _resolve_launch(self, draft: StepDraft, t0: float) -> str | None:
        app = draft.action.app or ""
        package, unknown = launch_package(self.registry, self.device.installed_packages, app)
        if package is None:
            self._unusable(
                draft, "unknown_app", f"unknown app {unknown}", f"there is no app called {unknown}"
            )
        return package

    def _take_over(self, draft: StepDraft, t0: float | None, kind: str, question: str) -> None:
        """Hand the phone (or the question) to a person: now when one answers, else pause the episode."""
        if kind == "secure_screen":
            draft.error_kind, draft.error = "secure_screen", "the screen is secure (black screenshot)"
        add_history = kind != "secure_screen" and draft.action is not None
        answer = self.stop.ask(self.user, question)
        self._record(draft, t0, add_history=add_history)
        if answer is None:
            self._pause(draft, kind, question)
        self._human_step(kind, answer)

    def _pause(
        self,
        draft: StepDraft,
        kind: str,
        question: str,
        *,
        pending: Action | None = None,
        decision: Decision | None = None,
        screen_hash: int | None = None,
    ) -> None:
        pause_store.create_pause(
            self.store,
            pause_store.PauseRecord(
                episode_id=self._episode_id,
                step_index=draft.index,
                kind=kind,
                question=question,
                device=self.device.serial,
                adb_server=self.device.adb_address,
                reserve_s=self.config.reserve_s,
                pending_action=pending,
                decision=decision.to_dict() if decision else None,
                screen_hash=screen_hash,
                context=pause_context(self.family.name, self.client, self.config, self._episode_id),
            ),
        )
        first_line = question.strip().splitlines()[0] if question.strip() else kind
        raise _EpisodeEnd(Outcome.NEEDS_USER, f"{kind}: {first_line} — {resume_hint(self._episode_id, kind)}")

    def _after_pause(self, pause: pause_store.PauseInfo, reply: str | None, approved: bool | None) -> None:
        """The first step of a resumed episode: what the person did, then back to the model."""
        if pause.kind == "confirm":
            verdict = Verdict.ALLOW if approved else Verdict.BLOCK
            obs = self.screen.observe()
            draft = StepDraft(self._index, time.time(), obs, source="human")
            draft.thought = (
                f"the person {'confirmed' if approved else 'declined'}: {pause.question.splitlines()[0]}"
            )
            draft.decisions.append(
                Decision("human", verdict, reply or "", kind=(pause.decision or {}).get("kind"))
            )
            if not approved or pause.pending_action is None:
                self._record(draft, None, add_history=False)
                raise _EpisodeEnd(Outcome.BLOCKED, f"the user declined: {pause.question.splitlines()[0]}")
            self._perform_approved(draft, pause)
            return
        self._human_step(pause.kind, reply if reply is not None else "")

    def _perform_approved(self, draft: StepDraft, pause: pause_store.PauseInfo) -> None:
        """Do the action the person approved, if the phone still shows the screen it was approved on; otherwise
        the model decides again on the new screen and the approval holds for that same action once."""
        action = pause.pending_action
        assert action is not None
        screen_hash = dhash(draft.observation.screenshot, self.config.loops.hash_size)
        if pause.screen_hash is not None and not self.loops.same_screen(pause.screen_hash, screen_hash):
            draft.thought += " (the screen changed since; the model is asked again)"
            self._record(draft, None, add_history=False)
            self._approval = Approval(action, None)
            return
        draft.action = action
        t0 = time.perf_counter()
        package = self._resolve_launch(draft, t0) if action.kind is ActionKind.LAUNCH else None
        if action.kind is ActionKind.LAUNCH and package is None:
            return
        self._act(draft, t0, package=package, add_history=False)

    def _human_step(self, kind: str, answer: str) -> None:
        """Record what the person did (the screen after them) and tell the model about it in the next prompt."""
        obs = self.screen.observe()
        draft = StepDraft(self._index, time.time(), obs, source="human")
        said = answer.strip()
        draft.thought = f"{kind}: the person took over" + (f" and replied: {said}" if said else "")
        draft.decisions.append(Decision("human", Verdict.ALLOW, said or "done on the phone", kind=kind))
        self._record(draft, None, add_history=False)
        self._correction = f"The user replied: {said}" if said else USER_ACTED

    def _act(self, draft: StepDraft, t0: float | None, *, package: str | None = None, add_history=True):
        """Every action the guards allowed (a model's, a follow-up's, a popup rule's, an approved one) reaches the
        phone here, recorded as an intent first, unless the phone has moved on from the screen the guards judged."""
        correction = stale_step(self.device, self.screen.dumped, draft, self.config.recheck_after_s)
        if correction is not None:  # nothing performed: the next step observes again and asks the model again
            self._record(draft, t0, add_history=False)
            self._correction = correction
            return
        self._record(draft, t0, act=True, package=package, add_history=add_history)

    # ----- recording --------------------------------------------------------------------------------------------
    def _record(
        self, draft: StepDraft, t0: float | None, *, add_history: bool = True, act: bool = False, package=None
    ) -> None:
        """Commit the step; with ``act`` as an intent, then act and complete it (mobile_agent.agent.acting)."""
        if t0 is not None:
            draft.timings["total"] = (time.perf_counter() - t0) * 1000
        if act:
            self.stop.check()  # the last moment before the phone is touched
        if draft.hierarchy is None:
            # The view tree of the observed screen, when this step read it anyway: offline evaluation scores taps
            # by the element under them, and verification reads the final screen's text from it.
            draft.hierarchy = self.screen.dumped
        commit_step(self.store, self.device, self._episode_id, draft, t0, act=act, package=package)
        if draft.action is not None and draft.error is None:
            self._parse_failures = 0
            if add_history and draft.source == "model" and draft.reply is not None:  # not a follow-up
                self._history.append(self._pending_turn)
        self._index += 1
        if self.on_step is not None:
            self.on_step(step_event(self._episode_id, draft))


__all__ = ["Agent"]
