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
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from mobile_agent.model.client import EPISODE_HEADER
from mobile_agent.sim.servers.http_endpoint import (
    EndpointHandler,
    LoopbackEndpoint,
    chat_completion,
    model_list,
)
from mobile_agent.verify.judges import EXTRACT, STEP, TRAJECTORY, request_kind

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


class _Handler(EndpointHandler):
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        owner: ScriptedJudgeServer = self.server.owner  # type: ignore[assignment]
        if self.route().endswith("/models"):
            self.send_json(200, model_list(owner.model))
        else:
            self.send_error_json(404, f"no route {self.path}")

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        owner: ScriptedJudgeServer = self.server.owner  # type: ignore[assignment]
        try:
            request = self.read_json() or {}
        except ValueError:
            self.send_error_json(400, "the body is not JSON")
            return
        if not self.route().endswith("/chat/completions"):
            self.send_error_json(404, f"no route {self.path}")
            return
        if not isinstance(request, dict):
            self.send_error_json(400, "the body is not a JSON object")
            return
        messages = request.get("messages") or []
        text, images = _texts_and_images(messages)
        kind = request_kind(messages)
        episode = self.headers.get(EPISODE_HEADER)
        owner._record(JudgeRequest(kind, episode, text, images))
        script = owner.script
        if script.delay_ms and not owner.wait(script.delay_ms):
            return
        if script.http_error:
            self.send_error_json(script.http_error, f"scripted HTTP {script.http_error}")
            return
        if script.malformed:
            content = "I think the task went fine."
        else:
            content = json.dumps(owner.judge.answer(kind, text, episode), ensure_ascii=False)
        prompt_tokens = len(text) // 4 + images * 500
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(content) // 4,
            "total_tokens": prompt_tokens + len(content) // 4,
        }
        message = {"role": "assistant", "content": content}
        self.send_json(200, chat_completion(request.get("model") or owner.model, message, usage))


class ScriptedJudgeServer(LoopbackEndpoint):
    """The scripted judge on 127.0.0.1 (a free port unless ``port`` is given), served from a thread."""

    handler_class = _Handler
    label = "scripted judge"

    def __init__(
        self,
        script: JudgeScript | None = None,
        *,
        model: str = "scripted-judge",
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        super().__init__(host, port)
        self.judge = ScriptedJudge(script or JudgeScript())
        self.model = model
        self.requests: list[JudgeRequest] = []
        self._lock = threading.Lock()

    @property
    def script(self) -> JudgeScript:
        return self.judge.script

    @script.setter
    def script(self, value: JudgeScript) -> None:
        self.judge.script = value

    def requests_of(self, kind: str) -> list[JudgeRequest]:
        with self._lock:
            return [r for r in self.requests if r.kind == kind]

    def _record(self, request: JudgeRequest) -> None:
        with self._lock:
            self.requests.append(request)


__all__ = ["JudgeRequest", "JudgeScript", "ScriptedJudge", "ScriptedJudgeServer"]
