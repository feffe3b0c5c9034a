"""Offline evaluation: ask a model for every recorded step and compare its action with the recorded one.

For each step the model gets what the agent gave it: the task, the recorded history before the step (bounded by
the family's prompt options) and the step's screenshot, through the family's ``build_messages``. Its reply is
parsed into an action and scored twice, and the two scores are never merged:

- type: the same kind of action (tap, swipe, type, key, launch, ...);
- parameters, only for steps of the right type: a tap inside the bounds of the element the recorded tap hit (from
  the step's recorded view tree), or — without a view tree — within ``tap_distance`` of the recorded point in
  screen-relative units (x / width, y / height); 0.14 is the threshold of the AitW action-matching rule that
  Android-in-the-Wild and later GUI-agent papers use. Swipes and drags must go the same way (up, down, left,
  right); text must match after normalisation (width, case, whitespace); keys must be the same key; launches the
  same app (by name, or the same package in the app registry); wait, finish and call_user have no parameters.

    report = evaluate_offline(store, select_episodes(store, run="a1b2"), EvalOptions("ui-venus-2", base_url=url))
    report.overall.type_accuracy, report.overall.param_accuracy, report.by_app["com.tencent.mm"]
"""

from __future__ import annotations

import dataclasses
import logging
import math
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mobile_agent.actions import GESTURE_KINDS, POINT_KINDS, Action, ActionKind, Point, Size
from mobile_agent.errors import ParseError, UserError
from mobile_agent.model.base import HistoryTurn, ModelFamily, PromptOptions
from mobile_agent.model.client import ModelClient
from mobile_agent.model.families import get_family
from mobile_agent.model.images import PreparedImage, prepare_image
from mobile_agent.report.html import episode_app
from mobile_agent.report.selection import action_was_performed
from mobile_agent.store.files import readable_image
from mobile_agent.store.records import ActionSource, EpisodeInfo, StepInfo
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)

DEFAULT_TAP_DISTANCE = 0.14  # screen-relative, as in AitW's action matching


@dataclass(frozen=True)
class EvalOptions:
    family: str
    base_url: str | Sequence[str]
    model: str | None = None  # None: the first model the endpoint lists
    tap_distance: float = DEFAULT_TAP_DISTANCE
    use_view_tree: bool = True
    prompt: PromptOptions = field(default_factory=PromptOptions)

    def __post_init__(self) -> None:
        if not 0 < self.tap_distance <= 1.5:
            raise UserError(
                f"--tap-distance must be in (0, 1.5], got {self.tap_distance}",
                hint="it is a fraction of the screen, e.g. 0.14",
            )


@dataclass(frozen=True)
class StepScore:
    episode_id: str
    index: int
    app: str
    reference: Action
    predicted: Action | None
    type_correct: bool
    param_correct: bool | None  # None when the type is wrong: parameters are only scored for the right type
    how: str  # why the parameters were judged so ("inside the element bounds", "distance 0.31 > 0.14", ...)
    error: str | None = None  # the reply could not be parsed

    def to_dict(self) -> dict[str, Any]:
        return {
            "episode": self.episode_id,
            "step": self.index,
            "app": self.app,
            "reference": self.reference.to_dict(),
            "predicted": self.predicted.to_dict() if self.predicted else None,
            "type_correct": self.type_correct,
            "param_correct": self.param_correct,
            "how": self.how,
            "error": self.error,
        }


@dataclass
class Tally:
    """Counts for a group of steps. Parameter accuracy is over the steps whose type was right."""

    steps: int = 0
    type_correct: int = 0
    param_correct: int = 0
    unparsed: int = 0

    def add(self, score: StepScore) -> None:
        self.steps += 1
        self.type_correct += score.type_correct
        self.param_correct += bool(score.param_correct)
        self.unparsed += score.error is not None

    @property
    def wrong_type(self) -> int:
        return self.steps - self.type_correct

    @property
    def wrong_param(self) -> int:
        """Right type, wrong parameter."""
        return self.type_correct - self.param_correct

    @property
    def type_accuracy(self) -> float | None:
        return self.type_correct / self.steps if self.steps else None

    @property
    def param_accuracy(self) -> float | None:
        return self.param_correct / self.type_correct if self.type_correct else None

    @property
    def step_accuracy(self) -> float | None:
        """Right type and right parameters, over all steps."""
        return self.param_correct / self.steps if self.steps else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "steps": self.steps,
            "type_correct": self.type_correct,
            "wrong_type": self.wrong_type,
            "param_correct": self.param_correct,
            "wrong_param": self.wrong_param,
            "unparsed": self.unparsed,
            "type_accuracy": self.type_accuracy,
            "param_accuracy": self.param_accuracy,
            "step_accuracy": self.step_accuracy,
        }


