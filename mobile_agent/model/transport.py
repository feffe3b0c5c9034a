"""The HTTP side of a chat-completions request, on httpx: one connection pool per endpoint, bodies read in bounds.

The OpenAI SDK is not used to send: importing it costs ~0.55 s of CPU, building a client ~20 ms (and a TLS
context even for ``http://``), and it reads an error body whole (a 50 MB one cost 1.2 GB of memory). What the
runtime used of it is small: one POST (``Authorization: Bearer``, the base URL's query with every request, the
body as the SDK writes JSON: ``ensure_ascii=False``, compact separators, no NaN), its status errors, and the
server-sent events of a streamed reply. httpx (the SDK's own HTTP library) keeps connections alive, honours the
proxy environment and verifies TLS; a TLS context is built once per process, and only for ``https://``.

Bounds: a reply body (the JSON, or the whole stream) is read up to ``MAX_REPLY_BYTES`` and refused beyond it; of an
error body only ``MAX_ERROR_BYTES`` are read (for the message) and the connection is dropped unread.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import threading
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from mobile_agent.errors import ModelError

if TYPE_CHECKING:
    import httpx2

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
        self._response: Any = None
        self._lock = threading.Lock()

    def attach(self, response: Any) -> None:
        with self._lock:
            self._response = response
        if self.event.is_set():
            self.abort()

    def check(self) -> None:
        if self.event.is_set():
            raise AttemptFailed("abandoned", retryable=True)

    def abort(self) -> None:
        self.event.set()
        with self._lock:
            response = self._response
        stream = response.extensions.get("network_stream") if response is not None else None
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes the helper thread's blocked read at once
            except OSError:
                pass


@cache
def _tls_context() -> ssl.SSLContext:
    """What httpx verifies with by default (certifi's bundle, or SSL_CERT_FILE / SSL_CERT_DIR), built once."""
    cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
    if not cafile and not capath:
        try:
            import certifi

            cafile = certifi.where()
        except ImportError:
            pass
    return ssl.create_default_context(cafile=cafile or None, capath=capath or None)


@cache
def _plain_context() -> ssl.SSLContext:
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # never used: the endpoint speaks plain HTTP


def dumps(body: Any) -> bytes:
    """JSON as the SDK writes a request body (openai._utils._json.openapi_dumps for plain data)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class ChatTransport:
    """HTTP to one endpoint. Thread-safe (httpx's client is)."""

    def __init__(self, base_url: str, api_key: str) -> None:
        bare, _, query = base_url.partition("?")
        self.base = bare.rstrip("/")
        # A query in the base URL (?api_key=..., Azure's ?api-version=...) goes with every request.
        self.params = dict(parse_qsl(query, keep_blank_values=True)) or None
        self.headers = {"Authorization": f"Bearer {api_key}", "Accept": "application/json"}
        self._client: httpx2.Client | None = None
        self._lock = threading.Lock()

    def client(self) -> httpx2.Client:
        with self._lock:
            if self._client is None:
                import httpx2

                tls = _tls_context() if self.base.startswith("https:") else _plain_context()
                limits = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
                self._client = httpx2.Client(verify=tls, limits=limits, follow_redirects=False)
            return self._client

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    # ----- requests ---------------------------------------------------------------------------------------------
    def chat(
        self, body: bytes, headers: dict[str, str], seconds: float, abort: Abort, *, stream: bool
    ) -> tuple[str, str | None, tuple[int, int]]:
        """One POST /chat/completions: (text, reasoning, (prompt tokens, completion tokens))."""
        import httpx2

        sent = {**self.headers, "Content-Type": "application/json", **headers}
        try:
            with self.client().stream(
                "POST",
                f"{self.base}/chat/completions",
                content=body,
                headers=sent,
                params=self.params,
                timeout=seconds,
            ) as response:
                abort.attach(response)
                if response.status_code >= 300:
                    raise _status_failure(response, abort)
                if stream:
                    return _read_events(response, abort)
                return _read_reply(_read_capped(response, abort, MAX_REPLY_BYTES))
        except httpx2.TimeoutException:
            raise AttemptFailed("timed out", retryable=True) from None
        except httpx2.HTTPError as exc:
            if abort.event.is_set():
                raise AttemptFailed("abandoned", retryable=True) from None
            cause = exc.__cause__ or exc
            raise AttemptFailed(
                f"connection failed ({type(cause).__name__}: {str(cause)[:120]})", retryable=True
            ) from None

    def models(self, seconds: float) -> list[str]:
        """GET /models: the served model ids."""
        import httpx2

        abort = Abort()
        try:
            with self.client().stream(
                "GET", f"{self.base}/models", headers=self.headers, params=self.params, timeout=seconds
            ) as response:
                if response.status_code >= 300:
                    raise _status_failure(response, abort)
                data = json.loads(_read_capped(response, abort, MAX_REPLY_BYTES))
        except httpx2.HTTPError as exc:
            raise AttemptFailed(
                f"connection failed ({type(exc).__name__}: {str(exc)[:120]})", retryable=True
            ) from None
        except ValueError:
            raise AttemptFailed("GET /models did not answer JSON", retryable=False) from None
        entries = data.get("data") if isinstance(data, dict) else None
        return [m["id"] for m in entries or [] if isinstance(m, dict) and isinstance(m.get("id"), str)]


def _read_capped(response: Any, abort: Abort, cap: int) -> bytes:
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        abort.check()
        size += len(chunk)
        if size > cap:
            raise ModelError(
                f"the model server's reply is over {cap // 1024} KiB; it was refused unread",
                hint="check the server: a chat reply is a few KB (max_tokens bounds it)",
            )
        chunks.append(chunk)
    return b"".join(chunks)


def _status_failure(response: Any, abort: Abort) -> AttemptFailed:
    """An HTTP error status, with at most MAX_ERROR_BYTES of its body (the connection is dropped after)."""
    chunks, size = [], 0
    try:
        for chunk in response.iter_bytes():
            abort.check()
            chunks.append(chunk[: MAX_ERROR_BYTES - size])
            size += len(chunks[-1])
            if size >= MAX_ERROR_BYTES:
                break
    except Exception:  # noqa: BLE001 - a broken body must not hide the status
        pass
    text = b"".join(chunks).decode("utf-8", "replace")
    excerpt = " ".join(text.split())[:200]
    status = response.status_code
    retry_after = _seconds(response.headers.get("retry-after", ""))
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


def _read_events(response: Any, abort: Abort) -> tuple[str, str | None, tuple[int, int]]:
    """A streamed reply: ``data:`` events until ``[DONE]`` (the whole stream within MAX_REPLY_BYTES)."""
    text: list[str] = []
    thinking: list[str] = []
    tokens = (0, 0)
    size = 0
    for line in response.iter_lines():
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
