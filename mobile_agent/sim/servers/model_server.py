"""A simulated GUI model: a real OpenAI-compatible HTTP server that answers in a family's exact reply format.

It is driven by per-task scripts (``mobile_agent/sim/scripts/*.yaml``; format in ``sim/servers/scripts.py``): the server
finds the script whose task text occurs in the request, consumes one turn per request of an episode (the cursor
is kept per ``X-Mobile-Agent-Episode`` header, or per task text without it) and renders the turn's action with
the family's ``format``. Turns can also inject faults: a malformed reply, an HTTP error status, a delay, a hang
(``hang: true``: the request is read and never answered until the server closes) and a trickle (``trickle_ms: N``:
the reply's headers at once, then its body one byte every N ms).
A request whose task has no script gets a CALL_USER-style reply saying so; a script whose turns ran out gets a
finish action. Script points are 0-999 normalised to the screenshot in the request.

    with SimModelServer(family="ui-venus-2") as server:
        client = ModelClient([server.base_url], "ui-venus-2")
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import logging
import threading
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from PIL import Image

from mobile_agent.actions import Action, ActionKind, Size
from mobile_agent.errors import UserError
from mobile_agent.model.autoglm import AutoGLM
from mobile_agent.model.base import ModelFamily
from mobile_agent.model.client import EPISODE_HEADER, UNUSED_HEADER
from mobile_agent.model.families import get_family
from mobile_agent.model.images import Geometry
from mobile_agent.sim.servers.http_endpoint import (
    EndpointHandler,
    LoopbackEndpoint,
    chat_completion,
    completion_chunks,
    model_list,
)
from mobile_agent.sim.servers.scripts import SHIPPED_SCRIPTS, Script, Turn, load_script, load_scripts

log = logging.getLogger(__name__)

NO_SCRIPT_MESSAGE = "The simulated model has no script for this task."
SCRIPT_DONE_MESSAGE = "The simulated model's script for this task is finished."
# Script points are normalised to the screenshot; rendering them against this "device" keeps them exact.
NORMALISED_SCREEN = Size(1000, 1000)
MAX_LOGGED_REQUESTS = 1000
# The message field split-off thinking is returned in: current vLLM's name first, then the older one.
REASONING_FIELDS = ("reasoning", "reasoning_content")


# ----- requests ------------------------------------------------------------------------------------------------


@dataclass
class RequestRecord:
    """One request as the server saw it (images replaced by their size, to keep the log small)."""

    method: str
    path: str
    status: int
    episode: str | None = None
    task: str | None = None
    model: str | None = None
    stream: bool = False
    turn: int | None = None
    reply: str | None = None
    reasoning: str | None = None
    image_size: Size | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)


def _message_texts(messages: list[Any]) -> list[str]:
    texts = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(
                p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
            )
    return texts


def _image_urls(messages: list[Any]) -> list[str]:
    urls = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") == "image_url":
                    url = (part.get("image_url") or {}).get("url")
                    if isinstance(url, str):
                        urls.append(url)
    return urls


def _data_url_size(url: str) -> Size | None:
    if not url.startswith("data:") or "," not in url:
        return None
    try:
        with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as img:
            return Size(*img.size)
    except (OSError, ValueError, binascii.Error):
        return None


def _without_images(messages: list[Any]) -> list[Any]:
    out = []
    for message in messages:
        if isinstance(message, dict) and isinstance(message.get("content"), list):
            parts = []
            for part in message["content"]:
                if isinstance(part, dict) and part.get("type") == "image_url":
                    size = _data_url_size((part.get("image_url") or {}).get("url", ""))
                    parts.append({"type": "image_url", "image_url": {"url": f"<image {size}>"}})
                else:
                    parts.append(part)
            message = {**message, "content": parts}
        out.append(message)
    return out


def _closest_expressible(action: Action, family: ModelFamily) -> Action:
    """A scripted action the family has no verb for, as the nearest thing it can say."""
    if action.kind in family.supported_kinds:
        return action
    if action.kind is ActionKind.ANSWER:
        return Action.finish(action.text)
    if action.kind is ActionKind.DRAG and ActionKind.SWIPE in family.supported_kinds:
        return replace(action, kind=ActionKind.SWIPE)
    if action.kind is ActionKind.DOUBLE_TAP:
        return Action.tap(*action.point)  # type: ignore[misc]
    raise ValueError(f"family {family.name} cannot express {action.describe()}")


def _split_think(text: str) -> tuple[str | None, str]:
    """What vLLM's reasoning parser does: the <think> part goes to ``reasoning`` (``reasoning_content`` before)."""
    start, end = text.find("<think>"), text.find("</think>")
    if start < 0 or end < start:
        return None, text
    return text[start + 7 : end].strip(), text[end + 8 :].lstrip("\n")


# ----- the server ----------------------------------------------------------------------------------------------


