"""The live page's requests: ``GET /live?phone=KEY`` (the page), ``GET /live/stream`` (the screen as MJPEG,
``multipart/x-mixed-replace``), ``POST /live/control`` (take or release control, or hand a taken-over episode back: live_takeover.py) and ``POST /live/input`` (a tap,
long press, swipe, typed text or key, from the viewer holding control).

Every request passes the console's token gate (security.TokenGate); the two POSTs need the CSRF token in the
``X-CSRF-Token`` header, a JSON body and, when the browser sends one, an Origin of this host. Phones are looked up
in the store (the farm's phones with their adb server, or a phone episodes ran on, through the console's ``adb``);
an address never comes from the request. A phone a worker is driving can be watched, not controlled.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import threading
import time
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse

from mobile_agent.actions import Action, ActionKind, Key
from mobile_agent.console.live import DEFAULT_FPS, ControlRefused, Frame, LivePhone, new_viewer
from mobile_agent.console.live_record import LiveRecorder
from mobile_agent.console.live_takeover import hand_back, phone_key, waiting_for_hands
from mobile_agent.console.security import csrf_token, same_origin
from mobile_agent.errors import MobileAgentError, UserError
from mobile_agent.farm.inbox import WaitingQuestion
from mobile_agent.store import phones as phone_db
from mobile_agent.store.store import TrajectoryStore

BOUNDARY = "frame"
MAX_BODY = 8 * 1024
MAX_TEXT = 500
MAX_STREAM_S = 600.0  # a stream ends after this (so a console can stop); the page opens the next one at once
KEYS = {"back": Key.BACK, "home": Key.HOME, "recents": Key.RECENT, "enter": Key.ENTER}


class LiveRoutes:
    def __init__(
        self,
        store: TrajectoryStore,
        token: str,
        user: str,
        render,
        *,
        adb: str | None = None,
        fps: float = DEFAULT_FPS,
    ) -> None:
        self.store, self.user, self.render, self.adb, self.fps = store, user, render, adb, fps
        self.csrf = csrf_token(token)
        self.recorder = LiveRecorder(store)
        self.phones: dict[str, LivePhone] = {}
        self._lock = threading.Lock()

    # ----- phones ----------------------------------------------------------------------------------------------
    def _resolve(self, key: str) -> tuple[str, str | None] | None:
        info = phone_db.farm_device(self.store, key)
        if info is not None:
            return info.serial, None if info.adb_server in ("", "-") else info.adb_server
        if self.store.list_episodes(device=key, limit=1):
            return key, self.adb
        return None

    def phone(self, key: str, found: tuple[str, str | None] | None = None) -> LivePhone | None:
        """The phone the console knows by ``key`` (``found``: its serial and adb server, read from the store by the
        caller)."""
        with self._lock:
            if key in self.phones:
                return self.phones[key]
        found = found or self._resolve(key)
        if found is None:
            return None
        with self._lock:
            return self.phones.setdefault(key, LivePhone(key, *found, fps=self.fps))

    def _question_phone(self, episode: str) -> tuple[WaitingQuestion, LivePhone] | None:
        q = waiting_for_hands(self.store, episode)
        if q is None:
            return None
        key, serial, adb = phone_key(self.store, q)
        phone = self.phone(key, (serial, adb or self.adb))
        return (q, phone) if phone is not None else None

    def _agent_on(self, phone: LivePhone, takeover: str | None = None) -> str | None:
        """Why the agent drives this phone now (then it can be watched, not controlled); None when it does not.
        A phone paused for a person, or whose worker waits on the question taken over, is not driven unless an
        episode runs on it."""
        if takeover is None and not any(h.serial == phone.serial for h in phone_db.person_holds(self.store)):
            info = phone_db.farm_device(self.store, phone.key)
            if info is not None and info.busy():
                return f"worker {info.worker} has it booked"
        for episode in self.store.list_episodes(status="running", device=phone.serial, limit=20):
            if not episode.meta.get("live"):
                return f"episode {episode.id} is running on it"
        return None

    def _who(self, request: Request, viewer: str) -> str:
        host = request.client.host if request.client else "?"
        return f"{self.user} (console, {host}, viewer {viewer[:6]})"

    # ----- the page and the stream -----------------------------------------------------------------------------
    async def page(self, request: Request) -> Response:
        key = request.query_params.get("phone", "")
        episode = request.query_params.get("episode")
        question = None
        if episode is not None:
            found = await run_in_threadpool(self._question_phone, episode)
            if found is None:
                return PlainTextResponse(
                    f"no episode {episode!r} waits for a person's hands", status_code=404
                )
            question, phone = found
            key = phone.key
        else:
            phone = await run_in_threadpool(self.phone, key)
        if phone is None:
            return PlainTextResponse(f"no phone {key!r} in this console's store", status_code=404)
        holder = phone.holder()
        return await self.render(
            request,
            "live.html.j2",
            phone=phone,
            viewer=new_viewer(),
            holder=holder.who if holder is not None else None,
            question=question,
            stream=f"/live/stream?phone={quote(key, safe='')}",
        )

    async def stream(self, request: Request) -> Response:
        phone = await run_in_threadpool(self.phone, request.query_params.get("phone", ""))
        viewer = request.query_params.get("viewer", "")
        if phone is None:
            return PlainTextResponse("no such phone", status_code=404)
        try:
            handle, queue = phone.subscribe(viewer)
        except ControlRefused as exc:
            return PlainTextResponse(exc.one_line(), status_code=503)
        return StreamingResponse(
            self._frames(request, phone, viewer, handle, queue),
            media_type=f"multipart/x-mixed-replace; boundary={BOUNDARY}",
            headers={"cache-control": "no-store", "x-accel-buffering": "no"},
        )

    async def _frames(
        self, request: Request, phone: LivePhone, viewer: str, handle: int, queue: asyncio.Queue
    ):
        """Frames until the page goes or ``MAX_STREAM_S`` passed (the page reconnects at once; a controller keeps
        control across it); while no frame comes, the reason as a text part every 2 s."""
        started = time.monotonic()
        try:
            while time.monotonic() - started < MAX_STREAM_S:
                try:
                    frame = await asyncio.wait_for(queue.get(), 2.0)
                except TimeoutError:
                    if await request.is_disconnected():
                        return
                    if phone.error:
                        yield self._note(phone.error)
                    continue
                yield self._part(phone, viewer, frame)
        finally:
            phone.unsubscribe(handle)
            timer = threading.Timer(phone.grace_s + 0.5, self._expire, args=(phone,))
            timer.daemon = True
            timer.start()

    def _part(self, phone: LivePhone, viewer: str, frame: Frame) -> bytes:
        holder = phone.holder()
        control = "none" if holder is None else ("you" if holder.viewer == viewer else "other")
        head = (
            f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(frame.jpeg)}\r\n"
            f"X-Seq: {frame.seq}\r\nX-At: {frame.at * 1000:.0f}\r\nX-Secure: {int(frame.secure)}\r\n"
            f"X-Control: {control}\r\nX-Controller: {quote(holder.who if holder else '')}\r\n\r\n"
        )
        return head.encode("ascii") + frame.jpeg + b"\r\n"

    @staticmethod
    def _note(text: str) -> bytes:
        body = f"no frame from the phone: {text}".encode()
        head = (
            f"--{BOUNDARY}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        return head.encode("ascii") + body + b"\r\n"

    def _expire(self, phone: LivePhone) -> None:
        lapsed = phone.lapsed()
        if lapsed is not None:
            self._end(lapsed, "the controlling page closed")

    def _end(self, control, why: str) -> None:
        try:
            self.recorder.end(control, why)
        except MobileAgentError:
            pass  # the episode ended otherwise (the store's own checks); nothing left to record

    # ----- control and input -----------------------------------------------------------------------------------
    async def _body(self, request: Request) -> tuple[dict, LivePhone] | Response:
        """The JSON body of a POST from this console's live page, and the phone it names."""
        if not same_origin(request.headers, request.headers.get("host", "")):
            return PlainTextResponse("forbidden: the request did not come from this console", status_code=403)
        given = request.headers.get("x-csrf-token", "")
        if not hmac.compare_digest(given.encode(), self.csrf.encode()):
            return PlainTextResponse("forbidden: missing or wrong CSRF token", status_code=403)
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            return PlainTextResponse("send JSON", status_code=415)
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY:
                return PlainTextResponse("the request is too large", status_code=413)
        try:
            data = json.loads(body or b"{}")
        except ValueError:
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("viewer"), str) or not data["viewer"]:
            return PlainTextResponse("send a JSON object with phone and viewer", status_code=400)
        phone = await run_in_threadpool(self.phone, str(data.get("phone", "")))
        if phone is None:
            return PlainTextResponse("no such phone", status_code=404)
        return data, phone

    async def control(self, request: Request) -> Response:
        asked = await self._body(request)
        if isinstance(asked, Response):
            return asked
        data, phone = asked
        viewer, op = data["viewer"], data.get("op")
        try:
            if op == "take":
                takeover = await run_in_threadpool(self._takeover_of, phone, data.get("episode"))
                busy = await run_in_threadpool(self._agent_on, phone, takeover)
                if busy is not None:
                    raise ControlRefused(
                        f"the agent drives {phone.serial}: {busy}", "watch, or wait for it to end"
                    )
                control, lapsed = phone.take(viewer, self._who(request, viewer), takeover)
                if lapsed is not None:
                    await run_in_threadpool(self._end, lapsed, "control lapsed and was taken by another page")
                if control.episode_id is None:
                    await run_in_threadpool(self.recorder.start, phone.serial, phone.key, control)
                return JSONResponse({"control": "you", "who": control.who, "episode": control.episode_id})
            if op == "release":
                control = phone.release(viewer)
                await run_in_threadpool(self._end, control, "released")
                return JSONResponse({"control": "none", "episode": control.episode_id})
            if op == "hand_back":
                return JSONResponse(await run_in_threadpool(self._hand_back, phone, phone.require(viewer)))
        except ControlRefused as exc:
            return JSONResponse({"error": exc.one_line()}, status_code=409)
        except UserError as exc:  # the inbox refused the answer (answered meanwhile, expired)
            return JSONResponse({"error": exc.one_line()}, status_code=409)
        return PlainTextResponse("op is take, release or hand_back", status_code=400)

    def _takeover_of(self, phone: LivePhone, episode: object) -> str | None:
        """The paused episode a take names, checked: it waits for hands on this very phone."""
        if episode is None:
            return None
        q = waiting_for_hands(self.store, str(episode))
        if q is None or q.phone != phone.serial:
            raise ControlRefused(
                f"episode {episode} does not wait for a person on {phone.serial}", "open the inbox"
            )
        return q.episode_id

    def _hand_back(self, phone: LivePhone, control) -> dict:
        """Release control and answer the paused episode with what was done: its worker continues it."""
        q = waiting_for_hands(self.store, control.takeover) if control.takeover else None
        if q is None:
            raise ControlRefused(
                "this control session took over no waiting episode", "release control instead"
            )
        reply = hand_back(self.store, q, control)
        phone.release(control.viewer)
        self._end(control, f"handed back to episode {q.episode_id}")
        return {"control": "none", "episode": control.episode_id, "handed_back": q.episode_id, "reply": reply}

    async def input(self, request: Request) -> Response:
        asked = await self._body(request)
        if isinstance(asked, Response):
            return asked
        data, phone = asked
        try:
            control = phone.require(data["viewer"])
        except ControlRefused as exc:
            return JSONResponse({"error": exc.one_line()}, status_code=403)
        try:
            done = await run_in_threadpool(self._act, phone, control, data)
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse(done)

    def _act(self, phone: LivePhone, control, data: dict) -> dict:
        with phone.calls:
            device = phone.device
            size = device.screen_size()
            action = to_action(data, size.width, size.height)
            before = phone.frame or phone.shoot()
            started = time.time()
            error = None
            try:
                device.perform(action)
            except MobileAgentError as exc:
                error = exc.one_line()
            act_ms = (time.time() - started) * 1000
            try:
                app = device.foreground()[0] or None
            except MobileAgentError:
                app = None
            self.recorder.step(
                control,
                action,
                before=before,
                screen=size,
                app=app,
                started=started,
                act_ms=act_ms,
                error=error,
            )
            try:
                phone.shoot()  # the screen after it, to every viewer at once
            except MobileAgentError:
                pass
        return {"done": action.describe(), "step": control.steps - 1, "error": error}


