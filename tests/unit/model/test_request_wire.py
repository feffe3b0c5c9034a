"""The chat request is sent without the OpenAI SDK and takes a shortcut (the screenshots spliced into the JSON):
the bytes sent are the SDK's JSON of the body, byte for byte, and a reply reads as the SDK's models read it, for
every shape where that gives a text (any other shape reads as a text too, never a list)."""

from __future__ import annotations

import io
import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from openai._utils._json import openapi_dumps
from openai.types.chat import ChatCompletion
from PIL import Image

from mobile_agent.actions import Action, ActionKind, Point
from mobile_agent.errors import ModelError
from mobile_agent.model import images, transport
from mobile_agent.model.base import HistoryTurn
from mobile_agent.model.client import ModelClient
from mobile_agent.model.families import get_family
from mobile_agent.model.images import request_body

TASK = '给张三发微信说晚上好 "quoted" \\ back\nslash \u2028 \U0001f600'


def png(shade: int) -> bytes:
    img = Image.new("RGB", (1080, 2400), (240, 240, 240))
    for y in range(0, 2400, 97):
        img.paste((shade, 90, 200), (0, y, 1080, y + 30))
    out = io.BytesIO()
    img.save(out, "PNG")
    return out.getvalue()


def step_messages() -> list[dict[str, Any]]:
    family = get_family("ui-venus-2")
    tap = Action(ActionKind.TAP, point=Point(10, 20))
    history = [
        HistoryTurn(image=family.prepare(png(s)).jpeg, reply=f"reply {s} 好", action=tap) for s in (10, 60)
    ]
    return family.build_messages(TASK, history, png(120), correction='bad "reply"')


def body_of(messages: list[Any], **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": messages, "temperature": 0.0, "max_tokens": 8192, **extra}


def test_a_real_step_request_is_the_sdks_json() -> None:
    body = body_of(step_messages(), top_k=1, chat_template_kwargs={"x": [1, 2.5, None, True]})
    assert request_body(body, openapi_dumps) == openapi_dumps(body)
    assert json.loads(request_body(body, openapi_dumps)) == body


URL = "data:image/jpeg;base64," + "QUJD+/=" * 300
ODD_URLS = [
    URL,
    'data:"quoted"',
    "data:back\\slash",
    "data:中文",
    "data:\x01ctl",
    "data:\x7f",
    "",
    "x",
    7,
    None,
]


@pytest.mark.parametrize("url", ODD_URLS, ids=range(len(ODD_URLS)))
def test_odd_image_urls_are_written_as_the_sdk_writes_them(url: Any) -> None:
    messages: list[Any] = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url, "detail": "low"}}]},
        {
            "role": "user",
            "content": [{"type": "text", "text": "t"}, {"image_url": {"url": URL}, "type": "image_url"}],
        },
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": url}, "not a part", {"image_url": None}],
        },
        "not a message",
        {"role": "user"},
    ]
    body = body_of(messages)
    assert request_body(body, openapi_dumps) == openapi_dumps(body)


@pytest.mark.parametrize(
    "body", [{}, {"messages": None}, {"messages": []}, body_of([{"role": "user", "content": "only text"}])]
)
def test_bodies_without_images(body: dict[str, Any]) -> None:
    assert request_body(body, openapi_dumps) == openapi_dumps(body)


def test_a_text_that_holds_the_tag_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    fixed = uuid.UUID(int=12345)
    monkeypatch.setattr(images.uuid, "uuid4", lambda: fixed)
    for text in (fixed.hex + "0", f'"{fixed.hex}0"', fixed.hex):
        part = {"type": "image_url", "image_url": {"url": URL}}
        body = body_of([{"role": "user", "content": [{"type": "text", "text": text}, part, part]}])
        assert request_body(body, openapi_dumps) == openapi_dumps(body)


def _sdk_reading(data: Any) -> tuple[Any, Any, tuple[Any, Any]]:
    """How the OpenAI SDK's models read a reply (what the client read before it sent without the SDK)."""
    response = ChatCompletion.construct(**data)
    message = response.choices[0].message

    def extra(name: str) -> Any:
        value = getattr(message, name, None)
        return value if value is not None else (getattr(message, "model_extra", None) or {}).get(name)

    usage = response.usage
    tokens = (usage.prompt_tokens or 0, usage.completion_tokens or 0) if usage else (0, 0)
    return message.content or "", extra("reasoning_content") or extra("reasoning"), tokens


def reply(message: Any = None, usage: Any = "absent", **extra: Any) -> dict[str, Any]:
    choice = {"index": 0, "finish_reason": "stop", "message": message}
    data: dict[str, Any] = {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [choice],
    }
    if usage != "absent":
        data["usage"] = usage
    return {**data, **extra}


