"""UI-TARS, mobile prompt: ``Thought: ...`` then ``Action: verb(...)``. Three families, by checkpoint:

- ``ui-tars``: open UI-TARS-1.5, ``point='<point>x y</point>'`` in pixels of the resized image (below);
- ``doubao-ui-tars``: doubao-1.5-ui-tars / Seed UI-TARS served by Volcengine: the 1.5 grammar, 0-1000 relative;
- ``ui-tars-1.0``: UI-TARS 1.0 (7B/72B SFT, DPO): ``start_box='<|box_start|>(x,y)<|box_end|>'``, 0-1000 relative,
  ``scroll(start_box, end_box)``.

Evidence (``tests/data/real_replies``): the 1.5 README's coordinate guide maps ``x / resized_width``; the 1.0
AndroidWorld log of issue 104 maps (20, 465) to pixel (21, 1116) on 1080x2400 (x/1000); UI-TARS-desktop's
parser scales doubao/Seed models by a factor of 1000. A wrong choice puts every tap in the wrong place, so the
family names the checkpoint instead of guessing from the numbers.

Checked against bytedance/UI-TARS (``codes/ui_tars/action_parser.py`` and the ``MOBILE_USE_DOUBAO`` prompt):
the 1.5 model writes points as ``point='<point>x y</point>'`` (older checkpoints: ``start_box='<|box_start|>(x,y)
<|box_end|>'``, both accepted), and its coordinates are absolute pixels of the Qwen2.5-VL smart-resized image. We
send the image already at a smart-resize-stable size, so the server keeps it and ``Geometry.image`` is exactly the
image the model measured.

``scroll(point, direction)`` shows more content on the ``direction`` side, so the finger moves the other way;
it becomes a swipe from the point (the screen centre when no point is given) over half the screen (clamped to
the screen), and ``format`` writes a swipe back as a scroll in the direction of its dominant axis.
``scroll(start_box, end_box)`` (1.0) is a swipe between the two points; a ``direction`` beside them is ignored.

Several calls after ``Action:`` (separated by blank lines or ``&``, as UI-TARS-desktop's parser splits them),
or several ``Action:`` lines, are performed in order, each through the guards. Accepted variants: a full-width
``Action：``, a bare call without the label, ``scroll up()``, ``type(text=...)`` (a ``start_box`` beside it is
ignored: the text goes to the focused field), and Seed's compact ``click>point>point>x y``.
"""

from __future__ import annotations

import re
from typing import Any

from mobile_agent.actions import Action, ActionKind, Key, Point
from mobile_agent.model.base import CoordinateSpace, ModelFamily, Parsed, PromptContext, parsed_sequence
from mobile_agent.model.images import Geometry, ImagePolicy
from mobile_agent.model.syntax import Call, fail, parse_calls_in, py_str, split_reply

PROMPT = """You are a GUI agent. You are given a task and your action history, with screenshots. You need to \
perform the next action to complete the task.
## Output Format
```
Thought: ...
Action: ...
```
## Action Space

click(point='<point>x1 y1</point>')
long_press(point='<point>x1 y1</point>')
type(content='') #If you want to submit your input, use "\\n" at the end of `content`.
scroll(point='<point>x1 y1</point>', direction='down or up or right or left')
open_app(app_name='')
drag(start_point='<point>x1 y1</point>', end_point='<point>x2 y2</point>')
press_home()
press_back()
finished(content='xxx') # Use escape characters \\', \\", and \\n in content part to ensure we can parse the \
content in normal python string format.

## Note
- Use {language} in `Thought` part.
- Write a small plan and finally summarize your next action (with its target element) in one sentence in \
`Thought` part.{hints}

## User Instruction
{task}"""

