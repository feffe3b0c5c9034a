"""The critic inside the episode loop, through the real stack: simulated phone, simulated model, scripted judge."""

from __future__ import annotations

from pathlib import Path

import pytest

from mobile_agent.actions import ActionKind
from mobile_agent.agent.runtime import run_task
from mobile_agent.gate.policy import parse_policy
from mobile_agent.model.client import ModelClient
from mobile_agent.sim.farm import free_port
from mobile_agent.sim.servers.judge_server import JudgeScript, ScriptedJudgeServer
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store.store import TrajectoryStore
from mobile_agent.verify.labels import Critic

SCRIPTS = Path(__file__).parent / "critic_scripts"
TASK = "评审测试：给张三发微信说晚上好"


@pytest.fixture
def store(tmp_path):
    with TrajectoryStore.open(root=tmp_path / "replays") as s:
        yield s


def _run(farm, model, store, critic):
    return run_task(
        TASK,
        device=farm.serials[0],
        adb=f"127.0.0.1:{farm.adb_port}",
        base_url=model.base_url,
        model="sim",
        store=store,
        safety=parse_policy(allow=["send@com.tencent.mm"]),
        critic=critic,
    )


def test_a_wrong_proposal_is_re_asked_and_never_performed(sim_farm, store):
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]
    script = JudgeScript(labels={"launch(支付宝)": "wrong"})
    with SimModelServer(scripts=[SCRIPTS], model_name="sim") as model, ScriptedJudgeServer(script) as judge:
        critic = Critic(ModelClient([judge.base_url], "judge"), max_reasks=2)
        result = _run(farm, model, store, critic)
    assert result.outcome == "finished", result.detail
    assert [m["text"] for m in phone.state.messages_sent] == ["晚上好"]
    launched = [e.detail["package"] for e in phone.events if e.kind == "launch"]
    assert "com.tencent.mm" in launched and "com.eg.android.AlipayGphone" not in launched
    first = store.steps(result.episode_id)[0]
    assert first.action.kind is ActionKind.LAUNCH and first.action.app == "微信"
    critic_labels = [d["reason"].split(":")[0] for d in first.guard_decisions if d["guard"] == "critic"]
    assert critic_labels == ["wrong", "correct"]


def test_an_unreachable_fail_closed_critic_stops_the_episode_before_any_action(sim_farm, store):
    farm = sim_farm(1, scenario="wechat_send")
    phone = farm.phones[farm.serials[0]]
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with SimModelServer(scripts=[SCRIPTS], model_name="sim") as model:
        critic = Critic(ModelClient([dead], "judge", max_retries=0, timeout=2), fail_closed=True)
        result = _run(farm, model, store, critic)
    assert result.outcome == "error:critic_unavailable"
    assert phone.current()[0] != "com.tencent.mm"  # nothing was launched
    assert store.steps(result.episode_id) == []
