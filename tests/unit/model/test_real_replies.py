"""Every reply of the real-reply corpus (``tests/data/real_replies``) parses to the actions the model meant, in
device pixels, or raises ParseError when the corpus marks it unusable.

The corpus gives coordinates in the reply's own space; the family that serves that checkpoint converts them.
Entries whose source states no coordinate space for a checkpoint with two (UI-TARS, UI-Venus-1.5 logs) are read
by the family of the space the entry names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mobile_agent.actions import Action, ActionKind, Key, Point, Size
from mobile_agent.errors import ParseError
from mobile_agent.model.base import CoordinateSpace, ModelFamily
from mobile_agent.model.families import get_family
from mobile_agent.model.images import Geometry
from mobile_agent.model.uitars import scroll_end

CORPUS = Path(__file__).parents[2] / "data" / "real_replies" / "replies.yaml"
ENTRIES: list[dict[str, Any]] = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
PHONE = Size(1080, 2400)


def family_of(entry: dict[str, Any]) -> ModelFamily:
    """The registered family for the entry's checkpoint and coordinate space."""
    family, space = entry["family"], str(entry.get("coordinate_space", ""))
    if family == "ui-tars":
        if space.startswith("0-1000"):
            return get_family("ui-tars-1.0")
        return get_family("ui-tars")
    if family == "ui-venus-1.5" and space.startswith("image-pixels"):
        return get_family("ui-venus-navi")
    return get_family(family)


def geometry_of(entry: dict[str, Any], family: ModelFamily) -> Geometry:
    stated = entry.get("screen_size")
    device = Size(*stated) if stated else PHONE
    if family.coordinate_space is CoordinateSpace.IMAGE_PIXELS:
        # Pixel replies are measured on the image the model saw; the source's image is the screen here.
        return Geometry(device=device, image=device)
    return family.geometry(device)


