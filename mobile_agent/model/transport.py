"""The HTTP side of a chat-completions request: one POST, its status errors, the reply read within bounds.

The OpenAI SDK is not used to send: importing it costs ~0.55 s of CPU, building a client ~20 ms (and a TLS
context even for ``http://``), and it reads an error body whole (a 50 MB one cost 1.2 GB of memory). What the
runtime used of it is small: one POST (``Authorization: Bearer``, the base URL's query with every request, the
body as the SDK writes JSON: ``ensure_ascii=False``, compact separators, no NaN), its status errors, and the
server-sent events of a streamed reply. model/wire.py carries the request (http.client, or httpx for TLS and
proxies).

Bounds: a reply body (the JSON, or the whole stream) is read up to ``MAX_REPLY_BYTES`` and refused beyond it; of an
error body only ``MAX_ERROR_BYTES`` are read (for the message) and the connection is dropped unread.
"""

from __future__ import annotations

import json
import socket
import threading
from typing import Any
from urllib.parse import parse_qsl

from mobile_agent.errors import ModelError
from mobile_agent.model.wire import Response, WireError, wire_for

MAX_REPLY_BYTES = 2 * 1024 * 1024  # 2 MiB: a reply of 8192 tokens is well under 100 KB of JSON
MAX_ERROR_BYTES = 64 * 1024  # 64 KiB of an error body is read; the rest never is


