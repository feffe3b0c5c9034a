"""Property tests: parse(format(a)) == a for every family and every action it can express; parsers only ever
raise ParseError, whatever text they get."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from mobile_agent.actions import Action, ActionKind, Key, Point, Size
from mobile_agent.errors import ParseError
from mobile_agent.model.base import CoordinateSpace, ModelFamily
from mobile_agent.model.families import FAMILIES
from mobile_agent.model.images import Geometry
from mobile_agent.model.uitars import scroll_end

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

DEVICE_SIZES = st.one_of(
    st.sampled_from([Size(1080, 2400), Size(720, 1280), Size(1440, 3200), Size(718, 1280), Size(480, 800)]),
    st.builds(Size, st.integers(120, 3000), st.integers(120, 3000)),
)

# Text a model could write inside an argument. Markup characters and surrogates are left out: a literal
# "</action>" inside a Type() argument is ambiguous in the family's own format.
SAFE_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="<>"),
    max_size=40,
)
NON_BLANK = SAFE_TEXT.filter(lambda s: s.strip() != "")
THOUGHT = st.text(
    alphabet=st.characters(whitelist_categories=("Lu", "Ll", "Lo", "Nd"), whitelist_characters=" ,.!?"),
    max_size=60,
).map(str.strip)

# What each family can express beyond the action kind (extras it would silently drop are not generated).
LONG_PRESS_MS = {"ui-tars": st.integers(0, 60_000), "qwen": st.integers(0, 3_600_000)}
WAIT_MS = {"autoglm": st.integers(0, 3_600_000), "qwen": st.integers(0, 3_600_000)}
KEYS = {
    "autoglm": [Key.BACK, Key.HOME],
    "ui-tars": [Key.BACK, Key.HOME],
}


def _group(family: ModelFamily) -> str:
    if family.name.startswith("qwen"):
        return "qwen"
    return "ui-tars" if "ui-tars" in family.name else family.name


@st.composite
def geometries(draw, family: ModelFamily) -> Geometry:
    return family.geometry(draw(DEVICE_SIZES))


@st.composite
def representable_points(draw, family: ModelFamily, geometry: Geometry) -> Point:
    extent = family.model_extent(geometry)
    x = draw(st.integers(0, extent.width - 1))
    y = draw(st.integers(0, extent.height - 1))
    return family.to_device((x, y), geometry)


@st.composite
def expressible_actions(draw, family: ModelFamily, geometry: Geometry) -> Action:
    group = _group(family)
    kind = draw(st.sampled_from(sorted(family.supported_kinds, key=lambda k: k.value)))
    point = draw(representable_points(family, geometry))
    optional = st.none()
    if kind is ActionKind.TAP:
        sensitive = draw(st.none() | SAFE_TEXT) if group == "autoglm" else None
        return Action(kind, point=point, sensitive=sensitive)
    if kind is ActionKind.DOUBLE_TAP:
        return Action(kind, point=point)
    if kind is ActionKind.LONG_PRESS:
        return Action(kind, point=point, duration_ms=draw(optional | LONG_PRESS_MS.get(group, st.none())))
    if kind is ActionKind.SWIPE and group == "ui-tars" and not getattr(family, "legacy_boxes", False):
        direction = draw(st.sampled_from(["up", "down", "left", "right"]))
        end = scroll_end(point, direction, *geometry.device)
        assume(end != point)
        return Action(kind, point=point, end=end)
    if kind in (ActionKind.SWIPE, ActionKind.DRAG):
        return Action(kind, point=point, end=draw(representable_points(family, geometry)))
    if kind is ActionKind.TYPE:
        return Action.type(draw(SAFE_TEXT))
    if kind is ActionKind.LAUNCH:
        return Action.launch(draw(NON_BLANK))
    if kind is ActionKind.KEY:
        return Action.press(draw(st.sampled_from(KEYS.get(group, list(Key)))))
    if kind is ActionKind.WAIT:
        return Action.wait(draw(optional | WAIT_MS.get(group, st.none())))
    if kind is ActionKind.ANSWER:
        return Action.answer(draw(SAFE_TEXT))
    if kind is ActionKind.FINISH:
        if group == "qwen":
            return Action.finish(draw(st.sampled_from([None, "failure"])))
        return Action.finish(draw(st.none() | NON_BLANK))
    if kind is ActionKind.CALL_USER:
        return Action.call_user(draw((st.none() | SAFE_TEXT) if group == "ui-tars" else SAFE_TEXT))
    raise AssertionError(kind)


FAMILY_NAMES = sorted(FAMILIES)


@pytest.mark.parametrize("name", FAMILY_NAMES)
@FAST
@given(data=st.data())
def test_parse_inverts_format(name: str, data: st.DataObject) -> None:
    family = FAMILIES[name]
    geometry = data.draw(geometries(family))
    action = data.draw(expressible_actions(family, geometry))
    thought = data.draw(THOUGHT)
    reply = family.format(action, geometry, thought=thought)
    parsed = family.parse(reply, geometry)
    assert parsed.action == action, reply
    assert parsed.thought == thought, reply


@pytest.mark.parametrize("name", FAMILY_NAMES)
@FAST
@given(data=st.data())
def test_model_coordinates_round_trip_through_device_pixels(name: str, data: st.DataObject) -> None:
    family = FAMILIES[name]
    geometry = data.draw(geometries(family))
    point = data.draw(representable_points(family, geometry))
    assert family.to_device(family.to_model(point, geometry), geometry) == point


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_unexpressible_kinds_raise_value_error(name: str) -> None:
    family = FAMILIES[name]
    geometry = family.geometry(Size(1080, 2400))
    samples = {
        ActionKind.TAP: Action.tap(1, 1),
        ActionKind.DOUBLE_TAP: Action.double_tap(1, 1),
        ActionKind.LONG_PRESS: Action.long_press(1, 1),
        ActionKind.SWIPE: Action.swipe(1, 1, 1, 900),
        ActionKind.DRAG: Action.drag(1, 1, 5, 5),
        ActionKind.TYPE: Action.type("x"),
        ActionKind.KEY: Action.press(Key.BACK),
        ActionKind.LAUNCH: Action.launch("x"),
        ActionKind.WAIT: Action.wait(),
        ActionKind.ANSWER: Action.answer("x"),
        ActionKind.FINISH: Action.finish("x"),
        ActionKind.CALL_USER: Action.call_user("x"),
    }
    for kind, action in samples.items():
        if kind in family.supported_kinds:
            family.format(action, geometry)
        else:
            with pytest.raises(ValueError):
                family.format(action, geometry)


# ---- fuzzing: nothing but ParseError ever escapes a parser ----------------------------------------------------


def _parse_or_parse_error(family: ModelFamily, text: str, geometry: Geometry, reasoning: str | None = None):
    try:
        return family.parse(text, geometry, reasoning=reasoning)
    except ParseError as exc:
        assert text in exc.reply  # the reply is kept for the record
        return None


@pytest.mark.parametrize("name", FAMILY_NAMES)
@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=300), reasoning=st.none() | st.text(max_size=40))
def test_arbitrary_text_only_raises_parse_error(name: str, text: str, reasoning: str | None) -> None:
    family = FAMILIES[name]
    assume(text.strip() or reasoning)
    _parse_or_parse_error(family, text, family.geometry(Size(1080, 2400)), reasoning)


FRAGMENTS = st.sampled_from(
    [
        "(", ")", "[", "]", "{", "}", "'", '"', ",", "=", "\\", "\n", "<think>", "</think>", "<action>",
        "</action>", "<answer>", "</answer>", "<tool_call>", "</tool_call>", "<|begin_of_box|>", "```",
        "Action:", "do(", "finish(", "1000", "-1", "1e999", "nan", "True", "None", "**x", "x=1", "[[[[[[[[",
    ]
)  # fmt: skip


@st.composite
def mutated(draw, reply: str) -> str:
    text = reply
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["delete", "insert", "replace", "truncate", "duplicate"]))
        at = draw(st.integers(0, max(0, len(text) - 1)))
        if op == "delete" and text:
            end = draw(st.integers(at, min(len(text), at + 5)))
            text = text[:at] + text[end:]
        elif op == "insert":
            text = text[:at] + draw(FRAGMENTS | st.text(max_size=3)) + text[at:]
        elif op == "replace" and text:
            text = text[:at] + draw(FRAGMENTS) + text[at + 1 :]
        elif op == "truncate":
            text = text[:at]
        else:
            text = text[:at] + text[at : at + 12] + text[at:]
    return text


@pytest.mark.parametrize("name", FAMILY_NAMES)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_near_miss_replies_only_raise_parse_error(name: str, data: st.DataObject) -> None:
    family = FAMILIES[name]
    geometry = data.draw(geometries(family))
    action = data.draw(expressible_actions(family, geometry))
    reply = family.format(action, geometry, thought=data.draw(THOUGHT))
    text = data.draw(mutated(reply))
    assume(text.strip())
    _parse_or_parse_error(family, text, geometry)


NORMALIZED_FAMILIES = [n for n in FAMILY_NAMES if FAMILIES[n].coordinate_space is CoordinateSpace.NORMALIZED]


@pytest.mark.parametrize("name", NORMALIZED_FAMILIES)
@pytest.mark.parametrize("bad", [(1000, 10), (10, 1000), (-1, 5), (5, 1500.0)])
def test_coordinate_outside_0_999_is_a_parse_error(name: str, bad: tuple[int, int]) -> None:
    family = FAMILIES[name]
    geometry = family.geometry(Size(1080, 2400))
    good = family.format(Action.tap(540, 1200), geometry)
    x, y = family.to_model(Point(540, 1200), geometry)
    text = good.replace(str(x), str(bad[0]), 1).replace(str(y), str(bad[1]), 1)
    with pytest.raises(ParseError, match="outside 0-999"):
        family.parse(text, geometry)


@pytest.mark.parametrize(
    "name", [n for n in FAMILY_NAMES if FAMILIES[n].coordinate_space is CoordinateSpace.THOUSANDTHS]
)
def test_thousandths_families_take_1000_as_the_far_edge(name: str) -> None:
    family = FAMILIES[name]
    geometry = family.geometry(Size(1080, 2400))
    text = family.format(Action.tap(540, 1200), geometry)
    x, y = family.to_model(Point(540, 1200), geometry)
    edge = text.replace(str(x), "1000", 1).replace(str(y), "1000", 1)
    assert family.parse(edge, geometry).action == Action.tap(1079, 2399)
    with pytest.raises(ParseError, match="outside 0-1000"):
        family.parse(edge.replace("1000", "1001", 1), geometry)


@pytest.mark.parametrize(
    "name", [n for n in FAMILY_NAMES if FAMILIES[n].coordinate_space is CoordinateSpace.IMAGE_PIXELS]
)
def test_pixel_families_refuse_points_beyond_the_image(name: str) -> None:
    family = FAMILIES[name]
    geometry = family.geometry(Size(1080, 2400))
    assert geometry.image == Size(672, 1484)
    inside = family.format(Action.tap(1079, 2399), geometry)
    assert family.parse(inside, geometry).action == Action.tap(1079, 2399)
    outside = inside.replace("671", "673").replace("1483", "1490")
    with pytest.raises(ParseError, match="outside the 672x1484 image"):
        family.parse(outside, geometry)


# ---- sequences: several actions in one reply come back in order, whatever the family ---------------------------

SEQUENCE_REPLY = {
    "venus": lambda family, geometry, actions: (
        "<think>t</think><action>" + ", ".join(family.format_call(a, geometry) for a in actions) + "</action>"
    ),
    "autoglm": lambda family, geometry, actions: (
        "<think>t</think><answer>" + "\n".join(family.format_call(a, geometry) for a in actions)
    ),
    "ui-tars": lambda family, geometry, actions: (
        "Thought: t\nAction: " + "\n\n".join(family.format_call(a, geometry) for a in actions)
    ),
    "qwen": lambda family, geometry, actions: "\n".join(family.format(a, geometry) for a in actions),
}


@pytest.mark.parametrize("name", FAMILY_NAMES)
@FAST
@given(data=st.data())
def test_several_actions_parse_in_order_up_to_the_first_that_ends(name: str, data: st.DataObject) -> None:
    family = FAMILIES[name]
    group = _group(family)
    writer = SEQUENCE_REPLY["venus" if group.startswith("ui-venus") else group]
    geometry = data.draw(geometries(family))
    actions = data.draw(st.lists(expressible_actions(family, geometry), min_size=2, max_size=4))
    reply = writer(family, geometry, actions)
    parsed = family.parse(reply, geometry)
    ends = [i for i, a in enumerate(actions) if a.is_terminal or a.kind is ActionKind.CALL_USER]
    expected = actions[: ends[0] + 1] if ends else actions
    assert list(parsed.actions) == expected, reply
