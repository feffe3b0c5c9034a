"""One Android phone, driven through an explicit adbutils client and the uiautomator2 server's JSON-RPC.

The device never sees model text: it receives typed ``Action`` records in device pixels. Text reaches the phone as
base64 through the AdbKeyboard broadcast (or the clipboard), never inside a shell string, so nothing a model types
can run on the phone.

A step asks the phone for little (device/u2_rpc.py batches calls; device/u2_calls.py says what they are):

- ``perform``: the action, the wait for idle, the frame after it and what the phone says about its screen (its
  size, the active window's package) are one request; that frame serves as the next observation;
- ``capture``: that frame (or a new one) at once, with the view tree and the foreground app read in one more
  request in the background, for whoever needs them after the frame (the loop asks the model meanwhile).

The server is started detached (device/u2_server.py) and found running by the next run: the first request to a
server simply carries its set-up (``setConfigurator``); only when nothing answers is it started (the jar pushed
when its md5 differs). A server that lost UiAutomation is started again, and the request asked again from the
call that found it lost. With ``prefetch_hierarchy`` the action goes alone and the tree is dumped beside the frame
instead (its dump waits for idle itself), which is quicker when nothing else would hide the dump.
"""

from __future__ import annotations

import base64
import io
import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

import adbutils
from PIL import Image

from mobile_agent.actions import Action, ActionKind, Size
from mobile_agent.device.adb_server import (  # noqa: F401 - the phone-choosing helpers are imported from here
    AdbServerClient,
    adb_client,
    adb_command,
    choose_serial,
    list_devices,
    parse_adb_address,
)
from mobile_agent.device.failures import (
    answer_error,
)
from mobile_agent.device.frames import SettleOptions, compare_until_same, is_black
from mobile_agent.device.phone_session import RPC_TIMEOUT, PhoneSession
from mobile_agent.device.reconnect import wait_for_phone
from mobile_agent.device.text_input import TextInput, TypingPlan
from mobile_agent.device.u2_calls import (
    FOREGROUND_COMMAND,
    LAUNCH_COMMAND,
    DeviceInfo,
    action_calls,
    device_info,
    foreground_of,
    frame_calls,
    launch_refused,
    packages_of,
    shell_call,
    shell_output,
)
from mobile_agent.device.u2_rpc import (
    METHOD_NOT_FOUND,
    Answer,
    Call,
)
from mobile_agent.errors import (
    AdbServerUnreachable,
    DeadlineExceeded,
    DeviceError,
    DeviceLost,
)
from mobile_agent.screen.imagehash import dhash
from mobile_agent.waits.deadlines import Deadline

log = logging.getLogger(__name__)
T = TypeVar("T")

ADB_KEYBOARD = "com.github.uiautomator/.AdbKeyboard"
DUMP = Call("dumpWindowHierarchy", (False, 50))


@dataclass(frozen=True)
class Observation:
    """What the phone shows at one moment. ``screenshot`` is JPEG bytes (at ``image_size`` when the phone scaled it).

    ``package`` / ``activity``: the focused window's, read with the view tree dumped for this frame."""

    screenshot: bytes
    size: Size
    package: str
    activity: str
    taken_at: float
    screenshot_ms: float
    secure: bool
    image_size: Size | None = None  # of ``screenshot``, when the phone scaled it
    foreground_read: bool = True

    def image(self) -> Image.Image:
        return Image.open(io.BytesIO(self.screenshot))


@dataclass(frozen=True)
class ScreenRead:
    """The view tree dumped for a frame (None when the dump failed) and the foreground read in the same request."""

    hierarchy: str | None
    package: str
    activity: str
    seconds: float = 0.0  # how long the request took
    beside: bool = False  # asked beside the frame's idle wait (its time includes that wait)


@dataclass(frozen=True)
class Capture:
    """A frame that can go to the model at once; ``read`` is the view tree and the foreground app being read for it.

    ``package_hint``: the active window's package when the frame was taken (the phone's ``deviceInfo``), for what
    must be known before ``read`` is in (the model's app hints)."""

    screenshot: bytes
    size: Size
    image_size: Size
    taken_at: float
    screenshot_ms: float
    secure: bool
    package_hint: str | None
    read: Future[ScreenRead]

    def screen(self) -> ScreenRead:
        """The tree and foreground (waits for them; DeviceLost and the like are raised here)."""
        return self.read.result()

    def observation(self) -> Observation:
        read = self.screen()
        return self._observation(read.package, read.activity, True)

    def provisional(self) -> Observation:
        """The observation before the foreground is in (its package the hint, no activity)."""
        return self._observation(self.package_hint or "", "", False)

    def _observation(self, package: str, activity: str, read: bool) -> Observation:
        return Observation(
            self.screenshot,
            self.size,
            package,
            activity,
            self.taken_at,
            self.screenshot_ms,
            self.secure,
            self.image_size,
            read,
        )


