"""JSON-RPC to the phone's uiautomator2 server: several calls in one request, on connections kept open.

The u2.jar serves JSON-RPC through jsonrpc4j on NanoHTTPD (openatx/android-uiautomator-server-jar @ d0449b9:
stub/AutomatorHttpServer.java). jsonrpc4j takes a JSON array as a batch and answers its calls one after another,
in order, in one array (briandilley/jsonrpc4j, JsonRpcBasicServer.handleArray), so an action, the wait for idle
and the frame after it are one request, with no trip back to the host in between. uiautomator2 itself sends one
call per request on a new adb stream each time.

NanoHTTPD keeps a connection alive between requests, but closes one that stays idle for its socket read timeout
(``SOCKET_READ_TIMEOUT``, 5 s): a connection is reused only while it has been idle for less than ``REUSE_IDLE_S``
and the server has not closed it. A reused connection that fails before any answer is retried once on a new one
when the request is safe to repeat (it performs nothing on the phone).
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

PATH = "/jsonrpc/0"
HEADERS = {"Content-Type": "application/json", "Accept-Encoding": "", "User-Agent": "mobile-agent"}
REUSE_IDLE_S = 2.0  # well inside NanoHTTPD's 5 s read timeout on an idle keep-alive connection
MAX_ANSWER_BYTES = 64 * 1024 * 1024  # a dump or a full-resolution frame is a few MB at most
MAX_IDLE_CONNECTIONS = 2  # the frame and the view tree may be asked at the same time
METHOD_NOT_FOUND = -32601


@dataclass(frozen=True)
class Call:
    method: str
    params: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Answer:
    """One call's answer: ``result``, or ``error`` (the JSON-RPC error object)."""

    result: Any = None
    error: dict[str, Any] | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None

    def text(self) -> str:
        error = self.error or {}
        return f"{error.get('message', '')} {error.get('data', '') or ''}".strip()


class ServerUnreachable(Exception):
    """Nothing answered on the server's port (not running, or it closed the connection without an answer)."""


class BatchUnsupported(Exception):
    """The server refused the batch as one invalid request (it ran none of it): send the calls one at a time."""


