"""What every model family provides: prompt building, reply parsing, reply formatting, and its coordinates.

A family is stateless; one instance serves every episode. ``build_messages`` turns (task, bounded history,
current screenshot) into OpenAI chat messages: the base class bounds the history, prepares the screenshot and
adds the correction after a parse failure; the family's ``compose_messages`` lays out the rest. ``parse``
turns the model's reply into an ``Action`` in device pixels; ``format`` is the inverse of ``parse`` (the exact
text the model would write for an action), which the simulated model endpoint and the property tests use.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from PIL import Image

from mobile_agent.actions import Action, ActionKind, Point, Size
from mobile_agent.model.images import (
    Geometry,
    ImagePolicy,
    PreparedImage,
    history_frame,
    jpeg_data_url,
    prepare_image,
    smart_resize,
)
from mobile_agent.model.syntax import fail


class CoordinateSpace(str, Enum):
    NORMALIZED = "0-999"  # integers 0..999 relative to the screenshot, whatever its size
    IMAGE_PIXELS = "image-pixels"  # pixels of the (resized) image the model was shown
    THOUSANDTHS = "0-1000"  # 0..1000 inclusive relative to the screenshot (UI-TARS 1.0, doubao/Seed UI-TARS)


NORMALIZED_EXTENT = 1000


@dataclass(frozen=True)
class PromptOptions:
    """Bounds on the history sent with each step, and small extras some families use.

    ``history_image_scale`` < 1 and ``history_image_quality`` send cheaper history screenshots (smaller sides, a
    lower JPEG quality) than the current one; the defaults send them as the model saw them, as families are trained.
    """

    max_history_turns: int = 8
    history_images: int = 2
    current_app: str | None = None
    history_image_scale: float = 1.0
    history_image_quality: int | None = None

    def __post_init__(self) -> None:
        if self.max_history_turns < 0 or self.history_images < 0:
            raise ValueError("history bounds must not be negative")
        if not 0.0 < self.history_image_scale <= 1.0:
            raise ValueError(f"history_image_scale must be in (0, 1], got {self.history_image_scale}")
        quality = self.history_image_quality
        if quality is not None and not 1 <= quality <= 95:
            raise ValueError(f"history_image_quality must be 1-95, got {quality}")


@dataclass(frozen=True)
class HistoryTurn:
    """One earlier step: the JPEG the model was shown (as prepared), its raw reply, the action taken."""

    image: bytes | None
    reply: str
    action: Action | None = None
    # The image as sent (a data URL) per way of sending it: a turn goes out with many steps and is encoded once.
    # Never copied by dataclasses.replace, so a turn with another image starts empty.
    _sent: dict[tuple[Any, ...], str] = field(default_factory=dict, init=False, repr=False, compare=False)

    def image_url(self, policy: ImagePolicy, options: PromptOptions) -> str | None:
        """The image as a data URL, made cheaper as ``options`` ask (:func:`history_frame`); None without one."""
        if not self.image:
            return None
        key = (policy, options.history_image_scale, options.history_image_quality)
        url = self._sent.get(key)
        if url is None:
            jpeg = history_frame(self.image, policy, *key[1:])
            url = self._sent[key] = jpeg_data_url(jpeg)
        return url

    def forget_sent(self) -> None:
        """Drop the encoded image: the turn is no longer sent with one (its JPEG stays)."""
        self._sent.clear()


@dataclass(frozen=True)
class Parsed:
    """A reply's action, and the ones the model wrote after it in the same reply (performed in order, each
    through the guards, as steps of their own). A sequence ends at the first action that ends the episode or
    hands it to the user: nothing after it could run."""

    action: Action
    thought: str
    follow_ups: tuple[Action, ...] = ()

    @property
    def actions(self) -> tuple[Action, ...]:
        return (self.action, *self.follow_ups)


def ends_sequence(action: Action) -> bool:
    return action.is_terminal or action.kind is ActionKind.CALL_USER


def parsed_sequence(actions: Iterable[Action], thought: str) -> Parsed:
    """``Parsed`` from the actions of one reply, in order, up to the first that ends the sequence."""
    taken: list[Action] = []
    for action in actions:
        taken.append(action)
        if ends_sequence(action):
            break
    return Parsed(taken[0], thought, tuple(taken[1:]))


Screenshot = Image.Image | bytes | PreparedImage


@dataclass(frozen=True)
class PromptContext:
    """What one step's prompt is made of, once the family's image policy and history bounds are applied."""

    task: str
    screenshot: PreparedImage  # the current screen, prepared for the family
    skipped: int  # earlier turns left out of the prompt
    turns: Sequence[HistoryTurn]  # the kept turns, oldest first
    image_turns: int  # how many of the newest kept turns are sent with their screenshot
    options: PromptOptions
    hints: str | None = None
    image_policy: ImagePolicy = ImagePolicy()  # the family's, for the history screenshots

    def screenshot_part(self) -> dict[str, Any]:
        return image_part(self.screenshot)

    def turns_with_images(self) -> Iterator[tuple[HistoryTurn, dict[str, Any] | None]]:
        """Each kept turn with its screenshot as a message part, or None when its image is not sent."""
        first_with_image = len(self.turns) - self.image_turns
        for index, turn in enumerate(self.turns):
            url = turn.image_url(self.image_policy, self.options) if index >= first_with_image else None
            yield turn, url_part(url) if url else None

    def hints_block(self, title: str = "App knowledge") -> str:
        return hints_block(self.hints, title)

    def skipped_note(self) -> str:
        return f"\n\n({self.skipped} earlier steps are not shown.)" if self.skipped else ""


def _axis_to_device(value: float, model_extent: int, device_extent: int) -> int:
    # The model names a cell of the model grid; we act at the device pixel under that cell's centre.
    if isinstance(value, int):
        pixel = ((2 * value + 1) * device_extent) // (2 * model_extent)
    else:
        pixel = math.floor((value + 0.5) * device_extent / model_extent)
    return max(0, min(device_extent - 1, pixel))


def _axis_to_model(pixel: int, model_extent: int, device_extent: int) -> int:
    guess = (pixel * model_extent) // device_extent
    for candidate in (guess, guess + 1, guess - 1):
        if 0 <= candidate < model_extent and _axis_to_device(candidate, model_extent, device_extent) == pixel:
            return candidate
    return max(0, min(model_extent - 1, guess))


class ModelFamily(ABC):
    """Base of every family. Subclasses set the class attributes and implement the three methods."""

    name: str
    coordinate_space: CoordinateSpace
    image_policy: ImagePolicy = ImagePolicy()
    # Earlier screenshots the family's reference client sends at most (None: as many as options allow).
    max_history_images: int | None = None
    supported_kinds: frozenset[ActionKind]
    # One line shown to the model after a parse failure.
    format_reminder: str = ""

    # ----- the interface -------------------------------------------------------------------------------------
    def build_messages(
        self,
        task: str,
        history: Sequence[HistoryTurn],
        screenshot: Screenshot,
        *,
        options: PromptOptions | None = None,
        hints: str | None = None,
        correction: str | None = None,
    ) -> list[dict[str, Any]]:
        """One step's chat messages; a ``correction`` (why the last reply failed) ends the last user turn."""
        options = options or PromptOptions()
        current = self.prepare(screenshot)
        skipped, kept, image_turns = self.bounded_history(history, options)
        for turn in history[: len(history) - image_turns]:
            turn.forget_sent()  # out of the image window: an episode's memory holds the URLs of the window only
        prompt = PromptContext(task, current, skipped, kept, image_turns, options, hints, self.image_policy)
        messages = self.compose_messages(prompt)
        if correction:
            messages[-1]["content"].append(text_part(self.correction_text(correction)))
        return messages

    @abstractmethod
    def compose_messages(self, prompt: PromptContext) -> list[dict[str, Any]]:
        """The family's messages; the last is the user turn with the current screenshot (a list of parts)."""

    @abstractmethod
    def parse(self, text: str, geometry: Geometry, reasoning: str | None = None) -> Parsed: ...

    @abstractmethod
    def format(self, action: Action, geometry: Geometry, thought: str = "") -> str: ...

    # ----- sizes and coordinates -----------------------------------------------------------------------------
    def working_size(self, device: Size) -> Size:
        return smart_resize(device, self.image_policy)

    def geometry(self, device: Size) -> Geometry:
        """The geometry of a step on a device of this size (the image is resized by this family's policy)."""
        return Geometry(device=device, image=self.working_size(device))

    def model_extent(self, geometry: Geometry) -> Size:
        if self.coordinate_space in (CoordinateSpace.NORMALIZED, CoordinateSpace.THOUSANDTHS):
            return Size(NORMALIZED_EXTENT, NORMALIZED_EXTENT)
        return geometry.image

    def to_device(self, xy: tuple[float, float], geometry: Geometry, reply: str = "") -> Point:
        """Model coordinates -> device pixels. Coordinates outside the family's range are a ParseError."""
        extent = self.model_extent(geometry)
        x, y = xy
        if self.coordinate_space is CoordinateSpace.NORMALIZED:
            limit_x = limit_y = NORMALIZED_EXTENT - 1
            space = "0-999"
        elif self.coordinate_space is CoordinateSpace.THOUSANDTHS:  # 1000 is the far edge, still on screen
            limit_x = limit_y = NORMALIZED_EXTENT
            space = "0-1000"
        else:  # a pixel on the image's far edge is still on the image
            limit_x, limit_y = extent.width, extent.height
            space = f"the {extent.width}x{extent.height} image"
        if not (0 <= x <= limit_x and 0 <= y <= limit_y):
            raise fail(f"coordinate ({x}, {y}) is outside {space}", reply)
        return Point(
            _axis_to_device(x, extent.width, geometry.device.width),
            _axis_to_device(y, extent.height, geometry.device.height),
        )

    def to_model(self, point: Point, geometry: Geometry) -> tuple[int, int]:
        """Device pixels -> the model coordinates that map back to exactly this pixel when one exists."""
        extent = self.model_extent(geometry)
        return (
            _axis_to_model(point.x, extent.width, geometry.device.width),
            _axis_to_model(point.y, extent.height, geometry.device.height),
        )

    # ----- helpers for building messages ---------------------------------------------------------------------
    def prepare(self, screenshot: Screenshot) -> PreparedImage:
        return prepare_image(screenshot, self)

    def bounded_history(
        self, history: Sequence[HistoryTurn], options: PromptOptions
    ) -> tuple[int, list[HistoryTurn], int]:
        """(index of the first kept turn, the kept turns, how many of the newest kept turns carry images)."""
        kept = list(history[-options.max_history_turns :]) if options.max_history_turns else []
        images = options.history_images
        if self.max_history_images is not None:
            images = min(images, self.max_history_images)
        return len(history) - len(kept), kept, min(images, len(kept))

    def check_expressible(self, action: Action) -> None:
        if action.kind not in self.supported_kinds:
            raise ValueError(f"family {self.name} cannot express a {action.kind.value} action")

    def correction_text(self, correction: str) -> str:
        return (
            f"Your last reply could not be parsed: {correction}. "
            f"Answer again in the exact output format. {self.format_reminder}"
        ).strip()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def image_part(jpeg_or_prepared: bytes | PreparedImage) -> dict[str, Any]:
    if isinstance(jpeg_or_prepared, PreparedImage):
        return url_part(jpeg_or_prepared.data_url())
    return url_part(jpeg_data_url(jpeg_or_prepared))


def url_part(url: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url}}


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def hints_block(hints: str | None, title: str = "App knowledge") -> str:
    return f"\n\n### {title}\n{hints.strip()}" if hints and hints.strip() else ""


__all__ = [
    "CoordinateSpace",
    "HistoryTurn",
    "ModelFamily",
    "Parsed",
    "ends_sequence",
    "parsed_sequence",
    "PromptContext",
    "PromptOptions",
    "Screenshot",
    "hints_block",
    "image_part",
    "text_part",
    "url_part",
]
