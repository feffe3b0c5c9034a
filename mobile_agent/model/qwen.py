"""Qwen-VL ``mobile_use`` tool calls (Qwen2.5-VL / Qwen3-VL and their GUI fine-tunes).

Reply: optional thinking, then ``<tool_call>{"name": "mobile_use", "arguments": {"action": ...}}</tool_call>``.
Qwen2.5-VL answers in absolute pixels of the smart-resized image (``qwen2.5-vl``); Qwen3-VL in 0-999
(``qwen3-vl``, also the default ``qwen-vl``: it does not depend on how the server resizes the image).
Besides the cookbook actions the parser accepts the common variants of the fine-tunes (``double_click``,
``drag`` with start/end coordinates, ``swipe`` with a direction, ``interact`` / ``ask_user`` for the human).
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from mobile_agent.actions import Action, ActionKind, Key, Point
from mobile_agent.model.base import (
    CoordinateSpace,
    HistoryTurn,
    ModelFamily,
    Parsed,
    PromptContext,
    parsed_sequence,
    text_part,
)
from mobile_agent.model.images import Geometry, ImagePolicy
from mobile_agent.model.syntax import (
    MAX_CALL_CODE,
    MAX_CALLS,
    Call,
    clean_reply,
    code_length,
    fail,
    split_reply,
    split_think,
    tag_bodies,
    tag_body,
    too_many_calls,
)
from mobile_agent.model.uitars import scroll_end

TOOL_NAME = "mobile_use"

_ACTION_DOC = """The action to perform:
* `click`: tap the point `coordinate` (x, y).
* `long_press`: press the point `coordinate` for `time` seconds.
* `swipe`: swipe from `coordinate` (x, y) to `coordinate2` (x2, y2).
* `type`: type `text` into the focused input box.
* `system_button`: press the system `button`.
* `open`: open the app named `text`.
* `wait`: wait `time` seconds for the screen to change.
* `answer`: give the answer `text` to the user and end the task.
* `interact`: ask the user (`text`) to resolve something only they can.
* `terminate`: end the task and report its `status`."""


def _tool_schema(screen_note: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": TOOL_NAME,
            "description": (
                "Use a touchscreen to interact with a mobile device, and take screenshots.\n"
                f"* {screen_note}\n"
                "* Tap buttons, links and icons in the centre of the element."
            ),
            "parameters": {
                "type": "object",
                "required": ["action"],
                "properties": {
                    "action": {
                        "type": "string",
                        "description": _ACTION_DOC,
                        "enum": [
                            "click",
                            "long_press",
                            "swipe",
                            "type",
                            "system_button",
                            "open",
                            "wait",
                            "answer",
                            "interact",
                            "terminate",
                        ],
                    },
                    "coordinate": {"type": "array", "description": "(x, y) for click, long_press, swipe"},
                    "coordinate2": {"type": "array", "description": "(x2, y2): where a swipe ends"},
                    "text": {"type": "string", "description": "for type, open, answer and interact"},
                    "time": {"type": "number", "description": "seconds, for long_press and wait"},
                    "button": {"type": "string", "enum": ["Back", "Home", "Menu", "Enter"]},
                    "status": {"type": "string", "enum": ["success", "failure"]},
                },
            },
        },
    }


SYSTEM_PROMPT = """You are a helpful assistant.

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{tools}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> \
XML tags:
<tool_call>
{{"name": <function-name>, "arguments": <args-json-object>}}
</tool_call>{hints}"""

_BUTTONS = {"back": Key.BACK, "home": Key.HOME, "enter": Key.ENTER, "menu": Key.RECENT}
_BUTTON_OF_KEY = {Key.BACK: "Back", Key.HOME: "Home", Key.ENTER: "Enter", Key.RECENT: "Menu"}
_KEY_NAMES = {**_BUTTONS, "recent": Key.RECENT, "app_switch": Key.RECENT, "keycode_back": Key.BACK}
_THOUGHT_TAGS = re.compile(r"</?(?:think|thinking)>|^\s*Thought\s*:\s*", re.IGNORECASE)
_FAILED = ("fail", "failure", "failed")
# Verbs of the computer-use tool that GUI fine-tunes also write on phones.
_VERB_SYNONYMS = {"left_click": "click", "tap": "click"}


def _json_object(text: str, reply: str) -> dict[str, Any]:
    start = text.find("{")
    if start < 0:
        raise fail("no JSON object in the <tool_call>", reply)
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except (ValueError, RecursionError):
        # Some fine-tunes write Python dicts (single quotes); read them as literals, never evaluate. The parser's
        # cost grows with the tokens outside strings, so a source with too many is refused before it is parsed.
        source = text[start : text.rfind("}") + 1]
        if code_length(source) > MAX_CALL_CODE:
            raise fail("the tool call is not valid JSON, and too long to read as a literal", reply) from None
        try:
            value = ast.literal_eval(source)
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError) as exc:
            raise fail(f"the tool call is not valid JSON: {exc}", reply) from None
    if not isinstance(value, dict):
        raise fail("the tool call is not a JSON object", reply)
    return value


class QwenVL(ModelFamily):
    max_history_images = 0  # history goes in as text, like the cookbook
    supported_kinds = frozenset(ActionKind)
    format_reminder = '<tool_call>{"name": "mobile_use", "arguments": {"action": ...}}</tool_call>'

    def __init__(self, name: str, coordinate_space: CoordinateSpace, image_policy: ImagePolicy) -> None:
        self.name = name
        self.coordinate_space = coordinate_space
        self.image_policy = image_policy

    def compose_messages(self, prompt: PromptContext) -> list[dict[str, Any]]:
        if self.coordinate_space is CoordinateSpace.IMAGE_PIXELS:
            size = prompt.screenshot.size
            note = f"The screen's resolution is {size.width}x{size.height}."
        else:
            note = "Coordinates are integers 0-999 relative to the screenshot, (0, 0) at the top-left."
        tools = json.dumps(_tool_schema(note), ensure_ascii=False)
        system = SYSTEM_PROMPT.format(tools=tools, hints=prompt.hints_block())
        steps = [
            f"Step {prompt.skipped + i + 1}: {self._step_summary(turn)}"
            for i, turn in enumerate(prompt.turns)
        ]
        progress = "; ".join(steps) if steps else "none yet"
        if prompt.skipped:
            progress = f"({prompt.skipped} earlier steps not shown) {progress}"
        user_text = (
            f"The user query: {prompt.task}\n"
            f"Task progress (You have done the following operation on the current device): {progress}"
        )
        content = [text_part(user_text), prompt.screenshot_part()]
        return [{"role": "system", "content": system}, {"role": "user", "content": content}]

    @staticmethod
    def _step_summary(turn: HistoryTurn) -> str:
        body = tag_body(clean_reply(turn.reply), "tool_call")
        if body:
            return " ".join(body.split())
        if turn.action is not None:
            return turn.action.describe()
        return " ".join(clean_reply(turn.reply).split())[:200] or "(empty reply)"

    def parse(self, text: str, geometry: Geometry, reasoning: str | None = None) -> Parsed:
        """Every ``<tool_call>`` in order: the tool-call format lets a model call several tools in one turn, so
        several calls are performed in order, each through the guards. With no ``<tool_call>`` the first JSON
        object of the reply is read (fine-tunes use other delimiters, or drop the wrapper and the name)."""
        raw, thought, rest = split_reply(text, reasoning)
        thought, rest = (thought, rest) if thought else split_think(rest, "<thinking>", "</thinking>")
        start = rest.find("<tool_call>")
        if start < 0:
            if "{" not in rest:
                raise fail("no <tool_call>...</tool_call> in the reply", raw)
            bodies, head = [rest], rest[: rest.find("{")]
        else:
            bodies, head = tag_bodies(rest, "tool_call"), rest[:start]
        if not thought:
            thought = _THOUGHT_TAGS.sub("", head).strip()
        if len(bodies) > MAX_CALLS:
            raise too_many_calls(raw)
        calls = [self._call_of(_json_object(body, raw), raw) for body in bodies]
        return parsed_sequence((self._action_of(call, geometry) for call in calls), thought)

    @staticmethod
    def _call_of(call_obj: dict[str, Any], raw: str) -> Call:
        if "name" not in call_obj and "arguments" not in call_obj and "action" in call_obj:
            arguments: Any = call_obj  # the arguments object alone, without the tool name around it
        else:
            name = call_obj.get("name")
            if name != TOOL_NAME:
                raise fail(f"unknown tool {name!r}: expected {TOOL_NAME!r}", raw)
            arguments = call_obj.get("arguments")
        if isinstance(arguments, str):
            arguments = _json_object(arguments, raw)
        if not isinstance(arguments, dict):
            raise fail("the tool call has no arguments object", raw)
        verb = arguments.get("action")
        if not isinstance(verb, str):
            raise fail("the tool call's arguments have no action", raw)
        kwargs = {k: v for k, v in arguments.items() if k != "action"}
        return Call(_VERB_SYNONYMS.get(verb, verb), kwargs, raw)

    def _action_of(self, call: Call, geometry: Geometry) -> Action:
        verb, reply = call.name, call.reply

        def at(name: str) -> Point:
            return self.to_device(call.pair(name), geometry, reply)

        if verb in ("click", "double_click"):
            call.only("coordinate")
            return Action(
                ActionKind.TAP if verb == "click" else ActionKind.DOUBLE_TAP, point=at("coordinate")
            )
        if verb == "long_press":
            call.only("coordinate", "time")
            return Action.long_press(*at("coordinate"), duration_ms=self._seconds_ms(call))
        if verb == "swipe":
            call.only("coordinate", "coordinate2", "direction")
            if call.has("coordinate2"):
                return Action(ActionKind.SWIPE, point=at("coordinate"), end=at("coordinate2"))
            direction = (call.text("direction") or "").strip().lower()
            if direction not in ("up", "down", "left", "right"):
                raise fail(f"swipe: direction must be up, down, left or right, got {direction!r}", reply)
            width, height = geometry.device
            start = at("coordinate") if call.has("coordinate") else Point(width // 2, height // 2)
            return Action(ActionKind.SWIPE, point=start, end=scroll_end(start, direction, width, height))
        if verb == "drag":
            call.only("start_coordinate", "end_coordinate")
            return Action(ActionKind.DRAG, point=at("start_coordinate"), end=at("end_coordinate"))
        if verb == "type":
            return Action.type(call.only("text").text("text") or "")
        if verb in ("open", "AWAKE"):
            app = call.only("text").text("text")
            if not app or not app.strip():
                raise fail(f"{verb}: text (the app name) must not be empty", reply)
            return Action.launch(app)
        if verb in ("system_button", "key"):
            name = "button" if verb == "system_button" else "text"
            call.only(name)
            button = (call.text(name) or "").strip().lower()
            table = _BUTTONS if verb == "system_button" else _KEY_NAMES
            if button not in table:
                raise fail(f"{verb}: unsupported {name} {button!r} (supported: {', '.join(table)})", reply)
            return Action.press(table[button])
        if verb == "wait":
            call.only("time")
            return Action.wait(self._seconds_ms(call))
        if verb == "answer":
            return Action.answer(call.only("text").text("text") or "")
        if verb in ("interact", "ask_user", "INFO"):
            return Action.call_user(call.only("text").text("text") or "")
        if verb == "terminate":
            status = (call.only("status").text("status") or "").strip().lower()
            if status not in ("success", *_FAILED):
                raise fail(f"terminate: status must be success or failure, got {status!r}", reply)
            return Action.finish(None if status == "success" else "failure")
        raise fail(f"unknown mobile_use action {verb!r}", reply)

    @staticmethod
    def _seconds_ms(call: Call) -> int | None:
        if not call.has("time"):
            return None
        value = call.value("time")
        if isinstance(value, str):
            try:
                value = float(value.strip().removesuffix("s"))
            except ValueError:
                raise fail(f"{call.name}: time must be seconds, got {value!r:.40}", call.reply) from None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 3600:
            raise fail(f"{call.name}: time must be 0-3600 seconds, got {value!r:.40}", call.reply)
        return round(value * 1000)

    def format(self, action: Action, geometry: Geometry, thought: str = "") -> str:
        arguments = self.format_arguments(action, geometry)
        body = json.dumps({"name": TOOL_NAME, "arguments": arguments}, ensure_ascii=False)
        call = f"<tool_call>\n{body}\n</tool_call>"
        return f"{thought}\n{call}" if thought else call

    def format_arguments(self, action: Action, geometry: Geometry) -> dict[str, Any]:
        self.check_expressible(action)
        kind = action.kind

        def xy(point: Point | None) -> list[int]:
            return list(self.to_model(point, geometry))  # type: ignore[arg-type]

        if kind in (ActionKind.TAP, ActionKind.DOUBLE_TAP):
            verb = "click" if kind is ActionKind.TAP else "double_click"
            return {"action": verb, "coordinate": xy(action.point)}
        if kind is ActionKind.LONG_PRESS:
            args: dict[str, Any] = {"action": "long_press", "coordinate": xy(action.point)}
            if action.duration_ms is not None:
                args["time"] = action.duration_ms / 1000
            return args
        if kind is ActionKind.SWIPE:
            return {"action": "swipe", "coordinate": xy(action.point), "coordinate2": xy(action.end)}
        if kind is ActionKind.DRAG:
            return {"action": "drag", "start_coordinate": xy(action.point), "end_coordinate": xy(action.end)}
        if kind is ActionKind.TYPE:
            return {"action": "type", "text": action.text}
        if kind is ActionKind.LAUNCH:
            return {"action": "open", "text": action.app}
        if kind is ActionKind.KEY:
            return {"action": "system_button", "button": _BUTTON_OF_KEY[action.key]}  # type: ignore[index]
        if kind is ActionKind.WAIT:
            if action.duration_ms is None:
                return {"action": "wait"}
            return {"action": "wait", "time": action.duration_ms / 1000}
        if kind is ActionKind.ANSWER:
            return {"action": "answer", "text": action.text or ""}
        if kind is ActionKind.CALL_USER:
            return {"action": "interact", "text": action.text or ""}
        if kind is ActionKind.FINISH:
            failed = (action.text or "").strip().lower() in _FAILED
            return {"action": "terminate", "status": "failure" if failed else "success"}
        raise ValueError(f"family {self.name} cannot express {action.describe()}")  # pragma: no cover


QWEN25_POLICY = ImagePolicy(factor=28)
QWEN3_POLICY = ImagePolicy(factor=32, min_pixels=64 * 32 * 32, max_pixels=1024 * 32 * 32)


def qwen25_vl() -> QwenVL:
    return QwenVL("qwen2.5-vl", CoordinateSpace.IMAGE_PIXELS, QWEN25_POLICY)


def qwen3_vl(name: str = "qwen3-vl") -> QwenVL:
    return QwenVL(name, CoordinateSpace.NORMALIZED, QWEN3_POLICY)


__all__ = ["QwenVL", "qwen25_vl", "qwen3_vl"]