@dataclass(frozen=True)
class EvalReport:
    family: str
    model: str
    tap_distance: float
    scores: list[StepScore]
    overall: Tally
    by_app: dict[str, Tally]
    by_kind: dict[str, Tally]  # by the recorded action's kind

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "model": self.model,
            "tap_distance": self.tap_distance,
            "overall": self.overall.to_dict(),
            "by_app": {app: t.to_dict() for app, t in self.by_app.items()},
            "by_kind": {kind: t.to_dict() for kind, t in self.by_kind.items()},
            "steps": [s.to_dict() for s in self.scores],
        }


# ----- comparing two actions ----------------------------------------------------------------------------------
def normalise_text(text: str | None) -> str:
    return " ".join(unicodedata.normalize("NFKC", text or "").casefold().split())


def direction(action: Action) -> str | None:
    """up / down / left / right: the way a swipe or drag moves (its larger component); None for no movement."""
    if action.point is None or action.end is None:
        return None
    dx, dy = action.end.x - action.point.x, action.end.y - action.point.y
    if dx == 0 and dy == 0:
        return None
    if abs(dx) >= abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


@dataclass(frozen=True)
class Bounds:
    left: int
    top: int
    right: int
    bottom: int

    def contains(self, point: Point) -> bool:
        return self.left <= point.x < self.right and self.top <= point.y < self.bottom

    @property
    def area(self) -> int:
        return max(0, self.right - self.left) * max(0, self.bottom - self.top)


def element_bounds_at(hierarchy_xml: str, point: Point) -> Bounds | None:
    """The bounds of the element a tap at ``point`` hit: the smallest clickable element holding it, else the
    smallest visible element holding it (screen-sized containers excepted)."""
    from mobile_agent.screen.viewtree import ViewTree

    tree = ViewTree.parse(hierarchy_xml)
    if tree is None:
        return None
    holding: list[tuple[bool, Bounds]] = []
    root_area = None
    for element in tree.elements:
        b = element.bounds
        if b is None or b.empty or element.node.get("visible-to-user", "true") == "false":
            continue
        bounds = Bounds(b.left, b.top, b.right, b.bottom)
        root_area = max(root_area or 0, bounds.area)
        if bounds.contains(point):
            holding.append((element.node.get("clickable") == "true", bounds))
    candidates = [b for clickable, b in holding if clickable] or [
        b for _, b in holding if b.area < (root_area or 0)
    ]
    return min(candidates, key=lambda b: b.area) if candidates else None


def _same_app(reference: str, predicted: str, resolve: Callable[[str], str | None]) -> bool:
    if normalise_text(reference) == normalise_text(predicted):
        return True
    ref_pkg, pred_pkg = resolve(reference), resolve(predicted)
    return ref_pkg is not None and ref_pkg == pred_pkg


def compare_params(
    reference: Action,
    predicted: Action,
    screen: Size,
    *,
    element: Bounds | None = None,
    tap_distance: float = DEFAULT_TAP_DISTANCE,
    resolve_app: Callable[[str], str | None] = lambda name: None,
) -> tuple[bool, str]:
    """Are the parameters of two actions of the same kind the same? (verdict, how it was decided)."""
    kind = reference.kind
    if kind in POINT_KINDS:
        target, guess = reference.point, predicted.point
        if element is not None:
            inside = element.contains(guess)  # type: ignore[arg-type]
            return inside, f"{'inside' if inside else 'outside'} the element bounds"
        dist = math.hypot(
            (guess.x - target.x) / screen.width,  # type: ignore[union-attr]
            (guess.y - target.y) / screen.height,  # type: ignore[union-attr]
        )
        ok = dist <= tap_distance
        return ok, f"distance {dist:.3f} {'<=' if ok else '>'} {tap_distance}"
    if kind in GESTURE_KINDS:
        want, got = direction(reference), direction(predicted)
        return want == got, f"direction {got} (recorded {want})"
    if kind in (ActionKind.TYPE, ActionKind.ANSWER):
        ok = normalise_text(reference.text) == normalise_text(predicted.text)
        return ok, "same text" if ok else "different text"
    if kind is ActionKind.KEY:
        ok = reference.key == predicted.key
        return ok, f"key {predicted.key.value if predicted.key else None}"
    if kind is ActionKind.LAUNCH:
        ok = _same_app(reference.app or "", predicted.app or "", resolve_app)
        return ok, "same app" if ok else f"app {predicted.app!r} (recorded {reference.app!r})"
    return True, "no parameters"


# ----- asking the model ---------------------------------------------------------------------------------------
def _registry_resolver() -> Callable[[str], str | None]:
    try:
        from mobile_agent.apps.registry import AppRegistry

        registry = AppRegistry.load()
    except Exception as exc:  # noqa: BLE001 - without manifests, apps compare by name only
        log.info("app registry unavailable, comparing app names only: %s", exc)
        return lambda name: None

    def resolve(name: str) -> str | None:
        manifest = registry.lookup(name)
        return str(manifest.package) if manifest is not None else None

    return resolve


