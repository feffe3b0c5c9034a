"""A phone's live screen for the console, and who may drive it.

Frames come from the phone through the runtime's own device layer (``AndroidDevice.screenshot_jpeg``, the
uiautomator2 server's takeScreenshot, shrunk on the phone) at no more than ``fps`` a second, taken by one thread
per phone that runs only while at least one viewer's stream is open: with nobody watching, no frame is taken.
Every viewer gets the newest frame (a slow one skips frames rather than queueing them).

One viewer at a time holds control (``take``/``release``); the others watch, and input from them is refused. A
controller whose stream closed loses control after ``grace_s`` (a reload keeps it).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mobile_agent.device.android import AndroidDevice
from mobile_agent.device.frames import is_black
from mobile_agent.errors import MobileAgentError

log = logging.getLogger(__name__)

DEFAULT_FPS = 8.0
DEFAULT_SCALE = 0.5  # frames at half the phone's resolution: 540 x 1200 for a 1080 x 2400 phone
MAX_VIEWERS = 8  # streams per phone


@dataclass(frozen=True)
class Frame:
    jpeg: bytes
    seq: int
    at: float  # time.time() when the phone's answer arrived
    secure: bool  # all black: a FLAG_SECURE window (the phone gives no picture of it)


@dataclass
class Control:
    viewer: str
    who: str
    since: float
    episode_id: str | None = None  # the store's record of this control session (live_record.LiveRecorder)
    steps: int = 0
    takeover: str | None = None  # the paused episode this session acts for (live_takeover.py)
    done: list[str] = field(default_factory=list)  # what was done, as recorded, for the hand-back reply


class ControlRefused(MobileAgentError):
    """Input or a take-over this viewer may not make (someone else holds control, or nobody does)."""


class LivePhone:
    """One phone as the console shows it: a frame pump while watched, and the control lock."""

    def __init__(
        self,
        key: str,
        serial: str,
        adb: str | None,
        *,
        fps: float = DEFAULT_FPS,
        scale: float = DEFAULT_SCALE,
        quality: int = 70,
        grace_s: float = 5.0,
        device_factory: Callable[[str, str | None], AndroidDevice] = lambda s, a: AndroidDevice(s, adb=a),
    ) -> None:
        self.key, self.serial, self.adb = key, serial, adb
        self.interval = 1.0 / max(0.5, min(fps, 30.0))
        self.scale, self.quality, self.grace_s = scale, quality, grace_s
        self._factory = device_factory
        self._device: AndroidDevice | None = None
        self._lock = threading.Lock()  # viewers, control, the pump's life
        self._device_lock = threading.Lock()
        self.calls = threading.RLock()  # one call to the phone at a time: frames and the controller's input
        self._viewers: dict[int, tuple[str, asyncio.AbstractEventLoop, asyncio.Queue]] = {}
        self._next_id = 0
        self._pump: threading.Thread | None = None
        self._stop = threading.Event()
        self.frame: Frame | None = None
        self.error: str | None = None  # why the last frame could not be taken
        self.frames_taken = 0
        self.control: Control | None = None
        self._left_at: float | None = None  # when the controller's last stream closed

    # ----- the device ------------------------------------------------------------------------------------------
    @property
    def device(self) -> AndroidDevice:
        with self._device_lock:
            if self._device is None:
                self._device = self._factory(self.serial, self.adb)
            return self._device

    # ----- viewers and the pump --------------------------------------------------------------------------------
    def watching(self) -> int:
        with self._lock:
            return len(self._viewers)

    def subscribe(self, viewer: str) -> tuple[int, asyncio.Queue]:
        """A queue that always holds the newest frame for this viewer (call from the event loop)."""
        queue: asyncio.Queue = asyncio.Queue(maxsize=1)
        loop = asyncio.get_running_loop()
        with self._lock:
            if len(self._viewers) >= MAX_VIEWERS:
                raise ControlRefused(f"{MAX_VIEWERS} viewers already watch {self.serial}", "close one")
            self._next_id += 1
            handle = self._next_id
            self._viewers[handle] = (viewer, loop, queue)
            if self.control is not None and self.control.viewer == viewer:
                self._left_at = None
            if self.frame is not None:
                queue.put_nowait(self.frame)
            if self._pump is None or not self._pump.is_alive() or self._stop.is_set():
                # (a pump told to stop ends on its own event; a viewer arriving meanwhile gets a new one)
                self._stop = threading.Event()
                self._pump = threading.Thread(
                    target=self._run, args=(self._stop,), name=f"live-{self.serial}", daemon=True
                )
                self._pump.start()
        return handle, queue

    def unsubscribe(self, handle: int) -> None:
        with self._lock:
            gone = self._viewers.pop(handle, None)
            if not self._viewers:
                self._stop.set()  # nobody watches: the pump ends after its current frame
            if gone is not None and self.control is not None and gone[0] == self.control.viewer:
                if not any(v == gone[0] for v, _, _ in self._viewers.values()):
                    self._left_at = time.monotonic()

    def _run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            started = time.monotonic()
            try:
                self.shoot()
            except MobileAgentError as exc:
                self.error = exc.one_line()
                log.warning("live frame of %s: %s", self.serial, self.error)
                stop.wait(1.0)
            except Exception as exc:  # noqa: BLE001 - a frame that failed must not end the stream
                self.error = str(exc) or type(exc).__name__
                log.warning("live frame of %s failed", self.serial, exc_info=True)
                stop.wait(1.0)
            stop.wait(max(0.0, self.interval - (time.monotonic() - started)))

    def shoot(self) -> Frame:
        """Take a frame now and hand it to every viewer."""
        with self.calls:
            jpeg = self.device.screenshot_jpeg(self.scale, self.quality)
        with self._lock:
            self.frames_taken += 1
            seq = self.frame.seq + 1 if self.frame is not None else 1
            frame = self.frame = Frame(jpeg, seq, time.time(), is_black(jpeg))
            self.error = None
            targets = [(loop, queue) for _, loop, queue in self._viewers.values()]
        for loop, queue in targets:
            try:
                loop.call_soon_threadsafe(_put_newest, queue, frame)
            except RuntimeError:  # that viewer's loop closed
                pass
        return frame

    # ----- control ---------------------------------------------------------------------------------------------
    def holder(self) -> Control | None:
        """Who holds control now (one whose stream closed longer than ``grace_s`` ago does not)."""
        with self._lock:
            control = self.control
            if control is not None and self._left_at is not None:
                if time.monotonic() - self._left_at > self.grace_s:
                    return None
            return control

    def take(self, viewer: str, who: str, takeover: str | None = None) -> tuple[Control, Control | None]:
        """Give control to ``viewer``; (the new control, the lapsed one it replaced, if any). ControlRefused when
        another viewer holds it."""
        current = self.holder()
        with self._lock:
            if current is not None and current.viewer == viewer:
                return current, None
            if current is not None:
                raise ControlRefused(
                    f"{current.who} holds control of {self.serial}", "wait for them to release it, or watch"
                )
            lapsed = self.control
            self.control = Control(viewer, who, time.time(), takeover=takeover)
            self._left_at = None
            return self.control, lapsed

    def release(self, viewer: str) -> Control:
        with self._lock:
            control = self.control
            if control is None or control.viewer != viewer:
                raise ControlRefused("this page does not hold control", "take control first")
            self.control = None
            self._left_at = None
            return control

    def lapsed(self) -> Control | None:
        """The control of a controller gone for longer than ``grace_s``, taken away (for its record to be ended)."""
        with self._lock:
            control = self.control
            if control is None or self._left_at is None or time.monotonic() - self._left_at <= self.grace_s:
                return None
            self.control = None
            self._left_at = None
            return control

    def require(self, viewer: str) -> Control:
        control = self.holder()
        if control is None or control.viewer != viewer:
            who = f"{control.who} holds control" if control is not None else "nobody holds control"
            raise ControlRefused(f"remote input refused: {who}", "take control first")
        return control

    def stop(self) -> None:
        with self._lock:
            self._stop.set()
            pump = self._pump
        if pump is not None:
            pump.join(5)


def _put_newest(queue: asyncio.Queue, frame: Frame) -> None:
    if queue.full():
        try:
            queue.get_nowait()
        except asyncio.QueueEmpty:
            pass
    queue.put_nowait(frame)


def new_viewer() -> str:
    return secrets.token_urlsafe(12)


__all__ = ["DEFAULT_FPS", "Control", "ControlRefused", "Frame", "LivePhone", "new_viewer"]
