"""One Android phone, driven through an explicit adbutils client and uiautomator2.

The device never sees model text: it receives typed ``Action`` records in device pixels. Text reaches the phone as
base64 through the AdbKeyboard broadcast (or the clipboard), never inside a shell string, so nothing a model types
can run on the phone.
"""

from __future__ import annotations

import base64
import io
import logging
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import adbutils
import uiautomator2
import uiautomator2.exceptions as u2err
from PIL import Image

from mobile_agent.actions import Action, ActionKind, Key, Size
from mobile_agent.device.adb_server import AdbServerClient, adb_command, adb_server_client, check_reachable
from mobile_agent.errors import (
    AdbServerUnreachable,
    DeadlineExceeded,
    DeviceError,
    DeviceLost,
    DeviceNotFound,
    DeviceUnauthorized,
    InputSecurityError,
    U2AlreadyRegistered,
    UserError,
)
from mobile_agent.screen.imagehash import dhash, distance
from mobile_agent.waits.deadlines import Abandoned, Deadline, call_within

log = logging.getLogger(__name__)
T = TypeVar("T")

ADB_KEYBOARD = "com.github.uiautomator/.AdbKeyboard"
RPC_TIMEOUT = 20.0
# No single device call (a screenshot, a hierarchy dump, a shell command, the u2 connect) is waited for longer than
# this, nor past the step's deadline: a call that has not returned by then is abandoned (see deadlines.call_within).
CALL_TIMEOUT = 60.0
KEY_NAMES = {Key.BACK: "back", Key.HOME: "home", Key.ENTER: "enter", Key.RECENT: "recent"}


@dataclass(frozen=True)
class Observation:
    """What the phone shows at one moment. ``screenshot`` is JPEG bytes at device resolution."""

    screenshot: bytes
    size: Size
    package: str
    activity: str
    taken_at: float
    screenshot_ms: float
    secure: bool
    image_size: Size | None = None  # of ``screenshot``, when the phone scaled it

    def image(self) -> Image.Image:
        return Image.open(io.BytesIO(self.screenshot))


@dataclass(frozen=True)
class SettleOptions:
    timeout: float = 2.0  # never wait longer than this for the screen to stop changing
    grace: float = 0.3  # how long an unchanged screen may take to start changing after an action
    same_within: int = 2  # frames whose dHashes differ in at most this many of 256 bits are the same screen
    reuse_within: float = 1.0  # the settled frame serves as the next observation if it is younger than this


@dataclass(frozen=True)
class _Settled:
    """The frame settling ended on, with the view tree read at the same moment (in the background): the next
    observation uses them instead of asking the phone again. (The foreground app is read afresh: that read also
    tells that the phone is still there.)"""

    jpeg: bytes
    scale: float
    at: float  # monotonic
    hierarchy: Future[str] | None


@dataclass(frozen=True)
class ActResult:
    act_ms: float
    settle_ms: float
    settled: bool


def parse_adb_address(address: str | None) -> tuple[str, int]:
    """``"host:port"`` / ``"port"`` / None -> (host, port). None is the configured server (MOBILE_AGENT_ADB,
    ADB_SERVER_SOCKET, ANDROID_ADB_SERVER_PORT, the config file; else 127.0.0.1:5037), as for adb itself."""
    if not address:
        from mobile_agent.settings.values import load_settings

        address = load_settings().adb
    host, _, port = address.rpartition(":")
    try:
        number = int(port)
    except ValueError:
        number = 0
    if not 1 <= number <= 65535 or any(c.isspace() for c in address):
        raise UserError(
            f"bad adb server address {address!r}" + (" (a port is 1-65535)" if number else ""),
            "write it as HOST:PORT, e.g. 127.0.0.1:5037",
        )
    return (host or "127.0.0.1"), number


def adb_client(adb: str | None = None) -> AdbServerClient:
    """An explicit client for the adb server at ``adb`` that never starts a server (see device/adb_server.py),
    after checking that something listens there; AdbServerUnreachable, with the command to start one, otherwise."""
    host, port = parse_adb_address(adb)
    return adb_server_client(host, port)


def list_devices(adb: str | None = None) -> list[tuple[str, str]]:
    """(serial, state) of every phone the adb server knows."""
    client = adb_client(adb)
    try:
        return [(d.serial, d.state) for d in client.list(extended=False)]
    except (adbutils.AdbError, OSError) as exc:
        host, port = parse_adb_address(adb)
        raise UserError(
            f"the adb server at {host}:{port} failed to list phones ({exc})",
            f"restart it: mobile-agent adb -H {host} -P {port} kill-server, then start-server",
        ) from None


