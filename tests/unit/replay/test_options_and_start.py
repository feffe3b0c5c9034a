"""Replay options, where a recording started, the start check after a reset, and how a compared step reads."""

from __future__ import annotations

import pytest

from mobile_agent.actions import Action
from mobile_agent.errors import UserError
from mobile_agent.replay.reset import RecordedStart, recorded_start, start_problem
from mobile_agent.replay.results import ReplayOptions, ResetMode, StepComparison
from mobile_agent.store.records import StepInfo


def _step(index: int, app: str, activity: str = "") -> StepInfo:
    return StepInfo(
        index=index, episode_id="e", action=Action.tap(1, 1), foreground_app=app, foreground_activity=activity
    )


@pytest.mark.parametrize(
    ("given", "hint"),
    [
        ({"reset": "reboot"}, "none, home, force-stop or clear-data"),
        ({"on_divergence": "panic"}, "stop, warn or continue"),
        ({"wait_s": -1}, "--wait"),
        ({"wait_s": 601}, "--wait"),
        ({"until": -1}, "--until"),
        ({"speed": -0.5}, "twice as fast"),
    ],
)
def test_bad_options_are_one_line_errors_with_a_hint(given, hint) -> None:
    with pytest.raises(UserError) as caught:
        ReplayOptions(**given)
    assert hint in (caught.value.hint or "") + caught.value.message


def test_options_take_words_and_default_to_touching_nothing_first() -> None:
    options = ReplayOptions(reset="force-stop", on_divergence="warn")
    assert options.reset is ResetMode.FORCE_STOP and options.on_divergence.value == "warn"
    assert ReplayOptions().reset is ResetMode.NONE and ReplayOptions().wait_s > 0


def test_the_recorded_start_and_the_apps_a_reset_stops() -> None:
    steps = [
        _step(0, "com.android.launcher3", ".Launcher"),
        _step(1, "com.tencent.mm"),
        _step(2, "com.android.systemui"),
    ]
    start = recorded_start(steps)
    assert start == RecordedStart("com.android.launcher3", ".Launcher", ("com.tencent.mm",))
    assert start.on_home and not recorded_start([_step(0, "com.tencent.mm", ".ui.LauncherUI")]).on_home


def test_the_start_check_names_what_differs() -> None:
    start = RecordedStart("com.tencent.mm", "com.tencent.mm.ui.LauncherUI", ("com.tencent.mm",))
    assert start_problem(start, "com.tencent.mm", "com.tencent.mm.ui.LauncherUI") is None
    assert "recording started in com.tencent.mm" in start_problem(start, "com.android.launcher3", ".Launcher")
    assert "ChattingUI" in start_problem(start, "com.tencent.mm", "com.tencent.mm.ui.chatting.ChattingUI")
    assert start_problem(start, None, None) is None  # nothing read: the step's own comparison decides


def test_with_a_view_tree_the_hash_and_activity_are_only_noted() -> None:
    """A frame taken mid-transition in the recording is half the hash away from the settled live screen: with the
    view trees compared it is noted, never a divergence; without them it still is."""
    mid_transition = {"recorded_app": "com.a", "live_app": "com.a", "distance": 32}
    noted = StepComparison(0, Action.launch("a"), by_tree=True, **mid_transition)
    assert not noted.diverged and "noted: the view tree decides" in noted.describe()
    assert StepComparison(0, Action.launch("a"), **mid_transition).diverged
    other_app = StepComparison(0, None, "com.a", live_app="com.b", by_tree=True)
    assert other_app.diverged, "another foreground app always stops"
    popup = StepComparison(1, Action.tap(1, 1), "com.a", popup="splash_skip", performed=True)
    assert not popup.diverged and "popup rule splash_skip" in popup.describe()
