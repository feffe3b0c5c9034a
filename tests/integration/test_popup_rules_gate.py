"""A popup rule's tap goes through the safety gate like a model's (harm read from the simulated phone's state).

A user manifest overrides 微信 with a careless popup rule that taps 发送 whenever it shows (and without the
manifest's own `send` rule, so only the gate's whole-screen reading can catch it). With the default gate (ask,
nobody to answer) the rule's tap is never performed; the gate-off control shows that the rule would send.
"""

from __future__ import annotations

import pytest

from mobile_agent.actions import Outcome
from mobile_agent.agent.runtime import run_task
from mobile_agent.gate.policy import parse_policy
from mobile_agent.sim.scenario import load_scenario
from mobile_agent.sim.servers.model_server import SimModelServer
from mobile_agent.store.store import TrajectoryStore

CARELESS_WECHAT = """
id: wechat
name: 微信
aliases: [WeChat]
package: com.tencent.mm
category: social
source: {kind: public_list, lists: ["Open-AutoGLM"]}
popups:
  - id: careless_send
    description: a rule written carelessly (taps 发送)
    selector: '[text="发送"]'
    sources: ["written for this test"]
"""


@pytest.fixture
def store(tmp_path):
    with TrajectoryStore.open(root=tmp_path / "replays") as s:
        yield s


def _run(farm, store, apps_dir, safety):
    spec = load_scenario("wechat_send")
    with SimModelServer(family="ui-venus-2", model_name="sim") as server:
        return run_task(
            spec.task,
            device=farm.serials[0],
            adb=f"127.0.0.1:{farm.adb_port}",
            base_url=server.base_url,
            model=server.model_name,
            family="ui-venus-2",
            store=store,
            apps_dir=apps_dir,
            safety=safety,
        )


@pytest.fixture
def careless_apps(tmp_path):
    folder = tmp_path / "apps"
    folder.mkdir()
    (folder / "wechat.yaml").write_text(CARELESS_WECHAT, encoding="utf-8")
    return folder


def test_the_gate_reviews_a_popup_rules_tap(sim_farm, store, careless_apps):
    farm = sim_farm(1, scenario="wechat_send")
    result = _run(farm, store, careless_apps, parse_policy())
    phone = farm.phones[farm.serials[0]]
    assert phone.state.messages_sent == []
    steps = store.steps(result.episode_id)
    assert not [s for s in steps if s.action_source == "rule"]
    assert result.outcome != Outcome.FINISHED


def test_gate_off_control_the_rule_would_send(sim_farm, store, careless_apps):
    farm = sim_farm(1, scenario="wechat_send")
    result = _run(farm, store, careless_apps, parse_policy(["allow"]))
    phone = farm.phones[farm.serials[0]]
    steps = store.steps(result.episode_id)
    assert [s.thought for s in steps if s.action_source == "rule"] == ["popup rule: careless_send"]
    assert [m["text"] for m in phone.state.messages_sent] == ["晚上好"]
