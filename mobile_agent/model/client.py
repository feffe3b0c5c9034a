"""The chat-completions client every phone worker shares: timeouts, retries, a cap on requests in flight per
endpoint, and several endpoints serving one model.

It speaks to any OpenAI-compatible base URL (vLLM, SGLang, LMDeploy, cloud APIs) over httpx (model/transport.py:
the OpenAI SDK's own HTTP library, without the SDK). It retries connection errors, timeouts, 429 and 5xx with
exponential backoff and jitter, moving to another endpoint when one fails; other 4xx are the caller's mistake and
are raised at once. Reply bodies are read up to ``MAX_REPLY_BYTES`` (2 MiB) and error bodies up to
``MAX_ERROR_BYTES`` (64 KiB).

Every wait is bounded by the wall clock, not per read (a body that trickles a byte every few seconds never trips
a read timeout): one attempt lasts at most ``timeout``, the whole call with its retries at most ``total_timeout``,
and neither outlives the caller's ``deadline``. An attempt runs on a helper thread; at its bound the caller stops
waiting and the attempt's connection is shut down.

``submit`` sends a request and returns at once (the loop asks the model while the phone's view tree is read);
``PendingReply.discard`` cuts a request whose reply will not be used, and the episode's next request says how many
replies went unused (``UNUSED_HEADER``), which a scripted model (the simulator's) needs to stay in step.

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
from concurrent.futures import Future
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from mobile_agent.errors import ModelError, ModelUnavailable, UserError
from mobile_agent.model.base_url import check_base_url
from mobile_agent.model.images import request_body
from mobile_agent.model.transport import (
    MAX_ERROR_BYTES,
    MAX_REPLY_BYTES,
    Abort,
    AttemptFailed,
    ChatTransport,
    dumps,
)
from mobile_agent.privacy.redact import redact_text, redact_url, register_secret, secrets_in_url
from mobile_agent.waits.deadlines import Abandoned, Deadline, call_within

log = logging.getLogger(__name__)

EPISODE_HEADER = "X-Mobile-Agent-Episode"
# On an episode's request: how many replies to its earlier requests were not used (a popup rule acted instead).
UNUSED_HEADER = "X-Mobile-Agent-Unused-Replies"
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


class RequestDiscarded(ModelError):
    """The request was cut because its reply would not be used."""

    kind = "discarded"


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

    def __init__(self, endpoint: Endpoint, capacity: int, transport: ChatTransport) -> None:
        self.url = endpoint.base_url
        self.shown_url = redact_url(endpoint.base_url)
        self.capacity = capacity
        self.transport = transport
        self.in_flight = 0
        self.served = 0
        self.failures = 0
        self.failed_at: float | None = None

    def recently_failed(self, now: float) -> bool:
        return self.failed_at is not None and now - self.failed_at < FAILURE_COOLDOWN_S


class PendingReply:
    """A request on its way (ModelClient.submit)."""

    def __init__(self, client: ModelClient, episode_id: str | None) -> None:
        self._client = client
        self._episode_id = episode_id
        self.future: Future[Reply] = Future()
        self.discarded = threading.Event()
        self._abort: Abort | None = None
        self._lock = threading.Lock()

    def result(self) -> Reply:
        return self.future.result()

    def discard(self) -> None:
        """The reply will not be used: cut the request if it is still on its way, and, when it has left (the
        server may have answered it), tell the episode's next request."""
        with self._lock:
            self.discarded.set()
            abort = self._abort
        if abort is not None:
            abort.abort()
            self._client._note_unused(self._episode_id)
        self.future.add_done_callback(lambda f: f.exception())  # nobody waits for it: its failure is no news

    def attempt(self, abort: Abort) -> None:
        """The request is about to leave; a discarded one never does."""
        with self._lock:
            if self.discarded.is_set():
                raise RequestDiscarded("the request was discarded")
            self._abort = abort


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
        self._unused: dict[str | None, int] = {}
        self._slots: list[_Slot] = []
        for item in endpoints:
            endpoint = item if isinstance(item, Endpoint) else Endpoint(str(item))
            check_base_url(endpoint.base_url)
            secrets_in_url(endpoint.base_url)
            capacity = endpoint.max_in_flight or max_in_flight
            self._slots.append(_Slot(endpoint, capacity, ChatTransport(endpoint.base_url, key)))

    # ----- public API ----------------------------------------------------------------------------------------
    def prepare(self) -> threading.Thread:
        """Build the HTTP clients on a helper thread now (httpx's import, a TLS context for https endpoints); the
        first request waits for them if it must. `run` calls this as its episode starts."""

        def build() -> None:
            try:
                for slot in self._slots:
                    slot.transport.prepare()
            except Exception:  # noqa: BLE001 - the first request builds it again and reports the failure
                log.debug("preparing the model client failed", exc_info=True)

        thread = threading.Thread(target=build, name="model-client-prepare", daemon=True)
        thread.start()
        return thread

    @property
    def endpoints(self) -> list[str]:
        return [slot.shown_url for slot in self._slots]

    def submit(
        self,
        messages: list[dict[str, Any]],
        *,
        episode_id: str | None = None,
        deadline: Deadline | None = None,
        hold: AbstractContextManager[Any] | None = None,
    ) -> PendingReply:
        """``complete`` on a thread of its own: the request leaves now, the reply is ``result()``. ``hold`` (a
        process-wide cap on requests in flight) is entered around the request."""
        pending = PendingReply(self, episode_id)

        def run() -> None:
            try:
                with hold if hold is not None else nullcontext():
                    reply = self.complete(messages, episode_id=episode_id, deadline=deadline, pending=pending)
            except BaseException as exc:  # noqa: BLE001 - handed to whoever waits for the reply
                pending.future.set_exception(exc)
            else:
                pending.future.set_result(reply)

        threading.Thread(target=run, name="model-request", daemon=True).start()
        return pending

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        episode_id: str | None = None,
        deadline: Deadline | None = None,
        pending: PendingReply | None = None,
    ) -> Reply:
        """One chat completion, retried on transient failures. ModelUnavailable once retries (or
        ``total_timeout``) are spent; DeadlineExceeded when ``deadline`` (the caller's) passes first."""
        headers = self._headers(episode_id)
        limit = Deadline.after(self.total_timeout, f"{self.total_timeout:.0f} s")
        bound = limit.sooner(deadline)
        body = request_body(self._body(messages), dumps)
        avoid: _Slot | None = None
        last_error: AttemptFailed | None = None
        attempts = 0
        for attempt in range(self.max_retries + 1):
            if pending is not None and pending.discarded.is_set():
                raise RequestDiscarded("the request was discarded")
            slot = self._acquire(avoid, bound)
            if slot is None:
                break
            attempts += 1
            started = time.monotonic()
            failed = False
            try:
                text, reasoning, usage = self._attempt(slot, body, headers, bound, pending)
            except AttemptFailed as exc:
                if pending is not None and pending.discarded.is_set():
                    raise RequestDiscarded("the request was discarded") from None
                if not exc.retryable:
                    raise self._request_error(slot, exc) from None
                failed = True
                last_error, avoid = exc, slot
                log.warning(
                    "model request to %s failed (attempt %d of %d): %s",
                    slot.shown_url,
                    attempt + 1,
                    self.max_retries + 1,
                    redact_text(exc.description),
                )
            except RequestDiscarded:
                if attempts == 1 and UNUSED_HEADER in headers:  # it never left: the next one tells
                    self._note_unused(episode_id, int(headers[UNUSED_HEADER]))
                raise
            except ModelError as exc:  # a reply that cannot be read (not JSON, no choices, over the cap)
                message = exc.message.replace("the model server", f"the model server at {slot.shown_url}", 1)
                raise ModelError(message, hint=exc.hint) from None
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
        why = redact_text(last_error.description) if last_error is not None else "no endpoint was free"
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
        out = []
        for slot in self._slots:
            try:
                models = slot.transport.models(min(self.timeout, 30.0))
                out.append(EndpointStatus(slot.shown_url, True, models))
            except AttemptFailed as exc:
                out.append(EndpointStatus(slot.shown_url, False, error=redact_text(exc.description)))
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
            slot.transport.close()

    def __enter__(self) -> ModelClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:  # never shows the API key
        return f"ModelClient(model={self.model!r}, endpoints={self.endpoints!r})"

    # ----- internals -----------------------------------------------------------------------------------------
    def _body(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.stream:
            body.update(stream=True, stream_options={"include_usage": True})
        body.update(self.extra_body)
        return body

    def _headers(self, episode_id: str | None) -> dict[str, str]:
        headers = {EPISODE_HEADER: str(episode_id)} if episode_id else {}
        with self._cond:
            unused = self._unused.pop(episode_id, 0)
        if unused:
            headers[UNUSED_HEADER] = str(unused)
        return headers

    def _note_unused(self, episode_id: str | None, count: int = 1) -> None:
        with self._cond:
            self._unused[episode_id] = self._unused.get(episode_id, 0) + count

    def take_unused(self, episode_id: str) -> int:
        """The episode's unused replies not told yet, forgotten here: a pause keeps them for whoever resumes it
        (another process's client, or this one)."""
        with self._cond:
            return self._unused.pop(episode_id, 0)

    def restore_unused(self, episode_id: str, count: int) -> None:
        if count > 0:
            self._note_unused(episode_id, count)

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

    def _backoff(self, attempt: int, exc: AttemptFailed | None) -> float:
        delay = min(self.max_backoff_s, self.backoff_s * (2**attempt))
        if exc is not None and exc.status == 429 and exc.retry_after is not None:
            delay = max(delay, min(exc.retry_after, self.max_backoff_s))
        return delay * random.uniform(0.5, 1.5)

    def _attempt(
        self,
        slot: _Slot,
        body: bytes,
        headers: dict[str, str],
        deadline: Deadline,
        pending: PendingReply | None,
    ) -> tuple[str, str | None, tuple[int, int]]:
        """One request, bounded by the wall clock: ``timeout``, or less when the deadline is nearer."""
        seconds = max(0.05, deadline.bound(self.timeout))
        abort = Abort()
        if pending is not None:
            pending.attempt(abort)
        try:
            return call_within(
                lambda: slot.transport.chat(body, headers, seconds, abort, stream=self.stream),
                seconds,
                name="model-request",
                on_abandon=abort.abort,
            )
        except Abandoned:
            raise AttemptFailed(
                f"timed out (no complete answer within {seconds:.1f} s)", retryable=True
            ) from None

    def _request_error(self, slot: _Slot, exc: AttemptFailed) -> ModelError:
        what = redact_text(exc.description)
        hint = f"the server at {slot.shown_url} refused the request ({what.split(':', 1)[0]}); fix it, do not retry"
        if exc.status in (401, 403):
            hint = "check the API key (--api-key, MOBILE_AGENT_API_KEY or OPENAI_API_KEY)"
        elif exc.status == 404:
            hint = f"check the model name {self.model!r} (GET /v1/models lists the served ones)"
            if not slot.url.split("?", 1)[0].rstrip("/").endswith("/v1"):
                hint += "; OpenAI-compatible servers usually want a base URL ending in /v1"
        elif exc.status == 400:
            hint = f"the request was rejected: {what}; check max_tokens, the image size and the server limits"
        return ModelError(f"model request to {slot.shown_url} failed: {what}", hint=hint)


__all__ = [
    "EPISODE_HEADER",
    "MAX_ERROR_BYTES",
    "MAX_REPLY_BYTES",
    "UNUSED_HEADER",
    "Endpoint",
    "EndpointStatus",
    "ModelClient",
    "PendingReply",
    "Reply",
    "RequestDiscarded",
    "resolve_api_key",
]
