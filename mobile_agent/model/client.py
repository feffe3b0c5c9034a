"""The chat-completions client every phone worker shares: timeouts, retries, a cap on requests in flight per
endpoint, and several endpoints serving one model.

Built on the OpenAI SDK against any OpenAI-compatible base URL (vLLM, SGLang, LMDeploy, cloud APIs). The SDK's
own retries are off: this client retries connection errors, timeouts, 429 and 5xx with exponential backoff and
jitter, moving to another endpoint when one fails; other 4xx are the caller's mistake and are raised at once.

    client = ModelClient(["http://gpu1:8000/v1", "http://gpu2:8000/v1"], "ui-venus-2-9b")
    reply = client.complete(messages, episode_id="ep-42")
    reply.text, reply.reasoning, reply.latency_s
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import openai
from openai.types.chat import ChatCompletion

from mobile_agent.errors import ModelError, ModelUnavailable, UserError

log = logging.getLogger(__name__)

EPISODE_HEADER = "X-Mobile-Agent-Episode"
API_KEY_ENV = ("MOBILE_AGENT_API_KEY", "OPENAI_API_KEY")
# An endpoint that failed this recently is tried after the others.
FAILURE_COOLDOWN_S = 10.0


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


def redact_url(url: str) -> str:
    """The URL without any user:password part, for logs and messages."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))


class _Slot:
    """Runtime state of one endpoint. Guarded by the client's condition variable."""

    def __init__(self, endpoint: Endpoint, capacity: int, sdk: openai.OpenAI) -> None:
        self.url = endpoint.base_url
        self.shown_url = redact_url(endpoint.base_url)
        self.capacity = capacity
        self.sdk = sdk
        self.in_flight = 0
        self.served = 0
        self.failures = 0
        self.failed_at: float | None = None

    def recently_failed(self, now: float) -> bool:
        return self.failed_at is not None and now - self.failed_at < FAILURE_COOLDOWN_S


def _is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, openai.APIConnectionError):  # includes timeouts
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return False


def _describe(exc: BaseException) -> str:
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
        if max_retries < 0 or max_in_flight < 1 or timeout <= 0:
            raise UserError(
                "bad model client limits",
                hint="max_retries >= 0, max_in_flight >= 1 and timeout > 0 are required",
            )
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.extra_body = dict(extra_body or {})
        self.stream = stream
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        key = resolve_api_key(api_key)
        self._cond = threading.Condition()
        self._slots: list[_Slot] = []
        for item in endpoints:
            endpoint = item if isinstance(item, Endpoint) else Endpoint(str(item))
            scheme = urlsplit(endpoint.base_url).scheme
            if scheme not in ("http", "https"):
                raise UserError(
                    f"model endpoint {redact_url(endpoint.base_url)!r} is not an http(s) URL",
                    hint="use a base URL such as http://127.0.0.1:8000/v1",
                )
            sdk = openai.OpenAI(base_url=endpoint.base_url, api_key=key, max_retries=0, timeout=timeout)
            self._slots.append(_Slot(endpoint, endpoint.max_in_flight or max_in_flight, sdk))

    # ----- public API ----------------------------------------------------------------------------------------
    @property
    def endpoints(self) -> list[str]:
        return [slot.shown_url for slot in self._slots]

    def complete(self, messages: list[dict[str, Any]], *, episode_id: str | None = None) -> Reply:
        """One chat completion, retried on transient failures. ModelUnavailable once retries are spent."""
        headers = {EPISODE_HEADER: str(episode_id)} if episode_id else None
        avoid: _Slot | None = None
        last_error: BaseException | None = None
        attempts = 0
        for attempt in range(self.max_retries + 1):
            slot = self._acquire(avoid)
            attempts += 1
            started = time.monotonic()
            failed = False
            try:
                text, reasoning, usage = self._request(slot, messages, headers)
            except openai.OpenAIError as exc:
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
                    time.sleep(self._backoff(attempt, last_error))
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
        raise ModelUnavailable(
            f"model {self.model!r} did not answer after {attempts} attempts: {_describe(last_error)}",  # type: ignore[arg-type]
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
            slot.sdk.close()

    def __enter__(self) -> ModelClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:  # never shows the API key
        return f"ModelClient(model={self.model!r}, endpoints={self.endpoints!r})"

    # ----- internals -----------------------------------------------------------------------------------------
    def _acquire(self, avoid: _Slot | None) -> _Slot:
        with self._cond:
            while True:
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
                self._cond.wait()

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
        delay = min(self.max_backoff_s, self.backoff_s * (2**attempt))
        if isinstance(exc, openai.APIStatusError) and exc.status_code == 429:
            retry_after = exc.response.headers.get("retry-after", "")
            if retry_after.replace(".", "", 1).isdigit():
                delay = max(delay, min(float(retry_after), self.max_backoff_s))
        return delay * random.uniform(0.5, 1.5)

    def _request(
        self, slot: _Slot, messages: list[dict[str, Any]], headers: dict[str, str] | None
    ) -> tuple[str, str | None, tuple[int, int]]:
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
            return self._request_streamed(slot, kwargs)
        # `post` sends the body as is: `chat.completions.create` first walks every message part against its type
        # hints, which costs ~20 ms of CPU per step on a history of screenshots (base64 strings included).
        body = {k: v for k, v in kwargs.items() if k not in ("extra_body", "extra_headers")}
        body.update(self.extra_body)
        response = slot.sdk.post(
            "/chat/completions", cast_to=ChatCompletion, body=body, options={"headers": headers or {}}
        )
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
        self, slot: _Slot, kwargs: dict[str, Any]
    ) -> tuple[str, str | None, tuple[int, int]]:
        text: list[str] = []
        reasoning: list[str] = []
        tokens = (0, 0)
        stream = slot.sdk.chat.completions.create(
            **kwargs, stream=True, stream_options={"include_usage": True}
        )
        with stream:
            for chunk in stream:
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
        what = _describe(exc)
        hint = f"the server at {slot.shown_url} refused the request ({what.split(':', 1)[0]}); fix it, do not retry"
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code in (401, 403):
                hint = "check the API key (--api-key, MOBILE_AGENT_API_KEY or OPENAI_API_KEY)"
            elif exc.status_code == 404:
                hint = f"check the model name {self.model!r} (GET /v1/models lists the served ones)"
                if not slot.url.rstrip("/").endswith("/v1"):
                    hint += "; OpenAI-compatible servers usually want a base URL ending in /v1"
            elif exc.status_code == 400:
                hint = f"the request was rejected: {what}; check max_tokens, the image size and the server limits"
        return ModelError(f"model request to {slot.shown_url} failed: {what}", hint=hint)


__all__ = [
    "EPISODE_HEADER",
    "Endpoint",
    "EndpointStatus",
    "ModelClient",
    "Reply",
    "redact_url",
    "resolve_api_key",
]
