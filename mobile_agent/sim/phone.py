"""The simulated phone's world: screen, apps, activity stack, input, clipboard, state and event log.

CONTRACT (the wire side — adbd.py, sh.py + commands/, sync.py — codes against exactly these names; keep them
stable):

    phone = Phone(PhoneConfig(...))
    phone.config.name / .serial_hint / .width / .height / .density / .model / .android_version / .sdk
    phone.profile: LatencyProfile          phone.faults: Faults
    phone.props -> dict[str, str]          # getprop (ro.product.model, ro.build.version.sdk, ...)
    phone.settings: dict[tuple[str, str], str]   # (namespace, key) -> value, for `settings get/put`
    phone.fs                                # mobile_agent.sim.fs.FileSystem (owned by the wire side)
    phone.installed_packages() -> list[str]
    phone.package_path(pkg) -> str | None   # "/data/app/<pkg>-1/base.apk"
    phone.current() -> tuple[str, str]      # (package, activity) in the foreground
    phone.launch(pkg, activity=None) -> bool          # False when not installed
    phone.force_stop(pkg); phone.clear_data(pkg)
    phone.tap(x, y); phone.long_press(x, y, duration_ms); phone.swipe(x1, y1, x2, y2, duration_ms)
    phone.swipe_points(points: list[tuple[int, int]], duration_ms); phone.drag(x1, y1, x2, y2, duration_ms)
    phone.key(code: int | str)              # keycode int or name: home back enter recent power wakeup menu del ...
    phone.input_text(text)                  # type into the focused editable field (from `input text` or AdbKeyboard)
    phone.clear_text()
    phone.clipboard -> str (get/set);  phone.paste()
    phone.ime_list() -> list[str]; phone.ime_current() -> str; phone.ime_set(ime_id) -> bool; phone.ime_enable(id)
    phone.hierarchy_xml() -> str            # uiautomator dump format (<hierarchy rotation="0"><node .../></hierarchy>)
    phone.screenshot(fmt: "png" | "jpeg", quality=80) -> bytes   # honours profile + faults; black on secure screens
    phone.screen_on: bool; phone.locked: bool; phone.battery_level: int; phone.orientation: int
    phone.u2_start() -> str | None          # None = started; else the error text to print ("already registered")
    phone.u2_stop(); phone.u2_running: bool
    phone.state                             # SimState: messages_sent, orders, transfers, settings_changed, typed ...
    phone.events: list[Event]               # append-only log of everything that happened (for tests and verify)
    phone.shell_log: list[str]              # every shell command line received, verbatim (injection proof)
    phone.lock: threading.RLock             # held by every mutating call; the wire side never needs it itself

ADDED by the world side (same stability promise):

    Phone(config=None, scenario=None)       # scenario: a Scenario object, a shipped name or a YAML path
    PhoneConfig(name, serial_hint, width=1080, height=2400, density=440, model, brand, manufacturer,
                android_version="13", sdk=33, profile="instant", clock="10:24", battery_level=87,
                u2_apk_installed=False, extra_packages=[])           # .serial = serial_hint or "SIM" + hash(name)
    phone.launcher_activity(pkg) -> str | None   # full class name of the launch activity of an installed package
    phone.display_name(pkg) -> str          # the label under the launcher icon ("微信"), else the package name
    phone.package_for_name(name) -> str | None   # "微信" -> "com.tencent.mm" (display names of installed apps)
    phone.install(pkg, label=None); phone.uninstall(pkg) -> bool   # `pm install` / `pm uninstall`
    phone.ime_disable(ime_id) -> bool; phone.hide_keyboard()        # `ime disable`, ADB_KEYBOARD_HIDE
    phone.screenshot(fmt, quality=80, scale=1.0)                    # scale: u2 takeScreenshot's first param
    phone.hierarchy_xml(max_depth=50)
    phone.window_size() -> tuple[int, int]; phone.keyboard_shown: bool
    phone.screen() -> tuple[str, str]        # (package, world screen id): ("com.tencent.mm", "chat"), "popup:splash"
    phone.unlock(); phone.show_recents(); phone.show_toast(text, seconds=2.0)
    phone.apply_scenario(scenario); phone.scenario; phone.world: WorldData (contacts, chats, shops, balance)
    phone.events_of(kind) -> list[Event]; phone.touch_down   # u2 injectInputEvent finger state (per phone)
    ScreenshotFailed (a DeviceError) is raised by screenshot() while faults.screenshot_fail is set;
    mobile_agent.errors.InputSecurityError by tap/swipe/key/input_text/... while faults.input_security_exception.

Activity names are full class names ("com.tencent.mm.ui.LauncherUI"); launch(pkg, activity) accepts ".Name" or a
full name of one of the app's activities and returns False for any other. The u2 apk (package
com.github.uiautomator, installed via install()) adds the AdbKeyboard input method to ime_list(). Tapping an editable
field focuses it and shows the keyboard; committed text (input_text / paste) collapses it again, so layouts after a
Type action do not depend on the input path. The "instant" profile does not sleep for gesture durations.

Everything here is thread-safe: adbd serves each stream on its own thread. Latency sleeps happen outside the lock.

Phone is one object whose methods come from one module per job; they share its state and its lock:
phone_packages.py (identity, installed packages, app objects), phone_tasks.py (foreground, launch, activity stack,
popups, recents), phone_input.py (taps, gestures, keys, text, clipboard, focus), phone_settings.py (settings and
input methods), phone_screen.py (the current view tree, hierarchy dump, screenshots). This module holds the state
itself, the u2 server's lifecycle, scenarios and the event log.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mobile_agent.sim.phone_input import InputMixin
from mobile_agent.sim.phone_packages import ADB_KEYBOARD, LATIN_IME, LAUNCHER, U2_PACKAGE, PackagesMixin
from mobile_agent.sim.phone_screen import ScreenMixin, ScreenshotFailed, _Built
from mobile_agent.sim.phone_settings import SettingsMixin, SettingsStore
from mobile_agent.sim.phone_tasks import TasksMixin
from mobile_agent.sim.profiles import PROFILES, Faults, LatencyProfile
from mobile_agent.sim.state import Event, SimState, WorldData
from mobile_agent.sim.world import Launcher
from mobile_agent.sim.world.base import SimApp, Task

if TYPE_CHECKING:
    from mobile_agent.sim.render import Renderer
    from mobile_agent.sim.scenario import Scenario

# Names other modules import from here: scenario.py and the tests use the ids (render.py also types _Built).
__all__ = ["ADB_KEYBOARD", "LATIN_IME", "LAUNCHER", "Phone", "PhoneConfig", "ScreenshotFailed"]

ALREADY_REGISTERED = (
    "java.lang.IllegalStateException: UiAutomationService "
    "android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@5deffd5already registered!"
)


@dataclass
class PhoneConfig:
    name: str = "sim"
    serial_hint: str = ""  # ro.serialno; empty -> "SIM" + a hash of the name
    width: int = 1080
    height: int = 2400
    density: int = 440
    model: str = "SimPhone"
    brand: str = "SimBrand"
    manufacturer: str = "SimBrand"
    android_version: str = "13"
    sdk: int = 33
    profile: str = "instant"
    clock: str = "10:24"  # the status bar clock: fixed so screens stay byte-stable
    battery_level: int = 87
    u2_apk_installed: bool = False
    extra_packages: list[str] = field(
        default_factory=list
    )  # installed besides the built-in and manifest apps

    @property
    def serial(self) -> str:
        return self.serial_hint or "SIM" + hashlib.sha1(self.name.encode()).hexdigest()[:10].upper()


class Phone(PackagesMixin, TasksMixin, InputMixin, SettingsMixin, ScreenMixin):
    """A simulated Android phone; the module docstring is its contract."""

    def __init__(self, config: PhoneConfig | None = None, scenario: Scenario | str | None = None) -> None:
        self.config = config or PhoneConfig()
        self.profile: LatencyProfile = PROFILES.get(self.config.profile) or PROFILES["instant"]
        self.faults = Faults()
        self.lock = threading.RLock()
        self.state = SimState()
        self.world = WorldData()
        self.events: list[Event] = []
        self.shell_log: list[str] = []
        self.screen_on = True
        self.locked = False
        self.battery_level = self.config.battery_level
        self.orientation = 0
        self.u2_running = False
        self.keyboard_shown = False
        self.scenario: Scenario | None = None
        self._clipboard = ""
        self._installed_extra: dict[str, str] = {pkg: "" for pkg in self.config.extra_packages}
        if self.config.u2_apk_installed:
            self._installed_extra[U2_PACKAGE] = "ATX"
        self._last_screen: tuple[str, str] | None = None
        self._removed: set[str] = set()
        self._apps: dict[str, SimApp] = {}
        self.launcher = Launcher()
        self.tasks: dict[str, Task] = {LAUNCHER: Task(LAUNCHER, [self.launcher.root_page()])}
        self.foreground = LAUNCHER
        self.recents: list[str] = []  # most recent last, launcher excluded
        self.showing_recents = False
        self.popup_plan: dict[str, list[dict[str, Any]]] = {}  # package -> popups shown at each cold start
        self.settings: dict[tuple[str, str], str] = SettingsStore(self, self._default_settings())
        self._fs: Any = None
        self._version = 0
        self._cache: _Built | None = None
        self._renderer: Renderer | None = None
        self.touch_down: tuple[int, int, float] | None = (
            None  # u2 injectInputEvent ACTION_DOWN not yet lifted
        )
        self._last_tap: tuple[float, int] | None = None  # (monotonic time, id of the node tapped)
        self._transition: tuple[str, float] | None = None  # (fingerprint before the change, monotonic start)
        self._toast: tuple[str, float] | None = None
        if scenario is not None:
            self.apply_scenario(scenario)

    # ------------------------------------------------------------------ u2 server lifecycle
    def u2_start(self) -> str | None:
        with self.lock:
            if self.faults.u2_already_registered:
                return ALREADY_REGISTERED
            self.u2_running = True
            self._record("u2", running=True)
            return None

    def u2_stop(self) -> None:
        with self.lock:
            if self.u2_running:
                self.u2_running = False
                self._record("u2", running=False)

    # ------------------------------------------------------------------ scenario
    def apply_scenario(self, scenario: Scenario | str) -> None:
        from mobile_agent.sim.scenario import Scenario, load_scenario

        if not isinstance(scenario, Scenario):
            scenario = load_scenario(scenario)
        with self.lock:
            scenario.apply(self)
            self.scenario = scenario
            self._changed(screen=True)

    # ------------------------------------------------------------------ events
    def _record(self, kind: str, **detail: Any) -> None:
        self.events.append(Event(time.time(), kind, detail))

    def events_of(self, kind: str) -> list[Event]:
        with self.lock:
            return [e for e in self.events if e.kind == kind]
