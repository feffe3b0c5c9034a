"""The pure parts of replay: coordinate scaling, screen hashes, which steps are replayed."""

from __future__ import annotations

from PIL import Image, ImageDraw

from mobile_agent.actions import Action, Point, Size
from mobile_agent.errors import UserError
from mobile_agent.replay.replayer import plan_replay, replayable_steps
from mobile_agent.replay.results import (
    DEFAULT_HASH_THRESHOLD,
    DivergencePolicy,
    ReplayOptions,
    StepComparison,
)
from mobile_agent.replay.screens import difference_hash, hash_distance, scale_action

from .conftest import Recorded


def test_scale_action_keeps_the_relative_spot_and_stays_on_screen() -> None:
    scaled = scale_action(Action.swipe(540, 2399, 1079, 0), Size(1080, 2400), Size(720, 1600))
    assert (scaled.point, scaled.end) == (Point(360, 1599), Point(719, 0))
    typed = Action.type("hi")
    assert scale_action(typed, Size(1080, 2400), Size(720, 1600)) is typed
    tap = Action.tap(10, 10)
    assert scale_action(tap, Size(100, 100), Size(100, 100)) is tap


def _screen(size: tuple[int, int], popup: bool = False) -> Image.Image:
    img = Image.new("RGB", size, (250, 250, 250))
    pen = ImageDraw.Draw(img)
    w, h = size
    for row in range(8):
        pen.rectangle((0, row * h // 8, w, row * h // 8 + h // 20), fill=(60 + 20 * row, 120, 200))
    if popup:
        pen.rectangle((0, 0, w, h), fill=(0, 0, 0))
        pen.rectangle((w // 6, h // 3, 5 * w // 6, 2 * h // 3), fill=(255, 255, 255))
    return img


def test_the_same_screen_at_another_resolution_hashes_alike_and_a_popup_does_not() -> None:
    base = difference_hash(_screen((1080, 2400)))
    assert hash_distance(base, difference_hash(_screen((720, 1600)))) <= DEFAULT_HASH_THRESHOLD
    assert hash_distance(base, difference_hash(_screen((1080, 2400), popup=True))) > DEFAULT_HASH_THRESHOLD


def test_comparison_flags_a_different_app_or_screen() -> None:
    same = StepComparison(1, Action.tap(1, 1), "com.a", live_app="com.a", distance=3)
    assert not same.diverged and "matches" in same.describe()
    assert StepComparison(1, None, "com.a", live_app="com.b", distance=0).diverged
    assert StepComparison(1, None, "com.a", live_app="com.a", distance=40).diverged
    assert not StepComparison(1, None, "com.a").diverged  # a dry run compares nothing
    other_activity = StepComparison(
        1, None, "com.a", live_app="com.a", recorded_activity=".Chat", live_activity=".Pay"
    )
    assert other_activity.diverged and "activity .Pay but recorded .Chat" in other_activity.describe()
    target = StepComparison(
        1, None, "com.a", live_app="com.a", distance=0, differences=("target '张三' is now '李四'",)
    )
    assert (
        target.diverged
        and target.screen_matches
        and target.describe().startswith("target '张三' is now '李四'")
    )


def test_the_default_on_divergence_is_stop() -> None:
    assert ReplayOptions().on_divergence is DivergencePolicy.STOP


def test_replay_skips_steps_without_an_action_but_replays_rules(recorded: Recorded) -> None:
    steps = recorded.store.steps(recorded.episode_id)
    chosen = replayable_steps(steps)
    assert [s.index for s in chosen] == [0, 1, 3, 4, 5, 6, 7]  # step 2 was unparsed; step 3 is a rule step
    assert [s.index for s in replayable_steps(steps, until=3)] == [0, 1, 3]
    planned = plan_replay(recorded.store, recorded.episode_id, Size(540, 1200))
    assert planned[1].action == Action.tap(270, 190)


def test_options_are_checked() -> None:
    assert ReplayOptions(on_divergence="stop").on_divergence is DivergencePolicy.STOP
    for bad in ({"speed": -1}, {"until": -2}):
        try:
            ReplayOptions(**bad)
        except UserError:
            continue
        raise AssertionError(f"{bad} was accepted")
