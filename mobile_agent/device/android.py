"""One Android phone, driven through an explicit adbutils client and uiautomator2.

The device never sees model text: it receives typed ``Action`` records in device pixels. Text reaches the phone as
base64 through the AdbKeyboard broadcast (or the clipboard), never inside a shell string, so nothing a model types
can run on the phone.
"""

from __future__ import annotations

import base64
import io
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import adbutils
import uiautomator2
import uiautomator2.exceptions as u2err
from PIL import Image

from mobile_agent.actions import Action, ActionKind, Key, Size
from mobile_agent.device import u2_batch, u2_server
from mobile_agent.device.adb_server import AdbServerClient, adb_command, adb_server_client, check_reachable
from mobile_agent.device.foreground import Foreground, ForegroundMemory
from mobile_agent.device.frames import SettleOptions, compare_until_same, is_black
from mobile_agent.device.text_input import TextInput
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
from mobile_agent.screen.imagehash import dhash
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
    """What the phone shows at one moment. ``screenshot`` is JPEG bytes (at ``image_size`` when the phone scaled it).

    ``package`` / ``activity``: the foreground as the phone reported it for this screen's windows — read this step
    when ``foreground_read``, else carried from an earlier step whose view tree had the same window skeleton (see
    device/foreground.py)."""

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
class _Settled:
    """The frame settling ended on, with the view tree read at the same moment: the next observation uses them
    instead of asking the phone again (and reads the foreground only when the tree's windows changed)."""

    jpeg: bytes
    scale: float
    at: float  # monotonic
    hierarchy: Future[str] | None
    # the foreground for the tree's windows, and whether it was read afresh (see _foreground_for)
    foreground: Future[tuple[Foreground, bool]] | None = None


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
        self._batches: bool | None = None  # the u2 server answers JSON-RPC batches (None: not asked yet)
        o = self.settle_options
        self._server = u2_server.ServerSetup(int(o.timeout * 1000))  # its dumps wait for idle
        self._foreground = ForegroundMemory()
        self._text = TextInput(serial, ADB_KEYBOARD, self._shell, self._rpc)
        self._background = ThreadPoolExecutor(max_workers=2, thread_name_prefix=f"prefetch-{serial}")
        self.prefetch_hierarchy = False  # settling also reads the view tree (the loop's popup rules need it)
        # for a package: whether its activity is read afresh every step (its popup rules name activities)
        self.needs_activity: Callable[[str], bool] | None = None
        self.keep_server = True  # start the u2 server detached, so that the next run reuses it
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
                    if self.keep_server:
                        self._start_server()
                    u2 = self._guard(lambda: uiautomator2.connect(self.adb), "the uiautomator2 connect")
                    self._configure_server(u2)
                    self._u2 = u2
        return self._u2

    def _start_server(self) -> None:
        try:
            self._guard(lambda: u2_server.start_detached(self.adb, self.serial), "starting the u2 server")
        except u2_server.ServerNotStarted as exc:  # uiautomator2's connect then starts one of its own
            log.warning("phone %s: the detached u2 server did not start (%s)", self.serial, exc)

    def _configure_server(self, u2: uiautomator2.Device) -> None:
        self._server.apply(u2, lambda call: self._guard(call, "setConfigurator"))

    def stop_server(self) -> bool:
        """Stop the phone's u2 server (it keeps running between runs otherwise). True when one was running."""
        self._u2 = None
        try:
            return self._bounded(lambda: u2_server.stop(self.adb), "stopping the uiautomator2 server")
        except DeviceError as exc:  # a phone that is gone has no server to stop
            log.warning("phone %s: %s", self.serial, exc.one_line())
            return False

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

    def _rpc_timeout(self, timeout: float) -> float:
        return max(0.1, self.deadline.bound(timeout)) if self.deadline is not None else timeout

    def _rpc(self, method: str, *params: Any, timeout: float = RPC_TIMEOUT) -> Any:
        u2 = self.u2  # outside the helper thread: the first connect takes the lock this thread may hold
        timeout = self._rpc_timeout(timeout)
        result = self._guard(lambda: getattr(u2.jsonrpc, method)(*params, http_timeout=timeout), method)
        if self._server.lost(u2):
            log.info("phone %s: u2 restarted its server; setting it up again", self.serial)
            self._configure_server(u2)
        return result

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
            job = fresh.foreground if fresh is not None else None
            if job is None:  # no tree at hand: read it, while the frame is taken
                job = self._background.submit(self._foreground_for, None)
            if fresh is not None:
                jpeg = fresh.jpeg  # the frame settling ended on: nothing has happened since
                self.check_state()  # the phone may be asked nothing now: the adb server says it is still there
            else:
                jpeg = self.screenshot_jpeg(scale)
            shot_ms = (time.perf_counter() - started) * 1000
            image_size = Size(*Image.open(io.BytesIO(jpeg)).size)
            size = self.screen_size()
            if (image_size.width > image_size.height) != (size.width > size.height):
                size = self.screen_size(refresh=True)  # the phone was rotated
            try:
                foreground, read = job.result()
            except (DeviceLost, AdbServerUnreachable):
                raise
            except DeviceError:
                foreground, read = Foreground("", "", None), True
            if read:
                self._foreground.remember(foreground.package, foreground.activity, foreground.windows)
            package, activity = foreground.package, foreground.activity
            return Observation(
                screenshot=jpeg,
                size=size,
                package=package,
                activity=activity,
                taken_at=time.time(),
                screenshot_ms=shot_ms,
                secure=is_black(jpeg),
                image_size=image_size,
                foreground_read=read,
            )

    def _fresh_settled(self, scale: float) -> _Settled | None:
        fresh = self._settled
        if fresh is None or fresh.scale != scale:
            return None
        return fresh if time.monotonic() - fresh.at < self.settle_options.reuse_within else None

    def hierarchy(self) -> str:
        return self._rpc("dumpWindowHierarchy", False, 50)

    def settled_hierarchy(self, scale: float) -> Future[str] | None:
        """The view tree read together with the settled frame the next observation at ``scale`` will use, or None
        when there is none. (The observation compares its windows with the last foreground read's.)"""
        with self._lock:
            fresh = self._fresh_settled(scale)
            return fresh.hierarchy if fresh is not None else None

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
        """Type into the focused field (device/text_input.py), restoring the user's IME and clipboard."""
        self._text.type(text)

    def ime_list(self) -> list[str]:
        return self._text.ime_list()

    def _shell(self, args: list[str]) -> str:
        return self._guard(lambda: self.adb.shell(args), f"`{args[0]}`")

    # ----- settle -----------------------------------------------------------------------------------------------
    def settle(self, before: int | None = None) -> tuple[float, bool]:
        """Wait until the screen is idle and keep the first frame after that: it serves as the next observation,
        with the view tree (when ``prefetch_hierarchy``) read at the same moment.

        When the phone can tell: wait for idle and take the frame in one request (device/u2_batch.py), while the
        view tree is dumped on a second connection — the server's dump waits for idle itself once set up (see
        _configure_server), so both describe the idle screen and neither waits for the other. Otherwise — no idle
        signal, or the screen still moving when the wait ran out — poll frames until two in a row show the same
        screen (and it differs from ``before``, the dHash of the frame the action was chosen on, or the grace time
        passed).

        Returns (milliseconds waited, whether the screen settled within the bound).
        """
        started = time.perf_counter()
        timeout = self.settle_options.timeout
        if self._idle_signal is not False:
            early = self.prefetch_hierarchy and self._server.dump_waits_idle
            tree = self._background.submit(self._idle_dump) if early else None
            frame = self._idle_frame(timeout)
            if frame is not None:
                if tree is None and self.prefetch_hierarchy:
                    tree = self._background.submit(self.hierarchy)  # a server whose dump does not wait: after
                self._settled = self._settled_with(frame, tree)
                return (time.perf_counter() - started) * 1000, True
        shoot = partial(self.screenshot_jpeg, self._frame_scale)
        frame, settled = compare_until_same(shoot, before, started, self.settle_options)
        tree = self._background.submit(self.hierarchy) if self.prefetch_hierarchy else None
        self._settled = self._settled_with(frame, tree)
        return (time.perf_counter() - started) * 1000, settled

    def _idle_frame(self, timeout: float) -> bytes | None:
        """The first frame once the phone says its screen is idle; None when it was not idle within ``timeout``
        or cannot tell (then it is not asked again)."""
        started = time.perf_counter()
        scale = self._frame_scale
        if self._batches is not False:
            self.u2  # noqa: B018 - connected (and the server set up) before it is asked directly
            wait = u2_batch.Call("waitForIdle", (int(timeout * 1000),))
            calls = [wait, u2_batch.Call("takeScreenshot", (scale, 80))]
            try:
                _, data = self._guard(
                    lambda: u2_batch.call_batch(self.adb, calls, self._rpc_timeout(timeout + 5)),
                    "waitForIdle",
                )
            except u2_batch.BatchUnsupported:
                self._batches = False
            except u2_batch.BatchCallFailed as exc:
                if exc.error.get("code") == -32601:
                    self._idle_signal = False
                    return None
            except (DeviceLost, AdbServerUnreachable, DeadlineExceeded):
                raise
            except DeviceError:
                pass  # asked one call at a time below, through u2, which restarts a server it finds dead
            else:
                self._batches = self._idle_signal = True
                if time.perf_counter() - started >= timeout:  # the void waitForIdle ran out, or it was idle
                    return None
                return base64.b64decode(data) if data else self.screenshot_jpeg(scale)
        if not self._wait_idle(timeout):
            return None
        return self.screenshot_jpeg(scale)

    def _idle_dump(self) -> str:
        """The view tree of the idle screen. A dump on a server u2 restarted meanwhile did not wait for idle: it
        is set up again (by _rpc) and the tree read once more."""
        configured = self._server.launch
        tree = self.hierarchy()
        return tree if self._server.launch is configured else self.hierarchy()

    def _wait_idle(self, timeout: float) -> bool:
        """True when the phone says its screen is idle within ``timeout``. A u2 server without waitForIdle is not
        asked again (settling compares frames instead)."""
        started = time.perf_counter()
        try:
            idle = self._rpc("waitForIdle", int(timeout * 1000), timeout=timeout + 5)
        except DeviceError as exc:
            if "-32601" in str(exc) or "Method not found" in str(exc):
                self._idle_signal = False
                return False
            raise
        self._idle_signal = True
        if idle is None:  # the u2.jar's waitForIdle is void: it returned at idle, or when the timeout ran out
            return time.perf_counter() - started < timeout
        return bool(idle)

    def _settled_with(self, frame: bytes, tree: Future[str] | None) -> _Settled:
        job = self._background.submit(self._foreground_for, tree)
        wait(
            [job]
        )  # the next observation waits for it anyway; this way the read belongs to the step that moved
        return _Settled(frame, self._frame_scale, time.monotonic(), tree, job)

    def _foreground_for(self, tree: Future[str] | None) -> tuple[Foreground, bool]:
        return self._foreground.for_tree(tree, self.needs_activity, self.foreground)