class _Stream(http.client.HTTPConnection):
    """HTTP over a stream the caller opens (an adb ``tcp:9008`` forward)."""

    def __init__(self, open_stream: Callable[[], socket.socket]) -> None:
        super().__init__("127.0.0.1", 9008)
        self._open_stream = open_stream
        self.used_at = 0.0

    def connect(self) -> None:
        try:
            sock = self._open_stream()
        except OSError:
            raise
        except Exception as exc:  # adbutils.AdbError: the forward was refused
            raise ServerUnreachable(str(exc)) from exc
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # headers and body leave at once
        except OSError:
            pass
        self.sock = sock

    def _send_output(self, message_body=None, encode_chunked=False):  # noqa: ANN001, ANN202 - http.client's own
        # The head and a bytes body in one write: a server that finds the body missing when the head is in may
        # answer "100 Continue" first, and two small writes in a row wait on a delayed ACK (~20-40 ms).
        if isinstance(message_body, bytes):
            self._buffer.extend((b"", message_body))
            message_body = None
            msg = b"\r\n".join(self._buffer)
            del self._buffer[:]
            self.send(msg)
            return
        super()._send_output(message_body, encode_chunked)

    def closed_by_peer(self) -> bool:
        sock = self.sock
        if sock is None:
            return True
        try:
            readable, _, _ = select.select([sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)  # an idle HTTP connection has nothing to read unless the server closed it


class U2Channel:
    """Requests to one phone's u2 server. Thread-safe: each request takes a connection of its own."""

    def __init__(self, open_stream: Callable[[], socket.socket]) -> None:
        self._open_stream = open_stream
        self._idle: list[_Stream] = []
        self._lock = threading.Lock()
        self._deferred: list[Call] = []

    # ----- calls ------------------------------------------------------------------------------------------------
    def defer(self, call: Call) -> None:
        """Send ``call`` at the front of the next request (its answer is not waited for: a clipboard to put back)."""
        with self._lock:
            self._deferred.append(call)

    def take_deferred(self) -> list[Call]:
        with self._lock:
            calls, self._deferred = self._deferred, []
        return calls

    def batch(self, calls: Sequence[Call], timeout: float, *, repeatable: bool = True) -> list[Answer]:
        """The answers to ``calls``, in order, from one request. ``repeatable``: the calls perform nothing on the
        phone, so a reused connection that failed may be tried again. Raises ServerUnreachable, BatchUnsupported,
        or the transport's errors (OSError, http.client errors) for the caller to classify."""
        payload = [
            {"jsonrpc": "2.0", "id": i + 1, "method": c.method, "params": list(c.params)}
            for i, c in enumerate(calls)
        ]
        body = json.dumps(payload, ensure_ascii=False).encode()
        answers = self._post(body, timeout, repeatable)
        if isinstance(answers, dict) and answers.get("error") is not None:
            raise BatchUnsupported(str(answers["error"]))
        if not isinstance(answers, list) or len(answers) != len(calls):
            raise ValueError("the server did not answer the batch with one answer per call")
        by_id = {a.get("id"): a for a in answers if isinstance(a, dict)}
        out = []
        for i in range(len(calls)):
            answer = by_id.get(i + 1)
            if answer is None:
                raise ValueError(f"no answer for {calls[i].method}")
            out.append(_answer(answer))
        return out

    def call(self, call: Call, timeout: float, *, repeatable: bool = True) -> Answer:
        """One call as a plain JSON-RPC request (what every u2 server answers)."""
        payload = {"jsonrpc": "2.0", "id": 1, "method": call.method, "params": list(call.params)}
        answer = self._post(json.dumps(payload, ensure_ascii=False).encode(), timeout, repeatable)
        if not isinstance(answer, dict):
            raise ValueError("the server's answer is not a JSON-RPC object")
        return _answer(answer)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    # ----- connections ------------------------------------------------------------------------------------------
    def _post(self, body: bytes, timeout: float, repeatable: bool) -> Any:
        conn, reused = self._take()
        try:
            data = self._exchange(conn, body, timeout)
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
            conn.close()
            if not reused:
                raise ServerUnreachable("the server closed the connection without an answer") from None
            if not repeatable:
                raise
            conn = _Stream(self._open_stream)
            try:
                data = self._exchange(conn, body, timeout)
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                conn.close()
                raise ServerUnreachable("the server closed the connection without an answer") from None
            except BaseException:
                conn.close()
                raise
        except BaseException:
            conn.close()
            raise
        try:
            return json.loads(data)
        except ValueError:
            raise ValueError("the server's answer is not JSON") from None

    def _exchange(self, conn: _Stream, body: bytes, timeout: float) -> bytes:
        if conn.sock is None:
            conn.connect()
        conn.sock.settimeout(timeout)
        conn.request("POST", PATH, body=body, headers=HEADERS)
        response = conn.getresponse()
        data = response.read(MAX_ANSWER_BYTES + 1)
        if len(data) > MAX_ANSWER_BYTES:
            raise ValueError(f"the server's answer is over {MAX_ANSWER_BYTES // 2**20} MB")
        if response.status != 200:
            conn.close()
            raise ValueError(f"the server answered HTTP {response.status} on {PATH}")
        if response.will_close:
            conn.close()
        else:
            self._give_back(conn)
        return data

    def _take(self) -> tuple[_Stream, bool]:
        now = time.monotonic()
        while True:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                return _Stream(self._open_stream), False
            if now - conn.used_at < REUSE_IDLE_S and not conn.closed_by_peer():
                return conn, True
            conn.close()

    def _give_back(self, conn: _Stream) -> None:
        conn.used_at = time.monotonic()
        with self._lock:
            if len(self._idle) < MAX_IDLE_CONNECTIONS:
                self._idle.append(conn)
                return
        conn.close()


def _answer(raw: dict[str, Any]) -> Answer:
    if raw.get("error") is not None:
        error = raw["error"] if isinstance(raw["error"], dict) else {"message": str(raw["error"])}
        return Answer(error=error)
    return Answer(result=raw.get("result"))


__all__ = [
    "METHOD_NOT_FOUND",
    "Answer",
    "BatchUnsupported",
    "Call",
    "ServerUnreachable",
    "U2Channel",
]
