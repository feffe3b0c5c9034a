"""A scripted judge: a real OpenAI-compatible HTTP server on loopback that answers the verifier's requests
(``mobile_agent.verify.judges``: extract points, judge a trajectory, label a step) from a script.

    script = JudgeScript(verdicts={"给张三发微信": "partial"}, labels={"tap(100, 200)": "wrong"})
    with ScriptedJudgeServer(script, model="judge-a") as server:
        judge = Judge(ModelClient([server.base_url], "judge-a"))

What it answers:
- extract-points: ``script.points`` for the first task substring found in the request, else one point per task.
- judge-trajectory: ``script.verdicts`` looked up by episode id (X-Mobile-Agent-Episode header), then by task
  substring, else ``default_verdict``. A verdict is a name ("partial") or a dict {verdict, met: [bools], rationale}.
  Without ``met`` the points follow the verdict: complete -> all met, partial -> the first met, else none.
  ``trust_agent=True`` instead says complete whenever the agent stopped with outcome finished or answered (the
  coarse judge that leaderboards reward), failed otherwise.
- label-step: ``script.labels`` by substring of the action line, else ``default_label``.
Faults: ``http_error`` (every chat request fails with that status), ``malformed`` (non-JSON replies), ``delay_ms``.
Every request is kept in ``server.requests`` (kind, episode, text, image count) for tests.
"""

from __future__ import annotations

import json
import logging
import re
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mobile_agent.errors import UserError
from mobile_agent.model.client import EPISODE_HEADER
from mobile_agent.verify.judges import EXTRACT, STEP, TRAJECTORY, request_kind

log = logging.getLogger(__name__)

_POINT_LINE = re.compile(r"^\d+\.\s+(.*)$")
_ACTION_LINE = re.compile(r"^Action to label:\s*(.*)$", re.MULTILINE)
_TASK_LINE = re.compile(r"^Task:\s*(.*)$", re.MULTILINE)
_OUTCOME = re.compile(r"stopped with outcome (\w+)")


