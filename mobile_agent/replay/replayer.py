"""Re-execute a recorded episode on a phone, comparing what each action is about to touch with what it touched.

Coordinates are scaled from the recorded screen to the target's, so a recording replays on a phone of another
resolution. Before each action the live screen is compared with the recording of that step: the screenshot (a
difference hash, which ignores resolution and small rendering differences), the foreground app and activity, and,
when the recording kept the step's view tree, the element under the finger, the dialog around it and the amounts on
screen (:mod:`mobile_agent.replay.compare`). A mismatch is a divergence, handled as the caller chooses: stop there
before acting (the default), warn and go on, or go on quietly.

Then every action passes the same guards as in `run` (:mod:`mobile_agent.replay.gate`): a consequential one is
allowed, asked about or refused under the replay's safety policy, never performed just because it was recorded.
The replay is recorded as a new episode linked to its source (``source_episode_id``) whose steps have action source
``replay``.

    result = replay_episode(store, "3f9a0c", device="127.0.0.1:40001", adb="127.0.0.1:41234")
    for step in result.divergences: print(step.index, step.describe())
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path

from PIL import Image

from mobile_agent.actions import GESTURE_KINDS, POINT_KINDS, Action, ActionKind, Outcome, Point, Size
from mobile_agent.agent.config import UserChannel
from mobile_agent.device.android import AndroidDevice, Observation, choose_serial
from mobile_agent.errors import DeviceError, DeviceLost, MobileAgentError, UserError
from mobile_agent.gate.guard import Decision, Verdict
from mobile_agent.gate.policy import SafetyPolicy
from mobile_agent.replay.compare import compare_touched, read_touched
from mobile_agent.replay.gate import ReplayGate, consequential
from mobile_agent.report.selection import action_was_performed
from mobile_agent.store.records import ActionSource, EpisodeInfo, StepInfo, StepRecord, StepTimings
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)

HASH_SIDE = 8  # 8x8 = 64-bit difference hash
# Hamming distance (of 64) above which two screens count as different. Re-rendering the same screen at another
# resolution or JPEG quality moves a few bits; a popup, another page or another app moves far more.
DEFAULT_HASH_THRESHOLD = 12
# Recorded ends of an episode: nothing reaches the phone, nothing to judge.
_NO_PHONE = (ActionKind.FINISH, ActionKind.ANSWER, ActionKind.CALL_USER)
LAUNCHERS = frozenset(
    {"com.android.launcher3", "com.android.launcher", "com.google.android.apps.nexuslauncher"}
)


class DivergencePolicy(str, Enum):
    STOP = "stop"  # end the replay at the first divergent step, before acting on it (the default)
    WARN = "warn"  # record the divergence, log a warning and act anyway
    CONTINUE = "continue"  # record the divergence and act anyway, quietly


@dataclass(frozen=True)
class ReplayOptions:
    speed: float = 0.0  # >0: keep the recording's pace, sped up X times; 0: as fast as the screen settles
    until: int | None = None  # last recorded step index to replay (inclusive)
    on_divergence: DivergencePolicy = DivergencePolicy.STOP
    dry_run: bool = False  # only show the scaled actions; never act, never record
    hash_threshold: int = DEFAULT_HASH_THRESHOLD

    def __post_init__(self) -> None:
        if self.speed < 0:
            raise UserError(f"--speed must be 0 or more, got {self.speed}", hint="2 replays twice as fast")
        object.__setattr__(self, "on_divergence", DivergencePolicy(self.on_divergence))
        if self.until is not None and self.until < 0:
            raise UserError(f"--until must be a step index >= 0, got {self.until}", hint="e.g. --until 3")


@dataclass(frozen=True)
class StepComparison:
    """One replayed step: the recorded action as scaled for the target, and how the live screen compared."""

    index: int  # the step's index in the source episode
    action: Action | None
    recorded_app: str
    live_app: str | None = None
    distance: int | None = None  # hash distance between recorded and live screenshots (0..64)
    threshold: int = DEFAULT_HASH_THRESHOLD
    performed: bool = False
    error: str | None = None
    recorded_activity: str = ""
    live_activity: str | None = None
    differences: tuple[str, ...] = ()  # how the touched element, its dialog or the amounts differ
    compared_by: str = ""  # what the target was compared by (the view trees, or only hash and activity: why)

    @property
    def app_matches(self) -> bool:
        return self.live_app is None or not self.recorded_app or self.live_app == self.recorded_app

    @property
    def activity_matches(self) -> bool:
        if not self.live_activity or not self.recorded_activity or not self.app_matches:
            return True  # unknown on one side, or already a different app
        return self.live_activity == self.recorded_activity

    @property
    def screen_matches(self) -> bool:
        return self.distance is None or self.distance <= self.threshold

    @property
    def target_matches(self) -> bool:
        return not self.differences

    @property
    def diverged(self) -> bool:
        return not (
            self.app_matches and self.activity_matches and self.screen_matches and self.target_matches
        )

    def describe(self) -> str:
        parts = list(self.differences)
        if self.distance is not None:
            parts.append(f"screen {'matches' if self.screen_matches else 'differs'} ({self.distance}/64)")
        if self.live_app is not None:
            parts.append(
                f"app {self.live_app}"
                if self.app_matches
                else f"app {self.live_app} but recorded {self.recorded_app or '(unknown)'}"
            )
        if not self.activity_matches:
            parts.append(f"activity {self.live_activity} but recorded {self.recorded_activity}")
        if self.error:
            parts.append(self.error)
        return ", ".join(parts) if parts else "not compared (dry run)"


@dataclass(frozen=True)
class ReplayResult:
    source: EpisodeInfo
    episode_id: str | None  # None for a dry run
    outcome: Outcome | None
    steps: list[StepComparison] = field(default_factory=list)
    target_screen: Size | None = None
    detail: str | None = None

    @property
    def divergences(self) -> list[StepComparison]:
        return [s for s in self.steps if s.diverged]


# ----- screen comparison --------------------------------------------------------------------------------------
def difference_hash(image: Image.Image) -> int:
    """64-bit dHash: is each pixel brighter than its right neighbour, on a 9x8 grey thumbnail."""
    small = image.convert("L").resize((HASH_SIDE + 1, HASH_SIDE), Image.Resampling.LANCZOS)
    pixels = small.tobytes()  # mode L: one byte per pixel, row by row
    bits = 0
    for row in range(HASH_SIDE):
        for col in range(HASH_SIDE):
            left = pixels[row * (HASH_SIDE + 1) + col]
            right = pixels[row * (HASH_SIDE + 1) + col + 1]
            bits = (bits << 1) | (1 if left > right else 0)
    return bits


def hash_distance(a: int, b: int) -> int:
    return (a ^ b).bit_count()


def screen_distance(recorded: Path | Image.Image, live: Image.Image) -> int:
    if isinstance(recorded, Path):
        with Image.open(recorded) as img:
            return hash_distance(difference_hash(img), difference_hash(live))
    return hash_distance(difference_hash(recorded), difference_hash(live))


# ----- coordinates --------------------------------------------------------------------------------------------
def scale_action(action: Action, recorded: Size, target: Size) -> Action:
    """The action with its points moved from the recorded screen to the target screen (same relative spot)."""
    if recorded == target or (action.point is None and action.end is None):
        return action

    def move(point: Point | None) -> Point | None:
        if point is None:
            return None
        x = round(point.x * target.width / recorded.width)
        y = round(point.y * target.height / recorded.height)
        return Point(min(max(x, 0), target.width - 1), min(max(y, 0), target.height - 1))

    return replace(action, point=move(action.point), end=move(action.end))


# ----- the replay ---------------------------------------------------------------------------------------------
def replayable_steps(steps: list[StepInfo], until: int | None = None) -> list[StepInfo]:
    """Steps whose action reached the phone (model, rule or human; never unparsed or blocked ones)."""
    return [s for s in steps if action_was_performed(s) and (until is None or s.index <= until)]


def _recorded_size(store: TrajectoryStore, step: StepInfo) -> Size | None:
    if step.screen is not None:
        return step.screen
    path = store.screenshot_path(step)
    if path is not None and path.is_file():
        with Image.open(path) as img:
            return Size(*img.size)
    return None


@dataclass(eq=False)  # a worker, not a value: identity equality
class _Replayer:
    store: TrajectoryStore
    source: EpisodeInfo
    all_steps: list[StepInfo]
    device: AndroidDevice
    options: ReplayOptions
    on_step: Callable[[StepComparison], None] | None
    registry: object | None
    gate: ReplayGate
    results: list[StepComparison] = field(default_factory=list, init=False)
    target_screen: Size | None = field(default=None, init=False)
    _installed: set[str] | None = field(default=None, init=False)

    def launch_package(self, step: StepInfo) -> str | None:
        """The package for a recorded LAUNCH: the app the next step was in, else the app registry, else the name."""
        installed = self.installed()
        later = [s for s in self.all_steps if s.index > step.index and s.foreground_app]
        if later and later[0].foreground_app not in LAUNCHERS and later[0].foreground_app in installed:
            return later[0].foreground_app
        name = step.action.app or ""  # type: ignore[union-attr]
        if self.registry is not None:
            try:
                return self.registry.resolve_launch(name, installed)  # type: ignore[attr-defined]
            except MobileAgentError as exc:
                log.info("app registry cannot resolve %r: %s", name, exc.one_line())
        return name if name in installed else None

    def installed(self) -> set[str]:
        if self._installed is None:
            self._installed = self.device.installed_packages()
        return self._installed

    def run(self, episode_id: str) -> tuple[Outcome, str | None]:
        steps = replayable_steps(self.all_steps, self.options.until)
        started = time.monotonic()
        first_started = self.all_steps[0].started_at if self.all_steps else None
        for new_index, step in enumerate(steps):
            self._pace(step, first_started, started)
            ended = self._step(episode_id, new_index, step)
            if ended is not None:
                return ended
        return self._final_outcome(steps)

    def _step(self, episode_id: str, new_index: int, step: StepInfo) -> tuple[Outcome, str | None] | None:
        """Replay one recorded step: compare, judge, then act. Returns how the replay ends, or None to go on."""
        t0 = time.perf_counter()
        obs = self.device.observe()
        self.target_screen = obs.size
        timings = {"screenshot": (time.perf_counter() - t0) * 1000}
        live = _LiveTree(self.device)
        action = scale_action(step.action, _recorded_size(self.store, step) or obs.size, obs.size)  # type: ignore[arg-type]
        decisions: list[Decision] = []
        if action.kind not in _NO_PHONE:
            decisions = self.gate.check(
                index=new_index,
                task=self.source.task,
                action=action,
                obs=obs,
                thought=step.thought or "",
                hierarchy=live.xml,
            )
        # Money moves here (live, or when it was recorded): every amount on the screen must match too.
        money = consequential(decisions) or consequential(step.guard_decisions)
        compared = self._compare(step, obs, live, action, money_moves=money)
        if compared.diverged and self.options.on_divergence is DivergencePolicy.STOP:
            compared = replace(compared, action=None, error="diverged: replay stopped before this action")
            self._record(episode_id, new_index, step, obs, compared, timings, live, decisions, "divergence")
            return Outcome.error("divergence"), f"step {step.index}: {compared.describe()}"
        if compared.diverged:
            level = logging.WARNING if self.options.on_divergence is DivergencePolicy.WARN else logging.INFO
            log.log(
                level, "replay of %s diverged at step %d: %s", self.source.id, step.index, compared.describe()
            )
        if action.kind in _NO_PHONE:
            self._record(
                episode_id, new_index, step, obs, replace(compared, performed=True), timings, live, []
            )
            return None
        gate = self.gate.resolve(decisions, episode_id=episode_id, index=new_index, action=action, obs=obs)
        if not gate.go:
            compared = replace(compared, error=gate.detail)
            self._record(
                episode_id, new_index, step, obs, compared, timings, live, gate.decisions, gate.error_kind
            )
            return gate.outcome, f"step {step.index}: {gate.detail}"  # type: ignore[return-value]
        package = self.launch_package(step) if action.kind is ActionKind.LAUNCH else None
        if action.kind is ActionKind.LAUNCH and package is None:
            error = f"cannot launch {action.app!r}: no such app on {self.device.serial}"
            compared = replace(compared, error=error)
            self._record(
                episode_id, new_index, step, obs, compared, timings, live, gate.decisions, "unknown_app"
            )
            return Outcome.error("unknown_app"), f"step {step.index}: {error}"
        acted = self.device.perform(action, package=package, before=obs.screenshot)
        timings.update(act=acted.act_ms, settle=acted.settle_ms)
        timings["total"] = (time.perf_counter() - t0) * 1000
        compared = replace(compared, performed=True)
        self._record(episode_id, new_index, step, obs, compared, timings, live, gate.decisions)
        return None

    def _compare(
        self, step: StepInfo, obs: Observation, live: _LiveTree, action: Action, *, money_moves: bool
    ) -> StepComparison:
        """The recorded step against the live screen: hash, app, activity, and what ``action`` would touch."""
        recorded_shot = self.store.screenshot_path(step)
        distance = None
        if recorded_shot is not None and recorded_shot.is_file():
            distance = screen_distance(recorded_shot, obs.image())
        recorded_size = _recorded_size(self.store, step) or obs.size
        recorded_xml = _recorded_hierarchy(self.store, step)
        if recorded_xml is None:
            differences: list[str] = []
            compared_by = (
                f"screen hash and activity only: the recording kept no view tree for step {step.index}, "
                "so the touched element, names and amounts were not compared"
            )
        else:
            pointed = action.kind in POINT_KINDS or action.kind in GESTURE_KINDS
            recorded = read_touched(recorded_xml, step.action.point if pointed else None, recorded_size)  # type: ignore[union-attr]
            now = read_touched(live.xml(), action.point if pointed else None, obs.size)
            differences = compare_touched(recorded, now, money_moves=money_moves)
            where = "every amount on screen" if money_moves else "amounts on the target and its dialog"
            compared_by = "view tree: " + (
                f"target {recorded.element or '(none)'}, class, resource-id, dialog, {where}"
                if pointed
                else ("every amount on screen, " if money_moves else "") + "the focused field"
            )
        return StepComparison(
            index=step.index,
            action=action,
            recorded_app=step.foreground_app or "",
            live_app=obs.package or None,
            distance=distance,
            threshold=self.options.hash_threshold,
            recorded_activity=step.foreground_activity or "",
            live_activity=obs.activity or None,
            differences=tuple(differences),
            compared_by=compared_by,
        )

    def _final_outcome(self, steps: list[StepInfo]) -> tuple[Outcome, str | None]:
        replayed_to_end = self.options.until is None or all(
            s.index <= self.options.until for s in self.all_steps
        )
        diverged = sum(1 for s in self.results if s.diverged)
        summary = f"replayed {len(steps)} step(s), {diverged} diverged"
        if replayed_to_end and self.source.outcome is not None:
            return self.source.outcome, f"{summary}; the source ended {self.source.outcome}"
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
        new_index: int,
        step: StepInfo,
        obs: Observation,
        compared: StepComparison,
        timings: dict[str, float],
        live: _LiveTree,
        gate_decisions: list[Decision],
        error_kind: str | None = None,
    ) -> None:
        if not compared.diverged:
            verdict = Verdict.ALLOW
        elif compared.action is None:  # stopped before acting
            verdict = Verdict.BLOCK
        else:
            verdict = Verdict.HINT
        comparison = Decision(
            "replay",
            verdict,
            f"step {step.index}: {compared.describe()}",
            kind="divergence" if compared.diverged else None,
            source="replay",
            signals=tuple(s for s in (*compared.differences, compared.compared_by) if s),
        )
        decisions = [comparison.to_dict(), *(d.to_dict() for d in gate_decisions)]
        self.store.record_step(
            episode_id,
            StepRecord(
                index=new_index,
                action=compared.action,
                action_source=ActionSource.REPLAY,
                started_at=obs.taken_at,
                screen=obs.size,
                foreground_app=obs.package,
                foreground_activity=obs.activity,
                thought=step.thought,
                guard_decisions=decisions,
                timings=StepTimings.from_dict(timings),
                error_kind=error_kind,
                error_text=compared.error,
            ),
            screenshot=obs.screenshot,
            hierarchy=live.dumped,
        )
        self.results.append(compared)
        if self.on_step is not None:
            self.on_step(compared)


class _LiveTree:
    """The live screen's view tree, dumped at most once per step and shared by the comparison and the guards.
    None when the phone cannot dump it (the comparison then reports a divergence and the gate fails closed)."""

    def __init__(self, device: AndroidDevice) -> None:
        self.device = device
        self.dumped: str | None = None
        self._fetched = False

    def xml(self) -> str | None:
        if not self._fetched:
            self._fetched = True
            try:
                self.dumped = self.device.hierarchy()
            except DeviceLost:
                raise
            except DeviceError as exc:
                log.warning("cannot read the live view tree: %s", exc.one_line())
        return self.dumped


def _recorded_hierarchy(store: TrajectoryStore, step: StepInfo) -> str | None:
    path = store.hierarchy_path(step)
    if path is None or not path.is_file():
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("the recorded view tree of step %d is unreadable: %s", step.index, exc)
        return None


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
        recorded = _recorded_size(store, step)
        action = step.action
        if recorded is not None and target is not None:
            action = scale_action(action, recorded, target)  # type: ignore[arg-type]
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
) -> ReplayResult:
    """Replay a recorded episode on a phone (the only attached one when ``device`` is None).

    ``safety``: the policy every replayed action is judged by, as in `run` (default: ask before each consequential
    action); ``user``: who answers (default: nobody, so a consequential action ends the replay as needs_user).
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
        source_episode_id=source.id,
        meta={
            "replay": {
                "speed": options.speed,
                "until": options.until,
                "on_divergence": options.on_divergence.value,
                "safety": policy.to_dict(),
            }
        },
    )
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


__all__ = [
    "DEFAULT_HASH_THRESHOLD",
    "DivergencePolicy",
    "ReplayOptions",
    "ReplayResult",
    "StepComparison",
    "difference_hash",
    "hash_distance",
    "plan_replay",
    "replay_episode",
    "replayable_steps",
    "scale_action",
    "screen_distance",
]
