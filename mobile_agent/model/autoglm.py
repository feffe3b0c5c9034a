"""AutoGLM-Phone (Open-AutoGLM): ``<think>..</think><answer>do(action="Verb", ...)</answer>``, coordinates 0-999.

``finish(message=...)`` ends the task. ``Tap`` with ``message=`` is the model flagging a consequential tap: it
becomes ``Action.sensitive`` for the safety gate. ``Take_over`` asks the human (CALL_USER). ``Note``, ``Call_API``
and ``Interact`` are placeholders in the reference runtime and are refused with a clear ParseError, never turned
into a silent finish. Like the reference, only the current screenshot is sent; earlier turns stay as text.
"""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Any

from mobile_agent.actions import Action, ActionKind, Key
from mobile_agent.model.base import (
    CoordinateSpace,
    ModelFamily,
    Parsed,
    PromptContext,
    parsed_sequence,
    text_part,
)
from mobile_agent.model.images import Geometry
from mobile_agent.model.syntax import (
    MAX_CALLS,
    Call,
    calls_at,
    fail,
    parse_calls,
    split_reply,
    tag_body,
    too_many_calls,
)

SYSTEM_PROMPT = """The current date: {today}
# Setup
You are a professional Android operation agent. At each step you get a screenshot of the phone; analyse it, \
then give the next operation as one line of Python-style pseudo-code.

Reply strictly as:
<think>
[your analysis]
</think>
<answer>
[one operation]
</answer>

Operations (coordinates are integers 0-999 relative to the screenshot, origin top-left):
- do(action="Launch", app="Settings")            open an app
- do(action="Tap", element=[x,y])                 tap; add message="why" when the tap pays, deletes or sends \
something important, so the user can confirm it
- do(action="Type", text="Hello")                 type into the focused field
- do(action="Swipe", start=[x1,y1], end=[x2,y2])  swipe
- do(action="Long Press", element=[x,y])          long press
- do(action="Double Tap", element=[x,y])          double tap
- do(action="Back")                               back
- do(action="Home")                               home screen
- do(action="Wait", duration="2 seconds")         wait for loading
- do(action="Take_over", message="why")           ask the user to take over (login, captcha, payment)
- finish(message="what was done")                 the whole task is done

Rules: think before acting; exactly one operation per reply; finish only when every part of the task is \
done.{hints}"""

_DO_TEXT_KEYS = frozenset({"text", "message", "app"})
_PLACEHOLDERS = ("Note", "Call_API", "Interact")
_POINT_ACTIONS = {
    "Tap": ActionKind.TAP,
    "Long Press": ActionKind.LONG_PRESS,
    "Double Tap": ActionKind.DOUBLE_TAP,
}
_ACTION_MARKERS = re.compile(r"\b(?:do|finish)\s*\(")
_SECONDS = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(?:s|sec|secs|second|seconds)?\s*$")


def _q(value: str) -> str:
    # JSON string syntax is also a valid Python literal, and it is what the model writes.
    return json.dumps(value, ensure_ascii=False)


def _seconds_text(ms: int) -> str:
    whole, frac = divmod(ms, 1000)
    return f"{whole}.{frac:03d}".rstrip("0").rstrip(".") + " seconds"