def expected_actions(entry: dict[str, Any], family: ModelFamily, geometry: Geometry) -> list[Action]:
    width, height = geometry.device
    out = []
    for item in entry["expected"]:
        kind = ActionKind(item["kind"])

        def device(key: str, item: dict[str, Any] = item) -> Point:
            return family.to_device(tuple(item[key]), geometry)

        if kind is ActionKind.SWIPE:
            start = device("point") if "point" in item else Point(width // 2, height // 2)
            end = device("end") if "end" in item else scroll_end(start, item["direction"], width, height)
            out.append(Action(kind, point=start, end=end))
        elif kind in (ActionKind.TAP, ActionKind.DOUBLE_TAP, ActionKind.LONG_PRESS):
            out.append(Action(kind, point=device("point")))
        elif kind is ActionKind.KEY:
            out.append(Action.press(Key(item["key"])))
        elif kind is ActionKind.LAUNCH:
            out.append(Action.launch(item["app"]))
        elif kind is ActionKind.TYPE:
            out.append(Action.type(item["text"]))
        elif kind is ActionKind.FINISH:
            out.append(Action.finish(item.get("text")))
        elif kind is ActionKind.WAIT:
            out.append(Action.wait())
        else:
            out.append(Action(kind, text=item.get("text")))
    return out


USABLE = [e for e in ENTRIES if e["expected"] != "parse_error"]
UNUSABLE = [e for e in ENTRIES if e["expected"] == "parse_error"]


def test_the_corpus_is_the_one_described() -> None:
    assert len(ENTRIES) >= 60
    assert len({e["id"] for e in ENTRIES}) == len(ENTRIES)
    assert all(e.get("provenance") and e.get("source") for e in ENTRIES)


@pytest.mark.parametrize("entry", USABLE, ids=[e["id"] for e in USABLE])
def test_usable_reply_parses_to_the_meant_actions(entry: dict[str, Any]) -> None:
    family = family_of(entry)
    geometry = geometry_of(entry, family)
    parsed = family.parse(entry["reply"], geometry, reasoning=entry.get("reasoning"))
    got = [replace_duration(a) for a in parsed.actions]
    assert got == expected_actions(entry, family, geometry), entry["reply"]


def replace_duration(action: Action) -> Action:
    """The corpus does not record long-press or wait durations; compare without them."""
    if action.duration_ms is None:
        return action
    return Action(action.kind, point=action.point, end=action.end, text=action.text)


@pytest.mark.parametrize("entry", UNUSABLE, ids=[e["id"] for e in UNUSABLE])
def test_unusable_reply_is_a_parse_error(entry: dict[str, Any]) -> None:
    family = family_of(entry)
    with pytest.raises(ParseError) as caught:
        family.parse(entry["reply"], geometry_of(entry, family), reasoning=entry.get("reasoning"))
    assert caught.value.message and caught.value.reply


# ---- the cases built to break the new rules ------------------------------------------------------------------

GEOMETRY = Geometry(device=PHONE, image=PHONE)


def test_autoglm_without_answer_takes_the_last_call_not_the_one_in_the_thinking() -> None:
    family = get_family("autoglm")
    reply = '我本来想 do(action="Back")，但应该先打开微信。\ndo(action="Launch", app="微信")'
    parsed = family.parse(reply, family.geometry(PHONE))
    assert parsed.actions == (Action.launch("微信"),)
    assert 'do(action="Back")' in parsed.thought


def test_a_bad_action_anywhere_in_a_sequence_fails_the_whole_reply() -> None:
    family = get_family("ui-venus-2")
    with pytest.raises(ParseError, match="outside 0-999"):
        family.parse(
            "<action>Click(point=(10, 10)), Click(point=(1000, 10))</action>", family.geometry(PHONE)
        )
    with pytest.raises(ParseError):
        get_family("autoglm").parse(
            '<answer>do(action="Tap", element=[1,2])\ndo(action="Tap", element=[3,4)</answer>',
            family.geometry(PHONE),
        )


def test_nothing_after_an_ending_action_is_read() -> None:
    family = get_family("ui-venus-2")
    parsed = family.parse(
        "<action>Finished(content='ok'), Clik(point=(1, 2))</action>", family.geometry(PHONE)
    )
    assert parsed.actions == (Action.finish("ok"),)
    parsed = family.parse(
        "<action>CallUser(content='登录'), Click(point=(1, 2))</action>", family.geometry(PHONE)
    )
    assert parsed.actions == (Action.call_user("登录"),)


def test_uitars_scrolls_without_a_point_start_at_the_centre_and_boxes_win_over_direction() -> None:
    family = get_family("ui-tars-1.0")
    geometry = family.geometry(PHONE)
    centre = Point(540, 1200)
    parsed = family.parse("Action：scroll(direction='up')", geometry)
    assert parsed.action == Action(ActionKind.SWIPE, point=centre, end=scroll_end(centre, "up", 1080, 2400))
    both = "Action: scroll(start_box='(500,800)', end_box='(500,200)', direction='down')"
    action = family.parse(both, geometry).action
    assert action.point == family.to_device((500, 800), geometry) and action.end == family.to_device(
        (500, 200), geometry
    )


def test_uitars_text_that_looks_like_an_action_stays_text() -> None:
    family = get_family("ui-tars")
    parsed = family.parse("Thought: x\nAction: type(content='scroll up()\\n\\nclick(point=1)')", GEOMETRY)
    assert parsed.actions == (Action.type("scroll up()\n\nclick(point=1)"),)


def test_uitars_several_action_lines_and_ampersands_are_a_sequence() -> None:
    family = get_family("ui-tars")
    reply = "Thought: x\nAction: press_back()\nAction: press_home() & wait()"
    assert [a.kind for a in family.parse(reply, GEOMETRY).actions] == [ActionKind.KEY] * 2 + [ActionKind.WAIT]


def test_qwen_two_tool_calls_are_a_sequence_and_an_unknown_tool_fails_both() -> None:
    family = get_family("qwen2.5-vl")
    call = '<tool_call>{"name": "mobile_use", "arguments": {"action": "type", "text": "%s"}}</tool_call>'
    parsed = family.parse(call % "a" + "\n" + call % "b", GEOMETRY)
    assert parsed.actions == (Action.type("a"), Action.type("b"))
    with pytest.raises(ParseError, match="unknown tool"):
        family.parse(call % "a" + call.replace("mobile_use", "computer_use") % "b", GEOMETRY)
