"""One task on one phone, end to end: the real adb server, adbutils, uiautomator2 and the OpenAI client against
simulated phones and the simulated model. Nothing in that stack is mocked."""

from __future__ import annotations

from pathlib import Path

import pytest

from mobile_agent.actions import ActionKind, Outcome
from mobile_agent.agent.config import AgentConfig
from mobile_agent.agent.runtime import run_task
from mobile_agent.gate.policy import parse_policy
from mobile_agent.sim.scenario import list_scenarios, load_scenario
from mobile_agent.sim.servers.model_server import SHIPPED_SCRIPTS, SimModelServer, load_scripts
from mobile_agent.store.store import TrajectoryStore

TEST_SCRIPTS = Path(__file__).parent / "run_scripts"
# The shipped scenarios send, order, pay and transfer on purpose; the safety gate would ask (and, with nobody to
# answer, pause) before each of those. These tests are about the rest of the stack, so exactly those are allowed.
SHIPPED_POLICY = parse_policy(
    allow=["send@com.tencent.mm", "order@com.sankuai.meituan", "pay@com.sankuai.meituan"]
    + ["transfer@com.eg.android.AlipayGphone"]
)


def _scripted_scenarios() -> list[str]:
    scripted = {s.scenario for s in load_scripts([SHIPPED_SCRIPTS]) if s.scenario}
    return [name for name in list_scenarios() if name in scripted]


@pytest.fixture
def store(tmp_path):
    with TrajectoryStore.open(root=tmp_path / "replays") as s:
        yield s


def _run(farm, server, store, task, family="ui-venus-2", **kw):
    return run_task(
        task,
        device=farm.serials[0],
        adb=f"127.0.0.1:{farm.adb_port}",
        base_url=server.base_url,
        model=server.model_name,
        family=family,
        store=store,
        safety=kw.pop("safety", SHIPPED_POLICY),
        **kw,
    )


def test_every_shipped_scenario_has_a_script():
    assert set(_scripted_scenarios()) == set(list_scenarios())


@pytest.mark.parametrize("family", ["ui-venus-2", "autoglm"])
@pytest.mark.parametrize("scenario", _scripted_scenarios())
def test_shipped_scenarios_complete(sim_farm, store, family, scenario):
    spec = load_scenario(scenario)
    farm = sim_farm(1, scenario=scenario)
    with SimModelServer(family=family, model_name="sim") as server:
        result = _run(farm, server, store, spec.task, family=family)
    assert result.outcome == spec.expect_outcome, result.detail
    check = spec.check(farm.phones[farm.serials[0]])
    if scenario.endswith("_partial"):  # built to end partially: the agent finishes, the phone says otherwise
        assert not check.ok and 0 < check.passed < check.total, check.detail
    elif spec.expect_outcome == "finished":
        assert check.ok, check.detail
    assert store.check_integrity() == []
    steps = store.steps(result.episode_id)
    assert len(steps) == result.steps
    assert all(s.screenshot_path for s in steps)


def test_http_errors_malformed_replies_and_bad_coordinates_are_retried(sim_farm, store):
    farm = sim_farm(1, scenario="wechat_send")
    with SimModelServer(family="ui-venus-2", scripts=[TEST_SCRIPTS], model_name="sim") as server:
        result = _run(farm, server, store, "重试测试：给张三发微信说晚上好")
    assert result.outcome == Outcome.FINISHED, result.detail
    steps = store.steps(result.episode_id)
    failed = [s for s in steps if s.error_kind]
    # An unknown verb and a coordinate of 1000 are recorded as failed steps, never acted on, never a finish.
    assert [s.error_kind for s in failed] == ["parse", "parse"]
    assert "Clik" in failed[0].raw_reply and "1000" in failed[1].raw_reply
    assert all(s.action is None for s in failed)
    assert any("1000" in (s.error_text or "") or "range" in (s.error_text or "") for s in failed)
    phone = farm.phones[farm.serials[0]]
    assert [m["text"] for m in phone.state.messages_sent] == ["晚上好"]
    # The HTTP errors were retried by the client, so the first recorded step is the launch.
    assert steps[0].action.kind is ActionKind.LAUNCH
    codes = [r.status for r in server.requests]
    assert codes[:3] == [503, 500, 200]