@dataclass(frozen=True)
class _Settled:
    """The frame settling ended on: the next capture at the same scale uses it instead of asking again."""

    jpeg: bytes
    scale: float
    at: float  # monotonic
    info: DeviceInfo
    read: Future[ScreenRead] | None  # the tree dumped beside it (prefetch_hierarchy)


@dataclass(frozen=True)
class ActResult:
    act_ms: float  # 0 when the action went in one request with the settling (its time is in settle_ms)
    settle_ms: float
    settled: bool


class AndroidDevice:
    """observe / perform / settle on one phone. Safe to use from one worker thread at a time."""

    def __init__(self, serial: str, *, adb: str | None = None, settle: SettleOptions | None = None) -> None:
        self.serial = serial
        self.adb_address = adb
        self.settle_options = settle or SettleOptions()
        self._client: AdbServerClient = adb_client(adb)
        self._session = PhoneSession(serial, adb, self._client, int(self.settle_options.timeout * 1000))
        self._channel = self._session.channel
        self._lock = threading.RLock()
        self._size: Size | None = None
        self._u2 = None  # a uiautomator2.Device, for callers that want u2's own API (farm health checks)
        self._idle_signal: bool | None = None  # the server answers waitForIdle (None: not asked yet)
        self._packages: set[str] | None = None
        self._frame_scale = 1.0  # the scale observations are taken at; frames after actions use it too
        self._settled: _Settled | None = None
        self._text = TextInput(serial, ADB_KEYBOARD)
        self._background = ThreadPoolExecutor(max_workers=2, thread_name_prefix=f"screen-{serial}")
        self.prefetch_hierarchy = False  # the action alone, then the tree dumped beside the frame after it

    @property
    def deadline(self) -> Deadline | None:
        return self._session.deadline

    def set_deadline(self, deadline: Deadline | None) -> None:
        """Bound every call from now on by ``deadline`` (the step's): past it, a call raises DeadlineExceeded."""
        self._session.deadline = deadline
        self._client.deadline = deadline

    # ----- connection -------------------------------------------------------------------------------------------
    @property
    def adb(self) -> adbutils.AdbDevice:
        return self._session.adb

    @property
    def u2(self):  # noqa: ANN201 - uiautomator2.Device, imported only for the callers that want it
        """uiautomator2's own client for this phone (its connect finds the server this device runs)."""
        if self._u2 is None:
            import uiautomator2

            self.screen_size()  # the server answers
            self._u2 = self._guard(lambda: uiautomator2.connect(self.adb), "the uiautomator2 connect")
        return self._u2

    def stop_server(self) -> bool:
        """Stop the phone's u2 server (it keeps running between runs otherwise). True when one was running."""
        return self._session.stop_server()

    def check_state(self) -> None:
        self._session.check_state()

    def await_return(self, seconds: float, poll: Callable[[], None] | None = None) -> bool:
        """After DeviceLost: whether the phone is back on the bus within ``seconds`` (a network phone is asked back
        with ``adb connect``); when it is, the next observation is a fresh frame over new connections."""
        if not wait_for_phone(self._client, self.serial, seconds, poll=poll):
            return False
        with self._lock:
            self._session.forget_connections()
            self._settled = None  # the frame from before the drop is not the screen now
        return True

    def _ask(
        self, calls: Sequence[Call], what: str, timeout: float = RPC_TIMEOUT, *, repeatable: bool = True
    ) -> list[Answer]:
        return self._session.ask(calls, what, timeout, repeatable=repeatable)

    def _guard(self, call: Callable[[], T], what: str = "a device call") -> T:
        return self._session.guard(call, what)

    def _result(self, answer: Answer, method: str) -> object:
        if answer.failed:
            raise answer_error(self.serial, method, answer)
        return answer.result

    def flush(self) -> None:
        """Send what waits for the next request (the user's clipboard put back) now."""
        self._ask([], "putting the clipboard back")

    # ----- observe ----------------------------------------------------------------------------------------------
    def screen_size(self, *, refresh: bool = False) -> Size:
        """The screen in device pixels in its current rotation (every frame's request refreshes it)."""
        if self._size is None or refresh:
            info = device_info(self._ask([Call("deviceInfo")], "the screen size")[0])
            if info.size is None:
                w, h = self._guard(lambda: self.adb.window_size(), "window size")
                info = DeviceInfo(Size(int(w), int(h)), info.package)
            self._size = info.size
        return self._size

    def server_info(self) -> dict[str, object]:
        """What the uiautomator2 server says of the phone (``deviceInfo``: productName, sdkInt, ...)."""
        result = self._result(self._ask([Call("deviceInfo")], "deviceInfo")[0], "deviceInfo")
        return result if isinstance(result, dict) else {}

    def screenshot_jpeg(self, scale: float = 1.0, quality: int = 80) -> bytes:
        answer = self._ask([Call("takeScreenshot", (scale, quality))], "takeScreenshot")[0]
        return self._jpeg(self._result(answer, "takeScreenshot"), scale, quality)

    def _jpeg(self, data: object, scale: float, quality: int = 80) -> bytes:
        if isinstance(data, str) and data:
            return base64.b64decode(data)
        # u2 answers null on some ROMs: fall back to screencap (PNG) and re-encode.
        png = self._guard(lambda: self.adb.shell(["screencap", "-p"], encoding=None), "screencap")
        if not png.startswith(b"\x89PNG"):
            raise DeviceError(f"phone {self.serial}: screencap returned no image", "is the screen on?")
        img = Image.open(io.BytesIO(png)).convert("RGB")
        if scale != 1.0:
            img = img.resize((max(1, int(img.width * scale)), max(1, int(img.height * scale))))
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=quality)
        return buf.getvalue()

    def foreground(self) -> tuple[str, str]:
        out = shell_output(self._ask([shell_call(FOREGROUND_COMMAND)], "the foreground app")[0])
        return foreground_of(out) or self._app_current()

    def _app_current(self) -> tuple[str, str]:
        info = self._guard(lambda: self.adb.app_current(), "the foreground app")
        return info.package, info.activity

    def observe(self, scale: float = 1.0) -> Observation:
        """Screenshot + foreground app (and the view tree read with it: see capture)."""
        return self.capture(scale).observation()

    def capture(self, scale: float = 1.0) -> Capture:
        """The frame now — the one settling ended on when nothing happened since — and, in the background, the
        view tree and the foreground app for it. With ``scale`` < 1 the phone shrinks the frame itself, which saves
        the host decoding and resizing a full-resolution image on every step. ``size`` is in device pixels."""
        with self._lock:
            started = time.perf_counter()
            self._frame_scale = scale
            fresh = self._fresh_settled(scale)
            self._settled = None
            if fresh is not None:  # (the read below asks the phone: a phone gone since is found there)
                jpeg, info = fresh.jpeg, fresh.info
            else:
                answers = self._ask(frame_calls(scale, None), "takeScreenshot")
                jpeg = self._jpeg(self._result(answers[0], "takeScreenshot"), scale)
                info = device_info(answers[1])
            read = fresh.read if fresh is not None and fresh.read is not None else None
            if read is None:
                read = self._background.submit(self._read_screen)
            shot_ms = (time.perf_counter() - started) * 1000
            image_size = Size(*Image.open(io.BytesIO(jpeg)).size)
            size = self._note_size(info)
            if (image_size.width > image_size.height) != (size.width > size.height):
                size = self.screen_size(refresh=True)  # the phone was rotated
            return Capture(jpeg, size, image_size, time.time(), shot_ms, is_black(jpeg), info.package, read)

    def _note_size(self, info: DeviceInfo) -> Size:
        if info.size is not None:
            self._size = info.size
        return self.screen_size()

    def _fresh_settled(self, scale: float) -> _Settled | None:
        fresh = self._settled
        if fresh is None or fresh.scale != scale:
            return None
        return fresh if time.monotonic() - fresh.at < self.settle_options.reuse_within else None

    def _read_screen(self, beside: bool = False) -> ScreenRead:
        """One request: the view tree, the focused window, and what the session reads once (the input methods,
        the packages) while it is not known."""
        started = time.perf_counter()
        typing = self._text.session_calls()
        listing = [shell_call("pm list packages")] if self._packages is None else []
        answers = self._ask([DUMP, shell_call(FOREGROUND_COMMAND), *typing, *listing], "the view-tree dump")
        tree, focus = answers[0], answers[1]
        self._text.learn(typing, answers[2 : 2 + len(typing)])
        if listing and (packages := packages_of(shell_output(answers[-1]))):
            self._packages = packages
        hierarchy = tree.result if not tree.failed and isinstance(tree.result, str) else None
        if hierarchy is None:
            log.warning("no view hierarchy this step: %s", answer_error(self.serial, "dump", tree).one_line())
        found = foreground_of(shell_output(focus))
        if found is None:
            try:
                found = self._app_current()
            except (DeviceLost, AdbServerUnreachable, DeadlineExceeded):
                raise
            except DeviceError:
                found = ("", "")
        return ScreenRead(hierarchy, *found, time.perf_counter() - started, beside)

    def hierarchy(self) -> str:
        """The view tree now: one request (for a check right before an action)."""
        answer = self._ask([DUMP], "the view-tree dump")[0]
        result = self._result(answer, "dumpWindowHierarchy")
        return result if isinstance(result, str) else ""

    def settled_hierarchy(self, scale: float) -> Future[ScreenRead] | None:
        """The tree read beside the settled frame the next capture at ``scale`` will use (prefetch_hierarchy)."""
        with self._lock:
            fresh = self._fresh_settled(scale)
            return fresh.read if fresh is not None else None

    def installed_packages(self, *, refresh: bool = False) -> set[str]:
        """The phone's packages (read once a session, with the first view tree, unless ``refresh``)."""
        if self._packages is None or refresh:
            out = shell_output(self._ask([shell_call("pm list packages")], "the package list")[0])
            listed = packages_of(out)
            self._packages = listed or set(self._guard(lambda: self.adb.list_packages(), "the package list"))
        return set(self._packages)

    # ----- act --------------------------------------------------------------------------------------------------
    def perform(
        self, action: Action, *, package: str | None = None, before: bytes | None = None
    ) -> ActResult:
        """Do the action and wait for the screen to settle: one request (action, wait for idle, frame) when the
        phone can tell when it is idle.

        ``package`` is the resolved app for LAUNCH; ``before`` is the frame the action was chosen on (the
        observation), so settling by frame comparison can tell a screen that changed from one that has not started
        changing yet.
        """
        with self._lock:
            self._settled = None
            kind = action.kind
            if kind in (ActionKind.ANSWER, ActionKind.FINISH, ActionKind.CALL_USER):
                return ActResult(0.0, 0.0, True)
            before_hash = dhash(before) if before is not None else None
            alone = kind in (ActionKind.WAIT, ActionKind.DOUBLE_TAP) or self.prefetch_hierarchy
            if alone or self._idle_signal is False:
                started = time.perf_counter()
                self._do(action, package)
                act_ms = (time.perf_counter() - started) * 1000
                settle_ms, settled = self.settle(before_hash)
                return ActResult(act_ms, settle_ms, settled)
            return self._perform_with_frame(action, package, before_hash)

    def _perform_with_frame(self, action: Action, package: str | None, before: int | None) -> ActResult:
        started = time.perf_counter()
        timeout, scale = self.settle_options.timeout, self._frame_scale
        plan: TypingPlan | None = None
        if action.kind is ActionKind.TYPE:
            plan = self._text.plan(action.text or "", self._ask_for_text)
            calls, allowance = list(plan.calls), 0.5 + 0.05 * len(plan.calls)
        else:
            calls, allowance = self._action_calls(action, package)
        n = len(calls)
        what = f"the {action.kind.value} with the frame after it"
        answers = self._ask(
            [*calls, *frame_calls(scale, timeout)], what, timeout + allowance + 5, repeatable=False
        )
        self._check_action(action, calls, answers[:n], plan, package)
        idle, shot, info = answers[n:]
        elapsed = time.perf_counter() - started
        jpeg = self._jpeg(self._result(shot, "takeScreenshot"), scale)
        self._note_size(device_info(info))
        if idle.failed and idle.error.get("code") == METHOD_NOT_FOUND:
            self._idle_signal = False  # frames are compared from now on
        elif elapsed < timeout + allowance:
            self._idle_signal = True
            self._settled = _Settled(jpeg, scale, time.monotonic(), device_info(info), None)
            return ActResult(0.0, elapsed * 1000, True)
        shoot = partial(self.screenshot_jpeg, scale)
        frame, settled = compare_until_same(shoot, before, started + allowance, self.settle_options)
        self._settled = _Settled(frame, scale, time.monotonic(), device_info(info), None)
        return ActResult(0.0, (time.perf_counter() - started) * 1000, settled)

    def _action_calls(self, action: Action, package: str | None) -> tuple[list[Call], float]:
        try:
            return action_calls(action, package)
        except ValueError as exc:
            raise DeviceError(str(exc)) from None

    def _check_action(
        self,
        action: Action,
        calls: list[Call],
        answers: list[Answer],
        plan: TypingPlan | None,
        package: str | None,
    ) -> None:
        if plan is not None:
            self._text.finish(plan, answers, self._channel.defer)
            return
        for call, answer in zip(calls, answers, strict=True):
            self._result(answer, call.method)
        if action.kind is ActionKind.LAUNCH and launch_refused(shell_output(answers[0])):
            raise DeviceError(f"{package} has no launcher activity on {self.serial}", "is the app installed?")

    def _do(self, action: Action, package: str | None) -> None:
        """The action alone, in its own request(s)."""
        k = action.kind
        if k is ActionKind.TYPE:
            self.type_text(action.text or "")
        elif k is ActionKind.WAIT:
            seconds = (action.duration_ms or 1000) / 1000
            time.sleep(self.deadline.bound(seconds) if self.deadline is not None else seconds)
        elif k is ActionKind.DOUBLE_TAP:
            click = Call("click", (action.point.x, action.point.y))
            self._result(self._ask([click], "double tap", repeatable=False)[0], "click")
            time.sleep(0.05)
            self._result(self._ask([click], "double tap", repeatable=False)[0], "click")
        else:
            calls, _ = self._action_calls(action, package)
            self._check_action(
                action, calls, self._ask(calls, f"the {k.value}", repeatable=False), None, package
            )

    def launch(self, package: str) -> None:
        calls = [shell_call(LAUNCH_COMMAND.format(package=package))]
        self._check_action(
            Action.launch(package), calls, self._ask(calls, "the app launch", repeatable=False), None, package
        )

    # ----- text -------------------------------------------------------------------------------------------------
    def type_text(self, text: str) -> None:
        """Type into the focused field (device/text_input.py), restoring the user's IME and clipboard."""
        plan = self._text.plan(text, self._ask_for_text)
        self._text.finish(plan, self._ask(plan.calls, "typing", repeatable=False), self._channel.defer)

    def ime_list(self) -> list[str]:
        return self._text.ime_list(self._ask_for_text)

    def _ask_for_text(self, calls: Sequence[Call]) -> list[Answer]:
        return self._ask(calls, "the text input", repeatable=False)

    # ----- settle -----------------------------------------------------------------------------------------------
    def settle(self, before: int | None = None) -> tuple[float, bool]:
        """Wait until the screen is idle and keep the first frame after that: it serves as the next observation.

        When the phone can tell: wait for idle and take the frame in one request, while (``prefetch_hierarchy``)
        the view tree is dumped beside it — the server's dump waits for idle itself once set up, so both describe
        the idle screen. Otherwise — no idle signal, or the screen still moving when the wait ran out — poll frames
        until two in a row show the same screen (and it differs from ``before``, the dHash of the frame the action
        was chosen on, or the grace time passed).

        Returns (milliseconds waited, whether the screen settled within the bound).
        """
        started = time.perf_counter()
        timeout, scale = self.settle_options.timeout, self._frame_scale
        info = DeviceInfo(None, None)
        if self._idle_signal is not False:
            beside = self.prefetch_hierarchy and self._session.dump_waits_idle
            read = self._background.submit(self._read_screen, True) if beside else None
            idle, shot, info_answer = self._ask(frame_calls(scale, timeout), "waitForIdle", timeout + 5)
            info = device_info(info_answer)
            self._note_size(info)
            if idle.failed and idle.error.get("code") == METHOD_NOT_FOUND:
                self._idle_signal = False
            elif not idle.failed and time.perf_counter() - started < timeout:
                self._idle_signal = True
                jpeg = self._jpeg(self._result(shot, "takeScreenshot"), scale)
                if read is None and self.prefetch_hierarchy:
                    read = self._background.submit(
                        self._read_screen
                    )  # a server whose dump does not wait: after
                self._settled = _Settled(jpeg, scale, time.monotonic(), info, read)
                return (time.perf_counter() - started) * 1000, True
        shoot = partial(self.screenshot_jpeg, scale)
        frame, settled = compare_until_same(shoot, before, started, self.settle_options)
        read = self._background.submit(self._read_screen) if self.prefetch_hierarchy else None
        self._settled = _Settled(frame, scale, time.monotonic(), info, read)
        return (time.perf_counter() - started) * 1000, settled


__all__ = [
    "ADB_KEYBOARD",
    "ActResult",
    "AndroidDevice",
    "Capture",
    "Observation",
    "ScreenRead",
    "adb_client",
    "choose_serial",
    "list_devices",
    "parse_adb_address",
]
