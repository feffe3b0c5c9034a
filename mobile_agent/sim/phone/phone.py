"""The simulated phone's world: screen, apps, activity stack, input, clipboard, state and event log.

CONTRACT (the wire side — sim/wire (adbd, sync, the u2 server) and sim/shell (sh + commands) — codes against
exactly these names; keep them stable):

    phone = Phone(PhoneConfig(...))
    phone.config.name / .serial_hint / .width / .height / .density / .model / .android_version / .sdk
    phone.profile: LatencyProfile          phone.faults: Faults
    phone.props -> dict[str, str]          # getprop (ro.product.model, ro.build.version.sdk, ...)
    phone.settings: dict[tuple[str, str], str]   # (namespace, key) -> value, for `settings get/put`
    phone.fs                                # mobile_agent.sim.phone.fs.FileSystem (its layout is the wire side's)
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
    phone.u2_idle_timeout_ms: int           # the u2 server's Configurator waitForIdleTimeout (0 after each start)
    phone.state                             # SimState: messages_sent, orders, transfers, settings_changed, typed ...
    phone.events: list[Event]               # append-only log of everything that happened (for tests and verify)
    phone.count_request(kind); phone.requests: Counter[str]   # every request a host made (benchmarks count them)
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

The phone owns one part per job and is their single entry point: each CONTRACT method above is a thin call into
the part that does the work. The parts share the phone's lock and reach each other through the phone:

    phone.packages   Packages  installed packages, their labels and paths, install/uninstall, the SimApp behind each
    phone.settings   Settings  the `settings get/put` table and what lives in it: input methods, dark mode, wifi
    phone.tasks      Tasks     the foreground, each app's task (pages, popups), launch/stop, recents
    phone.input      Input     taps, gestures, keys, typed text, the clipboard, the focused field and the keyboard
    phone.display    Display   the current view tree (rebuilt after each change), the hierarchy dump, screenshots

The phone itself holds its identity (config, props), the latency profile and faults, the power state, the file
system, the u2 server's lifecycle, the scenario, the outcome (state, world) and the event log.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mobile_agent.sim.phone.display import Display
from mobile_agent.sim.phone.fs import FileSystem
from mobile_agent.sim.phone.input import Input
from mobile_agent.sim.phone.packages import Packages
from mobile_agent.sim.phone.settings import Settings
from mobile_agent.sim.phone.tasks import Tasks
from mobile_agent.sim.profiles import PROFILES, Faults, LatencyProfile
from mobile_agent.sim.scenario import Scenario, load_scenario
from mobile_agent.sim.state import Event, SimState, WorldData

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


class Phone:
    """A simulated Android phone; the module docstring is its contract."""

    def __init__(self, config: PhoneConfig | None = None, scenario: Scenario | str | None = None) -> None:
        self.config = config or PhoneConfig()
        self.profile: LatencyProfile = PROFILES.get(self.config.profile) or PROFILES["instant"]
        self.faults = Faults()
        self.lock = threading.RLock()
        self.state = SimState()
        self.world = WorldData()
        self.events: list[Event] = []
        self.requests: Counter[str] = Counter()  # host requests by kind ("shell dumpsys", "u2 click", "sync")
        self.shell_log: list[str] = []
        self.screen_on = True
        self.locked = False
        self.battery_level = self.config.battery_level
        self.orientation = 0
        self.u2_running = False
        self.u2_idle_timeout_ms = 0
        self.scenario: Scenario | None = None
        self.touch_down: tuple[int, int, float] | None = (
            None  # u2 injectInputEvent ACTION_DOWN not yet lifted
        )
        self._fs: FileSystem | None = None
        self.packages = Packages(self)
        self.settings = Settings(self)
        self.tasks = Tasks(self)
        self.input = Input(self)
        self.display = Display(self)
        if scenario is not None:
            self.apply_scenario(scenario)

    # ------------------------------------------------------------------ identity and storage
    @property
    def props(self) -> dict[str, str]:
        c = self.config
        return {
            "ro.product.model": c.model,
            "ro.product.brand": c.brand,
            "ro.product.manufacturer": c.manufacturer,
            "ro.product.name": c.model.lower(),
            "ro.product.device": c.model.lower(),
            "ro.product.cpu.abi": "arm64-v8a",
            "ro.product.cpu.abilist": "arm64-v8a,armeabi-v7a,armeabi",
            "ro.build.version.release": c.android_version,
            "ro.build.version.sdk": str(c.sdk),
            "ro.build.version.incremental": "eng.sim.20240601",
            "ro.build.type": "user",
            "ro.build.display.id": f"{c.model}-{c.android_version}",
            "ro.build.fingerprint": f"{c.brand}/{c.model.lower()}/{c.model.lower()}:{c.android_version}/TQ3A/1:user/release-keys",
            "ro.serialno": c.serial,
            "ro.sf.lcd_density": str(c.density),
            "ro.secure": "1",
            "ro.debuggable": "0",
            "persist.sys.locale": "zh-CN",
            "persist.sys.timezone": "Asia/Shanghai",
            "sys.boot_completed": "1",
            "init.svc.adbd": "running",
        }

    @property
    def fs(self) -> FileSystem:
        if self._fs is None:
            self._fs = FileSystem()
        return self._fs

    @fs.setter
    def fs(self, value: FileSystem) -> None:
        self._fs = value

    # ------------------------------------------------------------------ packages (phone.packages)
    def installed_packages(self) -> list[str]:
        return self.packages.installed()

    def package_path(self, pkg: str) -> str | None:
        return self.packages.path(pkg)

    def launcher_activity(self, pkg: str) -> str | None:
        return self.packages.launcher_activity(pkg)

    def display_name(self, pkg: str) -> str:
        return self.packages.display_name(pkg)

    def package_for_name(self, name: str) -> str | None:
        return self.packages.package_for_name(name)

    def install(self, pkg: str, label: str | None = None) -> None:
        self.packages.install(pkg, label)

    def uninstall(self, pkg: str) -> bool:
        return self.packages.uninstall(pkg)

    # ------------------------------------------------------------------ tasks (phone.tasks)
    def current(self) -> tuple[str, str]:
        return self.tasks.current()

    def screen(self) -> tuple[str, str]:
        """(package, world screen id) in the foreground, popups included: ("com.tencent.mm", "popup:splash")."""
        return self.tasks.screen()

    def launch(self, pkg: str, activity: str | None = None) -> bool:
        return self.tasks.launch(pkg, activity)

    def force_stop(self, pkg: str) -> None:
        self.tasks.force_stop(pkg)

    def clear_data(self, pkg: str) -> None:
        self.tasks.clear_data(pkg)

    def show_recents(self) -> None:
        self.tasks.show_recents()

    # ------------------------------------------------------------------ input (phone.input)
    def tap(self, x: int, y: int) -> None:
        self.input.tap(x, y)

    def long_press(self, x: int, y: int, duration_ms: int = 500) -> None:
        self.input.long_press(x, y, duration_ms)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self.input.swipe(x1, y1, x2, y2, duration_ms)

    def swipe_points(self, points: list[tuple[int, int]], duration_ms: int = 300) -> None:
        self.input.swipe_points(points, duration_ms)

    def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 500) -> None:
        self.input.drag(x1, y1, x2, y2, duration_ms)

    def key(self, code: int | str) -> None:
        self.input.key(code)

    def input_text(self, text: str) -> None:
        self.input.input_text(text)

    def clear_text(self) -> None:
        self.input.clear_text()

    @property
    def clipboard(self) -> str:
        return self.input.clipboard

    @clipboard.setter
    def clipboard(self, text: str) -> None:
        self.input.clipboard = text

    def paste(self) -> None:
        self.input.paste()

    def hide_keyboard(self) -> None:
        self.input.hide_keyboard()

    @property
    def keyboard_shown(self) -> bool:
        return self.input.keyboard_shown

    def unlock(self) -> None:
        self.input.unlock()

    # ------------------------------------------------------------------ input methods (phone.settings)
    def ime_list(self) -> list[str]:
        return self.settings.ime_list()

    def ime_current(self) -> str:
        return self.settings.ime_current()

    def ime_enable(self, ime_id: str) -> bool:
        return self.settings.ime_enable(ime_id)

    def ime_disable(self, ime_id: str) -> bool:
        return self.settings.ime_disable(ime_id)

    def ime_set(self, ime_id: str) -> bool:
        return self.settings.ime_set(ime_id)

    # ------------------------------------------------------------------ what is shown (phone.display)
    def window_size(self) -> tuple[int, int]:
        return self.display.window_size()

    def hierarchy_xml(self, max_depth: int = 50) -> str:
        return self.display.hierarchy_xml(max_depth)

    def screenshot(self, fmt: str = "png", quality: int = 80, scale: float = 1.0) -> bytes:
        return self.display.screenshot(fmt, quality, scale)

    def show_toast(self, text: str, seconds: float = 2.0) -> None:
        self.display.show_toast(text, seconds)

    # ------------------------------------------------------------------ u2 server lifecycle
    def u2_start(self) -> str | None:
        with self.lock:
            if self.faults.u2_already_registered:
                return ALREADY_REGISTERED
            self.u2_running = True
            self.u2_idle_timeout_ms = 0  # a new server process starts with the u2.jar's own Configurator
            self.record("u2", running=True)
            return None

    def u2_stop(self) -> None:
        with self.lock:
            if self.u2_running:
                self.u2_running = False
                self.record("u2", running=False)

    # ------------------------------------------------------------------ scenario
    def apply_scenario(self, scenario: Scenario | str) -> None:
        if not isinstance(scenario, Scenario):
            scenario = load_scenario(scenario)
        with self.lock:
            scenario.apply(self)
            self.scenario = scenario
            self.display.changed(screen=True)

    # ------------------------------------------------------------------ events
    def record(self, kind: str, **detail: Any) -> None:
        """Append to the event log. Callers hold the lock."""
        self.events.append(Event(time.time(), kind, detail))

    def count_request(self, kind: str) -> None:
        """One request a host made of the phone: a shell command, a sync session, one u2 HTTP request."""
        with self.lock:
            self.requests[kind] += 1

    def events_of(self, kind: str) -> list[Event]:
        with self.lock:
            return [e for e in self.events if e.kind == kind]