class _Handler(EndpointHandler):
    def _send_error_json(self, status: int, message: str, record: RequestRecord | None = None) -> None:
        if record is not None:  # noted before the answer goes out: a client that got it finds it in the log
            record.status = status
            self.server.owner.record(record)  # type: ignore[attr-defined]
        self.send_error_json(status, message)

    # ----- routes -----
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        owner: SimModelServer = self.server.owner  # type: ignore[assignment]
        if self.route() in ("/v1/models", "/models"):
            self.send_json(200, model_list(owner.served_model))
            owner.record(RequestRecord("GET", self.path, 200))
        elif self.path in ("/health", "/v1/health"):
            self.send_json(200, {"status": "ok"})
        else:
            self._send_error_json(404, f"no route {self.path}")

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        if self.route() not in ("/v1/chat/completions", "/chat/completions"):
            self._send_error_json(404, f"no route {self.path}")
            return
        owner: SimModelServer = self.server.owner  # type: ignore[assignment]
        owner.enter()
        try:
            self._chat_completion(owner)
        finally:
            owner.leave()

    def _chat_completion(self, owner: SimModelServer) -> None:
        record = RequestRecord("POST", self.path, 200, episode=self.headers.get(EPISODE_HEADER))
        try:
            body = self.read_json()
        except ValueError:
            self._send_error_json(400, "the request body is not JSON", record)
            return
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list) or not messages:
            self._send_error_json(400, "messages must be a non-empty list", record)
            return
        record.model = body.get("model")
        record.stream = bool(body.get("stream"))
        record.messages = _without_images(messages)
        if owner.model_name and record.model != owner.model_name and record.model not in owner.model_families:
            self._send_error_json(404, f"The model `{record.model}` does not exist.", record)
            return
        urls = _image_urls(messages)
        record.image_size = _data_url_size(urls[-1]) if urls else None

        script = owner.find_script(messages)
        turn: Turn | None = None
        if script is None:
            action, think = Action.call_user(NO_SCRIPT_MESSAGE), "There is no script for this task."
        else:
            record.task = script.task
            unused = self.headers.get(UNUSED_HEADER, "0")
            record.turn, turn = owner.next_turn(
                script, record.episode, int(unused) if unused.isdigit() else 0
            )
            action, think = (
                (Action.finish(SCRIPT_DONE_MESSAGE), "") if turn is None else (turn.action, turn.think)
            )

        extra_ms = owner.turn_delays_ms.pop(record.turn, 0) if turn is not None else 0
        if not owner.wait(owner.latency_ms + (turn.delay_ms if turn else 0) + extra_ms):
            self.close_connection = True
            return
        if turn is not None and turn.hang:
            owner.stopping.wait()  # accepted, read, never answered
            self.close_connection = True
            return
        if turn is not None and turn.http_error is not None:
            self._send_error_json(
                turn.http_error, f"simulated HTTP {turn.http_error} (script turn {record.turn})", record
            )
            return
        if turn is not None and turn.malformed is not None:
            text = turn.malformed
        else:
            try:
                text = owner.render(action, think, record.image_size, record.model)  # type: ignore[arg-type]
            except ValueError as exc:
                where = f"{script.path}:{turn.line}" if script and turn else "the simulated model"
                self._send_error_json(500, f"{where}: {exc}", record)
                return
        reasoning = None
        if owner.split_reasoning:
            reasoning, text = _split_think(text)
        record.reply, record.reasoning = text, reasoning
        usage = self._usage(messages, record.image_size, text, reasoning)
        owner.record(record)  # before the answer, as for errors
        if turn is not None and turn.trickle_ms:
            self._send_trickle(
                owner, record.model or owner.served_model, text, reasoning, usage, turn.trickle_ms
            )
        elif record.stream:
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._send_stream(
                record.model or owner.served_model, text, reasoning, usage if include_usage else None
            )
        else:
            self._send_completion(record.model or owner.served_model, text, reasoning, usage)

    @staticmethod
    def _usage(messages: list[Any], image: Size | None, text: str, reasoning: str | None) -> dict[str, int]:
        # Rough but stable: ~4 characters a token, and one token per 28x28 patch of each image.
        prompt = sum(len(t) for t in _message_texts(messages)) // 4
        if image is not None:
            prompt += len(_image_urls(messages)) * max(1, image.width * image.height // 784)
        completion = max(1, (len(text) + len(reasoning or "")) // 3)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def _reasoning_key(self) -> str:
        return self.server.owner.reasoning_field  # type: ignore[attr-defined]

    def _send_completion(self, model: str, text: str, reasoning: str | None, usage: dict[str, int]) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": text, "tool_calls": []}
        if reasoning is not None:
            message[self._reasoning_key()] = reasoning
        self.send_json(200, chat_completion(model, message, usage))

    def _send_trickle(
        self,
        owner: SimModelServer,
        model: str,
        text: str,
        reasoning: str | None,
        usage: dict[str, int],
        gap: int,
    ) -> None:
        """A complete reply, sent one byte every ``gap`` ms: no read ever waits long, the whole never arrives soon."""
        message: dict[str, Any] = {"role": "assistant", "content": text, "tool_calls": []}
        if reasoning is not None:
            message[self._reasoning_key()] = reasoning
        body = json.dumps(chat_completion(model, message, usage), ensure_ascii=False).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        for i in range(len(body)):
            if not owner.wait(gap):
                return
            try:
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()
            except OSError:  # the client gave up
                return

    def _send_stream(
        self, model: str, text: str, reasoning: str | None, usage: dict[str, int] | None
    ) -> None:
        deltas = [
            {"role": "assistant", "content": ""},
            *({self._reasoning_key(): piece} for piece in _pieces(reasoning or "")),
            *({"content": piece} for piece in _pieces(text)),
        ]
        self.send_event_stream(completion_chunks(model, deltas, usage))


class SimModelServer(LoopbackEndpoint):
    """The simulated model endpoint on loopback, served from a background thread. A context manager."""

    handler_class = _Handler
    port_hint = "pick another --port, or stop whatever is using this one"

    def __init__(
        self,
        family: str = "ui-venus-2",
        scripts: Path | str | Iterable[Path | str] | Sequence[Script] | None = None,
        latency_ms: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
        model_name: str | None = None,
        split_reasoning: bool = False,
        reasoning_field: str = "reasoning",
        closed_answer: bool = False,
        model_families: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(host, port)
        if reasoning_field not in REASONING_FIELDS:
            hint = f"use one of: {', '.join(REASONING_FIELDS)}"
            raise UserError(f"unknown reasoning field {reasoning_field!r}", hint=hint)
        self.reasoning_field = reasoning_field
        self.family = get_family(family)
        if closed_answer and isinstance(self.family, AutoGLM):  # the prompt's form, not the real model's
            self.family = AutoGLM(closed_answer=True)
        if scripts is None:
            scripts = [SHIPPED_SCRIPTS] if SHIPPED_SCRIPTS.is_dir() else []
        items = [scripts] if isinstance(scripts, (str, Path)) else list(scripts)
        loaded = [s for s in items if isinstance(s, Script)]
        paths = [s for s in items if not isinstance(s, Script)]
        self.scripts: list[Script] = loaded + (load_scripts(paths) if paths else [])
        self.latency_ms = latency_ms
        self.turn_delays_ms: dict[int, int] = {}  # script turn -> extra think time, once (a test's timing)
        self.model_name = model_name
        # served model name -> the family it answers in, for a farm whose tasks name other models (its default: family)
        self.model_families = {name: get_family(other) for name, other in (model_families or {}).items()}
        self.split_reasoning = split_reasoning
        self.requests: deque[RequestRecord] = deque(maxlen=MAX_LOGGED_REQUESTS)
        self._cursors: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()
        self.in_flight = 0
        self.peak_in_flight = 0  # the most chat requests it was answering at once

    @property
    def label(self) -> str:  # type: ignore[override]
        return f"simulated {self.family.name} model"

    @property
    def served_model(self) -> str:
        return self.model_name or self.family.name

    def reset(self) -> None:
        """Forget every episode's place in its script."""
        with self._lock:
            self._cursors.clear()

    # ----- answering -----
    def find_script(self, messages: list[Any]) -> Script | None:
        texts = _message_texts(messages)
        matches = [s for s in self.scripts if any(s.task in t for t in texts)]
        return max(matches, key=lambda s: len(s.task)) if matches else None

    def next_turn(self, script: Script, episode: str | None, unused: int = 0) -> tuple[int, Turn | None]:
        """The episode's next turn; ``unused``: replies the runtime did not act on (a popup rule acted instead), whose
        turns are served again."""
        key = (episode or f"task:{script.task}", script.task)
        with self._lock:
            index = max(0, self._cursors.get(key, 0) - unused)
            self._cursors[key] = index + 1
        return index, (script.turns[index] if index < len(script.turns) else None)

    def render(self, action: Action, think: str, image_size: Size | None, model: str | None = None) -> str:
        family = self.model_families.get(model or "", self.family)
        geometry = Geometry(device=NORMALISED_SCREEN, image=image_size or NORMALISED_SCREEN)
        return family.format(_closest_expressible(action, family), geometry, thought=think)

    def record(self, record: RequestRecord) -> None:
        self.requests.append(record)

    def enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1


def _pieces(text: str, size: int = 16) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


__all__ = [
    "NO_SCRIPT_MESSAGE",
    "SCRIPT_DONE_MESSAGE",
    "SHIPPED_SCRIPTS",
    "RequestRecord",
    "Script",
    "SimModelServer",
    "Turn",
    "load_script",
    "load_scripts",
]
