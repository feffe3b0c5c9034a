"""The critic against real loopback servers: the simulated GUI model proposes, the scripted judge labels.

A wrong proposal turns into a re-ask that carries the critique; a fail-closed critic that cannot be reached raises
before anything could run (the episode loop turns that ModelError into ``error:critic_unavailable``).
"""

from __future__ import annotations

import io

import pytest
from PIL import Image

from mobile_agent.actions import Action
from mobile_agent.errors import ModelError
from mobile_agent.model.client import ModelClient
from mobile_agent.model.families import get_family
from mobile_agent.model.images import Geometry, prepare_image
from mobile_agent.sim.farm import free_port
from mobile_agent.sim.phone.phone import Phone
from mobile_agent.sim.servers.judge_server import JudgeScript, ScriptedJudgeServer
from mobile_agent.sim.servers.model_server import Script, SimModelServer, Turn
from mobile_agent.verify.labels import Critic, CriticUnavailable, Label

TASK = "打开微信"
FAMILY = get_family("ui-venus-2")


@pytest.fixture(scope="module")
def screen() -> bytes:
    return Phone().screenshot("jpeg")


@pytest.fixture
def model():
    script = Script(
        task=TASK,
        turns=(
            Turn(action=Action.launch("支付宝"), think="打开支付宝"),
            Turn(action=Action.launch("微信"), think="打开微信"),
            Turn(action=Action.finish("ok")),
        ),
    )
    with SimModelServer(family=FAMILY.name, scripts=[script], model_name="sim") as server:
        client = ModelClient([server.base_url], "sim", max_retries=0, timeout=10)
        yield server, client
        client.close()


def _proposer(client: ModelClient, screen: bytes, episode: str):
    prepared = prepare_image(screen, FAMILY)
    size = Image.open(io.BytesIO(screen)).size

    def propose(correction: str | None):
        messages = FAMILY.build_messages(TASK, [], prepared, correction=correction)
        reply = client.complete(messages, episode_id=episode)
        parsed = FAMILY.parse(
            reply.text, Geometry(device=size, image=prepared.size), reasoning=reply.reasoning
        )
        return parsed.action, parsed.action.describe(), parsed.action

    return propose


def test_a_wrong_action_is_re_asked_with_the_critique(model, screen):
    server, client = model
    script = JudgeScript(labels={"launch(支付宝)": "wrong"})
    with ScriptedJudgeServer(script, model="critic") as judge:
        critic_client = ModelClient([judge.base_url], "critic", max_retries=0, timeout=10)
        critic = Critic(critic_client, max_reasks=2)
        review = critic.review(
            _proposer(client, screen, "ep-1"), task=TASK, history_texts=[], screenshot_jpeg=screen
        )
        critic_client.close()
    assert review.proposal == Action.launch("微信") and review.allowed and review.reasks == 1
    assert [label.label for label in review.labels] == [Label.WRONG, Label.CORRECT]
    chat_requests = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert len(chat_requests) == 2
    second = str(chat_requests[1].messages)
    assert "launch(支付宝) as wrong" in second and "choose a different action" in second
    assert "launch(支付宝)" not in str(chat_requests[0].messages)


def test_a_fail_closed_critic_that_is_down_lets_nothing_through(model, screen):
    _, client = model
    down = ModelClient([f"http://127.0.0.1:{free_port()}/v1"], "critic", max_retries=0, timeout=5)
    proposals = []
    propose = _proposer(client, screen, "ep-2")

    def counting(correction):
        proposals.append(correction)
        return propose(correction)

    with pytest.raises(CriticUnavailable) as caught:
        Critic(down, fail_closed=True).review(counting, task=TASK, history_texts=[], screenshot_jpeg=screen)
    down.close()
    assert len(proposals) == 1  # asked once, then stopped: nothing was returned to execute
    assert isinstance(caught.value, ModelError) and caught.value.kind == "critic_unavailable"


def test_a_fail_open_critic_that_is_down_lets_the_action_through_unlabelled(model, screen):
    _, client = model
    down = ModelClient([f"http://127.0.0.1:{free_port()}/v1"], "critic", max_retries=0, timeout=5)
    review = Critic(down).review(
        _proposer(client, screen, "ep-3"), task=TASK, history_texts=[], screenshot_jpeg=screen
    )
    down.close()
    assert review.allowed and review.proposal == Action.launch("支付宝")
    assert review.labels[0].label is None and not review.labels[0].reachable
