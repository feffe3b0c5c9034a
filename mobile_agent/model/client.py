"""The chat-completions client every phone worker shares: timeouts, retries, a cap on requests in flight per
endpoint, and several endpoints serving one model.

Built on the OpenAI SDK against any OpenAI-compatible base URL (vLLM, SGLang, LMDeploy, cloud APIs). The SDK's
own retries are off: this client retries connection errors, timeouts, 429 and 5xx with exponential backoff and
jitter, moving to another endpoint when one fails; other 4xx are the caller's mistake and are raised at once.

Every wait is bounded by the wall clock, not per read (a body that trickles a byte every few seconds never trips
a read timeout): one attempt lasts at most ``timeout``, the whole call with its retries at most ``total_timeout``,
and neither outlives the caller's ``deadline``. An attempt runs on a helper thread; at its bound the caller stops
waiting and the attempt's connection is shut down.

    client = ModelClient(["http://gpu1:8000/v1", "http://gpu2:8000/v1"], "ui-venus-2-9b")
    reply = client.complete(messages, episode_id="ep-42")
    reply.text, reply.reasoning, reply.latency_s
"""

from __future__ import annotations

import json
import logging
import os
import random
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from mobile_agent.errors import ModelError, ModelUnavailable, UserError
from mobile_agent.model.images import request_body
from mobile_agent.privacy.redact import redact_text, redact_url, register_secret, secrets_in_url
from mobile_agent.waits.deadlines import Abandoned, Deadline, call_within

if TYPE_CHECKING:  # the SDK is imported where it is used: it costs ~0.3 s of CPU (see ModelClient.prepare)
    import httpx2
    import openai

log = logging.getLogger(__name__)

EPISODE_HEADER = "X-Mobile-Agent-Episode"
API_KEY_ENV = ("MOBILE_AGENT_API_KEY", "OPENAI_API_KEY")
# An endpoint that failed this recently is tried after the others.
FAILURE_COOLDOWN_S = 10.0
# Without an explicit total_timeout, a call with its retries may take this many attempts' worth of time.
DEFAULT_TOTAL_FACTOR = 2.5


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    max_in_flight: int | None = None  # None: the client's default


@dataclass(frozen=True)
class Reply:
    text: str
    reasoning: str | None
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    endpoint: str
    attempts: int


@dataclass(frozen=True)
class EndpointStatus:
    """What ``probe`` found at one endpoint (for ``doctor``)."""

    base_url: str
    ok: bool
    models: list[str] = field(default_factory=list)
    error: str | None = None


def resolve_api_key(api_key: str | None) -> str:
    """The argument, else ``MOBILE_AGENT_API_KEY``, else ``OPENAI_API_KEY``, else "EMPTY" (what vLLM expects)."""
    if api_key:
        return api_key
    for name in API_KEY_ENV:
        value = os.environ.get(name)
        if value:
            return value
    return "EMPTY"


class _Slot:
    """Runtime state of one endpoint. Guarded by the client's condition variable."""

    def __init__(self, endpoint: Endpoint, capacity: int, make_sdk: Callable[[], openai.OpenAI]) -> None:
        self.url = endpoint.base_url
        self.shown_url = redact_url(endpoint.base_url)
        self.capacity = capacity
        self._make_sdk = make_sdk
        self._sdk: openai.OpenAI | None = None
        self._sdk_lock = threading.Lock()
        self.in_flight = 0
        self.served = 0
        self.failures = 0
        self.failed_at: float | None = None

    def recently_failed(self, now: float) -> bool:
        return self.failed_at is not None and now - self.failed_at < FAILURE_COOLDOWN_S

    @property
    def sdk(self) -> openai.OpenAI:
        """The SDK client, built on first use (or by ModelClient.prepare on a helper thread)."""
        with self._sdk_lock:
            if self._sdk is None:
                self._sdk = self._make_sdk()
            return self._sdk

    def close(self) -> None:
        with self._sdk_lock:
            if self._sdk is not None:
                self._sdk.close()


class _AttemptTimedOut(Exception):
    """One attempt ran past its wall-clock bound (a hang, or a body that trickles)."""


