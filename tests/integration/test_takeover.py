"""Human take-over through the real stack: an episode pauses (needs_user, phone reserved), a person acts or answers,
and resume continues the same episode with the person's step in the trajectory."""

from __future__ import annotations

import re

import pytest

from mobile_agent.actions import Action, Outcome
from mobile_agent.agent.runtime import resume_episode, run_task
from mobile_agent.errors import UserError
from mobile_agent.gate.policy import SafetyPolicy, parse_policy
from mobile_agent.sim.farm import SimFarm
from mobile_agent.sim.scenario import load_scenario, make_scenario
from mobile_agent.sim.servers.model_server import Script, SimModelServer, Turn
from mobile_agent.sim.world.popups import CAPTCHA_TARGET
from mobile_agent.store.pauses import is_reserved, open_pause, pauses
from mobile_agent.store.store import TrajectoryStore

ALLOW_SEND = parse_policy(allow=["send@com.tencent.mm"])
CALL_TASK = "问一下用户要给谁发晚上好"
CAPTCHA_TASK = "过了验证再看张三的消息"
SCRIPTS = [
    Script(
        CALL_TASK,
        (
            Turn(Action.launch("微信")),
            Turn(Action.call_user("要给谁发“晚上好”？")),
            Turn(Action.tap(481, 122)),
            Turn(Action.tap(454, 949)),
            Turn(Action.type("晚上好")),
            Turn(Action.tap(894, 949)),
            Turn(Action.finish("已发送")),
        ),
    ),
    Script(
        CAPTCHA_TASK, (Turn(Action.launch("微信")), Turn(Action.tap(481, 122)), Turn(Action.finish("看完了")))
    ),
]


@pytest.fixture(scope="module")
def farm(adb_server):
    farm = SimFarm(1, adb_port=adb_server.port).start()
    yield farm
    farm.stop()


@pytest.fixture(scope="module")
def server():
    from mobile_agent.sim.servers.model_server import SHIPPED_SCRIPTS, load_scripts

    with SimModelServer(
        family="ui-venus-2", scripts=[*load_scripts([SHIPPED_SCRIPTS]), *SCRIPTS], model_name="sim"
    ) as s:
        yield s


@pytest.fixture
def store(tmp_path):
    with TrajectoryStore.open(root=tmp_path / "replays") as s:
        yield s


def _start(farm, server, store, scenario, task=None, safety=None, user=None):
    serial = farm.serials[0]
    phone = farm.phones[serial]
    spec = load_scenario(scenario) if isinstance(scenario, str) else scenario
    phone.apply_scenario(spec)
    result = run_task(
        task or spec.task,
        device=serial,
        adb=f"127.0.0.1:{farm.adb_port}",
        base_url=server.base_url,
        model=server.model_name,
        family="ui-venus-2",
        store=store,
        safety=safety,
        user=user,
    )
    return phone, result


def _resume(farm, store, episode, reply=None):
    return resume_episode(episode, reply=reply, store=store, adb=f"127.0.0.1:{farm.adb_port}")


def test_confirmation_pauses_and_resume_yes_continues_the_same_episode(farm, server, store):
    phone, paused = _start(farm, server, store, "wechat_send")
    assert paused.outcome == Outcome.NEEDS_USER and "resume" in paused.detail
    assert phone.state.messages_sent == []
    pause = open_pause(store, paused.episode_id)
    assert pause.kind == "confirm" and pause.pending_action.kind.value == "tap"
    assert is_reserved(store, farm.serials[0]) is not None
    assert store.steps(paused.episode_id)[-1].screenshot_path  # the screen the person was asked about

    result = _resume(farm, store, paused.episode_id[:6], reply="yes")
    assert result.episode_id == paused.episode_id
    assert result.outcome == Outcome.FINISHED, result.detail
    assert [m["text"] for m in phone.state.messages_sent] == ["晚上好"]
    steps = store.steps(result.episode_id)
    assert [s.index for s in steps] == list(range(len(steps)))
    human = [s for s in steps if str(s.action_source) == "human"]
    assert len(human) == 1 and human[0].action is not None  # the approved send, done on the person's word
    assert {"guard": "human", "verdict": "allow", "reason": "yes", "kind": "send"} in human[0].guard_decisions
    assert human[0].screenshot_path and steps[human[0].index + 1].screenshot_path  # screens before and after
    assert open_pause(store, result.episode_id) is None and is_reserved(store, farm.serials[0]) is None
    assert store.episode(result.episode_id).outcome == Outcome.FINISHED
    assert store.check_integrity() == []


