"""Rules imported from a GKD subscription, through the real stack: their taps go through the safety gate like a
model's, and a functional group acts only when it is named.

A subscription in the apps folder carries a careless rule that taps 发送 on the simulated WeChat chat: once in a
dismissal group (全屏广告-…), once in a functional one (功能类-…), both switched on by the file. The folder also
overrides the 微信 manifest with one that marks nothing consequential (the shipped one's `send` rule would stop the
tap before the gate), so only the gate's whole-screen reading can catch it. With the default
gate (ask, nobody to answer) the dismissal rule's tap is never performed; with the gate off it sends (the control).
The functional rule never acts, even with the gate off, until --popup-categories (the popup_categories setting)
names 功能类.
"""

from __future__ import annotations

import json

import pytest
from test_popup_rules_gate import _run

from mobile_agent.apps.gkd_intent import CATEGORIES_ENV
from mobile_agent.gate.policy import parse_policy
from mobile_agent.store.store import TrajectoryStore

PLAIN_WECHAT = """
id: wechat
name: 微信
aliases: [WeChat]
package: com.tencent.mm
category: social
source: {kind: public_list, lists: ["Open-AutoGLM"]}
"""


def _subscription(group_name: str) -> str:
    return json.dumps(
        {
            "id": 900418,
            "name": "careless test subscription",
            "version": 1,
            "categories": [{"key": 9, "name": "功能类", "enable": True}],
            "apps": [
                {
                    "id": "com.tencent.mm",
                    "groups": [{"key": 1, "name": group_name, "enable": True, "rules": '[text="发送"]'}],
                }
            ],
        },
        ensure_ascii=False,
    )


@pytest.fixture
def store(tmp_path):
    with TrajectoryStore.open(root=tmp_path / "replays") as s:
        yield s


def _apps_with(tmp_path, group_name: str):
    folder = tmp_path / "apps"
    folder.mkdir()
    (folder / "careless.json5").write_text(_subscription(group_name), encoding="utf-8")
    (folder / "wechat.yaml").write_text(PLAIN_WECHAT, encoding="utf-8")
    return folder


def _rule_steps(store, result) -> list[str]:
    return [s.thought for s in store.steps(result.episode_id) if s.action_source == "rule"]


@pytest.fixture(autouse=True)
def _no_named_categories(monkeypatch):
    monkeypatch.delenv(CATEGORIES_ENV, raising=False)


def test_the_gate_reviews_an_imported_rules_tap(sim_farm, store, tmp_path):
    farm = sim_farm(1, scenario="wechat_send")
    result = _run(farm, store, _apps_with(tmp_path, "全屏广告-发送"), parse_policy())
    assert farm.phones[farm.serials[0]].state.messages_sent == []
    assert _rule_steps(store, result) == []


def test_gate_off_control_the_imported_rule_would_send(sim_farm, store, tmp_path):
    farm = sim_farm(1, scenario="wechat_send")
    result = _run(farm, store, _apps_with(tmp_path, "全屏广告-发送"), parse_policy(["allow"]))
    assert _rule_steps(store, result) == ["popup rule: gkd/com.tencent.mm/1/0"]
    assert [m["text"] for m in farm.phones[farm.serials[0]].state.messages_sent] == ["晚上好"]


def test_a_functional_group_acts_only_when_named(sim_farm, store, tmp_path, monkeypatch):
    apps = _apps_with(tmp_path, "功能类-自动发送")
    farm = sim_farm(1, scenario="wechat_send")
    result = _run(farm, store, apps, parse_policy(["allow"]))
    assert _rule_steps(store, result) == []  # switched on by the file, and still held back
    monkeypatch.setenv(CATEGORIES_ENV, "功能类")
    named_farm = sim_farm(1, scenario="wechat_send")
    named = _run(named_farm, store, apps, parse_policy(["allow"]))
    assert _rule_steps(store, named) == ["popup rule: gkd/com.tencent.mm/1/0"]
