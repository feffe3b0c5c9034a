"""The chat request's bytes and the reply's reading take shortcuts (the screenshots spliced into the JSON, the
reply read off the dict): the bytes sent are the SDK's JSON of the body, byte for byte, and the reply reads as the
SDK's models read it, for every shape."""

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
from mobile_agent.model import client as client_module
from mobile_agent.model import images
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


def _old_reading(data: Any) -> tuple[str, str | None, tuple[int, int]]:
    """How _request read a reply before it read the dict itself."""
    response = ChatCompletion.construct(**data)
    message = response.choices[0].message
    reasoning = client_module._extra(message, "reasoning_content") or client_module._extra(
        message, "reasoning"
    )
    usage = response.usage
    tokens = (usage.prompt_tokens or 0, usage.completion_tokens or 0) if usage else (0, 0)
    return message.content or "", reasoning, tokens


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


@pytest.mark.parametrize("data", REPLIES, ids=range(len(REPLIES)))
def test_a_reply_reads_as_the_sdks_models_read_it(data: dict[str, Any]) -> None:
    plain = client_module._plain_reply(json.loads(json.dumps(data)))
    if plain is not None:
        assert plain == _old_reading(data)


def test_the_usual_replies_take_the_short_way() -> None:
    assert client_module._plain_reply(REPLIES[0]) == ("Tap(x=1)", None, (12, 3))
    assert client_module._plain_reply(REPLIES[1]) == ("a", "think", (12, 3))
    assert client_module._plain_reply(REPLIES[3]) == ("a", "r", (0, 0))


@pytest.mark.parametrize(
    "data",
    [
        [],
        "x",
        {},
        {"choices": []},
        {"choices": {}},
        {"choices": ["x"]},
        {"choices": [{}]},
        reply("x"),
        reply({}, []),
    ],
)
def test_other_shapes_are_left_to_the_sdks_models(data: Any) -> None:
    assert client_module._plain_reply(data) is None


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