def test_resume_no_ends_blocked_and_nothing_is_sent(farm, server, store):
    phone, paused = _start(farm, server, store, "wechat_send")
    with pytest.raises(UserError, match="yes or no"):
        _resume(farm, store, paused.episode_id, reply="maybe")
    assert open_pause(store, paused.episode_id) is not None  # still paused after a bad reply
    result = _resume(farm, store, paused.episode_id, reply="no")
    assert result.outcome == Outcome.BLOCKED
    assert phone.state.messages_sent == []
    last = store.steps(result.episode_id)[-1]
    assert str(last.action_source) == "human" and last.guard_decisions[0]["verdict"] == "block"
    with pytest.raises(UserError, match="not waiting for a person"):
        _resume(farm, store, paused.episode_id, reply="yes")


def test_call_user_reply_reaches_the_model(farm, server, store):
    phone, paused = _start(farm, server, store, "wechat_send", task=CALL_TASK, safety=ALLOW_SEND)
    assert paused.outcome == Outcome.NEEDS_USER
    assert open_pause(store, paused.episode_id).kind == "call_user"
    result = _resume(farm, store, paused.episode_id, reply="张三")
    assert result.outcome == Outcome.FINISHED, result.detail
    assert [(m["contact"], m["text"]) for m in phone.state.messages_sent] == [("张三", "晚上好")]
    human = [s for s in store.steps(result.episode_id) if str(s.action_source) == "human"]
    assert len(human) == 1 and "张三" in human[0].thought
    after = [r for r in server.requests if r.episode == result.episode_id][2]
    assert "The user replied: 张三" in str(after.messages)


def test_interactive_yes_goes_through_without_a_pause(farm, server, store):
    class Yes:
        def __init__(self):
            self.questions = []

        def ask(self, question):
            self.questions.append(question)
            return "yes"  # a single key declines: a person types the word

    user = Yes()
    phone, result = _start(farm, server, store, "wechat_send", user=user, safety=SafetyPolicy())
    assert result.outcome == Outcome.FINISHED
    assert [m["text"] for m in phone.state.messages_sent] == ["晚上好"]
    (question,) = user.questions
    assert "SEND" in question and "'发送'" in question and re.search(r"screen:\s+\S+\.jpg", question)
    shot = re.search(r"screen:\s+(\S+\.jpg)", question).group(1)
    assert (store.root / result.episode_id).as_posix() in shot
    assert pauses(store, result.episode_id) == []


def _solve_captcha(phone):
    xml = phone.hierarchy_xml()

    def bounds(rid):
        node = re.search(rf'resource-id="[^"]*{rid}"[^>]*bounds="\[(\d+),(\d+)\]\[(\d+),(\d+)\]"', xml)
        return tuple(map(int, node.groups()))

    left, top, right, bottom = bounds("captcha_slider")
    t_left, _, t_right, _ = bounds("captcha_track")
    x, y = (left + right) // 2, (top + bottom) // 2
    phone.drag(x, y, x + round((t_right - t_left) * CAPTCHA_TARGET), y, 300)


def test_captcha_pauses_without_asking_the_model_and_the_person_solves_it(farm, server, store):
    scenario = make_scenario(
        name="captcha_wall",
        task=CAPTCHA_TASK,
        popups={"com.tencent.mm": ["captcha"]},
        check=["screen == chat"],
    )
    phone, paused = _start(farm, server, store, scenario)
    assert paused.outcome == Outcome.NEEDS_USER
    assert open_pause(store, paused.episode_id).kind == "captcha"
    last = store.steps(paused.episode_id)[-1]
    assert str(last.action_source) == "rule" and last.raw_reply is None  # the model was not asked
    assert phone.screen()[1] == "popup:captcha"

    _solve_captcha(phone)  # the person, on the phone
    assert phone.screen()[1] != "popup:captcha"
    result = _resume(farm, store, paused.episode_id)
    assert result.outcome == Outcome.FINISHED, result.detail
    assert scenario.check(phone).ok
    human = [s for s in store.steps(result.episode_id) if str(s.action_source) == "human"]
    assert len(human) == 1 and human[0].action is None and human[0].screenshot_path
    assert {"popup": "captcha", "how": "solved", "package": "com.tencent.mm"} in phone.state.popups_dismissed