PROMPT_1_0 = """You are a GUI agent. You are given a task and your action history, with screenshots. You need to \
perform the next action to complete the task.
## Output Format
```
Thought: ...
Action: ...
```
## Action Space

click(start_box='<|box_start|>(x1,y1)<|box_end|>')
long_press(start_box='<|box_start|>(x1,y1)<|box_end|>', time='')
type(content='')
scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x3,y3)<|box_end|>')
open_app(app_name='')
press_home()
press_back()
finished(content='') # Submit the task regardless of whether it succeeds or fails.

## Note
- Use {language} in `Thought` part.
- Write a small plan and finally summarize your next action (with its target element) in one sentence in \
`Thought` part.{hints}

## User Instruction
{task}"""

_ACTION_LINE = re.compile(r"^[ \t]*Action\s*[:：]", re.MULTILINE)
_ACTION_LABEL = re.compile(r"Action\s*[:：]")
_BARE_CALL = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*\(")
_SCROLL_WORD = re.compile(r"^\s*scroll\s+(up|down|left|right)\s*\(\s*\)")
_SEED_OPEN = re.compile(r"<(think_never_used_\w++)>")
_COMPACT = re.compile(r"^\s*([a-z_]+)>([a-z_]+)>\2>\s*([-+\d.]+)[\s,]+([-+\d.]+)\s*$")
_THOUGHT_LABEL = re.compile(r"^\s*(?:Thought|Reflection|Action_Summary)\s*:\s*", re.IGNORECASE)
_TEXT_KEYS = frozenset({"content", "text", "app_name"})
_POINT_NAMES = ("point", "start_box", "start_point")
_END_NAMES = ("end_point", "end_box")
_DIRECTIONS = ("up", "down", "left", "right")


def _seed_think(text: str) -> tuple[int, str, int] | None:
    """Seed's ``<think_never_used_XX>..</think_never_used_XX>``: (start, body, end) of the first opening tag
    and its closing one, or None. One search each way, so a reply of opening tags costs one pass."""
    opening = _SEED_OPEN.search(text)
    if opening is None:
        return None
    closing = f"</{opening.group(1)}>"
    close_at = text.find(closing, opening.end())
    if close_at < 0:
        return None
    return opening.start(), text[opening.end() : close_at], close_at + len(closing)


def scroll_end(start: Point, direction: str, device_width: int, device_height: int) -> Point:
    """Where the finger ends for ``scroll(direction)`` from ``start``: half a screen the other way, clamped."""
    dx = {"left": device_width // 2, "right": -(device_width // 2)}.get(direction, 0)
    dy = {"up": device_height // 2, "down": -(device_height // 2)}.get(direction, 0)
    return Point(
        max(0, min(device_width - 1, start.x + dx)),
        max(0, min(device_height - 1, start.y + dy)),
    )


def scroll_direction(start: Point, end: Point) -> str:
    """The scroll direction whose finger movement is the swipe's dominant axis."""
    dx, dy = end.x - start.x, end.y - start.y
    if dx == 0 and dy == 0:
        raise ValueError("a zero-length swipe has no scroll direction")
    if abs(dy) >= abs(dx):
        return "down" if dy < 0 else "up"
    return "right" if dx < 0 else "left"


class UITars(ModelFamily):
    image_policy = ImagePolicy(factor=28)
    max_history_images = 5  # the reference keeps every text turn and the newest five screenshots
    supported_kinds = frozenset(ActionKind) - {ActionKind.ANSWER}
    format_reminder = "Thought: ...\\nAction: one action call"

    def __init__(
        self,
        name: str = "ui-tars",
        coordinate_space: CoordinateSpace = CoordinateSpace.IMAGE_PIXELS,
        *,
        legacy_boxes: bool = False,
        language: str = "Chinese",
    ) -> None:
        self.name = name
        self.coordinate_space = coordinate_space
        self.legacy_boxes = legacy_boxes  # 1.0: start_box='<|box_start|>(x,y)<|box_end|>', scroll(start, end)
        self.language = language

    def compose_messages(self, prompt: PromptContext) -> list[dict[str, Any]]:
        hints = prompt.hints_block().replace("###", "-")
        template = PROMPT_1_0 if self.legacy_boxes else PROMPT
        text = template.format(language=self.language, task=prompt.task, hints=hints) + prompt.skipped_note()
        messages: list[dict[str, Any]] = [{"role": "user", "content": text}]
        for turn, image in prompt.turns_with_images():
            messages.append({"role": "user", "content": [image] if image else "(screenshot omitted)"})
            messages.append({"role": "assistant", "content": turn.reply})
        messages.append({"role": "user", "content": [prompt.screenshot_part()]})
        return messages

    def parse(self, text: str, geometry: Geometry, reasoning: str | None = None) -> Parsed:
        raw, thought, rest = split_reply(text, reasoning)
        seed = _seed_think(rest)
        if seed:
            start, body, end = seed
            thought = thought or body.strip()
            rest = rest[:start] + rest[end:]
        compact = _COMPACT.match(rest)
        if compact:
            verb, key, x, y = compact.groups()
            call = Call(verb, {key: f"{x} {y}"}, raw)
            return parsed_sequence([self._action_of(call, geometry)], thought)
        # "Action:" starting a line; text arguments are escaped, so they cannot start a line.
        labels = list(_ACTION_LINE.finditer(rest)) or list(_ACTION_LABEL.finditer(rest))[:1]
        if labels:
            if not thought:
                thought = _THOUGHT_LABEL.sub("", rest[: labels[0].start()]).strip()
            ends = [label.start() for label in labels[1:]] + [len(rest)]
            segments = [rest[label.end() : end] for label, end in zip(labels, ends, strict=True)]
        elif _BARE_CALL.match(rest):  # the call alone (logs that print the thought separately)
            segments = [rest]
        else:
            raise fail("no 'Action:' line in the reply", raw)
        missing = "the 'Action:' line holds no action call"
        words_spelled = (_SCROLL_WORD.sub(r"scroll(direction='\1')", segment) for segment in segments)
        calls = parse_calls_in(words_spelled, raw, missing, _TEXT_KEYS)
        return parsed_sequence((self._action_of(call, geometry) for call in calls), thought)

    def _action_of(self, call: Call, geometry: Geometry) -> Action:
        verb, reply = call.name, call.reply

        def at(*names: str) -> Point:
            return self.to_device(call.pair(*names), geometry, reply)

        if verb in ("click", "left_single", "left_double", "double_click"):
            call.only(*_POINT_NAMES)
            point = at(*_POINT_NAMES)
            kind = ActionKind.TAP if verb in ("click", "left_single") else ActionKind.DOUBLE_TAP
            return Action(kind, point=point)
        if verb == "long_press":
            call.only(*_POINT_NAMES, "time")
            return Action.long_press(*at(*_POINT_NAMES), duration_ms=self._time_ms(call))
        if verb == "type":
            return Action.type(call.only("content", "text", *_POINT_NAMES).text("content", "text") or "")
        if verb == "scroll":
            return self._scroll(call, geometry)
        if verb in ("drag", "select"):
            call.only(*_POINT_NAMES, *_END_NAMES)
            return Action(ActionKind.DRAG, point=at(*_POINT_NAMES), end=at(*_END_NAMES))
        if verb == "open_app":
            app = call.only("app_name").text("app_name")
            if not app or not app.strip():
                raise fail("open_app: app_name must not be empty", reply)
            return Action.launch(app)
        if verb in ("press_home", "press_back"):
            call.only()
            return Action.press(Key.HOME if verb == "press_home" else Key.BACK)
        if verb == "wait":
            call.only()
            return Action.wait()
        if verb == "finished":
            return Action.finish(call.only("content").text("content", required=False) or None)
        if verb == "call_user":
            return Action.call_user(call.only("content").text("content", required=False))  # type: ignore[arg-type]
        raise fail(f"unknown action {verb!r} for {self.name}", reply)

    def _scroll(self, call: Call, geometry: Geometry) -> Action:
        call.only(*_POINT_NAMES, *_END_NAMES, "direction")
        reply = call.reply
        width, height = geometry.device
        start = (
            self.to_device(call.pair(*_POINT_NAMES), geometry, reply)
            if call.has(*_POINT_NAMES)
            else Point(width // 2, height // 2)
        )
        if call.has(*_END_NAMES):  # 1.0: the finger's path itself; a direction beside it adds nothing
            return Action(
                ActionKind.SWIPE, point=start, end=self.to_device(call.pair(*_END_NAMES), geometry, reply)
            )
        direction = (call.text("direction") or "").strip().lower()
        if direction not in _DIRECTIONS:
            raise fail(f"scroll: direction must be one of {', '.join(_DIRECTIONS)}, got {direction!r}", reply)
        return Action(ActionKind.SWIPE, point=start, end=scroll_end(start, direction, width, height))

    @staticmethod
    def _time_ms(call: Call) -> int | None:
        raw = call.text("time", required=False)
        if raw is None or not raw.strip():
            return None
        try:
            seconds = float(raw)
        except ValueError:
            raise fail(f"long_press: time must be seconds, got {raw!r:.40}", call.reply) from None
        if not 0 <= seconds <= 60:
            raise fail(f"long_press: time {seconds} s is out of range", call.reply)
        return round(seconds * 1000)

    def format(self, action: Action, geometry: Geometry, thought: str = "") -> str:
        return f"Thought: {thought}\nAction: {self.format_call(action, geometry)}"

    def format_call(self, action: Action, geometry: Geometry) -> str:
        self.check_expressible(action)
        kind = action.kind
        point_key = "start_box" if self.legacy_boxes else "point"

        def pt(point: Point | None) -> str:
            x, y = self.to_model(point, geometry)  # type: ignore[arg-type]
            return (
                f"'<|box_start|>({x},{y})<|box_end|>'" if self.legacy_boxes else f"'<point>{x} {y}</point>'"
            )

        if self.legacy_boxes and kind in (ActionKind.SWIPE, ActionKind.DRAG):
            verb = "scroll" if kind is ActionKind.SWIPE else "drag"
            return f"{verb}(start_box={pt(action.point)}, end_box={pt(action.end)})"
        if kind is ActionKind.TAP:
            return f"click({point_key}={pt(action.point)})"
        if kind is ActionKind.DOUBLE_TAP:
            return f"left_double({point_key}={pt(action.point)})"
        if kind is ActionKind.LONG_PRESS:
            if action.duration_ms is None:
                return f"long_press({point_key}={pt(action.point)})"
            return f"long_press({point_key}={pt(action.point)}, time='{action.duration_ms / 1000:g}')"
        if kind is ActionKind.SWIPE:
            direction = scroll_direction(action.point, action.end)  # type: ignore[arg-type]
            return f"scroll(point={pt(action.point)}, direction='{direction}')"
        if kind is ActionKind.DRAG:
            return f"drag(start_point={pt(action.point)}, end_point={pt(action.end)})"
        if kind is ActionKind.TYPE:
            return f"type(content={py_str(action.text or '')})"
        if kind is ActionKind.LAUNCH:
            return f"open_app(app_name={py_str(action.app or '')})"
        if kind is ActionKind.KEY:
            if action.key in (Key.HOME, Key.BACK):
                return f"press_{action.key.value}()"  # type: ignore[union-attr]
            raise ValueError(f"family {self.name} cannot express key {action.key.value}")  # type: ignore[union-attr]
        if kind is ActionKind.WAIT:
            return "wait()"
        if kind is ActionKind.FINISH:
            return f"finished(content={py_str(action.text or '')})"
        if kind is ActionKind.CALL_USER:
            return "call_user()" if action.text is None else f"call_user(content={py_str(action.text)})"
        raise ValueError(f"family {self.name} cannot express {action.describe()}")  # pragma: no cover


def ui_tars_1_0() -> UITars:
    return UITars("ui-tars-1.0", CoordinateSpace.THOUSANDTHS, legacy_boxes=True)


def doubao_ui_tars() -> UITars:
    return UITars("doubao-ui-tars", CoordinateSpace.THOUSANDTHS)


__all__ = ["UITars", "doubao_ui_tars", "scroll_direction", "scroll_end", "ui_tars_1_0"]