def test_unparseable_replies_end_as_parse_error_not_finish(sim_farm, store):
    farm = sim_farm(1, scenario="wechat_send")
    with SimModelServer(family="ui-venus-2", scripts=[TEST_SCRIPTS], model_name="sim") as server:
        result = _run(farm, server, store, "乱码测试：打开微信", config=AgentConfig(max_parse_retries=3))
    assert result.outcome == "error:parse"
    steps = store.steps(result.episode_id)
    assert len(steps) == 4 and all(s.error_kind == "parse" and s.action is None for s in steps)
    assert store.episode(result.episode_id).outcome == "error:parse"


def test_typed_text_arrives_verbatim_and_nothing_runs(sim_farm, store):
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]
    with SimModelServer(family="ui-venus-2", scripts=[TEST_SCRIPTS], model_name="sim") as server:
        result = _run(farm, server, store, "注入测试：给张三发一段奇怪的文字")
    assert result.outcome == Outcome.FINISHED, result.detail
    expected = (
        'it\'s "quoted" $(touch /sdcard/pwned); rm -rf / `id` && echo hi || true\nline2 😀 晚上好 %s ${HOME}'
    )
    assert [m["text"] for m in phone.state.messages_sent] == [expected]
    assert not phone.fs.exists("/sdcard/pwned")
    # No shell command line the phone received carries the text or its pieces.
    assert not any("pwned" in line or "rm -rf" in line for line in phone.shell_log)


def test_phone_going_offline_ends_as_device_lost_with_steps_intact(sim_farm, store):
    farm = sim_farm(1, scenario="wechat_send")
    serial = farm.serials[0]

    def drop_after_second_step(event):
        if event.index == 1:
            farm.drop(serial, 60)

    with SimModelServer(family="ui-venus-2", scripts=[TEST_SCRIPTS], model_name="sim") as server:
        config = AgentConfig(reconnect_wait_s=1)  # gone for 60 s: not back within the bound
        result = _run(
            farm, server, store, "长任务测试：在微信里来回翻", on_step=drop_after_second_step, config=config
        )
    assert result.outcome == "error:device_lost", result.detail
    steps = store.steps(result.episode_id)
    assert [s.index for s in steps] == [0, 1]
    assert all(s.error_kind is None for s in steps)
    assert store.check_integrity() == []


def test_interrupt_marks_the_episode_and_keeps_the_store_consistent(sim_farm, store):
    farm = sim_farm(1, scenario="wechat_send")

    def interrupt_at_third_step(event):
        if event.index == 2:
            raise KeyboardInterrupt

    with SimModelServer(family="ui-venus-2", scripts=[TEST_SCRIPTS], model_name="sim") as server:
        with pytest.raises(KeyboardInterrupt):
            _run(farm, server, store, "长任务测试：在微信里来回翻", on_step=interrupt_at_third_step)
    (episode,) = store.list_episodes(limit=1)
    assert episode.outcome == Outcome.INTERRUPTED
    assert [s.index for s in store.steps(episode.id)] == [0, 1, 2]
    assert store.check_integrity() == []


def test_max_steps_bound(sim_farm, store):
    farm = sim_farm(1, scenario="wechat_send")
    with SimModelServer(family="ui-venus-2", scripts=[TEST_SCRIPTS], model_name="sim") as server:
        result = _run(farm, server, store, "长任务测试：在微信里来回翻", config=AgentConfig(max_steps=3))
    assert result.outcome == Outcome.MAX_STEPS
    assert len(store.steps(result.episode_id)) == 3


