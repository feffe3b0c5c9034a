"""Server-sent events: each open page gets ``change`` within a second of a step being recorded (or a question
asked or answered, an episode or task ended, a phone's farm row written).

Every stream polls one cheap aggregate query (queries.change_mark) every ``poll_s`` in a worker thread; the number
of streams is capped, and each ends after ``max_age_s`` (the browser's EventSource reconnects by itself)."""

from __future__ import annotations

import asyncio
import json
import threading
import time

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse

from mobile_agent.console.queries import change_mark
from mobile_agent.store.store import TrajectoryStore


class ChangeStream:
    def __init__(
        self, store: TrajectoryStore, *, poll_s: float = 0.3, max_streams: int = 32, max_age_s: float = 300.0
    ) -> None:
        self.store = store
        self.poll_s = poll_s
        self.max_streams = max_streams
        self.max_age_s = max_age_s
        self._open = 0
        self._lock = threading.Lock()

    async def stream(self, request: Request) -> Response:
        with self._lock:
            if self._open >= self.max_streams:
                return PlainTextResponse("too many open pages; close some", status_code=503)
            self._open += 1
        return StreamingResponse(
            self._events(request),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
        )

    async def _events(self, request: Request):
        try:
            last = await run_in_threadpool(change_mark, self.store)
            yield "retry: 1000\n\n"
            started = time.monotonic()
            beat = started
            while time.monotonic() - started < self.max_age_s:
                await asyncio.sleep(self.poll_s)
                if await request.is_disconnected():
                    return
                try:
                    mark = await run_in_threadpool(change_mark, self.store)
                except Exception:  # noqa: BLE001 - a busy database: the next poll tries again
                    continue
                if mark != last:
                    last = mark
                    yield f"event: change\ndata: {json.dumps({'step': mark[0] or 0})}\n\n"
                elif time.monotonic() - beat > 15:
                    yield ": still here\n\n"  # keeps proxies from closing an idle stream
                    beat = time.monotonic()
        finally:
            with self._lock:
                self._open -= 1


__all__ = ["ChangeStream"]
