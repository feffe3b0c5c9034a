"""Screenshots for the console: a step's screen with its action drawn (report/draw.py), at a width the page asks
for (thumbnail, or full size when zoomed), and the screen a waiting question is about with the proposed action
marked. Paths come from the store, never from the request."""

from __future__ import annotations

import threading
from collections import OrderedDict

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from mobile_agent.actions import Action
from mobile_agent.errors import MobileAgentError
from mobile_agent.report.draw import annotated_thumbnail
from mobile_agent.store.files import screenshot_name
from mobile_agent.store.pauses import open_pause
from mobile_agent.store.store import TrajectoryStore

WIDTHS = (160, 240, 360, 540, 1080)
MAX_STEP_INDEX = 2**31 - 1  # the largest index an INTEGER column holds on every store


class Shots:
    """Annotated JPEGs, kept in a small in-memory cache (a step's picture never changes once recorded)."""

    def __init__(self, store: TrajectoryStore, cache_size: int = 512) -> None:
        self.store = store
        self._cache: OrderedDict[tuple, bytes] = OrderedDict()
        self._size = cache_size
        self._lock = threading.Lock()

    def _width(self, request: Request) -> int:
        try:
            asked = int(request.query_params.get("w", "360"))
        except ValueError:
            asked = 360
        return min(WIDTHS, key=lambda w: abs(w - asked))

    def _cached(self, key: tuple, make) -> bytes | None:
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        data = make()
        if data is not None:
            with self._lock:
                self._cache[key] = data
                while len(self._cache) > self._size:
                    self._cache.popitem(last=False)
        return data

    async def step(self, request: Request) -> Response:
        episode_id, index = request.path_params["episode_id"], request.path_params["index"]
        if index > MAX_STEP_INDEX:  # no episode has that step; a database would refuse the number itself
            return _jpeg(None)
        width = self._width(request)

        def make() -> bytes | None:
            try:
                step = self.store.step(self.store.episode(episode_id).id, index)
            except MobileAgentError:
                return None
            path = self.store.screenshot_path(step)
            if path is None or not path.is_file():
                return None
            device_width = step.screen.width if step.screen else None
            return annotated_thumbnail(path, step.action, width, device_width)

        return _jpeg(await run_in_threadpool(self._cached, ("step", episode_id, index, width), make))

    async def question(self, request: Request) -> Response:
        """The screen a paused episode asks about, with the action waiting for approval drawn on it."""
        episode_id = request.path_params["episode_id"]
        width = self._width(request)

        def make() -> bytes | None:
            try:
                info = self.store.episode(episode_id)
            except MobileAgentError:
                return None
            pause = open_pause(self.store, info.id)
            if pause is None:
                return None
            path = self.store.root / info.id / screenshot_name(pause.step_index)
            if not path.is_file():
                return None
            action: Action | None = pause.pending_action
            return annotated_thumbnail(path, action, width, self._device_width(info.id, pause.step_index))

        return _jpeg(await run_in_threadpool(make))  # not cached: the episode may ask again later

    def _device_width(self, episode_id: str, index: int) -> int | None:
        """The phone's width the step's action points are in: the recorded frame may be smaller (scaled down to
        save space), and drawing device pixels onto it as they are puts the mark off the screen."""
        try:
            step = self.store.step(episode_id, index)
        except MobileAgentError:
            return None
        return step.screen.width if step.screen else None


def _jpeg(data: bytes | None) -> Response:
    if data is None:
        return PlainTextResponse("no such screenshot", status_code=404)
    return Response(data, media_type="image/jpeg", headers={"cache-control": "private, max-age=3600"})


__all__ = ["Shots"]
