"""UI-Venus-2: ``<think>...</think><action>Verb(args)</action>``, coordinates 0-999, multi-turn history.

History follows the reference client: the system message holds the instructions and the task, each earlier step
is a user turn (its screenshot for the newest few, otherwise empty) plus an assistant turn with the raw reply,
and the current turn is "Current Screenshot:" with the image. Unlike the reference it is bounded.
"""

from __future__ import annotations

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
from mobile_agent.model.images import Geometry, ImagePolicy
from mobile_agent.model.syntax import Call, fail, parse_calls_in, py_str, split_reply, tag_bodies

_ACTIONS = """\
- Click(point=(x1, y1))
> Tap the screen at the given coordinate.
- DoubleClick(point=(x1, y1))
> Double-tap the screen at the given coordinate.
- LongPress(point=(x1, y1))
> Press and hold at the given coordinate, e.g. to open copy / forward / delete options.
- Drag(start=(x1, y1), end=(x2, y2))
> Press at the start coordinate, hold, and move to the end coordinate (sliders, layouts, slider captchas).
- Swipe(start=(x1, y1), end=(x2, y2))
> Swipe from the start coordinate to the end coordinate (scroll, switch tabs, pull down the shade).
- Type(content='')
> Type the text into the focused input field.
- LaunchApp(app='')
> Open the named app.
- Wait()
> Wait for the page or an animation to finish loading.
- CallUser(content='')
> Ask the user to take over or to give missing information.
- GetScreenshot()
> Save a screenshot to the photo album.
- PressBack()
> Go back to the previous screen.
- PressHome()
> Go to the home screen.
- PressEnter()
> Press the Enter key.
- PressRecent()
> Open the recent apps screen.
- Answer(content='')
> Answer the user's question.
- Finished(content='')
> Mark the task as done and report how it went."""

SYSTEM_PROMPT = """**You are a GUI Agent.** Analyse the user's task, answer the user's questions clearly, and carry \
the task out on the phone with precise actions.

### Available Actions
Coordinates are integers from (0, 0) at the top-left corner to (999, 999) at the bottom-right corner of the \
screenshot. Call exactly one of:

{actions}

### Instructions
- Make sure you understand the goal of the task before acting.
- Look carefully at the current screenshot; the history may claim effects that did not happen.
- Use `CallUser` when information is missing or several options fit the request.
- Swipe in different directions to reveal more content.

### Output Format
<think> your thinking process </think>
<action> the next action </action>

### User Task
{task}{hints}"""

_KEY_VERBS = {
    "PressBack": Key.BACK,
    "PressHome": Key.HOME,
    "PressEnter": Key.ENTER,
    "PressRecent": Key.RECENT,
}
_VERB_OF_KEY = {key: verb for verb, key in _KEY_VERBS.items()}
_TEXT_KEYS = frozenset({"content", "app"})


