"""The real OpenAI SDK (directly and through ModelClient) against the simulated model endpoint."""

from __future__ import annotations

import functools
import io
import logging
import threading
from pathlib import Path

import openai
import pytest
from PIL import Image

from mobile_agent.actions import Action, ActionKind, Key, Size
from mobile_agent.errors import ModelError, ModelUnavailable, ParseError, UserError
from mobile_agent.model.client import ModelClient
from mobile_agent.model.families import FAMILIES, get_family
from mobile_agent.sim.servers.model_server import NO_SCRIPT_MESSAGE, Script, SimModelServer, Turn

SCRIPTS = Path(__file__).with_name("model_scripts")
PHONE = Size(1080, 2400)
WECHAT = "给张三发微信说晚上好"


@functools.cache
def screen() -> bytes:
    img = Image.new("RGB", tuple(PHONE), (250, 250, 250))
    out = io.BytesIO()
    img.save(out, "PNG")
    return out.getvalue()


def quick_client(server: SimModelServer, **kw) -> ModelClient:
    kw.setdefault("max_retries", 0)
    kw.setdefault("timeout", 5.0)
    return ModelClient([server.base_url], server.served_model, backoff_s=0.01, max_backoff_s=0.02, **kw)


@pytest.fixture
def server():
    with SimModelServer(scripts=[SCRIPTS]) as srv:
        yield srv


def near(actual, expected, tolerance: int = 3) -> bool:
    return abs(actual.x - expected[0]) <= tolerance and abs(actual.y - expected[1]) <= tolerance


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_family_round_trips_a_scripted_episode(name: str) -> None:
    family = get_family(name)
    with SimModelServer(family=name, scripts=[SCRIPTS]) as srv, quick_client(srv) as client:
        geometry = family.geometry(PHONE)
        actions = []
        for _ in range(6):
            messages = family.build_messages(WECHAT, [], screen())
            reply = client.complete(messages, episode_id=f"episode-{name}")
            actions.append(family.parse(reply.text, geometry, reasoning=reply.reasoning).action)
        assert srv.requests[-1].image_size == geometry.image
    assert actions[0] == Action.launch("微信")
    assert actions[1].kind is ActionKind.TAP and near(actions[1].point, (540, 432))
    assert actions[2] == Action.type("晚上好")
    assert actions[3].kind is ActionKind.SWIPE and near(actions[3].point, (540, 1920))
    if name not in (
        "ui-tars",
        "doubao-ui-tars",
    ):  # they write a swipe as a scroll: the end is their convention
        assert near(actions[3].end, (540, 480))
    assert actions[4] == Action.press(Key.BACK)
    assert actions[5].kind is ActionKind.FINISH


@pytest.mark.parametrize("field", ["reasoning", "reasoning_content"])
def test_plain_and_streamed_replies_agree_and_reasoning_is_split(field: str) -> None:
    with SimModelServer(scripts=[SCRIPTS], split_reasoning=True, reasoning_field=field) as srv:
        sdk = openai.OpenAI(base_url=srv.base_url, api_key="EMPTY", max_retries=0, timeout=5)
        ask = [{"role": "user", "content": WECHAT}]
        plain = sdk.chat.completions.create(
            model="ui-venus-2", messages=ask, extra_headers={"X-Mobile-Agent-Episode": "plain"}
        )
        message = plain.choices[0].message
        assert message.content == "<action>LaunchApp(app='微信')</action>"
        assert message.model_extra[field] == "打开微信"
        other = "reasoning_content" if field == "reasoning" else "reasoning"
        assert other not in message.model_extra
        assert plain.usage.completion_tokens > 0 and plain.usage.prompt_tokens > 0

        stream = sdk.chat.completions.create(
            model="ui-venus-2",
            messages=ask,
            stream=True,
            stream_options={"include_usage": True},
            extra_headers={"X-Mobile-Agent-Episode": "streamed"},
        )
        content, reasoning, usage, finish = [], [], None, None
        for chunk in stream:
            usage = chunk.usage or usage
            for choice in chunk.choices:
                content.append(choice.delta.content or "")
                reasoning.append((choice.delta.model_extra or {}).get(field) or "")
                finish = choice.finish_reason or finish
        assert "".join(content) == message.content
        assert "".join(reasoning) == "打开微信"
        assert finish == "stop" and usage is not None and usage.total_tokens > 0
        sdk.close()

        with quick_client(srv) as client:  # the client reads either field, plain or streamed
            assert client.complete(ask, episode_id="client-plain").reasoning == "打开微信"
        with quick_client(srv, stream=True) as client:
            reply = client.complete(ask, episode_id="client-stream")
        parsed = get_family("ui-venus-2").parse(
            reply.text, get_family("ui-venus-2").geometry(PHONE), reply.reasoning
        )
        assert parsed.action == Action.launch("微信") and parsed.thought == "打开微信"


def test_reasoning_field_must_be_one_vllm_uses() -> None:
    with pytest.raises(UserError, match="unknown reasoning field"):
        SimModelServer(scripts=[SCRIPTS], reasoning_field="thinking")


@pytest.mark.parametrize("closed", [False, True])
def test_simulated_autoglm_leaves_answer_open_like_the_real_model(closed: bool) -> None:
    family = get_family("autoglm")
    with (
        SimModelServer(family="autoglm", scripts=[SCRIPTS], closed_answer=closed) as srv,
        quick_client(srv) as client,
    ):
        reply = client.complete(family.build_messages(WECHAT, [], screen()), episode_id="autoglm-form")
    assert reply.text.endswith('<answer>do(action="Launch", app="微信")' + ("</answer>" if closed else ""))
    assert family.parse(reply.text, family.geometry(PHONE)).action == Action.launch("微信")


