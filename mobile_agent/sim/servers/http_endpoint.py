"""Plumbing shared by the loopback OpenAI-compatible servers (the simulated model and the scripted judge).

``LoopbackEndpoint`` owns the listening server and the thread that serves it (start, close, a context manager);
subclasses name their request handler, a subclass of ``EndpointHandler``, which has the response helpers (JSON,
OpenAI-style errors, chunked server-sent events). ``chat_completion``, ``completion_chunks`` and ``model_list``
build the OpenAI response bodies.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

from mobile_agent.errors import UserError

log = logging.getLogger(__name__)

_ERROR_TYPES = {400: "BadRequestError", 404: "NotFoundError", 429: "RateLimitError"}

EndpointT = TypeVar("EndpointT", bound="LoopbackEndpoint")


class EndpointHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that can cut its kept-alive connections, so closing never waits on clients."""

    daemon_threads = False  # server_close joins the handler threads
    block_on_close = True
    allow_reuse_address = True

    def __init__(self, owner: LoopbackEndpoint) -> None:
        self.owner = owner
        self.open_sockets: set[socket.socket] = set()
        self.sockets_lock = threading.Lock()
        super().__init__((owner.host, owner.port), owner.handler_class)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.sockets_lock:
            self.open_sockets.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.sockets_lock:
            self.open_sockets.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        with self.sockets_lock:
            for sock in list(self.open_sockets):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out and hung up is normal here (fault injection); keep stderr quiet.
        log.debug(
            "%s: connection from %s ended with an error", self.owner.label, client_address, exc_info=True
        )


class LoopbackEndpoint:
    """An HTTP endpoint on loopback (a free port unless ``port`` is given), served from a background thread."""

    handler_class: type[EndpointHandler]
    label = "http endpoint"  # names the server in logs and its thread
    port_hint = "pick another port"
    # Faults of a misbehaving endpoint, set on an instance by tests: every error body echoes the request line and
    # its Authorization header (as some proxies do); chat completions come back as bytes that are not UTF-8; or
    # report ``usage`` instead of the real token counts (e.g. counts above 2**63).
    echo_auth = False
    bad_utf8_replies = False
    usage_override: dict[str, Any] | None = None

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port
        self.stopping = threading.Event()
        self._http: EndpointHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self: EndpointT) -> EndpointT:
        if self._http is not None:
            return self
        if not 0 <= self.port <= 65535:
            raise UserError(f"port {self.port} is not a TCP port (0-65535)", hint=self.port_hint)
        try:
            self._http = EndpointHTTPServer(self)
        except (OSError, OverflowError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise UserError(
                f"cannot listen on {self.host}:{self.port}: {reason}", hint=self.port_hint
            ) from None
        self.port = self._http.server_address[1]
        self.stopping.clear()
        self._thread = threading.Thread(
            target=self._http.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=self.label.replace(" ", "-"),
            daemon=True,
        )
        self._thread.start()
        log.info("%s serving at %s", self.label, self.base_url)
        return self

    def close(self) -> None:
        if self._http is None:
            return
        self.stopping.set()
        self._http.shutdown()
        self._http.drop_connections()
        self._http.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._http = None
        self._thread = None

    def __enter__(self: EndpointT) -> EndpointT:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait(self, milliseconds: int) -> bool:
        """Sleep, unless the server is closing. False when it is."""
        if milliseconds <= 0:
            return not self.stopping.is_set()
        return not self.stopping.wait(milliseconds / 1000)


class EndpointHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: EndpointHTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        log.debug("%s: " + format, self.server.owner.label, *args)

    def route(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/")  # a query (?api_key=...) does not change the route

    def read_json(self) -> Any:
        """The request body parsed as JSON (None when empty); ValueError when it is not JSON."""
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"null")

    def send_json(self, status: int, payload: Any, extra_headers: dict[str, str] | None = None) -> None:
        owner = self.server.owner
        completion = isinstance(payload, dict) and payload.get("object") == "chat.completion"
        if completion and owner.usage_override is not None:
            payload = {**payload, "usage": owner.usage_override}
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        if completion and owner.bad_utf8_replies:
            body = body.replace(b'"content": "', b'"content": "\xff\xfe\xc3(', 1)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (extra_headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def send_error_json(self, status: int, message: str) -> None:
        """An error body the OpenAI client reads; a 429 says it may be retried at once."""
        if self.server.owner.echo_auth:
            message += (
                f" [request: {self.command} {self.path}; Authorization: {self.headers.get('Authorization')}]"
            )
        error = {"message": message, "type": _ERROR_TYPES.get(status, "ServerError"), "code": status}
        headers = {"Retry-After": "0"} if status == 429 else None
        self.send_json(status, {"error": error}, headers)

    def send_event_stream(self, events: Iterable[dict[str, Any]]) -> None:
        """Server-sent events over chunked transfer: one ``data:`` line per event, then ``[DONE]``."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in events:
            self._chunk(f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode())
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")


def completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


def chat_completion(model: str, message: dict[str, Any], usage: dict[str, int]) -> dict[str, Any]:
    """A non-streamed chat completion with one choice that stopped normally."""
    return {
        "id": completion_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}],
        "usage": usage,
    }


def completion_chunks(
    model: str, deltas: Iterable[dict[str, Any]], usage: dict[str, int] | None = None
) -> Iterator[dict[str, Any]]:
    """A streamed chat completion: a chunk per delta, a closing chunk that stops, then the usage if given."""
    ident, created = completion_id(), int(time.time())

    def chunk(choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        return {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": choices,
            **extra,
        }

    def choice(delta: dict[str, Any], finish: str | None = None) -> list[dict[str, Any]]:
        return [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]

    for delta in deltas:
        yield chunk(choice(delta))
    yield chunk(choice({"content": ""}, finish="stop"))
    if usage is not None:
        yield chunk([], usage=usage)


def model_list(model: str) -> dict[str, Any]:
    """The ``GET /v1/models`` body: the one model this endpoint serves."""
    entry = {"id": model, "object": "model", "created": int(time.time()), "owned_by": "sim"}
    return {"object": "list", "data": [entry]}


__all__ = [
    "EndpointHTTPServer",
    "EndpointHandler",
    "LoopbackEndpoint",
    "chat_completion",
    "completion_chunks",
    "completion_id",
    "model_list",
]