class VenusFamily(ModelFamily):
    """Shared reading and writing of the ``<think>``/``<action>`` reply of the UI-Venus families."""

    coordinate_space = CoordinateSpace.NORMALIZED
    point_verbs: dict[str, ActionKind]
    gesture_verbs: dict[str, ActionKind]
    launch_verbs: tuple[str, ...]
    text_verbs: dict[str, ActionKind]
    unsupported_verbs: dict[str, str] = {}
    point_arg_names: tuple[str, ...] = ("point", "box")

    def parse(self, text: str, geometry: Geometry, reasoning: str | None = None) -> Parsed:
        """Every call of every ``<action>`` block, in order: the official captcha prompt asks for several
        comma-separated Clicks in one block, so a sequence is part of the format. One unreadable block fails
        the whole reply: running the rest would act on a plan the model did not finish writing."""
        raw, thought, rest = split_reply(text, reasoning)
        # Thinking disabled or tags dropped: accept a bare call after the thinking.
        bodies = tag_bodies(rest, "action") or [rest]
        missing = "no <action>...</action> with an action call in the reply"
        calls = parse_calls_in(bodies, raw, missing, _TEXT_KEYS)
        return parsed_sequence((self._action_of(call, geometry) for call in calls), thought)

    def _action_of(self, call: Call, geometry: Geometry) -> Action:
        verb, reply = call.name, call.reply
        if verb in self.unsupported_verbs:
            raise fail(self.unsupported_verbs[verb], reply)
        if verb in self.point_verbs:
            call.only(*self.point_arg_names)
            point = self.to_device(call.pair(*self.point_arg_names), geometry, reply)
            return Action(self.point_verbs[verb], point=point)
        if verb in self.gesture_verbs:
            call.only("start", "end")
            start = self.to_device(call.pair("start"), geometry, reply)
            end = self.to_device(call.pair("end"), geometry, reply)
            return Action(self.gesture_verbs[verb], point=start, end=end)
        if verb == "Type":
            return Action.type(call.only("content").text("content"))
        if verb in self.launch_verbs:
            app = call.only("app").text("app")
            if not app or not app.strip():
                raise fail(f"{verb}: app must not be empty", reply)
            return Action.launch(app)
        if verb == "Wait":
            call.only()
            return Action.wait()
        if verb in _KEY_VERBS:
            call.only()
            return Action.press(_KEY_VERBS[verb])
        if verb in self.text_verbs:
            kind = self.text_verbs[verb]
            call.only("content")
            if kind is ActionKind.FINISH:
                return Action.finish(call.text("content", required=False) or None)
            return Action(kind, text=call.text("content"))
        raise fail(f"unknown action {verb!r} for {self.name}", reply)

    def format_call(self, action: Action, geometry: Geometry) -> str:
        self.check_expressible(action)
        kind = action.kind

        def xy(point) -> str:
            x, y = self.to_model(point, geometry)
            return f"({x}, {y})"

        for verb, verb_kind in self.point_verbs.items():
            if verb_kind is kind:
                return f"{verb}({self.point_arg_names[0]}={xy(action.point)})"
        for verb, verb_kind in self.gesture_verbs.items():
            if verb_kind is kind:
                return f"{verb}(start={xy(action.point)}, end={xy(action.end)})"
        if kind is ActionKind.TYPE:
            return f"Type(content={py_str(action.text or '')})"
        if kind is ActionKind.LAUNCH:
            return f"{self.launch_verbs[0]}(app={py_str(action.app or '')})"
        if kind is ActionKind.WAIT:
            return "Wait()"
        if kind is ActionKind.KEY:
            return f"{_VERB_OF_KEY[action.key]}()"  # type: ignore[index]
        for verb, verb_kind in self.text_verbs.items():
            if verb_kind is kind:
                return f"{verb}(content={py_str(action.text or '')})"
        raise ValueError(f"family {self.name} cannot express {action.describe()}")  # pragma: no cover


class UIVenus2(VenusFamily):
    name = "ui-venus-2"
    image_policy = ImagePolicy(factor=32, min_pixels=64 * 32 * 32, max_pixels=1024 * 32 * 32)
    point_verbs = {
        "Click": ActionKind.TAP,
        "DoubleClick": ActionKind.DOUBLE_TAP,
        "LongPress": ActionKind.LONG_PRESS,
    }
    gesture_verbs = {"Swipe": ActionKind.SWIPE, "Drag": ActionKind.DRAG}
    launch_verbs = ("LaunchApp", "Launch")
    text_verbs = {
        "CallUser": ActionKind.CALL_USER,
        "Answer": ActionKind.ANSWER,
        "Finished": ActionKind.FINISH,
    }
    unsupported_verbs = {
        "GetScreenshot": "GetScreenshot (save a screenshot to the album) is not supported by this runtime",
    }
    supported_kinds = frozenset(ActionKind)
    format_reminder = "<think> your thinking </think><action> one action call </action>"

    def compose_messages(self, prompt: PromptContext) -> list[dict[str, Any]]:
        system = SYSTEM_PROMPT.format(actions=_ACTIONS, task=prompt.task, hints=prompt.hints_block())
        messages: list[dict[str, Any]] = [{"role": "system", "content": system + prompt.skipped_note()}]
        for turn, image in prompt.turns_with_images():
            user: Any = [text_part("History Screenshot:"), image] if image else ""
            messages.append({"role": "user", "content": user})
            messages.append({"role": "assistant", "content": turn.reply})
        content = [text_part("Current Screenshot:\n"), prompt.screenshot_part()]
        messages.append({"role": "user", "content": content})
        return messages

    def format(self, action: Action, geometry: Geometry, thought: str = "") -> str:
        return f"<think>{thought}</think>\n<action>{self.format_call(action, geometry)}</action>"


__all__ = ["UIVenus2", "VenusFamily"]
