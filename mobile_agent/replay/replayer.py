"""Re-execute a recorded episode on a phone that has moved on: find each target again, judge it, then act.

Each recorded action that has a view tree is aimed at its target found again by element (identity, class,
resource-id, name, place in the tree: :mod:`mobile_agent.replay.locate`), on its live box, so another resolution, a
scrolled list or a moved row still works; a step without a tree keeps its coordinates, scaled to the target's
screen, under the screenshot check. A step waits for its target within a bound (``--wait``), looking again at the
settled screen; a popup the recording did not have is dismissed meanwhile by the app's popup rules
(:mod:`mobile_agent.replay.popups`) and the replay goes on.

Before acting, what the action touches is compared with what it touched in the recording (the target, its dialog,
amounts, the recipient, the foreground app: :mod:`mobile_agent.replay.compare`). A difference there is a divergence,
handled as the caller chooses: stop before acting (the default), warn and go on, or go on quietly. Differences
elsewhere on the screen are recorded and shown and do not stop it. Then every action passes the same guards as in
`run` (:mod:`mobile_agent.replay.gate`): a consequential one is allowed, asked about or refused under the replay's
safety policy, never performed just because it was recorded. ``--reset`` first brings the phone to the recording's
start (:mod:`mobile_agent.replay.reset`).

The replay is recorded as a new episode linked to its source (``source_episode_id``) whose steps have action source
``replay`` (``rule`` for a popup it dismissed).

    result = replay_episode(store, "3f9a0c", device="127.0.0.1:40001", adb="127.0.0.1:41234",
                            options=ReplayOptions(reset=ResetMode.FORCE_STOP))
    for step in result.divergences: print(step.index, step.describe())
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from mobile_agent.actions import ActionKind, Outcome, Size
from mobile_agent.agent.config import UserChannel
from mobile_agent.device.android import AndroidDevice, choose_serial
from mobile_agent.errors import DeviceError, DeviceLost, MobileAgentError, UserError
from mobile_agent.gate.guard import Decision, Verdict
from mobile_agent.gate.policy import SafetyPolicy
from mobile_agent.replay.gate import ReplayGate
from mobile_agent.replay.look import NO_PHONE, Look, Looker
from mobile_agent.replay.popups import popup_action
from mobile_agent.replay.reset import LAUNCHERS, RecordedStart, recorded_start, reset_phone
from mobile_agent.replay.results import (
    DivergencePolicy,
    ReplayOptions,
    ReplayResult,
    ResetMode,
    StepComparison,
)
from mobile_agent.replay.screens import recorded_size, scale_action
from mobile_agent.report.selection import action_was_performed
from mobile_agent.store.records import ActionSource, EpisodeInfo, StepInfo, StepRecord, StepTimings
from mobile_agent.store.store import TrajectoryStore
from mobile_agent.waits.deadlines import Deadline

log = logging.getLogger(__name__)

_POLL_S = 0.3  # between looks while a step waits for its target
_RULE_WAIT_S = 2.0  # a recorded popup dismissal waits at most this long for its popup, then is skipped
_MAX_POPUPS = 5  # popups dismissed while one step waits
_RESET_HINT = "bring the phone to the recording's start with --reset home (or force-stop)"


def replayable_steps(steps: list[StepInfo], until: int | None = None) -> list[StepInfo]:
    """Steps whose action reached the phone (model, rule or human; never unparsed or blocked ones)."""
    return [s for s in steps if action_was_performed(s) and (until is None or s.index <= until)]


@dataclass(eq=False)  # a worker, not a value: identity equality
class _Replayer:
    store: TrajectoryStore
    source: EpisodeInfo
    all_steps: list[StepInfo]
    device: AndroidDevice
    options: ReplayOptions
    on_step: Callable[[StepComparison], None] | None
    registry: Any
    gate: ReplayGate
    results: list[StepComparison] = field(default_factory=list, init=False)
    target_screen: Size | None = field(default=None, init=False)
    _installed: set[str] | None = field(default=None, init=False)
    _next_index: int = field(default=0, init=False)

    @property
    def looker(self) -> Looker:
        return Looker(self.store, self.device, self.gate, self.options, self.source.task)

    def launch_package(self, step: StepInfo) -> str | None:
        """The package for a recorded LAUNCH: the app the next step was in, else the app registry, else the name."""
        installed = self.installed()
        later = [s for s in self.all_steps if s.index > step.index and s.foreground_app]
        if later and later[0].foreground_app not in LAUNCHERS and later[0].foreground_app in installed:
            return later[0].foreground_app
        name = step.action.app or ""  # type: ignore[union-attr]
        if self.registry is not None:
            try:
                return self.registry.resolve_launch(name, installed)
            except MobileAgentError as exc:
                log.info("app registry cannot resolve %r: %s", name, exc.one_line())
        return name if name in installed else None

    def installed(self) -> set[str]:
        if self._installed is None:
            self._installed = self.device.installed_packages()
        return self._installed

    def run(self, episode_id: str) -> tuple[Outcome, str | None]:
        steps = replayable_steps(self.all_steps, self.options.until)
        start = recorded_start(steps)
        done = reset_phone(self.device, start, self.options.reset)
        if done:
            log.info("replay of %s: reset the phone (%s)", self.source.id, "; ".join(done))
        else:
            self.device.settle()  # compare settled screens from step 0 on
        started = time.monotonic()
        first_started = self.all_steps[0].started_at if self.all_steps else None
        for position, step in enumerate(steps):
            self._pace(step, first_started, started)
            checked = start if position == 0 and self.options.reset is not ResetMode.NONE else None
            ended = self._step(episode_id, step, checked, first=position == 0)
            if ended is not None:
                return ended
        return self._final_outcome(steps)

    def _step(
        self, episode_id: str, step: StepInfo, start: RecordedStart | None, *, first: bool
    ) -> tuple[Outcome, str | None] | None:
        """Replay one recorded step: wait for its target, compare, judge, then act. Returns how the replay ends,
        or None to go on."""
        t0 = time.perf_counter()
        rule_step = step.action_source is ActionSource.RULE
        wait = min(self.options.wait_s, _RULE_WAIT_S) if rule_step else self.options.wait_s
        deadline = Deadline.after(wait, f"waiting for the target of step {step.index}")
        popups = 0
        while True:
            look = self.looker.look(step, self._next_index, start)
            self.target_screen = look.obs.size
            if not look.compared.diverged or not look.waiting_helps or deadline.expired:
                break
            if not rule_step and popups < _MAX_POPUPS and self._dismiss_popup(episode_id, step, look):
                popups += 1
                continue
            time.sleep(deadline.bound(_POLL_S))
            self.device.settle()
        if rule_step and look.compared.diverged and look.waiting_helps:
            note = "the popup this rule step dismissed in the recording did not show up: nothing to dismiss"
            self._emit(
                StepComparison(step.index, None, step.foreground_app or "", notes=(note,), skipped=True)
            )
            return None
        return self._act(episode_id, step, look, t0, first=first)

    def _dismiss_popup(self, episode_id: str, step: StepInfo, look: Look) -> bool:
        found = popup_action(
            self.registry, self.gate, look.obs, look.live.xml(), index=self._next_index, task=self.source.task
        )
        if found is None:
            return False
        t0 = time.perf_counter()
        acted = self.device.perform(found.action, before=look.obs.screenshot)
        compared = StepComparison(
            step.index,
            found.action,
            step.foreground_app or "",
            live_app=look.obs.package or None,
            performed=True,
            popup=found.rule,
            compared_by=f"popup rule {found.rule} fired on the live screen while step {step.index} waited",
        )
        timings = {
            "screenshot": look.screenshot_ms,
            "act": acted.act_ms,
            "settle": acted.settle_ms,
            "total": (time.perf_counter() - t0) * 1000 + look.screenshot_ms,
        }
        self._record(
            episode_id,
            look,
            compared,
            found.decisions,
            timings,
            source=ActionSource.RULE,
            thought=compared.describe(),
        )
        return True

    def _act(
        self, episode_id: str, step: StepInfo, look: Look, t0: float, *, first: bool
    ) -> tuple[Outcome, str | None] | None:
        compared, action, obs = look.compared, look.action, look.obs
        timings = {"screenshot": look.screenshot_ms}
        thought = step.thought
        if compared.diverged and self.options.on_divergence is DivergencePolicy.STOP:
            compared = replace(compared, action=None, error="diverged: replay stopped before this action")
            self._record(episode_id, look, compared, look.decisions, timings, "divergence", thought=thought)
            hint = (
                f" — {_RESET_HINT}"
                if first and not compared.app_matches and self.options.reset is ResetMode.NONE
                else ""
            )
            return Outcome.error("divergence"), f"step {step.index}: {compared.describe()}{hint}"
        if compared.diverged:
            level = logging.WARNING if self.options.on_divergence is DivergencePolicy.WARN else logging.INFO
            log.log(
                level, "replay of %s diverged at step %d: %s", self.source.id, step.index, compared.describe()
            )
        if action.kind in NO_PHONE:
            self._record(episode_id, look, replace(compared, performed=True), [], timings, thought=thought)
            return None
        gate = self.gate.resolve(
            look.decisions, episode_id=episode_id, index=self._next_index, action=action, obs=obs
        )
        if not gate.go:
            compared = replace(compared, error=gate.detail)
            self._record(
                episode_id, look, compared, gate.decisions, timings, gate.error_kind, thought=thought
            )
            return gate.outcome, f"step {step.index}: {gate.detail}"  # type: ignore[return-value]
        package = self.launch_package(step) if action.kind is ActionKind.LAUNCH else None
        if action.kind is ActionKind.LAUNCH and package is None:
            error = f"cannot launch {action.app!r}: no such app on {self.device.serial}"
            compared = replace(compared, error=error)
            self._record(episode_id, look, compared, gate.decisions, timings, "unknown_app", thought=thought)
            return Outcome.error("unknown_app"), f"step {step.index}: {error}"
        acted = self.device.perform(action, package=package, before=obs.screenshot)
        timings.update(act=acted.act_ms, settle=acted.settle_ms)
        timings["total"] = (time.perf_counter() - t0) * 1000
        self._record(
            episode_id, look, replace(compared, performed=True), gate.decisions, timings, thought=thought
        )
        return None

    def _final_outcome(self, steps: list[StepInfo]) -> tuple[Outcome, str | None]:
        replayed_to_end = self.options.until is None or all(
            s.index <= self.options.until for s in self.all_steps
        )
        diverged = sum(1 for s in self.results if s.diverged)
        popups = sum(1 for s in self.results if s.popup is not None)
        summary = f"replayed {len(steps)} step(s), {diverged} diverged" + (
            f", {popups} popup(s) the recording did not have dismissed" if popups else ""
        )
        if replayed_to_end and self.source.outcome is not None:
            return _replayed_end(self.source.outcome), f"{summary}; the source ended {self.source.outcome}"
        last = steps[-1].index if steps else None
        return Outcome.INTERRUPTED, f"{summary}, up to step {last} (--until {self.options.until})"

    def _pace(self, step: StepInfo, first_started: object, started: float) -> None:
        if self.options.speed <= 0 or first_started is None or step.started_at is None:
            return
        offset = (step.started_at - first_started).total_seconds()  # type: ignore[operator]
        delay = offset / self.options.speed - (time.monotonic() - started)
        if delay > 0:
            time.sleep(delay)

    def _record(
        self,
        episode_id: str,
        look: Look,
        compared: StepComparison,
        gate_decisions: list[Decision],
        timings: dict[str, float],
        error_kind: str | None = None,
        *,
        source: ActionSource = ActionSource.REPLAY,
        thought: str | None = None,
    ) -> None:
        if not compared.diverged:
            verdict = Verdict.ALLOW
        elif compared.action is None:  # stopped before acting
            verdict = Verdict.BLOCK
        else:
            verdict = Verdict.HINT
        signals = (
            *compared.differences,
            compared.located,
            *(f"noted: {n}" for n in compared.notes),
            compared.compared_by,
        )
        comparison = Decision(
            "replay",
            verdict,
            f"step {compared.index}: {compared.describe()}",
            kind="divergence" if compared.diverged else None,
            source="rule" if compared.popup is not None else "replay",
            signals=tuple(s for s in signals if s),
        )
        decisions = [comparison.to_dict(), *(d.to_dict() for d in gate_decisions)]
        obs = look.obs
        self.store.record_step(
            episode_id,
            StepRecord(
                index=self._next_index,
                action=compared.action,
                action_source=source,
                started_at=obs.taken_at,
                screen=obs.size,
                foreground_app=obs.package,
                foreground_activity=obs.activity,
                thought=thought,
                guard_decisions=decisions,
                timings=StepTimings.from_dict(timings),
                error_kind=error_kind,
                error_text=compared.error,
            ),
            screenshot=obs.screenshot,
            hierarchy=look.live.dumped,
        )
        self._next_index += 1
        self._emit(compared)

    def _emit(self, compared: StepComparison) -> None:
        self.results.append(compared)
        if self.on_step is not None:
            self.on_step(compared)


def _replayed_end(source: Outcome) -> Outcome:
    """How a replay that reached its source's end ends: as the source did, except that a question nobody answered
    in time (needs_user:expired) is, on the replay, a question just asked."""
    return Outcome.NEEDS_USER if str(source).startswith(str(Outcome.NEEDS_USER)) else source


def _load_registry() -> object | None:
    try:
        from mobile_agent.apps.registry import AppRegistry

        return AppRegistry.load()
    except ImportError:
        return None
    except MobileAgentError as exc:
        log.warning("app manifests not loaded, launching by recorded package only: %s", exc.one_line())
        return None


def _target_size(device: str | None, adb: str | None) -> Size | None:
    """The target's screen size for a dry run; None (keep recorded coordinates) when no phone can be asked."""
    try:
        return AndroidDevice(choose_serial(device, adb), adb=adb).screen_size()
    except MobileAgentError as exc:
        log.info("dry run without a phone (%s): coordinates stay as recorded", exc.one_line())
        return None