def choose_serial(serial: str | None, adb: str | None = None) -> str:
    """The phone to use: the given serial, else ANDROID_SERIAL (the configured device), else the only attached one."""
    from mobile_agent.settings.values import load_settings

    serial = serial or load_settings().device
    devices = list_devices(adb)
    if serial:
        states = dict(devices)
        if serial not in states:
            known = ", ".join(s for s, _ in devices) or "none"
            raise DeviceNotFound(f"phone {serial!r} is not attached", f"attached phones: {known}")
        return serial
    ready = [s for s, state in devices if state == "device"]
    if len(ready) == 1:
        return ready[0]
    if not ready:
        listed = "; ".join(f"{s} ({st})" for s, st in devices) or "none"
        raise DeviceNotFound(
            f"no phone is ready (attached: {listed})",
            "connect a phone with USB debugging on and accept the prompt, or start simulated ones: mobile-agent sim up",
        )
    raise UserError(
        f"{len(ready)} phones are attached: {', '.join(ready)}",
        "choose one with --device SERIAL (or ANDROID_SERIAL=SERIAL, as for adb)",
    )


class AndroidDevice:
    """observe / perform / settle on one phone. Safe to use from one worker thread at a time."""

    def __init__(self, serial: str, *, adb: str | None = None, settle: SettleOptions | None = None) -> None:
        self.serial = serial
        self.adb_address = adb
        self.settle_options = settle or SettleOptions()
        self._client = adb_client(adb)
        self._lock = threading.RLock()
        self._size: Size | None = None
        self._adb: adbutils.AdbDevice | None = None
        self._u2: uiautomator2.Device | None = None
        self._frame_scale = 1.0  # the scale observations are taken at; settling polls at the same scale
        self._settled: _Settled | None = None
        self._idle_signal: bool | None = None  # the u2 server answers waitForIdle (None: not asked yet)
        self._background = ThreadPoolExecutor(max_workers=2, thread_name_prefix=f"prefetch-{serial}")
        self.prefetch_hierarchy = False  # settling also reads the view tree (the loop's popup rules need it)
        self.deadline: Deadline | None = None

    def set_deadline(self, deadline: Deadline | None) -> None:
        """Bound every call from now on by ``deadline`` (the step's): past it, a call raises DeadlineExceeded."""
        self.deadline = deadline
        self._client.deadline = deadline

    # ----- connection -------------------------------------------------------------------------------------------
    @property
    def adb(self) -> adbutils.AdbDevice:
        if self._adb is None:
            self._adb = self._client.device(self.serial)
        return self._adb

    @property
    def u2(self) -> uiautomator2.Device:
        # Not functools.cached_property: on Python < 3.12 its lock is shared by every instance, which made 32
        # phones connect one after another.
        if self._u2 is None:
            with self._lock:
                if self._u2 is None:
                    self.check_state()
                    self._u2 = self._guard(lambda: uiautomator2.connect(self.adb), "the uiautomator2 connect")
        return self._u2

    def check_state(self) -> None:
        try:
            state = self._bounded(lambda: self.adb.get_state(), "adb get-state")
        except adbutils.AdbError as exc:
            text = str(exc)
            if "unauthorized" in text:
                state = "unauthorized"
            elif "not found" in text:
                raise DeviceNotFound(
                    f"phone {self.serial} is not attached",
                    f"check `{adb_command(self.adb_address, 'devices')}`",
                ) from None
            else:
                raise DeviceLost(f"phone {self.serial}: {text}", "check the cable or network") from None
        except OSError as exc:
            raise DeviceLost(f"adb server unreachable: {exc}", "is the adb server still running?") from None
        if state == "unauthorized":
            raise DeviceUnauthorized(
                f"phone {self.serial} is unauthorized",
                "unlock it and accept the 'Allow USB debugging' prompt",
            )
        if state != "device":
            raise DeviceLost(
                f"phone {self.serial} is {state}",
                f"reconnect it (replug the cable, or `{adb_command(self.adb_address, 'connect', self.serial)}` "
                "for a network phone)",
            )

    def _bounded(self, call: Callable[[], T], what: str) -> T:
        """Run a device call on a helper thread, waiting at most CALL_TIMEOUT and never past the deadline."""
        deadline = self.deadline
        bound = deadline.bound(CALL_TIMEOUT) if deadline is not None else CALL_TIMEOUT
        try:
            return call_within(call, bound, name=f"adb-{self.serial}")
        except Abandoned:
            if deadline is not None and deadline.expired:
                raise deadline.exceeded(f"{what} on phone {self.serial}") from None
            raise DeviceError(
                f"phone {self.serial}: {what} did not answer within {bound:.0f} s",
                f"is the phone frozen? check it with `{adb_command(self.adb_address, '-s', self.serial, 'shell')}` "
                "or reboot it",
            ) from None
        except (AdbServerUnreachable, DeadlineExceeded):
            raise
        except Exception:
            if deadline is not None and deadline.expired:  # a read cut short by the deadline's socket timeout
                raise deadline.exceeded(f"{what} on phone {self.serial}") from None
            raise

    def _guard(self, call: Callable[[], T], what: str = "a device call") -> T:
        """Run a bounded device call, turning library exceptions into our error tree."""
        try:
            return self._bounded(call, what)
        except u2err.AccessibilityServiceAlreadyRegisteredError:
            raise U2AlreadyRegistered(
                f"phone {self.serial}: another tool holds UiAutomation (already registered)",
                "stop Appium, Maestro or other automation on the phone, then retry",
            ) from None
        except u2err.InjectPermissionError:
            raise self._security_error() from None
        except u2err.RPCError as exc:
            if "SecurityException" in str(exc) or "INJECT_EVENTS" in str(exc):
                raise self._security_error() from None
            raise DeviceError(f"phone {self.serial}: {type(exc).__name__}: {exc}") from None
        except (adbutils.AdbError, adbutils.AdbTimeout, OSError, u2err.DeviceError, EOFError) as exc:
            if "SecurityException" in str(exc):
                raise self._security_error() from None
            raise self._lost_or_error(exc) from None

    def _security_error(self) -> InputSecurityError:
        return InputSecurityError(
            f"phone {self.serial} refuses injected input (SecurityException)",
            "on Xiaomi/Redmi enable Developer options > 'USB debugging (Security settings)'; on others allow simulated input",
        )

    def _lost_or_error(self, exc: BaseException) -> DeviceError:
        try:  # a dead adb server is not a lost phone: say so, with the command that starts it
            check_reachable(self._client.host, self._client.port)
        except AdbServerUnreachable as dead:
            return dead
        try:
            online = self._client.device(self.serial).get_state() == "device"
        except Exception:  # noqa: BLE001 - any failure here means the phone is gone
            online = False
        if not online:
            return DeviceLost(
                f"phone {self.serial} went offline ({type(exc).__name__}: {exc})", "reconnect it"
            )
        return DeviceError(f"phone {self.serial}: {type(exc).__name__}: {exc}")

    def _rpc(self, method: str, *params: Any, timeout: float = RPC_TIMEOUT) -> Any:
        u2 = self.u2  # outside the helper thread: the first connect takes the lock this thread may hold
        if self.deadline is not None:
            timeout = max(0.1, self.deadline.bound(timeout))
        return self._guard(lambda: getattr(u2.jsonrpc, method)(*params, http_timeout=timeout), method)

    # ----- observe ----------------------------------------------------------------------------------------------
    def screen_size(self, *, refresh: bool = False) -> Size:
        """The screen in device pixels (cached: it changes only on rotation, which observe() notices)."""
        if self._size is None or refresh:
            u2 = self.u2
            w, h = self._guard(lambda: u2.window_size(), "window size")
            self._size = Size(int(w), int(h))
        return self._size

    def screenshot_jpeg(self, scale: float = 1.0, quality: int = 80) -> bytes:
        data = self._rpc("takeScreenshot", scale, quality)
        if data:
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
        info = self._guard(lambda: self.adb.app_current(), "the foreground app")
        return info.package, info.activity

    def observe(self, scale: float = 1.0) -> Observation:
        """Screenshot + foreground app. With ``scale`` < 1 the phone shrinks the frame itself, which saves the host
        decoding and resizing a full-resolution image on every step (the model never needs more than its working
        size). ``Observation.size`` is always the screen in device pixels."""
        with self._lock:
            started = time.perf_counter()
            self._frame_scale = scale
            fresh = self._fresh_settled(scale)
            self._settled = None
            foreground = None
            if fresh is not None:
                jpeg = fresh.jpeg  # the frame settling ended on: nothing has happened since
            else:
                foreground = self._background.submit(self.foreground)  # read while the frame is taken
                jpeg = self.screenshot_jpeg(scale)
            shot_ms = (time.perf_counter() - started) * 1000
            image_size = Size(*Image.open(io.BytesIO(jpeg)).size)
            size = self.screen_size()
            if (image_size.width > image_size.height) != (size.width > size.height):
                size = self.screen_size(refresh=True)  # the phone was rotated
            try:
                package, activity = foreground.result() if foreground is not None else self.foreground()
            except (DeviceLost, AdbServerUnreachable):
                raise
            except DeviceError:
                package, activity = "", ""
            return Observation(
                screenshot=jpeg,
                size=size,
                package=package,
                activity=activity,
                taken_at=time.time(),
                screenshot_ms=shot_ms,
                secure=is_black(jpeg),
                image_size=image_size,
            )

    def _fresh_settled(self, scale: float) -> _Settled | None:
        fresh = self._settled
        if fresh is None or fresh.scale != scale:
            return None
        return fresh if time.monotonic() - fresh.at < self.settle_options.reuse_within else None

    def hierarchy(self) -> str:
        return self._rpc("dumpWindowHierarchy", False, 50)

    def settled_hierarchy(self, scale: float) -> Future[str] | None:
        """The view tree read together with the settled frame the next observation at ``scale`` will use (taken
        once), or None when there is none."""
        with self._lock:
            fresh = self._fresh_settled(scale)
            if fresh is None or fresh.hierarchy is None:
                return None
            self._settled = _Settled(fresh.jpeg, fresh.scale, fresh.at, None)
            return fresh.hierarchy

    def installed_packages(self) -> set[str]:
        return set(self._guard(lambda: self.adb.list_packages(), "the package list"))

    # ----- act --------------------------------------------------------------------------------------------------
    def perform(
        self, action: Action, *, package: str | None = None, before: bytes | None = None
    ) -> ActResult:
        """Do the action, then wait for the screen to settle.

        ``package`` is the resolved app for LAUNCH; ``before`` is the frame the action was chosen on (the
        observation), so settling can tell a screen that changed from one that has not started changing yet.
        """
        with self._lock:
            self._settled = None
            started = time.perf_counter()
            self._do(action, package)
            act_ms = (time.perf_counter() - started) * 1000
            if action.kind in (ActionKind.ANSWER, ActionKind.FINISH, ActionKind.CALL_USER):
                return ActResult(act_ms, 0.0, True)
            settle_ms, settled = self.settle(dhash(before) if before is not None else None)
            return ActResult(act_ms, settle_ms, settled)

    def _do(self, action: Action, package: str | None) -> None:
        k = action.kind
        p, e = action.point, action.end
        if k is ActionKind.TAP:
            self._rpc("click", p.x, p.y)
        elif k is ActionKind.DOUBLE_TAP:
            u2 = self.u2
            self._guard(lambda: u2.double_click(p.x, p.y, duration=0.05), "double tap")
        elif k is ActionKind.LONG_PRESS:
            self._rpc("click", p.x, p.y, action.duration_ms or 800)
        elif k is ActionKind.SWIPE:
            steps = max(2, int((action.duration_ms or 300) / 5))
            self._rpc("swipe", p.x, p.y, e.x, e.y, steps)
        elif k is ActionKind.DRAG:
            steps = max(2, int((action.duration_ms or 1000) / 5))
            self._rpc("drag", p.x, p.y, e.x, e.y, steps)
        elif k is ActionKind.TYPE:
            self.type_text(action.text or "")
        elif k is ActionKind.KEY:
            self._rpc("pressKey", KEY_NAMES[action.key])
        elif k is ActionKind.LAUNCH:
            if not package:
                raise DeviceError(f"launch of {action.app!r} has no resolved package")
            self.launch(package)
        elif k is ActionKind.WAIT:
            seconds = (action.duration_ms or 1000) / 1000
            time.sleep(self.deadline.bound(seconds) if self.deadline is not None else seconds)

    def launch(self, package: str) -> None:
        out = self._guard(
            lambda: self.adb.shell(["monkey", "-p", package, "-c", "android.intent.category.LAUNCHER", "1"]),
            "the app launch",
        )
        if "No activities found" in out or "monkey aborted" in out:
            raise DeviceError(f"{package} has no launcher activity on {self.serial}", "is the app installed?")

    # ----- text -------------------------------------------------------------------------------------------------
    def type_text(self, text: str) -> None:
        """Type into the focused field, through the AdbKeyboard IME, restoring the user's IME afterwards."""
        previous = self.current_ime()
        if ADB_KEYBOARD not in self.ime_list():
            self._type_by_clipboard(text)
            return
        try:
            if previous != ADB_KEYBOARD:
                self._shell(["ime", "enable", ADB_KEYBOARD])
                self._shell(["ime", "set", ADB_KEYBOARD])
            encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
            out = self._shell(["am", "broadcast", "-a", "ADB_KEYBOARD_INPUT_TEXT", "--es", "text", encoded])
            if not re.search(r"result=-1\b", out):
                raise DeviceError(
                    f"phone {self.serial}: the AdbKeyboard did not accept the text ({out.strip()!r})"
                )
        finally:
            if previous and previous != ADB_KEYBOARD:
                self._shell(["ime", "set", previous])

    def _type_by_clipboard(self, text: str) -> None:
        """What u2's own send_keys does without the AdbKeyboard; the user's clipboard is put back afterwards."""
        saved = self._rpc("getClipboard")
        self._rpc("setClipboard", None, text)
        if self._rpc("getClipboard") != text:
            raise DeviceError(
                f"phone {self.serial}: setting the clipboard failed", "install the AdbKeyboard IME"
            )
        self._rpc("pasteClipboard")
        if saved is not None:
            self._rpc("setClipboard", None, saved)

    def current_ime(self) -> str:
        out = self._shell(["settings", "get", "secure", "default_input_method"]).strip()
        return "" if out == "null" else out

    def ime_list(self) -> list[str]:
        return [line.strip() for line in self._shell(["ime", "list", "-s"]).splitlines() if line.strip()]

    def _shell(self, args: list[str]) -> str:
        return self._guard(lambda: self.adb.shell(args), f"`{args[0]}`")

    # ----- settle -----------------------------------------------------------------------------------------------
    def settle(self, before: int | None = None) -> tuple[float, bool]:
        """Wait until the screen is idle and keep the first frame after that: it serves as the next observation,
        with the view tree (when ``prefetch_hierarchy``) and the foreground app read at the same time.

        When the phone can tell (the u2 server's waitForIdle), one frame after its idle signal; otherwise poll
        frames until two in a row show the same screen (and it differs from ``before``, the dHash of the frame the
        action was chosen on, or the grace time passed).

        Returns (milliseconds waited, whether the screen settled within the bound).
        """
        started = time.perf_counter()
        if self._idle_signal is not False and self._wait_idle(self.settle_options.timeout):
            frame, settled = self._settled_frame(), True
        else:
            frame, settled = self._compare_frames(before, started)
            self._settled = self._with_background(frame)
        return (time.perf_counter() - started) * 1000, settled

    def _wait_idle(self, timeout: float) -> bool:
        """True when the phone says its screen is idle within ``timeout``. A u2 server without waitForIdle is not
        asked again (settling compares frames instead)."""
        try:
            idle = self._rpc("waitForIdle", int(timeout * 1000), timeout=timeout + 5)
        except DeviceError as exc:
            if "-32601" in str(exc) or "Method not found" in str(exc):
                self._idle_signal = False
                return False
            raise
        self._idle_signal = True
        return bool(idle)

    def _settled_frame(self) -> bytes:
        """The frame after the idle signal, taken while the view tree is read."""
        hierarchy = self._background.submit(self.hierarchy) if self.prefetch_hierarchy else None
        frame = self.screenshot_jpeg(self._frame_scale)
        self._settled = _Settled(frame, self._frame_scale, time.monotonic(), hierarchy)
        return frame

    def _with_background(self, frame: bytes) -> _Settled:
        hierarchy = self._background.submit(self.hierarchy) if self.prefetch_hierarchy else None
        return _Settled(frame, self._frame_scale, time.monotonic(), hierarchy)

    def _compare_frames(self, before: int | None, started: float) -> tuple[bytes, bool]:
        o = self.settle_options
        frame = self.screenshot_jpeg(self._frame_scale)
        previous = dhash(frame)
        settled = False
        while True:
            elapsed = time.perf_counter() - started
            if elapsed >= o.timeout:
                break
            frame = self.screenshot_jpeg(self._frame_scale)
            current = dhash(frame)
            changed = before is None or distance(current, before) > o.same_within
            if distance(current, previous) <= o.same_within and (changed or elapsed >= o.grace):
                settled = True
                break
            previous = current
        return frame, settled


def is_black(jpeg: bytes, threshold: int = 8) -> bool:
    """An all-black frame: what Android returns for a FLAG_SECURE window (payment, password).

    JPEG draft mode decodes at 1/8 scale, so the check costs a fraction of a full decode.
    """
    img = Image.open(io.BytesIO(jpeg))
    if img.format == "JPEG":
        img.draft("L", (max(1, img.width // 8), max(1, img.height // 8)))
    _, hi = img.convert("L").getextrema()
    return hi <= threshold