class _EpisodeEvaluator:
    def __init__(
        self,
        store: TrajectoryStore,
        family: ModelFamily,
        client: ModelClient,
        options: EvalOptions,
        resolve_app: Callable[[str], str | None],
    ) -> None:
        self.store = store
        self.family = family
        self.client = client
        self.options = options
        self.resolve_app = resolve_app

    def scores(self, episode: EpisodeInfo) -> list[StepScore]:
        steps = self.store.steps(episode.id)
        app = episode_app(episode, steps)
        history: list[HistoryTurn] = []
        out: list[StepScore] = []
        for step in steps:
            if not action_was_performed(step) or step.action_source == ActionSource.REPLAY:
                continue
            shot = readable_image(
                self.store.screenshot_path(step), f"screenshot of step {step.index} of {episode.id}"
            )
            if shot is None:
                log.info(
                    "episode %s step %d has no readable screenshot; not evaluated", episode.id, step.index
                )
                continue
            prepared = prepare_image(shot, self.family)
            if (
                step.screen is not None
            ):  # the recorded frame may be phone-scaled; actions are in screen pixels
                prepared = dataclasses.replace(prepared, device_size=step.screen)
            out.append(self._score(episode, step, app, prepared, history))
            if step.action_source == ActionSource.MODEL:
                history.append(self._history_turn(episode, step, prepared))
        return out

    def _history_turn(self, episode: EpisodeInfo, step: StepInfo, prepared: PreparedImage) -> HistoryTurn:
        reply = step.raw_reply if episode.family == self.family.name and step.raw_reply else None
        if reply is None:
            try:
                reply = self.family.format(step.action, prepared.geometry, step.thought or "")  # type: ignore[arg-type]
            except ValueError:
                reply = step.action.describe()  # type: ignore[union-attr]
        return HistoryTurn(image=prepared.jpeg, reply=reply, action=step.action)

    def _score(
        self,
        episode: EpisodeInfo,
        step: StepInfo,
        app: str,
        prepared: PreparedImage,
        history: list[HistoryTurn],
    ) -> StepScore:
        reference: Action = step.action  # type: ignore[assignment]
        messages = self.family.build_messages(
            episode.task, list(history), prepared, options=self.options.prompt
        )
        reply = self.client.complete(messages, episode_id=f"eval-{episode.id}")
        try:
            predicted = self.family.parse(reply.text, prepared.geometry, reasoning=reply.reasoning).action
        except ParseError as exc:
            return StepScore(
                episode.id, step.index, app, reference, None, False, None, "unparsed", exc.message
            )
        if predicted.kind is not reference.kind:
            return StepScore(
                episode.id, step.index, app, reference, predicted, False, None, f"type {predicted.kind.value}"
            )
        element = None
        if reference.kind in POINT_KINDS and self.options.use_view_tree:
            tree = self.store.hierarchy_path(step)
            if tree is not None and tree.is_file():
                element = element_bounds_at(tree.read_text(encoding="utf-8"), reference.point)  # type: ignore[arg-type]
        ok, how = compare_params(
            reference,
            predicted,
            step.screen or prepared.device_size,
            element=element,
            tap_distance=self.options.tap_distance,
            resolve_app=self.resolve_app,
        )
        return StepScore(episode.id, step.index, app, reference, predicted, True, ok, how)


def evaluate_offline(
    store: TrajectoryStore,
    episodes: Sequence[EpisodeInfo],
    options: EvalOptions,
    *,
    on_step: Callable[[StepScore], None] | None = None,
) -> EvalReport:
    family = get_family(options.family)
    urls = [options.base_url] if isinstance(options.base_url, str) else list(options.base_url)
    probe = ModelClient(urls, options.model or family.name)
    model = options.model or _first_model(probe, family.name)
    client = probe if options.model else ModelClient(urls, model)
    resolve_app = _registry_resolver()
    evaluator = _EpisodeEvaluator(store, family, client, options, resolve_app)
    scores: list[StepScore] = []
    try:
        for episode in episodes:
            for score in evaluator.scores(episode):
                scores.append(score)
                if on_step is not None:
                    on_step(score)
    finally:
        client.close()
        if probe is not client:
            probe.close()
    return summarise(scores, family.name, model, options.tap_distance)


def _first_model(client: ModelClient, fallback: str) -> str:
    models = client.list_models()
    if not models:
        log.info("the endpoint lists no models; asking for %r", fallback)
        return fallback
    return models[0]


def summarise(scores: list[StepScore], family: str, model: str, tap_distance: float) -> EvalReport:
    overall = Tally()
    by_app: dict[str, Tally] = {}
    by_kind: dict[str, Tally] = {}
    for score in scores:
        overall.add(score)
        by_app.setdefault(score.app, Tally()).add(score)
        by_kind.setdefault(score.reference.kind.value, Tally()).add(score)
    return EvalReport(family, model, tap_distance, scores, overall, dict(sorted(by_app.items())), by_kind)


__all__ = [
    "DEFAULT_TAP_DISTANCE",
    "EvalOptions",
    "EvalReport",
    "StepScore",
    "Tally",
    "compare_params",
    "direction",
    "element_bounds_at",
    "evaluate_offline",
    "normalise_text",
    "summarise",
]