def _fraction(data: dict, name: str) -> float:
    value = data.get(name)
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a number from 0 to 1 (a fraction of the screen)")
    return float(value)


def to_action(data: dict, width: int, height: int) -> Action:
    """The page's input as a device action: positions are fractions of the screen, turned into phone pixels."""
    kind = data.get("kind")

    def point(x: str, y: str) -> tuple[int, int]:
        return (
            min(width - 1, round(_fraction(data, x) * width)),
            min(height - 1, round(_fraction(data, y) * height)),
        )

    duration = data.get("duration_ms")
    if duration is not None and (not isinstance(duration, int) or not 0 < duration <= 10_000):
        raise ValueError("duration_ms must be a whole number of milliseconds up to 10000")
    if kind == ActionKind.TAP.value:
        return Action.tap(*point("x", "y"))
    if kind == ActionKind.LONG_PRESS.value:
        return Action.long_press(*point("x", "y"), duration)
    if kind == ActionKind.SWIPE.value:
        return Action.swipe(*point("x", "y"), *point("x2", "y2"), duration)
    if kind == ActionKind.TYPE.value:
        text = data.get("text")
        if not isinstance(text, str) or not text or len(text) > MAX_TEXT:
            raise ValueError(f"text must be 1 to {MAX_TEXT} characters")
        return Action.type(text)
    if kind == ActionKind.KEY.value:
        key = KEYS.get(str(data.get("key")))
        if key is None:
            raise ValueError(f"key is one of {', '.join(KEYS)}")
        return Action.press(key)
    raise ValueError("kind is tap, long_press, swipe, type or key")


__all__ = ["BOUNDARY", "LiveRoutes", "to_action"]