def test_malformed_then_503_retried_then_400_not_retried(server: SimModelServer, caplog) -> None:
    family = get_family("ui-venus-2")
    ask = [{"role": "user", "content": "fault drill"}]
    secret = "sk-test-do-not-log-0123456789"
    caplog.set_level(logging.DEBUG)
    with quick_client(server, max_retries=2, api_key=secret) as client:
        malformed = client.complete(ask, episode_id="faults")
        with pytest.raises(ParseError) as info:
            family.parse(malformed.text, family.geometry(PHONE))
        assert "Clik" in info.value.reply

        retried = client.complete(ask, episode_id="faults")  # 503 first, then the tap
        assert retried.attempts == 2
        assert family.parse(retried.text, family.geometry(PHONE)).action.kind is ActionKind.TAP

        with pytest.raises(ModelError) as refused:
            client.complete(ask, episode_id="faults")
        assert not isinstance(refused.value, ModelUnavailable)
        assert "HTTP 400" in refused.value.message and refused.value.hint

        after = client.complete(ask, episode_id="faults")  # the 400 was not retried: next turn is the wait
        assert family.parse(after.text, family.geometry(PHONE)).action == Action.wait()
        assert secret not in repr(client)
    statuses = [r.status for r in server.requests if r.episode == "faults"]
    assert statuses == [200, 503, 200, 400, 200]
    assert secret not in caplog.text
    assert "attempt 1 of 3" in caplog.text


def test_delay_beyond_the_timeout_is_retried_then_unavailable(server: SimModelServer) -> None:
    with quick_client(server, max_retries=1, timeout=0.3) as client:
        with pytest.raises(ModelUnavailable) as info:
            client.complete([{"role": "user", "content": "slow drill"}], episode_id="slow")
    assert "timed out" in info.value.message and "after 2 attempts" in info.value.message
    assert info.value.hint


def test_episodes_have_their_own_cursor_and_no_header_means_per_task(server: SimModelServer) -> None:
    family = get_family("ui-venus-2")
    geometry = family.geometry(PHONE)
    ask = [{"role": "user", "content": f"任务：{WECHAT}。"}]
    with quick_client(server) as client:

        def step(episode):
            return family.parse(client.complete(ask, episode_id=episode).text, geometry).action.kind

        assert [step("a"), step("b"), step("a"), step("b")] == [ActionKind.LAUNCH] * 2 + [ActionKind.TAP] * 2
        assert [step(None), step(None)] == [ActionKind.LAUNCH, ActionKind.TAP]
        server.reset()
        assert step("a") is ActionKind.LAUNCH


def test_unscripted_task_gets_a_parseable_call_user(server: SimModelServer) -> None:
    for name in sorted(FAMILIES):
        family = get_family(name)
        with SimModelServer(family=name, scripts=[]) as srv, quick_client(srv) as client:
            reply = client.complete(family.build_messages("do something nobody scripted", [], screen()))
        action = family.parse(reply.text, family.geometry(PHONE)).action
        assert action.kind is ActionKind.CALL_USER
        assert action.text in (NO_SCRIPT_MESSAGE, None)


def test_wrong_model_name_is_a_404_with_a_hint_and_models_are_listed() -> None:
    with SimModelServer(scripts=[], model_name="venus-9b") as srv:
        with ModelClient([srv.base_url], "venus-9b") as good:
            assert good.list_models() == ["venus-9b"]
            assert good.probe()[0].ok
        with ModelClient([srv.base_url], "wrong-name", max_retries=3) as bad:
            with pytest.raises(ModelError) as info:
                bad.complete([{"role": "user", "content": "x"}])
        assert "HTTP 404" in info.value.message and "wrong-name" in (info.value.hint or "")
        assert len([r for r in srv.requests if r.method == "POST"]) == 1


def test_a_failing_endpoint_is_skipped_for_the_next_one() -> None:
    healthy_script = Script(task="flaky endpoint drill", turns=(Turn(action=Action.wait()),) * 3)
    with (
        SimModelServer(scripts=[SCRIPTS / "always_503.yaml"]) as broken,
        SimModelServer(scripts=[healthy_script]) as healthy,
    ):
        client = ModelClient(
            [broken.base_url, healthy.base_url],
            "ui-venus-2",
            max_retries=2,
            backoff_s=0.01,
            max_backoff_s=0.02,
        )
        with client:
            reply = client.complete([{"role": "user", "content": "flaky endpoint drill"}])
            assert reply.endpoint == healthy.base_url and reply.attempts == 2
            again = client.complete([{"role": "user", "content": "flaky endpoint drill"}])
            assert again.endpoint == healthy.base_url and again.attempts == 1  # the broken one cools down
        assert len(broken.requests) == 1


def test_requests_in_flight_are_capped_per_endpoint() -> None:
    with SimModelServer(scripts=[], latency_ms=150) as srv, quick_client(srv, max_in_flight=2) as client:
        errors: list[BaseException] = []

        def worker() -> None:
            try:
                client.complete([{"role": "user", "content": "anything"}])
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=10)
        assert not errors
        assert srv.peak_in_flight == 2
        assert client.stats()[0]["served"] == 6
