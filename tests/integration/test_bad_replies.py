"""Replies no endpoint should send, through the real OpenAI client and a simulated phone: bytes that are not UTF-8,
token counts beyond any integer column, and replies of megabytes (over the body cap: refused unread; under it: truncated in the store). Each ends or continues the episode cleanly and is
stored within the store's limits."""

from __future__ import annotations

import pytest

from mobile_agent.actions import Action
from mobile_agent.agent.runtime import run_task
from mobile_agent.gate.policy import parse_policy
from mobile_agent.sim.servers.model_server import Script, SimModelServer, Turn
from mobile_agent.store.convert import MAX_STORED_COUNT, MAX_STORED_TEXT
from mobile_agent.store.store import TrajectoryStore

TASK = "坏回复测试：打开微信"
POLICY = parse_policy(allow=["send@com.tencent.mm"])


@pytest.fixture
def store(tmp_path):
    with TrajectoryStore.open(root=tmp_path / "replays") as s:
        yield s


def _run(farm, server, store):
    return run_task(
        TASK,
        device=farm.serials[0],
        adb=f"127.0.0.1:{farm.adb_port}",
        base_url=server.base_url,
        model="sim",
        store=store,
        safety=POLICY,
    )


def _server(*turns: Turn) -> SimModelServer:
    return SimModelServer(family="ui-venus-2", scripts=[Script(task=TASK, turns=turns)], model_name="sim")


def test_a_reply_that_is_not_utf8_ends_the_episode_with_a_recorded_error(sim_farm, store):
    farm = sim_farm(1, scenario="wechat_send")
    with _server(Turn(action=Action.launch("com.tencent.mm"))) as server:
        server.bad_utf8_replies = True
        result = _run(farm, server, store)
    assert result.outcome == "error:model" and "not a JSON chat completion" in (result.detail or ""), result
    episode = store.episode(result.episode_id)
    assert episode.status == "ended" and "internal" not in str(episode.outcome), episode
    assert store.check_integrity() == []


def test_token_counts_above_2_63_are_clamped_in_the_store(sim_farm, store):
    farm = sim_farm(1, scenario="wechat_send")
    turns = (Turn(action=Action.launch("com.tencent.mm")), Turn(action=Action.finish("done")))
    with _server(*turns) as server:
        server.usage_override = {
            "prompt_tokens": 2**64 + 5,
            "completion_tokens": 2**70,
            "total_tokens": 2**71,
        }
        result = _run(farm, server, store)
    assert result.outcome == "finished", result.detail
    steps = store.steps(result.episode_id)
    assert steps and all(s.prompt_tokens == MAX_STORED_COUNT for s in steps)


def test_a_reply_over_the_body_cap_is_refused_unread_and_the_episode_ends_cleanly(sim_farm, store):
    farm = sim_farm(1, scenario="wechat_send")
    huge = "想" * 2_000_000  # 6 MB of UTF-8, over the client's 2 MiB cap on a reply body
    turns = (Turn(action=Action.launch("com.tencent.mm"), think=huge), Turn(action=Action.finish("done")))
    with _server(*turns) as server:
        result = _run(farm, server, store)
    assert result.outcome == "error:model" and "refused unread" in (result.detail or ""), result
    assert "\n" not in (result.detail or "")
    episode = store.episode(result.episode_id)
    assert episode.status == "ended" and store.check_integrity() == []


def test_a_reply_of_a_megabyte_is_truncated_in_the_store_with_a_note(sim_farm, store):
    farm = sim_farm(1, scenario="wechat_send")
    huge = "想" * 500_000  # 1.5 MB: under the body cap, over what the store keeps of one text
    turns = (Turn(action=Action.launch("com.tencent.mm"), think=huge), Turn(action=Action.finish("done")))
    with _server(*turns) as server:
        result = _run(farm, server, store)
    assert result.outcome == "finished", result.detail
    first = store.steps(result.episode_id)[0]
    for text in (first.raw_reply, first.thought):
        assert text is not None and len(text) < MAX_STORED_TEXT + 200
        assert text.endswith("characters, the first 262144 kept]")
