"""Reply and error bodies are read within bounds (mobile_agent.model.transport): of an error body at most
MAX_ERROR_BYTES are read, however big it is; a reply up to MAX_REPLY_BYTES is parsed, a bigger one refused. Both
ways a request travels (http.client, and httpx for TLS and proxies) keep the bounds."""

from __future__ import annotations

import json
import threading
import time
import tracemalloc
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from mobile_agent.errors import ModelError, ModelUnavailable
from mobile_agent.model import wire
from mobile_agent.model.client import ModelClient
from mobile_agent.model.transport import MAX_REPLY_BYTES

MB = 1024 * 1024


class _Answers(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    status = 200
    body_size = 0  # of the reply's text, or of the error body
    stream = False
    sent = 0  # bytes of body written (the server's view: how much the client let it send)

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers["Content-Length"]))
        cls = type(self)
        if cls.status != 200:
            self._send(cls.status, self._filler(cls.body_size), cls.body_size)
        elif cls.stream:
            self._stream(cls.body_size)
        else:
            data = json.dumps(
                {"choices": [{"message": {"content": "x" * cls.body_size}}], "usage": {"prompt_tokens": 1}}
            ).encode()
            self._send(200, iter([data]), len(data))

    @staticmethod
    def _filler(size: int) -> Iterator[bytes]:
        piece = b'{"error": "' + b"e" * (MB - 20) + b'"}\n'
        for _ in range(size // len(piece)):
            yield piece
        yield b"e" * (size % len(piece))

    def _send(self, status: int, chunks: Iterator[bytes], length: int) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(length))
        self.end_headers()
        try:
            for chunk in chunks:
                self.wfile.write(chunk)
                type(self).sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading: what the bound is for

    def _stream(self, size: int) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        event = b'data: {"choices": [{"delta": {"content": "' + b"x" * 4000 + b'"}}]}\n\n'
        try:
            for _ in range(size // len(event) + 1):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                type(self).sent += len(event)
            self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (14, b"data: [DONE]\n\n"))
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    _Answers.status, _Answers.body_size, _Answers.stream, _Answers.sent = 200, 0, False, 0
    try:
        yield f"http://127.0.0.1:{srv.server_port}/v1"
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.fixture(params=["http.client", "httpx"])
def client(request: pytest.FixtureRequest, server: str) -> Iterator[ModelClient]:
    made = ModelClient([server], "m", max_retries=0, timeout=20, stream=False)
    if request.param == "httpx":
        for slot in made._slots:
            slot.transport.wire = wire.HttpxWire(server)
    assert (
        type(made._slots[0].transport.wire).__name__
        == {"http.client": "PlainWire", "httpx": "HttpxWire"}[request.param]
    )
    yield made
    made.close()


MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("status, error", [(500, ModelUnavailable), (400, ModelError)])
def test_a_50_mb_error_body_is_read_only_as_far_as_the_bound(client, status, error):
    _Answers.status, _Answers.body_size = status, 50 * MB
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(error, match=f"HTTP {status}"):
            client.complete(MESSAGES)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * MB  # (it cost 1.2 GB through the SDK)
    assert time.monotonic() - started < 5
    assert _Answers.sent < 50 * MB  # the rest was never read: the connection was dropped


def test_a_1_mb_reply_is_read_and_parsed(client):
    _Answers.body_size = MB
    started = time.monotonic()
    reply = client.complete(MESSAGES)
    assert len(reply.text) == MB and reply.prompt_tokens == 1
    assert time.monotonic() - started < 1


def test_a_reply_over_the_bound_is_refused_in_one_line(client):
    _Answers.body_size = MAX_REPLY_BYTES + MB
    with pytest.raises(ModelError, match="over 2048 KiB") as caught:
        client.complete(MESSAGES)
    assert "\n" not in caught.value.one_line()
    assert _Answers.sent < MAX_REPLY_BYTES + 2 * MB


def test_a_streamed_reply_over_the_bound_is_refused(client):
    client.stream = True
    _Answers.stream, _Answers.body_size = True, 8 * MB
    with pytest.raises(ModelError, match="streamed reply is over"):
        client.complete(MESSAGES)


def test_a_streamed_reply_within_the_bound_is_joined(client):
    client.stream = True
    _Answers.stream, _Answers.body_size = True, 40_000
    reply = client.complete(MESSAGES)
    assert set(reply.text) == {"x"} and len(reply.text) >= 40_000