class _Abort:
    """Lets the waiting thread cut an attempt's connection: once the response headers are in, its socket."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._response: httpx2.Response | None = None
        self._lock = threading.Lock()

    def attach(self, response: httpx2.Response) -> None:
        with self._lock:
            self._response = response
        if self.event.is_set():
            self.abort()

    def check(self) -> None:
        if self.event.is_set():
            raise _AttemptTimedOut("abandoned")

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


def _is_retryable(exc: BaseException) -> bool:
    import openai

    if isinstance(exc, (_AttemptTimedOut, openai.APIConnectionError)):  # a connection error includes timeouts
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return False


def _describe(exc: BaseException) -> str:
    """One line on a failed request, without any secret an error body may echo (the Authorization header)."""
    return redact_text(_describe_raw(exc))


def _describe_raw(exc: BaseException) -> str:
    import openai

    if isinstance(exc, _AttemptTimedOut):
        return str(exc)
    if isinstance(exc, openai.APITimeoutError):
        return "timed out"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return f"connection failed ({type(cause).__name__}: {str(cause)[:120]})"
    if isinstance(exc, openai.APIStatusError):
        try:
            body = exc.response.text
        except Exception:  # noqa: BLE001 - a broken body must not hide the status
            body = exc.message
        excerpt = " ".join(body.split())[:200]
        return f"HTTP {exc.status_code}: {excerpt}"
    return f"{type(exc).__name__}: {str(exc)[:200]}"


def _extra(obj: Any, name: str) -> Any:
    """A field the SDK's typed models do not declare (vLLM's ``reasoning_content``)."""
    value = getattr(obj, name, None)
    if value is None:
        extra = getattr(obj, "model_extra", None) or {}
        value = extra.get(name)
    return value


class ModelClient:
    """Thread-safe: one instance is shared by every phone worker of a run."""

    def __init__(
        self,
        endpoints: Sequence[str] | Sequence[Endpoint],
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 120.0,
        total_timeout: float | None = None,
        max_retries: int = 4,
        max_in_flight: int = 4,
        temperature: float = 0.0,
        max_tokens: int = 8192,
        extra_body: dict[str, Any] | None = None,
        stream: bool = False,
        backoff_s: float = 0.5,
        max_backoff_s: float = 8.0,
    ) -> None:
        if not endpoints:
            raise UserError(
                "no model endpoint given", hint="pass a base URL such as http://127.0.0.1:8000/v1"
            )
        if not model or not model.strip():
            raise UserError("no model name given", hint="pass the served model name (see GET /v1/models)")
        if max_retries < 0 or max_in_flight < 1 or timeout <= 0 or (total_timeout or 1) <= 0:
            raise UserError(
                "bad model client limits",
                hint="max_retries >= 0, max_in_flight >= 1 and timeout, total_timeout > 0 are required",
            )
        self.model = model
        self.timeout = timeout  # one attempt, wall clock
        self.total_timeout = total_timeout or DEFAULT_TOTAL_FACTOR * timeout  # the call with its retries
        self.max_retries = max_retries
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.extra_body = dict(extra_body or {})
        self.stream = stream
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        key = resolve_api_key(api_key)
        register_secret(key)  # masked wherever it shows up later: an echoing endpoint, a log line, the store
        self._cond = threading.Condition()
        self._slots: list[_Slot] = []
        for item in endpoints:
            endpoint = item if isinstance(item, Endpoint) else Endpoint(str(item))
            secrets_in_url(endpoint.base_url)
            scheme = urlsplit(endpoint.base_url).scheme
            if scheme not in ("http", "https"):
                raise UserError(
                    f"model endpoint {redact_url(endpoint.base_url)!r} is not an http(s) URL",
                    hint="use a base URL such as http://127.0.0.1:8000/v1",
                )
            try:  # the SDK client is built at the first request; a bad port is still a user error up front
                urlsplit(endpoint.base_url).port  # noqa: B018
            except ValueError as exc:
                raise UserError(
                    f"model endpoint {redact_url(endpoint.base_url)!r} is not a valid URL ({exc})",
                    hint="use a base URL such as http://127.0.0.1:8000/v1",
                ) from None
            # A query in the base URL (?api_key=..., Azure's ?api-version=...) goes with every request; left in
            # the base URL, the SDK would append the route after it.
            bare, _, query = endpoint.base_url.partition("?")
            options = {
                "base_url": bare,
                "api_key": key,
                "max_retries": 0,
                "timeout": timeout,
                "default_query": dict(parse_qsl(query, keep_blank_values=True)) or None,
            }
            self._slots.append(
                _Slot(endpoint, endpoint.max_in_flight or max_in_flight, lambda o=options: _sdk_client(o))
            )

    # ----- public API ----------------------------------------------------------------------------------------
    def prepare(self) -> threading.Thread:
        """Import the SDK and build its clients on a helper thread now; the first request waits for it if it must.
        `run` calls this as its episode starts, so the import overlaps the phone's first screenshot."""

        def build() -> None:
            try:
                for slot in self._slots:
                    slot.sdk  # noqa: B018 - built on access
            except Exception:  # noqa: BLE001 - the first request builds it again and reports the failure
                log.debug("preparing the model client failed", exc_info=True)

        thread = threading.Thread(target=build, name="model-client-prepare", daemon=True)
        thread.start()
        return thread

    @property
    def endpoints(self) -> list[str]:
        return [slot.shown_url for slot in self._slots]

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        episode_id: str | None = None,
        deadline: Deadline | None = None,
    ) -> Reply:
        """One chat completion, retried on transient failures. ModelUnavailable once retries (or
        ``total_timeout``) are spent; DeadlineExceeded when ``deadline`` (the caller's) passes first."""
        import openai

        headers = {EPISODE_HEADER: str(episode_id)} if episode_id else None
        limit = Deadline.after(self.total_timeout, f"{self.total_timeout:.0f} s")
        bound = limit.sooner(deadline)
        avoid: _Slot | None = None
        last_error: BaseException | None = None
        attempts = 0
        for attempt in range(self.max_retries + 1):
            slot = self._acquire(avoid, bound)
            if slot is None:
                break
            attempts += 1
            started = time.monotonic()
            failed = False
            try:
                text, reasoning, usage = self._attempt(slot, messages, headers, bound)
            except (openai.OpenAIError, _AttemptTimedOut) as exc:
                if not _is_retryable(exc):
                    raise self._request_error(slot, exc) from exc
                failed = True
                last_error, avoid = exc, slot
                log.warning(
                    "model request to %s failed (attempt %d of %d): %s",
                    slot.shown_url,
                    attempt + 1,
                    self.max_retries + 1,
                    _describe(exc),
                )
            finally:
                self._release(slot, failed)
            if failed:
                if attempt < self.max_retries:
                    time.sleep(bound.bound(self._backoff(attempt, last_error)))
                if bound.expired:
                    break
                continue
            return Reply(
                text=text,
                reasoning=reasoning,
                prompt_tokens=usage[0],
                completion_tokens=usage[1],
                latency_s=time.monotonic() - started,
                endpoint=slot.shown_url,
                attempts=attempts,
            )
        if deadline is not None and deadline.expired:
            raise deadline.exceeded(f"the model request ({attempts} attempts)")
        why = _describe(last_error) if last_error is not None else "no endpoint was free"
        within = f" within {self.total_timeout:.0f} s" if limit.expired else ""
        raise ModelUnavailable(
            f"model {self.model!r} did not answer after {attempts} attempts{within}: {why}",
            hint=f"check that the server at {', '.join(self.endpoints)} is up and serving {self.model!r}",
        )

    def list_models(self) -> list[str]:
        """The model ids served by the first endpoint that answers."""
        errors = []
        for status in self.probe():
            if status.ok:
                return status.models
            errors.append(f"{status.base_url}: {status.error}")
        raise ModelUnavailable(
            "no model endpoint answered GET /models: " + "; ".join(errors),
            hint="start the model server (vLLM: `vllm serve <model>`) or fix the base URL",
        )

    def probe(self) -> list[EndpointStatus]:
        """GET /models on every endpoint, without retries."""
        import openai

        out = []
        for slot in self._slots:
            try:
                page = slot.sdk.models.list()
                out.append(EndpointStatus(slot.shown_url, True, [m.id for m in page.data]))
            except openai.OpenAIError as exc:
                out.append(EndpointStatus(slot.shown_url, False, error=_describe(exc)))
        return out

    def stats(self) -> list[dict[str, Any]]:
        with self._cond:
            return [
                {
                    "endpoint": s.shown_url,
                    "in_flight": s.in_flight,
                    "capacity": s.capacity,
                    "served": s.served,
                    "failures": s.failures,
                }
                for s in self._slots
            ]

    def close(self) -> None:
        for slot in self._slots:
            slot.close()

    def __enter__(self) -> ModelClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:  # never shows the API key
        return f"ModelClient(model={self.model!r}, endpoints={self.endpoints!r})"

    # ----- internals -----------------------------------------------------------------------------------------
    def _acquire(self, avoid: _Slot | None, deadline: Deadline) -> _Slot | None:
        """A free endpoint slot, or None when the deadline passes first."""
        with self._cond:
            while True:
                if deadline.expired:
                    return None
                now = time.monotonic()
                free = [s for s in self._slots if s.in_flight < s.capacity]
                if free:
                    slot = min(
                        free,
                        key=lambda s: (
                            s is avoid,
                            s.recently_failed(now),
                            s.in_flight / s.capacity,
                            s.served,
                        ),
                    )
                    slot.in_flight += 1
                    return slot
                self._cond.wait(timeout=min(1.0, deadline.remaining()))

    def _release(self, slot: _Slot, failed: bool) -> None:
        with self._cond:
            slot.in_flight -= 1
            if failed:
                slot.failures += 1
                slot.failed_at = time.monotonic()
            else:
                slot.served += 1
                slot.failed_at = None
            self._cond.notify()

    def _backoff(self, attempt: int, exc: BaseException | None) -> float:
        import openai

        delay = min(self.max_backoff_s, self.backoff_s * (2**attempt))
        if isinstance(exc, openai.APIStatusError) and exc.status_code == 429:
            retry_after = exc.response.headers.get("retry-after", "")
            if retry_after.replace(".", "", 1).isdigit():
                delay = max(delay, min(float(retry_after), self.max_backoff_s))
        return delay * random.uniform(0.5, 1.5)

    def _attempt(
        self, slot: _Slot, messages: list[dict[str, Any]], headers: dict[str, str] | None, deadline: Deadline
    ) -> tuple[str, str | None, tuple[int, int]]:
        """One request, bounded by the wall clock: ``timeout``, or less when the deadline is nearer."""
        seconds = max(0.05, deadline.bound(self.timeout))
        abort = _Abort()
        try:
            return call_within(
                lambda: self._request(slot, messages, headers, seconds, abort),
                seconds,
                name="model-request",
                on_abandon=abort.abort,
            )
        except Abandoned:
            raise _AttemptTimedOut(f"timed out (no complete answer within {seconds:.1f} s)") from None

    def _request(
        self,
        slot: _Slot,
        messages: list[dict[str, Any]],
        headers: dict[str, str] | None,
        seconds: float,
        abort: _Abort,
    ) -> tuple[str, str | None, tuple[int, int]]:
        import httpx2
        from openai._utils._json import openapi_dumps  # how the SDK writes a JSON body
        from openai.types.chat import ChatCompletion

        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.extra_body:
            kwargs["extra_body"] = self.extra_body
        if headers:
            kwargs["extra_headers"] = headers
        if self.stream:
            return self._request_streamed(slot, {**kwargs, "timeout": seconds}, abort)
        # `post` sends the body as is: `chat.completions.create` first walks every message part against its type
        # hints, which costs ~20 ms of CPU per step on a history of screenshots (base64 strings included); the
        # bytes are the SDK's JSON. The body is read here, chunk by chunk, so a cut connection ends the read.
        body = {k: v for k, v in kwargs.items() if k not in ("extra_body", "extra_headers")}
        body.update(self.extra_body)
        raw = slot.sdk.post(
            "/chat/completions",
            cast_to=httpx2.Response,
            content=request_body(body, openapi_dumps),
            options={"headers": headers or {}, "timeout": seconds},
            stream=True,
        )
        abort.attach(raw)
        chunks = []
        try:
            for chunk in raw.iter_bytes():
                abort.check()
                chunks.append(chunk)
        finally:
            raw.close()
        try:
            data = json.loads(b"".join(chunks))
            plain = _plain_reply(data)
            if plain is not None:
                return plain
            response = ChatCompletion.construct(**data)
        except (ValueError, TypeError) as exc:
            raise ModelError(
                f"the model server at {slot.shown_url} sent a reply that is not a JSON chat completion ({exc})",
                hint="check that the base URL points at an OpenAI-compatible endpoint",
            ) from None
        if not response.choices:
            raise ModelError(
                f"the model server at {slot.shown_url} returned no choices",
                hint="check the server log; the request may have been cut by a server limit",
            )
        message = response.choices[0].message
        reasoning = _extra(message, "reasoning_content") or _extra(message, "reasoning")
        usage = response.usage
        tokens = (usage.prompt_tokens or 0, usage.completion_tokens or 0) if usage else (0, 0)
        return message.content or "", reasoning, tokens

    def _request_streamed(
        self, slot: _Slot, kwargs: dict[str, Any], abort: _Abort
    ) -> tuple[str, str | None, tuple[int, int]]:
        text: list[str] = []
        reasoning: list[str] = []
        tokens = (0, 0)
        stream = slot.sdk.chat.completions.create(
            **kwargs, stream=True, stream_options={"include_usage": True}
        )
        with stream:
            abort.attach(stream.response)
            for chunk in stream:
                abort.check()
                if chunk.usage:
                    tokens = (chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
                for choice in chunk.choices:
                    delta = choice.delta
                    if delta.content:
                        text.append(delta.content)
                    thinking = _extra(delta, "reasoning_content") or _extra(delta, "reasoning")
                    if thinking:
                        reasoning.append(thinking)
        return "".join(text), "".join(reasoning) or None, tokens

    def _request_error(self, slot: _Slot, exc: openai.OpenAIError) -> ModelError:
        import openai

        what = _describe(exc)
        hint = f"the server at {slot.shown_url} refused the request ({what.split(':', 1)[0]}); fix it, do not retry"
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code in (401, 403):
                hint = "check the API key (--api-key, MOBILE_AGENT_API_KEY or OPENAI_API_KEY)"
            elif exc.status_code == 404:
                hint = f"check the model name {self.model!r} (GET /v1/models lists the served ones)"
                if not slot.url.split("?", 1)[0].rstrip("/").endswith("/v1"):
                    hint += "; OpenAI-compatible servers usually want a base URL ending in /v1"
            elif exc.status_code == 400:
                hint = f"the request was rejected: {what}; check max_tokens, the image size and the server limits"
        return ModelError(f"model request to {slot.shown_url} failed: {what}", hint=hint)


def _plain_reply(data: Any) -> tuple[str, str | None, tuple[int, int]] | None:
    """What ``_request`` reads off ``ChatCompletion.construct(**data)``, read off the dict when the reply has the
    usual shape (the SDK's models cost ~0.2 ms a step); None for any other shape."""
    choices = data.get("choices") if type(data) is dict else None
    first = choices[0] if type(choices) is list and choices else None
    message = first.get("message") if type(first) is dict else None
    usage = data.get("usage") if type(message) is dict else None
    if type(message) is not dict or (usage is not None and type(usage) is not dict):
        return None
    text, reasoning = message.get("content"), message.get("reasoning_content") or message.get("reasoning")
    counts = (0, 0) if usage is None else (usage.get("prompt_tokens"), usage.get("completion_tokens"))
    if all(type(c) is int for c in counts) and all(v is None or type(v) is str for v in (text, reasoning)):
        return text or "", reasoning, (counts[0] or 0, counts[1] or 0)
    return None


def _sdk_client(options: dict[str, Any]) -> openai.OpenAI:
    import openai

    return openai.OpenAI(**options)


__all__ = ["EPISODE_HEADER", "Endpoint", "EndpointStatus", "ModelClient", "Reply", "resolve_api_key"]