def plan_replay(
    store: TrajectoryStore, episode_id: str, target: Size | None, options: ReplayOptions | None = None
) -> list[StepComparison]:
    """The steps a replay would perform, scaled to ``target`` (the recorded size when None). Touches no phone."""
    options = options or ReplayOptions(dry_run=True)
    source = store.episode(episode_id)
    planned = []
    for step in replayable_steps(store.steps(source.id), options.until):
        size = recorded_size(store, step)
        action = step.action
        if size is not None and target is not None:
            action = scale_action(action, size, target)  # type: ignore[arg-type]
        planned.append(
            StepComparison(step.index, action, step.foreground_app or "", threshold=options.hash_threshold)
        )
    return planned


def replay_episode(
    store: TrajectoryStore,
    episode_id: str,
    *,
    device: str | None = None,
    adb: str | None = None,
    options: ReplayOptions | None = None,
    on_step: Callable[[StepComparison], None] | None = None,
    registry: object | None = None,
    safety: SafetyPolicy | None = None,
    user: UserChannel | None = None,
    ocr: object | None = None,
    run_id: str | None = None,
    meta: dict[str, Any] | None = None,
    on_start: Callable[[str], None] | None = None,
) -> ReplayResult:
    """Replay a recorded episode on a phone (the only attached one when ``device`` is None).

    ``safety``: the policy every replayed action is judged by, as in `run` (default: ask before each consequential
    action); ``user``: who answers (default: nobody, so a consequential action ends the replay as needs_user).
    ``run_id``, ``meta``: the run the replay episode belongs to and what else to keep with it (a replay suite);
    ``on_start`` is told the replay episode's id as soon as it exists.
    """
    options = options or ReplayOptions()
    policy = safety or SafetyPolicy()
    source = store.episode(episode_id)
    steps = store.steps(source.id)
    if not replayable_steps(steps, options.until):
        raise UserError(
            f"episode {source.id} has no performed actions to replay"
            + (f" up to step {options.until}" if options.until is not None else ""),
            hint=f"look at its steps with `mobile-agent show {source.id}`",
        )
    if options.dry_run:
        size = _target_size(device, adb)
        planned = plan_replay(store, source.id, size, options)
        for item in planned:
            if on_step is not None:
                on_step(item)
        return ReplayResult(source, None, None, planned, size, "dry run: nothing was done or recorded")
    serial = choose_serial(device, adb)
    phone = AndroidDevice(serial, adb=adb)
    registry = registry if registry is not None else _load_registry()
    gate = ReplayGate(store, policy, registry=registry, user=user, ocr=ocr)
    replayer = _Replayer(store, source, steps, phone, options, on_step, registry, gate)
    episode = store.start_episode(
        source.task,
        device=serial,
        family=source.family,
        model=source.model,
        app=source.app,
        run_id=run_id,
        source_episode_id=source.id,
        meta={
            **(meta or {}),
            "replay": {
                "speed": options.speed,
                "until": options.until,
                "on_divergence": options.on_divergence.value,
                "reset": options.reset.value,
                "wait_s": options.wait_s,
                "safety": policy.to_dict(),
            },
        },
    )
    if on_start is not None:
        on_start(episode.id)
    try:
        outcome, detail = replayer.run(episode.id)
    except KeyboardInterrupt:
        store.finish_episode(episode.id, Outcome.INTERRUPTED, detail="replay interrupted by the user")
        raise
    except DeviceLost as exc:
        outcome, detail = Outcome.error("device_lost"), exc.one_line()
    except DeviceError as exc:
        outcome, detail = Outcome.error(getattr(exc, "kind", "device")), exc.one_line()
    except MobileAgentError as exc:
        outcome, detail = Outcome.error("runtime"), exc.one_line()
    store.finish_episode(
        episode.id, outcome, detail=detail, answer=source.answer if outcome == source.outcome else None
    )
    return ReplayResult(source, episode.id, outcome, replayer.results, replayer.target_screen, detail)


__all__ = ["plan_replay", "replay_episode", "replayable_steps"]
