"""Re-execute a recorded episode on a phone and compare each live screen with the recorded one.

Coordinates are scaled from the recorded screen to the target's, so a recording replays on a phone of another
resolution. Before each action the live screen is compared with the recorded screenshot of that step (a
difference hash, which ignores resolution and small rendering differences) and the foreground app; a mismatch is
a divergence, handled as the caller chooses: stop there, warn and go on, or go on quietly. The replay is recorded
as a new episode linked to its source (``source_episode_id``) whose steps have action source ``replay``.

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

from mobile_agent.actions import Action, ActionKind, Outcome, Point, Size
from mobile_agent.device.android import AndroidDevice, Observation, choose_serial
from mobile_agent.errors import DeviceError, DeviceLost, MobileAgentError, UserError
from mobile_agent.report.selection import action_was_performed
from mobile_agent.store.records import ActionSource, EpisodeInfo, StepInfo, StepRecord, StepTimings
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)

HASH_SIDE = 8  # 8x8 = 64-bit difference hash
# Hamming distance (of 64) above which two screens count as different. Re-rendering the same screen at another
# resolution or JPEG quality moves a few bits; a popup, another page or another app moves far more.
DEFAULT_HASH_THRESHOLD = 12
LAUNCHERS = frozenset(
    {"com.android.launcher3", "com.android.launcher", "com.google.android.apps.nexuslauncher"}
)


class DivergencePolicy(str, Enum):
    STOP = "stop"  # end the replay at the first divergent step, before acting on it
    WARN = "warn"  # act anyway; each divergence is logged as a warning
    CONTINUE = "continue"  # act anyway; divergences only show in the result


@dataclass(frozen=True)
class ReplayOptions:
    speed: float = 0.0  # >0: keep the recording's pace, sped up X times; 0: as fast as the screen settles
    until: int | None = None  # last recorded step index to replay (inclusive)
    on_divergence: DivergencePolicy = DivergencePolicy.WARN
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

    @property
    def app_matches(self) -> bool:
        return self.live_app is None or not self.recorded_app or self.live_app == self.recorded_app

    @property
    def screen_matches(self) -> bool:
        return self.distance is None or self.distance <= self.threshold

    @property
    def diverged(self) -> bool:
        return not (self.app_matches and self.screen_matches)

    def describe(self) -> str:
        parts = []
        if self.distance is not None:
            parts.append(f"screen {'matches' if self.screen_matches else 'differs'} ({self.distance}/64)")
        if self.live_app is not None:
            parts.append(
                f"app {self.live_app}"
                if self.app_matches
                else f"app {self.live_app} but recorded {self.recorded_app or '(unknown)'}"
            )
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
        opts = self.options
        steps = replayable_steps(self.all_steps, opts.until)
        started = time.monotonic()
        first_started = self.all_steps[0].started_at if self.all_steps else None
        for new_index, step in enumerate(steps):
            self._pace(step, first_started, started)
            t0 = time.perf_counter()
            obs = self.device.observe()
            self.target_screen = obs.size
            shot_ms = (time.perf_counter() - t0) * 1000
            recorded = self.store.screenshot_path(step)
            distance = None
            if recorded is not None and recorded.is_file():
                distance = screen_distance(recorded, obs.image())
            recorded_size = _recorded_size(self.store, step) or obs.size
            action = scale_action(step.action, recorded_size, obs.size)  # type: ignore[arg-type]
            compared = StepComparison(
                index=step.index,
                action=action,
                recorded_app=step.foreground_app or "",
                live_app=obs.package or None,
                distance=distance,
                threshold=opts.hash_threshold,
            )
            if compared.diverged and opts.on_divergence is DivergencePolicy.STOP:
                compared = replace(compared, error="diverged: replay stopped before this action")
                self._record(episode_id, new_index, step, obs, None, compared, {"screenshot": shot_ms})
                return Outcome.error("divergence"), f"step {step.index}: {compared.describe()}"
            if compared.diverged:
                level = logging.WARNING if opts.on_divergence is DivergencePolicy.WARN else logging.INFO
                log.log(
                    level,
                    "replay of %s diverged at step %d: %s",
                    self.source.id,
                    step.index,
                    compared.describe(),
                )
            timings = {"screenshot": shot_ms}
            error = None
            if action.kind is ActionKind.LAUNCH:
                package = self.launch_package(step)
                if package is None:
                    error = f"cannot launch {action.app!r}: no such app on {self.device.serial}"
                    compared = replace(compared, error=error)
                    self._record(
                        episode_id, new_index, step, obs, action, compared, timings, error_kind="unknown_app"
                    )
                    return Outcome.error("unknown_app"), f"step {step.index}: {error}"
            else:
                package = None
            if action.kind not in (ActionKind.FINISH, ActionKind.ANSWER, ActionKind.CALL_USER):
                acted = self.device.perform(action, package=package)
                timings.update(act=acted.act_ms, settle=acted.settle_ms)
            compared = replace(compared, performed=True)
            timings["total"] = (time.perf_counter() - t0) * 1000
            self._record(episode_id, new_index, step, obs, action, compared, timings)
        return self._final_outcome(steps)

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
        action: Action | None,
        compared: StepComparison,
        timings: dict[str, float],
        *,
        error_kind: str | None = None,
    ) -> None:
        verdict = "hint" if compared.diverged else "allow"
        decision = {
            "guard": "replay",
            "verdict": verdict,
            "reason": f"step {step.index}: {compared.describe()}",
        }
        if compared.diverged and not compared.performed:
            error_kind = error_kind or "divergence"
        self.store.record_step(
            episode_id,
            StepRecord(
                index=new_index,
                action=action,
                action_source=ActionSource.REPLAY,
                started_at=obs.taken_at,
                screen=obs.size,
                foreground_app=obs.package,
                foreground_activity=obs.activity,
                thought=step.thought,
                guard_decisions=[decision],
                timings=StepTimings.from_dict(timings),
                error_kind=error_kind,
                error_text=compared.error,
            ),
            screenshot=obs.screenshot,
        )
        self.results.append(compared)
        if self.on_step is not None:
            self.on_step(compared)


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
) -> ReplayResult:
    """Replay a recorded episode on a phone (the only attached one when ``device`` is None)."""
    options = options or ReplayOptions()
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
    replayer = _Replayer(
        store, source, steps, phone, options, on_step, registry if registry is not None else _load_registry()
    )
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