class AttemptFailed(Exception):
    """One attempt failed: ``retryable`` says whether another attempt (maybe elsewhere) may succeed."""

    def __init__(
        self,
        description: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(description)
        self.description = description
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after


class Abort:
    """Lets the waiting thread cut an attempt's connection: once the response headers are in, its socket."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._socket: socket.socket | None = None
        self._lock = threading.Lock()

    def attach(self, sock: socket.socket | None) -> None:
        with self._lock:
            self._socket = sock
        if self.event.is_set():
            self.abort()

    def check(self) -> None:
        if self.event.is_set():
            raise AttemptFailed("abandoned", retryable=True)

    def abort(self) -> None:
        self.event.set()
        with self._lock:
            sock = self._socket
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes the helper thread's blocked read at once
            except OSError:
                pass


def dumps(body: Any) -> bytes:
    """JSON as the SDK writes a request body (openai._utils._json.openapi_dumps for plain data)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class ChatTransport:
    """HTTP to one endpoint (model/wire.py says how). Thread-safe."""

    def __init__(self, base_url: str, api_key: str) -> None:
        bare, _, query = base_url.partition("?")
        self.base = bare.rstrip("/")
        # A query in the base URL (?api_key=..., Azure's ?api-version=...) goes with every request.
        self.params = dict(parse_qsl(query, keep_blank_values=True)) or None
        self.headers = {"Authorization": f"Bearer {api_key}", "Accept": "application/json"}
        self.wire = wire_for(self.base)

    def prepare(self) -> None:
        self.wire.prepare()

    def close(self) -> None:
        self.wire.close()

    def chat(
        self, body: bytes, headers: dict[str, str], seconds: float, abort: Abort, *, stream: bool
    ) -> tuple[str, str | None, tuple[int, int]]:
        """One POST /chat/completions: (text, reasoning, (prompt tokens, completion tokens))."""
        sent = {**self.headers, "Content-Type": "application/json", **headers}
        url = f"{self.base}/chat/completions"
        try:
            with self.wire.request("POST", url, self.params, body, sent, seconds) as response:
                abort.attach(response.socket)
                if response.status >= 300:
                    raise _status_failure(response, abort)
                if stream:
                    return _read_events(response, abort)
                return _read_reply(_read_capped(response, abort, MAX_REPLY_BYTES))
        except WireError as exc:
            if abort.event.is_set():
                raise AttemptFailed("abandoned", retryable=True) from None
            what = "timed out" if exc.timed_out else f"connection failed ({exc})"
            raise AttemptFailed(what, retryable=True) from None

    def models(self, seconds: float) -> list[str]:
        """GET /models: the served model ids."""
        abort = Abort()
        url = f"{self.base}/models"
        try:
            with self.wire.request("GET", url, self.params, None, self.headers, seconds) as response:
                if response.status >= 300:
                    raise _status_failure(response, abort)
                data = json.loads(_read_capped(response, abort, MAX_REPLY_BYTES))
        except WireError as exc:
            raise AttemptFailed(f"connection failed ({exc})", retryable=True) from None
        except ValueError:
            raise AttemptFailed("GET /models did not answer JSON", retryable=False) from None
        entries = data.get("data") if isinstance(data, dict) else None
        return [m["id"] for m in entries or [] if isinstance(m, dict) and isinstance(m.get("id"), str)]


def _read_capped(response: Response, abort: Abort, cap: int) -> bytes:
    chunks, size = [], 0
    for chunk in response.chunks():
        abort.check()
        size += len(chunk)
        if size > cap:
            raise ModelError(
                f"the model server's reply is over {cap // 1024} KiB; it was refused unread",
                hint="check the server: a chat reply is a few KB (max_tokens bounds it)",
            )
        chunks.append(chunk)
    return b"".join(chunks)


def _status_failure(response: Response, abort: Abort) -> AttemptFailed:
    """An HTTP error status, with at most MAX_ERROR_BYTES of its body (the connection is dropped after)."""
    chunks, size = [], 0
    try:
        for chunk in response.chunks():
            abort.check()
            chunks.append(chunk[: MAX_ERROR_BYTES - size])
            size += len(chunks[-1])
            if size >= MAX_ERROR_BYTES:
                break
    except Exception:  # noqa: BLE001 - a broken body must not hide the status
        pass
    text = b"".join(chunks).decode("utf-8", "replace")
    excerpt = " ".join(text.split())[:200]
    status = response.status
    retry_after = _seconds(response.header("retry-after"))
    return AttemptFailed(
        f"HTTP {status}: {excerpt}",
        retryable=status == 429 or status >= 500,
        status=status,
        retry_after=retry_after,
    )


def _seconds(text: str) -> float | None:
    return float(text) if text.replace(".", "", 1).isdigit() else None


def _read_reply(raw: bytes) -> tuple[str, str | None, tuple[int, int]]:
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ModelError(
            f"the model server sent a reply that is not a JSON chat completion ({exc})",
            hint="check that the base URL points at an OpenAI-compatible endpoint",
        ) from None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices:
        raise ModelError(
            "the model server returned no choices",
            hint="check the server log; the request may have been cut by a server limit",
        )
    first = choices[0] if isinstance(choices[0], dict) else {}
    message = first.get("message") if isinstance(first.get("message"), dict) else {}
    return _text(message.get("content")), _reasoning(message), _usage(data.get("usage"))


def _read_events(response: Response, abort: Abort) -> tuple[str, str | None, tuple[int, int]]:
    """A streamed reply: ``data:`` events until ``[DONE]`` (the whole stream within MAX_REPLY_BYTES)."""
    text: list[str] = []
    thinking: list[str] = []
    tokens = (0, 0)
    size = 0
    for line in response.lines():
        abort.check()
        size += len(line) + 1
        if size > MAX_REPLY_BYTES:
            raise ModelError(
                f"the model server's streamed reply is over {MAX_REPLY_BYTES // 1024} KiB; it was refused",
                hint="check the server: a chat reply is a few KB (max_tokens bounds it)",
            )
        if not line.startswith("data:"):
            continue
        payload = line[5:].strip()
        if payload == "[DONE]":
            break
        try:
            chunk = json.loads(payload)
        except ValueError:
            continue
        if not isinstance(chunk, dict):
            continue
        if isinstance(chunk.get("error"), dict):
            raise ModelError(f"the model server sent an error in its stream: {str(chunk['error'])[:200]}")
        if chunk.get("usage"):
            tokens = _usage(chunk["usage"])
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict):
                continue
            if isinstance(delta.get("content"), str):
                text.append(delta["content"])
            if part := _reasoning(delta):
                thinking.append(part)
    return "".join(text), "".join(thinking) or None, tokens


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _reasoning(message: dict[str, Any]) -> str | None:
    """vLLM's split-off thinking: ``reasoning_content`` (older) or ``reasoning`` (current)."""
    for name in ("reasoning_content", "reasoning"):
        value = message.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def _usage(usage: Any) -> tuple[int, int]:
    if not isinstance(usage, dict):
        return (0, 0)
    counts = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return tuple(c if type(c) is int else 0 for c in counts)  # type: ignore[return-value]


__all__ = ["MAX_ERROR_BYTES", "MAX_REPLY_BYTES", "Abort", "AttemptFailed", "ChatTransport", "dumps"]
