"""Loops through the real stack: a scripted model that repeats an action with no visible effect gets a hint in its
next prompt, then the episode ends as ``loop``; one that changes course after the hint finishes; going back and forth
between two screens is caught too."""

from __future__ import annotations

import pytest

from mobile_agent.actions import Action, Outcome
from mobile_agent.agent.loops import NO_EFFECT_HINT, OSCILLATION_HINT
from mobile_agent.agent.runtime import run_task
from mobile_agent.sim.servers.model_server import Script, SimModelServer, Turn
from mobile_agent.store.store import TrajectoryStore

TITLE = Action.tap(300, 70)  # the chat list's title: not clickable, nothing happens
ROW = Action.tap(481, 122)  # the first chat
BACK = Action.press("back")
SCRIPTS = [
    Script("一直点标题", (Turn(Action.launch("微信")), *[Turn(TITLE)] * 8, Turn(Action.finish("done")))),
    Script(
        "点几下标题再打开张三",
        (Turn(Action.launch("微信")), *[Turn(TITLE)] * 3, Turn(ROW), Turn(Action.finish("opened"))),
    ),
    Script(
        "来回打开张三", (Turn(Action.launch("微信")), *[Turn(ROW), Turn(BACK)] * 5, Turn(Action.finish("x")))
    ),
]


@pytest.fixture(scope="module")
def farm(adb_server):
    from mobile_agent.sim.farm import SimFarm

    farm = SimFarm(1, adb_port=adb_server.port, scenario="wechat_send").start()
    yield farm
    farm.stop()


@pytest.fixture(scope="module")
def server():
    with SimModelServer(family="ui-venus-2", scripts=SCRIPTS, model_name="sim") as s:
        yield s


@pytest.fixture
def store(tmp_path):
    with TrajectoryStore.open(root=tmp_path / "replays") as s:
        yield s


def _run(farm, server, store, task):
    farm.phones[farm.serials[0]].apply_scenario("wechat_send")
    return run_task(
        task,
        device=farm.serials[0],
        adb=f"127.0.0.1:{farm.adb_port}",
        base_url=server.base_url,
        model=server.model_name,
        family="ui-venus-2",
        store=store,
    )


def _prompts(server, episode_id):
    return [str(r.messages) for r in server.requests if r.episode == episode_id]


def test_repeating_model_gets_the_hint_then_ends_as_loop(farm, server, store):
    result = _run(farm, server, store, "一直点标题")
    assert result.outcome == Outcome.LOOP, result.detail
    steps = store.steps(result.episode_id)
    # launch, three ineffective taps, then the prompt with the hint, and the same tap again ends it.
    assert len(steps) == 5
    hint = NO_EFFECT_HINT.format(n=3)
    assert {"guard": "loop", "verdict": "hint", "reason": hint, "kind": "loop"} in steps[4].guard_decisions
    assert steps[4].guard_decisions[-1]["verdict"] == "block"
    prompts = _prompts(server, result.episode_id)
    assert hint in prompts[4] and not any(hint in p for p in prompts[:4])


def test_model_that_changes_course_after_the_hint_finishes(farm, server, store):
    result = _run(farm, server, store, "点几下标题再打开张三")
    assert result.outcome == Outcome.FINISHED, result.detail
    assert NO_EFFECT_HINT.format(n=3) in _prompts(server, result.episode_id)[4]
    assert farm.phones[farm.serials[0]].screen()[1] == "chat"


def test_oscillation_between_two_screens_is_caught(farm, server, store):
    result = _run(farm, server, store, "来回打开张三")
    assert result.outcome == Outcome.LOOP, result.detail
    assert "back and forth" in result.detail
    prompts = _prompts(server, result.episode_id)
    assert any(OSCILLATION_HINT.format(n=2) in p for p in prompts)