@dataclass
class JudgeScript:
    verdicts: dict[str, str | dict[str, Any]] = field(default_factory=dict)
    points: dict[str, list[str]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    default_verdict: str = "complete"
    default_label: str = "correct"
    trust_agent: bool = False
    http_error: int | None = None
    malformed: bool = False
    delay_ms: int = 0


@dataclass(frozen=True)
class JudgeRequest:
    kind: str | None
    episode: str | None
    text: str
    images: int


def _texts_and_images(messages: list[Any]) -> tuple[str, int]:
    texts, images = [], 0
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for part in content:
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "text":
                    texts.append(str(part.get("text", "")))
                elif part.get("type") == "image_url":
                    images += 1
    return "\n".join(texts), images


def _lookup(table: dict[str, Any], *keys: str | None) -> Any:
    """The entry whose key is one of ``keys`` exactly, else the longest key found inside one of them."""
    for key in keys:
        if key and key in table:
            return table[key]
    found = [k for k in table if any(key and k in key for key in keys)]
    return table[max(found, key=len)] if found else None


class ScriptedJudge:
    """The answering logic, separate from HTTP so it is easy to read and to test."""

    def __init__(self, script: JudgeScript) -> None:
        self.script = script

    def answer(self, kind: str | None, text: str, episode: str | None) -> dict[str, Any]:
        task_match = _TASK_LINE.search(text)
        task = task_match.group(1).strip() if task_match else text
        if kind == EXTRACT:
            points = _lookup(self.script.points, task) or [f"the task is done: {task}"]
            return {"points": list(points)}
        if kind == TRAJECTORY:
            return self._trajectory(text, task, episode)
        if kind == STEP:
            action_match = _ACTION_LINE.search(text)
            action = action_match.group(1).strip() if action_match else ""
            label = _lookup(self.script.labels, action) or self.script.default_label
            return {"label": label, "rationale": f"scripted: {action or 'no action'} is {label}"}
        return {"error": "not a verify request"}

    def _trajectory(self, text: str, task: str, episode: str | None) -> dict[str, Any]:
        wanted = _requested_points(text) or [f"the task is done: {task}"]
        if self.script.trust_agent:
            outcome = _OUTCOME.search(text)
            said_done = outcome is not None and outcome.group(1) in ("finished", "answered")
            spec: str | dict[str, Any] = "complete" if said_done else "failed"
        else:
            spec = _lookup(self.script.verdicts, episode, task) or self.script.default_verdict
        entry = {"verdict": spec} if isinstance(spec, str) else dict(spec)
        verdict = str(entry.get("verdict", self.script.default_verdict))
        met = entry.get("met")
        if met is None:
            met = [verdict == "complete" or (verdict == "partial" and i == 0) for i in range(len(wanted))]
        points = [
            {"description": wanted[i] if i < len(wanted) else f"point {i + 1}", "met": bool(m), "step": None}
            for i, m in enumerate(met)
        ]
        return {
            "points": points,
            "verdict": verdict,
            "rationale": entry.get("rationale", f"scripted {verdict}"),
        }


def _requested_points(text: str) -> list[str]:
    lines = text.splitlines()
    try:
        start = lines.index("Completion points:") + 1
    except ValueError:
        return []
    points = []
    for line in lines[start:]:
        match = _POINT_LINE.match(line)
        if not match:
            break
        points.append(match.group(1).strip())
    return points


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = False  # server_close joins the handler threads
    block_on_close = True

    def __init__(self, address: tuple[str, int], owner: ScriptedJudgeServer) -> None:
        self.owner = owner
        self.open_sockets: set[socket.socket] = set()
        self.sockets_lock = threading.Lock()
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.sockets_lock:
            self.open_sockets.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.sockets_lock:
            self.open_sockets.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        """Cut kept-alive connections, or closing would wait for clients that never hang up."""
        with self.sockets_lock:
            for sock in list(self.open_sockets):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("judge server: connection from %s ended with an error", client_address, exc_info=True)


class ScriptedJudgeServer:
    """The scripted judge on 127.0.0.1 (a free port unless ``port`` is given), served from a thread."""

    def __init__(
        self,
        script: JudgeScript | None = None,
        *,
        model: str = "scripted-judge",
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.judge = ScriptedJudge(script or JudgeScript())
        self.model = model
        self.host = host
        self.port = port
        self.requests: list[JudgeRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._http: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def script(self) -> JudgeScript:
        return self.judge.script

    @script.setter
    def script(self, value: JudgeScript) -> None:
        self.judge.script = value

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> ScriptedJudgeServer:
        if self._http is not None:
            return self
        try:
            self._http = _HTTPServer((self.host, self.port), self)
        except OSError as exc:
            raise UserError(
                f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}", "pick another port"
            ) from None
        self.port = self._http.server_address[1]
        self._stopping.clear()
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, name="judge-server", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        if self._http is None:
            return
        self._stopping.set()
        self._http.shutdown()
        self._http.drop_connections()
        self._http.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._http = None
        self._thread = None

    def __enter__(self) -> ScriptedJudgeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def requests_of(self, kind: str) -> list[JudgeRequest]:
        with self._lock:
            return [r for r in self.requests if r.kind == kind]

    def _record(self, request: JudgeRequest) -> None:
        with self._lock:
            self.requests.append(request)


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        log.debug("judge server: " + format, *args)

    def _send_json(self, status: int, payload: Any) -> None:
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        owner = self.server.owner
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [{"id": owner.model, "object": "model"}]})
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        try:
            request = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._send_json(400, {"error": {"message": "the body is not JSON"}})
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        messages = request.get("messages") or []
        text, images = _texts_and_images(messages)
        kind = request_kind(messages)
        episode = self.headers.get(EPISODE_HEADER)
        owner._record(JudgeRequest(kind, episode, text, images))
        script = owner.script
        if script.delay_ms and owner._stopping.wait(script.delay_ms / 1000):
            return
        if script.http_error:
            self._send_json(script.http_error, {"error": {"message": f"scripted HTTP {script.http_error}"}})
            return
        if script.malformed:
            content = "I think the task went fine."
        else:
            content = json.dumps(owner.judge.answer(kind, text, episode), ensure_ascii=False)
        self._send_json(
            200,
            {
                "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request.get("model") or owner.model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": len(text) // 4 + images * 500,
                    "completion_tokens": len(content) // 4,
                    "total_tokens": len(text) // 4 + images * 500 + len(content) // 4,
                },
            },
        )


__all__ = ["JudgeRequest", "JudgeScript", "ScriptedJudge", "ScriptedJudgeServer"]