class AutoGLM(ModelFamily):
    name = "autoglm"
    coordinate_space = CoordinateSpace.NORMALIZED
    max_history_images = 0
    supported_kinds = frozenset(ActionKind) - {ActionKind.DRAG, ActionKind.ANSWER}
    format_reminder = '<think>..</think><answer>do(action="...", ...) or finish(message="...")</answer>'

    def __init__(self, closed_answer: bool = False) -> None:
        # ``format`` writes what the real model writes: the official README's sample output (and most published
        # runs) leave ``</answer>`` off. ``closed_answer`` writes the closed form of the prompt instead.
        self.closed_answer = closed_answer

    def compose_messages(self, prompt: PromptContext) -> list[dict[str, Any]]:
        today = date.today().strftime("%Y-%m-%d, %A")
        system = SYSTEM_PROMPT.format(today=today, hints=prompt.hints_block())
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
        current_app = prompt.options.current_app or "unknown"
        screen_info = json.dumps({"current_app": current_app}, ensure_ascii=False)
        first_text = prompt.task + prompt.skipped_note()
        for index, turn in enumerate(prompt.turns):
            label = first_text if index == 0 else "** Screen Info **"
            messages.append({"role": "user", "content": [text_part(f"{label}\n\n{screen_info}")]})
            messages.append({"role": "assistant", "content": turn.reply})
        label = first_text if not prompt.turns else "** Screen Info **"
        content = [prompt.screenshot_part(), text_part(f"{label}\n\n{screen_info}")]
        messages.append({"role": "user", "content": content})
        return messages

    def parse(self, text: str, geometry: Geometry, reasoning: str | None = None) -> Parsed:
        """The calls in ``<answer>`` in order (the real model often leaves ``</answer>`` off); with no
        ``<answer>`` the last ``do(``/``finish(`` call of the reply, since earlier ones are usually the thinking
        quoting the call it is about to make. Several calls in ``<answer>`` are performed in order, each
        through the guards (``do(Tap) finish(..)`` is a tap, then the end)."""
        raw, thought, rest = split_reply(text, reasoning)
        body = tag_body(rest, "answer")
        if body is None:
            found = calls_at(rest, _ACTION_MARKERS)
            if not found:
                raise fail("no <answer>...</answer> with do(...) or finish(...) in the reply", raw)
            if len(found) > MAX_CALLS:
                raise too_many_calls(raw)
            if not thought:
                thought = rest[: rest.rfind(found[-1])].strip()
            body = found[-1]
        calls = parse_calls(body, raw, "the <answer> block holds no do(...) or finish(...)", _DO_TEXT_KEYS)
        return parsed_sequence((self._action_of(call, geometry) for call in calls), thought)

    def _action_of(self, call: Call, geometry: Geometry) -> Action:
        reply = call.reply
        if call.name == "do" and call.kwargs.get("action") == "finish":  # finish written as a do() verb
            call = Call("finish", {k: v for k, v in call.kwargs.items() if k != "action"}, reply)
        if call.name == "finish":
            message = call.only("message").text("message", required=False)
            return Action.finish(message or None)
        if call.name != "do":
            raise fail(f"unknown operation {call.name!r}: expected do(...) or finish(...)", reply)
        verb = call.text("action")
        if verb in _PLACEHOLDERS:
            raise fail(f"AutoGLM's {verb} operation is not supported by this runtime", reply)
        if verb in _POINT_ACTIONS:
            allowed = ("action", "element", "message") if verb == "Tap" else ("action", "element")
            call.only(*allowed)
            point = self.to_device(call.pair("element"), geometry, reply)
            sensitive = call.text("message", required=False) if verb == "Tap" else None
            return Action(_POINT_ACTIONS[verb], point=point, sensitive=sensitive)
        if verb == "Swipe":
            call.only("action", "start", "end")
            start = self.to_device(call.pair("start"), geometry, reply)
            return Action(
                ActionKind.SWIPE, point=start, end=self.to_device(call.pair("end"), geometry, reply)
            )
        if verb in ("Type", "Type_Name"):
            return Action.type(call.only("action", "text").text("text") or "")
        if verb == "Launch":
            app = call.only("action", "app").text("app")
            if not app or not app.strip():
                raise fail("Launch: app must not be empty", reply)
            return Action.launch(app)
        if verb in ("Back", "Home"):
            call.only("action")
            return Action.press(Key.BACK if verb == "Back" else Key.HOME)
        if verb == "Wait":
            call.only("action", "duration")
            if not call.has("duration"):
                return Action.wait()
            return Action.wait(self._duration_ms(call.value("duration"), reply))
        if verb == "Take_over":
            return Action.call_user(call.only("action", "message").text("message") or "")
        raise fail(f"unknown AutoGLM action {verb!r}", reply)

    @staticmethod
    def _duration_ms(value: Any, reply: str) -> int:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            seconds = value if isinstance(value, float) else min(value, 10**6)
        else:
            match = _SECONDS.match(str(value))
            if match is None:
                raise fail(f"Wait: duration must look like '2 seconds', got {value!r:.60}", reply)
            seconds = float(match.group(1))
        if not 0 <= seconds <= 3600:
            raise fail(f"Wait: duration {seconds} s is out of range", reply)
        return round(seconds * 1000)

    def format(self, action: Action, geometry: Geometry, thought: str = "") -> str:
        closing = "</answer>" if self.closed_answer else ""
        return f"<think>{thought}</think>\n<answer>{self.format_call(action, geometry)}{closing}"

    def format_call(self, action: Action, geometry: Geometry) -> str:
        self.check_expressible(action)
        kind = action.kind

        def xy(point) -> str:
            x, y = self.to_model(point, geometry)
            return f"[{x},{y}]"

        if kind is ActionKind.TAP:
            extra = f", message={_q(action.sensitive)}" if action.sensitive is not None else ""
            return f'do(action="Tap", element={xy(action.point)}{extra})'
        if kind is ActionKind.LONG_PRESS:
            return f'do(action="Long Press", element={xy(action.point)})'
        if kind is ActionKind.DOUBLE_TAP:
            return f'do(action="Double Tap", element={xy(action.point)})'
        if kind is ActionKind.SWIPE:
            return f'do(action="Swipe", start={xy(action.point)}, end={xy(action.end)})'
        if kind is ActionKind.TYPE:
            return f'do(action="Type", text={_q(action.text or "")})'
        if kind is ActionKind.LAUNCH:
            return f'do(action="Launch", app={_q(action.app or "")})'
        if kind is ActionKind.KEY:
            if action.key is Key.BACK:
                return 'do(action="Back")'
            if action.key is Key.HOME:
                return 'do(action="Home")'
            raise ValueError(f"family {self.name} cannot express key {action.key.value}")  # type: ignore[union-attr]
        if kind is ActionKind.WAIT:
            if action.duration_ms is None:
                return 'do(action="Wait")'
            return f'do(action="Wait", duration="{_seconds_text(action.duration_ms)}")'
        if kind is ActionKind.CALL_USER:
            return f'do(action="Take_over", message={_q(action.text or "")})'
        if kind is ActionKind.FINISH:
            return f"finish(message={_q(action.text or '')})"
        raise ValueError(f"family {self.name} cannot express {action.describe()}")  # pragma: no cover


__all__ = ["AutoGLM"]
