"""Scoring one predicted action against a recorded one: type and parameters are separate questions."""

from __future__ import annotations

import pytest

from mobile_agent.actions import Action, Point, Size
from mobile_agent.errors import UserError
from mobile_agent.evaluate.offline import (
    Bounds,
    EvalOptions,
    StepScore,
    compare_params,
    direction,
    element_bounds_at,
    normalise_text,
    summarise,
)

from .conftest import HIERARCHY

SCREEN = Size(1080, 2400)


def test_tap_inside_the_recorded_element_counts_wherever_it_lands() -> None:
    send_button = Bounds(880, 2200, 1060, 2320)
    ok, how = compare_params(Action.tap(970, 2260), Action.tap(1050, 2210), SCREEN, element=send_button)
    assert ok and "inside" in how
    ok, how = compare_params(Action.tap(970, 2260), Action.tap(870, 2260), SCREEN, element=send_button)
    assert not ok and "outside" in how


def test_tap_without_a_view_tree_uses_the_screen_relative_distance() -> None:
    ok, _ = compare_params(Action.tap(540, 1200), Action.tap(540 + 100, 1200 + 200), SCREEN)
    assert ok  # (100/1080, 200/2400) -> 0.126 <= 0.14
    ok, how = compare_params(Action.tap(540, 1200), Action.tap(540 + 140, 1200 + 200), SCREEN)
    assert not ok and how.startswith("distance 0.15")
    ok, _ = compare_params(Action.tap(540, 1200), Action.tap(690, 1200), SCREEN, tap_distance=0.2)
    assert ok


def test_swipes_compare_by_direction_only() -> None:
    up = Action.swipe(540, 1800, 540, 600)
    assert direction(up) == "up"
    assert direction(Action.swipe(100, 500, 900, 400)) == "right"
    assert direction(Action.swipe(5, 5, 5, 5)) is None
    assert compare_params(up, Action.swipe(300, 2000, 310, 1000), SCREEN)[0]
    assert not compare_params(up, Action.swipe(540, 600, 540, 1800), SCREEN)[0]
    assert compare_params(Action.drag(0, 0, 500, 0), Action.drag(10, 10, 900, 50), SCREEN)[0]


def test_text_keys_and_apps() -> None:
    assert normalise_text("  ＨＥＬＬＯ   World ") == "hello world"
    assert compare_params(Action.type("晚上好"), Action.type(" 晚上好 "), SCREEN)[0]
    assert not compare_params(Action.type("晚上好"), Action.type("早上好"), SCREEN)[0]
    assert compare_params(Action.press("back"), Action.press("back"), SCREEN)[0]
    assert not compare_params(Action.press("back"), Action.press("home"), SCREEN)[0]
    resolve = {"微信": "com.tencent.mm", "WeChat": "com.tencent.mm"}.get
    assert compare_params(Action.launch("微信"), Action.launch("WeChat"), SCREEN, resolve_app=resolve)[0]
    assert not compare_params(Action.launch("微信"), Action.launch("支付宝"), SCREEN, resolve_app=resolve)[0]
    assert compare_params(Action.finish("a"), Action.finish("b"), SCREEN) == (True, "no parameters")


def test_element_bounds_prefer_the_smallest_clickable_element() -> None:
    assert element_bounds_at(HIERARCHY, Point(970, 2260)) == Bounds(880, 2200, 1060, 2320)
    assert element_bounds_at(HIERARCHY, Point(100, 400)) == Bounds(0, 300, 1080, 460)
    assert element_bounds_at(HIERARCHY, Point(100, 1000)) is None  # only the screen-sized root holds it
    assert element_bounds_at("not xml", Point(1, 1)) is None


def _score(index: int, type_ok: bool, param_ok: bool | None, app: str = "a") -> StepScore:
    return StepScore("ep", index, app, Action.tap(1, 1), Action.tap(1, 1), type_ok, param_ok, "")


def test_wrong_type_and_wrong_parameter_are_never_merged() -> None:
    scores = [
        _score(0, True, True),
        _score(1, True, False),
        _score(2, False, None),
        _score(3, True, True, app="b"),
    ]
    report = summarise(scores, "ui-venus-2", "m", 0.14)
    overall = report.overall
    assert (overall.wrong_type, overall.wrong_param) == (1, 1)
    assert overall.type_accuracy == pytest.approx(3 / 4)
    assert overall.param_accuracy == pytest.approx(2 / 3)  # over the steps with the right type only
    assert overall.step_accuracy == pytest.approx(2 / 4)
    assert report.by_app["a"].steps == 3 and report.by_app["b"].param_accuracy == 1.0
    assert report.to_dict()["by_kind"]["tap"]["steps"] == 4
    assert summarise([], "f", "m", 0.14).overall.type_accuracy is None


def test_tap_distance_must_be_a_fraction_of_the_screen() -> None:
    with pytest.raises(UserError):
        EvalOptions("ui-venus-2", "http://127.0.0.1:1/v1", tap_distance=0)
