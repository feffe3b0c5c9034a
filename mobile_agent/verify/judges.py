"""Judge models: any OpenAI-compatible vision model, asked in two rounds.

1. ``extract_points(task)``: the task becomes a short list of verifiable completion points ("chat with 张三
   opened", "text 晚上好 typed", "message sent"). Text only.
2. ``judge(episode, points)``: each point is judged met or unmet on the episode's screenshots (the last few steps,
   each labelled with its index and action), naming the step that shows it; plus an overall verdict.

Replies are JSON (fenced or not, after any <think> block). The judge's overall verdict is reconciled with its own
points so that a judge cannot call a task complete while saying a point is unmet: the verdict is the more
conservative of the stated one and the one the points give, except that a stated ``infeasible`` stands.

Every request starts with a marker line ``[mobile-agent verify: <kind> <PROMPT_VERSION>]`` so a scripted judge
(sim/servers/judge_server.py) and the logs can tell the requests apart.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mobile_agent.errors import ParseError
from mobile_agent.model.client import ModelClient
from mobile_agent.verify.images import data_url, shrink_jpeg
from mobile_agent.verify.verdict import (
    CompletionPoint,
    JudgeVote,
    Verdict,
    most_conservative,
    verdict_from_points,
)
from mobile_agent.waits.deadlines import Deadline

log = logging.getLogger(__name__)

PROMPT_VERSION = "judge-v1"
EXTRACT = "extract-points"
TRAJECTORY = "judge-trajectory"
STEP = "label-step"
MARKER = re.compile(r"\[mobile-agent verify: ([a-z-]+) ([\w.-]+)\]")
DEFAULT_MAX_IMAGES = 6
MAX_POINTS = 8
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class JudgeReplyError(ParseError):
    """A judge answered, but not with the JSON asked for."""

    kind = "judge_reply"


def marker(kind: str) -> str:
    return f"[mobile-agent verify: {kind} {PROMPT_VERSION}]"


def request_kind(messages: Sequence[dict[str, Any]]) -> str | None:
    """Which verify request ``messages`` is (EXTRACT, TRAJECTORY, STEP), from the marker in the first message."""
    for message in messages[:1]:
        content = message.get("content")
        text = (
            content
            if isinstance(content, str)
            else " ".join(part.get("text", "") for part in content or [] if isinstance(part, dict))
        )
        found = MARKER.search(text)
        if found:
            return found.group(1)
    return None


def parse_json_reply(text: str) -> dict[str, Any]:
    """The JSON object in a reply: after any <think> block, inside a ```json fence or between the outer braces."""
    body = _THINK.sub("", text or "").strip()
    fenced = _FENCE.search(body)
    if fenced:
        body = fenced.group(1).strip()
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        raise JudgeReplyError("the judge's reply has no JSON object", reply=text)
    try:
        value = json.loads(body[start : end + 1])
    except json.JSONDecodeError as exc:
        raise JudgeReplyError(f"the judge's reply is not valid JSON: {exc.msg}", reply=text) from None
    if not isinstance(value, dict):
        raise JudgeReplyError("the judge's reply is not a JSON object", reply=text)
    return value


def ask_json(
    client: ModelClient,
    kind: str,
    system: str,
    content: list[dict[str, Any]],
    *,
    episode_id: str | None = None,
    deadline: Deadline | None = None,
) -> tuple[dict[str, Any], float]:
    """One request; the parsed JSON reply and the latency in seconds. ModelError / JudgeReplyError on failure,
    DeadlineExceeded when ``deadline`` passes first."""
    messages = [
        {"role": "system", "content": f"{marker(kind)}\n{system}"},
        {"role": "user", "content": content},
    ]
    started = time.monotonic()
    reply = client.complete(messages, episode_id=episode_id, deadline=deadline)
    return parse_json_reply(reply.text), time.monotonic() - started


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def image_part(jpeg: bytes) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": data_url(jpeg)}}


@dataclass(frozen=True)
class StepView:
    """One step as a judge sees it. ``screenshot`` is the screen before the step's action (JPEG), if stored."""

    index: int
    action: str
    thought: str = ""
    screenshot: bytes | None = None


@dataclass(frozen=True)
class EpisodeView:
    episode_id: str
    task: str
    steps: list[StepView] = field(default_factory=list)
    outcome: str | None = None
    answer: str | None = None


EXTRACT_PROMPT = """You verify whether a phone agent did what a user asked.
Split the task into at most {max_points} completion points: short, checkable facts that are all true when the task
is fully done, in the order they happen (e.g. "chat with 张三 opened", "text 晚上好 typed", "message sent").
Reply with JSON only: {{"points": ["...", "..."]}}"""

TRAJECTORY_PROMPT = """You verify whether a phone agent did what a user asked, from its screenshots.
Each screenshot is the screen before that step's action; the last one shows the end.
For each completion point decide whether the screenshots show it done (met) and name the step whose screenshot
shows it. Then give the overall verdict:
- "complete": every point is met;
- "partial": some points are met, not all (e.g. message typed but not sent, item in cart but order not placed);
- "infeasible": the task cannot be done on this phone (e.g. the contact or the item does not exist);
- "failed": no point is met.
Never call a task complete when a point is unmet or not shown.
Reply with JSON only: {"points": [{"description": "...", "met": true, "step": 3, "evidence": "..."}],
"verdict": "complete|partial|infeasible|failed", "rationale": "one or two sentences"}"""


class Judge:
    """One judge model behind an OpenAI-compatible endpoint. ``name`` defaults to the endpoint's base URL."""

    def __init__(
        self,
        client: ModelClient,
        *,
        name: str | None = None,
        max_images: int = DEFAULT_MAX_IMAGES,
    ) -> None:
        self.client = client
        self.name = name or (client.endpoints[0] if client.endpoints else "judge")
        self.model = client.model
        self.max_images = max_images

    def __repr__(self) -> str:
        return f"Judge({self.name!r}, model={self.model!r})"

    def extract_points(self, task: str, *, episode_id: str | None = None) -> list[str]:
        data, _ = ask_json(
            self.client,
            EXTRACT,
            EXTRACT_PROMPT.format(max_points=MAX_POINTS),
            [text_part(f"Task: {task}")],
            episode_id=episode_id,
        )
        raw = data.get("points")
        if not isinstance(raw, list) or not raw:
            raise JudgeReplyError(
                "the judge gave no completion points", reply=json.dumps(data, ensure_ascii=False)
            )
        points = [str(p.get("description", "")) if isinstance(p, dict) else str(p) for p in raw]
        return [p.strip() for p in points if p.strip()][:MAX_POINTS]

    def judge(self, episode: EpisodeView, points: Sequence[str] | None = None) -> JudgeVote:
        """Extract the points (unless given) and judge them on the screenshots."""
        started = time.monotonic()
        wanted = list(points) if points else self.extract_points(episode.task, episode_id=episode.episode_id)
        data, _ = ask_json(
            self.client,
            TRAJECTORY,
            TRAJECTORY_PROMPT,
            self._trajectory_content(episode, wanted),
            episode_id=episode.episode_id,
        )
        judged = _points_from(data.get("points"), wanted)
        verdict = reconcile(data.get("verdict"), judged)
        return JudgeVote(
            judge=self.name,
            model=self.model,
            verdict=verdict,
            points=judged,
            rationale=str(data.get("rationale") or ""),
            latency_s=time.monotonic() - started,
        )

    def _trajectory_content(self, episode: EpisodeView, points: list[str]) -> list[dict[str, Any]]:
        lines = [f"Task: {episode.task}", "Completion points:"]
        lines += [f"{i + 1}. {p}" for i, p in enumerate(points)]
        lines.append("Steps (index: action):")
        lines += [
            f"{s.index}: {s.action}" + (f"  -- {s.thought[:200]}" if s.thought else "") for s in episode.steps
        ]
        if episode.outcome:
            lines.append(
                f"The agent stopped with outcome {episode.outcome}"
                + (f" and said: {episode.answer}" if episode.answer else "")
            )
        content = [text_part("\n".join(lines))]
        shown = [s for s in episode.steps if s.screenshot is not None][-self.max_images :]
        for step in shown:
            content.append(text_part(f"Screenshot of step {step.index} (before: {step.action})"))
            content.append(image_part(shrink_jpeg(step.screenshot)))  # type: ignore[arg-type]
        return content


def _points_from(raw: Any, wanted: list[str]) -> list[CompletionPoint]:
    if not isinstance(raw, list) or not raw:
        raise JudgeReplyError(
            "the judge judged no completion points", reply=json.dumps(raw, ensure_ascii=False)
        )
    points = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or "met" not in item:
            raise JudgeReplyError(
                f"completion point {i + 1} has no 'met'", reply=json.dumps(raw, ensure_ascii=False)
            )
        description = str(item.get("description") or (wanted[i] if i < len(wanted) else f"point {i + 1}"))
        step = item.get("step")
        try:
            step = None if step is None else int(step)
        except (TypeError, ValueError):
            step = None
        points.append(CompletionPoint(description, bool(item["met"]), step, str(item.get("evidence") or "")))
    return points


def reconcile(stated: Any, points: Sequence[CompletionPoint]) -> Verdict:
    """The judge's verdict made consistent with its points (see the module docstring)."""
    derived = verdict_from_points(points)
    try:
        said = Verdict.parse(stated) if stated is not None else None
    except ValueError:
        said = None
    if said is Verdict.INFEASIBLE:
        return said
    candidates = [v for v in (said, derived) if v is not None]
    if not candidates:
        raise JudgeReplyError(f"the judge gave no usable verdict ({stated!r}) and no points")
    return most_conservative(candidates)


__all__ = [
    "EXTRACT",
    "PROMPT_VERSION",
    "STEP",
    "TRAJECTORY",
    "EpisodeView",
    "Judge",
    "JudgeReplyError",
    "StepView",
    "ask_json",
    "image_part",
    "marker",
    "parse_json_reply",
    "reconcile",
    "request_kind",
    "text_part",
]
