import pytest
from hypothesis import given
from hypothesis import strategies as st

from mobile_agent.actions import Action, ActionKind, Key, Outcome, Point

coord = st.integers(min_value=0, max_value=5000)
text = st.text(max_size=40)

actions = st.one_of(
    st.builds(Action.tap, coord, coord),
    st.builds(Action.double_tap, coord, coord),
    st.builds(Action.long_press, coord, coord, st.none() | st.integers(1, 5000)),
    st.builds(Action.swipe, coord, coord, coord, coord, st.none() | st.integers(1, 5000)),
    st.builds(Action.drag, coord, coord, coord, coord),
    st.builds(Action.type, text),
    st.builds(Action.press, st.sampled_from(list(Key))),
    st.builds(Action.launch, text.filter(bool)),
    st.builds(Action.wait, st.none() | st.integers(0, 10000)),
    st.builds(Action.answer, text),
    st.builds(Action.finish, st.none() | text),
    st.builds(Action.call_user, text),
)


@given(actions)
def test_json_round_trip(action):
    assert Action.from_json(action.to_json()) == action


@given(actions)
def test_describe_never_fails(action):
    assert action.describe()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kind": ActionKind.TAP},
        {"kind": ActionKind.SWIPE, "point": Point(1, 2)},
        {"kind": ActionKind.TYPE},
        {"kind": ActionKind.KEY},
        {"kind": ActionKind.LAUNCH, "app": ""},
    ],
)
def test_incomplete_actions_are_rejected(kwargs):
    with pytest.raises(ValueError):
        Action(**kwargs)


@pytest.mark.parametrize(
    "bad", [{}, {"kind": "fly"}, {"kind": "tap", "point": [1]}, {"kind": "key", "key": "menu"}]
)
def test_bad_records_raise_value_error(bad):
    with pytest.raises(ValueError):
        Action.from_dict(bad)


def test_outcomes():
    assert Outcome.FINISHED == "finished"
    assert Outcome.error("device_lost") == "error:device_lost"
    assert Outcome.error("parse").is_error
    assert Outcome.ANSWERED.ended_by_agent and not Outcome.NEEDS_USER.ended_by_agent
    with pytest.raises(ValueError):
        Outcome("partial")
    with pytest.raises(ValueError):
        Outcome("error:")