@pytest.mark.parametrize("scenario", ["wechat_send_splash", "meituan_update"])
def test_popups_are_dismissed_by_rules_and_the_reply_about_them_is_not_used(sim_farm, store, scenario):
    spec = load_scenario(scenario)
    farm = sim_farm(1, scenario=scenario)
    with SimModelServer(family="ui-venus-2", model_name="sim") as server:
        result = _run(farm, server, store, spec.task)
        chat_requests = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert result.outcome == Outcome.FINISHED, result.detail
    steps = store.steps(result.episode_id)
    rule_steps = [s for s in steps if s.action_source == "rule"]
    assert rule_steps, "the popup was not handled by a rule"
    assert all(s.raw_reply is None and s.hierarchy_path for s in rule_steps)
    # The model is asked as soon as a frame is in, while its view tree is read: the reply about a popup's frame
    # goes unused (the rule acts), and the next request says so, so the scripted model serves that turn again.
    turns = [r.turn for r in chat_requests]
    assert len(set(turns)) == len([s for s in steps if s.action_source == "model"])
    assert len(turns) - len(set(turns)) == len(rule_steps)
    phone = farm.phones[farm.serials[0]]
    assert phone.state.popups_dismissed, "the simulated phone saw no popup dismissed"


def test_injected_input_refused_by_the_phone_is_a_clear_error(sim_farm, store):
    farm = sim_farm(1, scenario="wechat_send")
    farm.phones[farm.serials[0]].faults.input_security_exception = True
    with SimModelServer(family="ui-venus-2", scripts=[TEST_SCRIPTS], model_name="sim") as server:
        result = _run(farm, server, store, "长任务测试：在微信里来回翻")
    assert result.outcome == "error:input_blocked", result.detail
    assert "USB debugging (Security settings)" in result.detail
    assert store.check_integrity() == []


def test_another_tool_holding_uiautomation_is_a_clear_error(sim_farm, store):
    farm = sim_farm(1, scenario="wechat_send")
    farm.phones[farm.serials[0]].faults.u2_already_registered = True
    with SimModelServer(family="ui-venus-2", scripts=[TEST_SCRIPTS], model_name="sim") as server:
        result = _run(farm, server, store, "长任务测试：在微信里来回翻")
    assert result.outcome == "error:u2_already_registered", result.detail
    assert "Appium" in result.detail


def test_several_actions_in_one_reply_run_in_order_each_through_the_gate(sim_farm, store):
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]
    with SimModelServer(family="ui-venus-2", scripts=[TEST_SCRIPTS], model_name="sim") as server:
        result = _run(farm, server, store, "连续动作测试：给张三发微信说晚上好")
        answered = [r for r in server.requests if r.status == 200]
    assert result.outcome == Outcome.FINISHED, result.detail
    assert [m["text"] for m in phone.state.messages_sent] == ["晚上好"]
    steps = store.steps(result.episode_id)
    kinds = [s.action.kind for s in steps]
    assert kinds[:5] == [ActionKind.LAUNCH, ActionKind.TAP, ActionKind.TAP, ActionKind.TYPE, ActionKind.TAP]
    assert kinds[5:] == [ActionKind.FINISH]
    assert len(answered) == 4  # one request per reply, none for the follow-ups
    follow_ups = [steps[2], steps[4]]
    assert all(s.raw_reply is None and s.error_kind is None for s in follow_ups)
    assert steps[2].thought == "action 2 of 2 in the reply of step 1"
    assert steps[4].thought == "action 2 of 2 in the reply of step 3"
    assert steps[4].guard_decisions  # the send tap was reviewed by the gate (and allowed by the policy)


def test_a_follow_up_the_gate_stops_is_not_performed(sim_farm, store):
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]
    with SimModelServer(family="ui-venus-2", scripts=[TEST_SCRIPTS], model_name="sim") as server:
        result = _run(farm, server, store, "连续动作测试：给张三发微信说晚上好", safety=parse_policy())
    assert (
        phone.state.messages_sent == []
    )  # the send tap was the second action of a reply: held like any other
    steps = store.steps(result.episode_id)
    assert steps[-1].thought == "action 2 of 2 in the reply of step 3"
    assert result.outcome != Outcome.FINISHED
