"""A recorded step's screen as the replay reads it: its size, its view tree and its screenshot, the screenshot's
difference hash, and a recorded action's points moved to another screen size."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from PIL import Image

from mobile_agent.actions import Action, Point, Size
from mobile_agent.store.records import StepInfo
from mobile_agent.store.store import TrajectoryStore

log = logging.getLogger(__name__)

HASH_SIDE = 8  # 8x8 = 64-bit difference hash


def difference_hash(image: Image.Image) -> int:
    """64-bit dHash: is each pixel brighter than its right neighbour, on a 9x8 grey thumbnail."""
    small = image.convert("L").resize((HASH_SIDE + 1, HASH_SIDE), Image.Resampling.LANCZOS)
    pixels = small.tobytes()  # mode L: one byte per pixel, row by row
    bits = 0
    for row in range(HASH_SIDE):
        for col in range(HASH_SIDE):
            left = pixels[row * (HASH_SIDE + 1) + col]
            right = pixels[row * (HASH_SIDE + 1) + col + 1]
            bits = (bits << 1) | (1 if left > right else 0)
    return bits


def hash_distance(a: int, b: int) -> int:
    return (a ^ b).bit_count()


def screen_distance(recorded: Path | Image.Image, live: Image.Image) -> int:
    if isinstance(recorded, Path):
        with Image.open(recorded) as img:
            return hash_distance(difference_hash(img), difference_hash(live))
    return hash_distance(difference_hash(recorded), difference_hash(live))


def scale_action(action: Action, recorded: Size, target: Size) -> Action:
    """The action with its points moved from the recorded screen to the target screen (same relative spot)."""
    if recorded == target or (action.point is None and action.end is None):
        return action

    def move(point: Point | None) -> Point | None:
        if point is None:
            return None
        x = round(point.x * target.width / recorded.width)
        y = round(point.y * target.height / recorded.height)
        return Point(min(max(x, 0), target.width - 1), min(max(y, 0), target.height - 1))

    return replace(action, point=move(action.point), end=move(action.end))


def moved_to(action: Action, point: Point, screen: Size) -> Action:
    """``action`` started at ``point`` instead; a swipe or drag keeps its direction and length (on screen)."""
    if action.point is None:
        return action
    dx, dy = point.x - action.point.x, point.y - action.point.y
    end = action.end
    if end is not None:
        end = Point(min(max(end.x + dx, 0), screen.width - 1), min(max(end.y + dy, 0), screen.height - 1))
    return replace(action, point=point, end=end)


def recorded_size(store: TrajectoryStore, step: StepInfo) -> Size | None:
    if step.screen is not None:
        return step.screen
    path = store.screenshot_path(step)
    if path is not None and path.is_file():
        with Image.open(path) as img:
            return Size(*img.size)
    return None


def recorded_hierarchy(store: TrajectoryStore, step: StepInfo) -> str | None:
    path = store.hierarchy_path(step)
    if path is None or not path.is_file():
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("the recorded view tree of step %d is unreadable: %s", step.index, exc)
        return None


__all__ = [
    "HASH_SIDE",
    "difference_hash",
    "hash_distance",
    "moved_to",
    "recorded_hierarchy",
    "recorded_size",
    "scale_action",
    "screen_distance",
]