USAGE = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
REPLIES = [
    reply({"role": "assistant", "content": "Tap(x=1)"}, USAGE),
    reply({"role": "assistant", "content": "a", "reasoning_content": "think"}, USAGE),
    reply({"role": "assistant", "content": "a", "reasoning": "think"}),
    reply({"role": "assistant", "content": "a", "reasoning_content": "", "reasoning": "r"}, None),
    reply({"role": "assistant", "content": None}, {"prompt_tokens": 0, "completion_tokens": 0}),
    reply({"role": "assistant"}, USAGE),
    reply({"role": "assistant", "content": ""}, {"prompt_tokens": 5, "completion_tokens": 0, "x": 1}),
    reply({"role": "assistant", "content": "a"}, {"prompt_tokens": None, "completion_tokens": 2}),
    reply({"role": "assistant", "content": "a"}, {"prompt_tokens": True, "completion_tokens": 2}),
    reply({"role": "assistant", "content": "a"}, {"prompt_tokens": 1.5, "completion_tokens": 2}),
    reply({"role": "assistant", "content": ["list"]}, USAGE),
    reply({"role": "assistant", "content": "a", "reasoning_content": {"nested": 1}}, USAGE),
]


def _well_typed(reading: tuple[Any, Any, tuple[Any, Any]]) -> bool:
    text, reasoning, tokens = reading
    return (
        type(text) is str
        and (reasoning is None or type(reasoning) is str)
        and all(type(t) is int for t in tokens)
    )


@pytest.mark.parametrize("data", REPLIES, ids=range(len(REPLIES)))
def test_a_reply_reads_as_the_sdks_models_read_it(data: dict[str, Any]) -> None:
    ours = transport._read_reply(json.dumps(data).encode())
    assert _well_typed(ours)  # whatever the shape: a text, a reasoning or None, two counts
    if _well_typed(_sdk_reading(data)):
        assert ours == _sdk_reading(data)


def test_the_usual_replies() -> None:
    assert transport._read_reply(json.dumps(REPLIES[0]).encode()) == ("Tap(x=1)", None, (12, 3))
    assert transport._read_reply(json.dumps(REPLIES[1]).encode()) == ("a", "think", (12, 3))
    assert transport._read_reply(json.dumps(REPLIES[3]).encode()) == ("a", "r", (0, 0))


@pytest.mark.parametrize("data", [[], "x", {}, {"choices": []}, {"choices": {}}])
def test_a_reply_without_choices_is_a_model_error(data: Any) -> None:
    with pytest.raises(ModelError, match="no choices"):
        transport._read_reply(json.dumps(data).encode())


@pytest.mark.parametrize("data", [{"choices": ["x"]}, {"choices": [{}]}, reply("x"), reply({}, [])])
def test_odd_choices_read_as_an_empty_reply(data: Any) -> None:
    assert transport._read_reply(json.dumps(data).encode()) == ("", None, (0, 0))


def test_a_body_that_is_not_json_is_a_model_error() -> None:
    with pytest.raises(ModelError, match="not a JSON chat completion"):
        transport._read_reply(b"<html>")


@pytest.mark.parametrize("body", [body_of(step_messages(), top_k=1), {"x": ["\u2028", 1.5, None, "好"]}])
def test_the_body_is_written_as_the_sdk_writes_json(body: dict[str, Any]) -> None:
    assert transport.dumps(body) == openapi_dumps(body)


class _Recorder(BaseHTTPRequestHandler):
    bodies: list[bytes] = []
    answer = json.dumps(
        reply({"role": "assistant", "content": "Tap 好", "reasoning_content": "r"}, USAGE)
    ).encode()

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.answer)))
        self.end_headers()
        self.wfile.write(self.answer)

    def log_message(self, *args: Any) -> None:
        pass


def test_the_bytes_on_the_wire_are_the_sdks_json_of_the_body() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        messages = step_messages()
        extra = {"top_k": 1}
        with ModelClient([f"http://127.0.0.1:{server.server_port}/v1"], "m", extra_body=extra) as client:
            got = client.complete(messages, episode_id="ep")
        expected = {"model": "m", "messages": messages, "temperature": 0.0, "max_tokens": 8192, **extra}
        assert _Recorder.bodies == [openapi_dumps(expected)]
        assert (got.text, got.reasoning, got.prompt_tokens, got.completion_tokens) == ("Tap 好", "r", 12, 3)
    finally:
        server.shutdown()
        server.server_close()


def test_plain_text_is_what_json_leaves_as_it_is() -> None:
    for i in range(256):
        c = chr(i)
        assert images._json_plain(f"a{c}b") == (json.dumps(c, ensure_ascii=False) == f'"{c}"' and c.isascii())
