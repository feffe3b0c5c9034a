"""The simulated phone's world: screen, apps, activity stack, input, clipboard, state and event log.

CONTRACT (the wire side — adbd.py, shell.py, sync.py — codes against exactly these names; keep them stable):

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
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mobile_agent.errors import DeviceError, InputSecurityError
from mobile_agent.sim.profiles import PROFILES, Faults, LatencyProfile
from mobile_agent.sim.state import Event, SimState, WorldData
from mobile_agent.sim.world import BUILTIN_APPS, SYSTEM_LABELS, GenericApp, Launcher, popups, system
from mobile_agent.sim.world.base import Ctx, Page, Popup, SimApp, Task
from mobile_agent.sim.world.keys import key_name
from mobile_agent.sim.world.node import Node, dump_xml, hit_test, set_package

if TYPE_CHECKING:
    from mobile_agent.sim.render import Renderer
    from mobile_agent.sim.scenario import Scenario

log = logging.getLogger(__name__)

LATIN_IME = "com.android.inputmethod.latin/.LatinIME"
ADB_KEYBOARD = "com.github.uiautomator/.AdbKeyboard"
U2_PACKAGE = "com.github.uiautomator"
LAUNCHER = Launcher.package
DOUBLE_TAP_WINDOW = 0.3
ALREADY_REGISTERED = (
    "java.lang.IllegalStateException: UiAutomationService "
    "android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@5deffd5already registered!"
)
SECURITY_EXCEPTION = (
    "java.lang.SecurityException: Injecting input events requires the caller (or the source of the "
    "instrumentation, if any) to have the INJECT_EVENTS permission."
)


class ScreenshotFailed(DeviceError):
    kind = "screenshot_failed"


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


SYSTEM_PACKAGES = [
    "android",
    "com.android.systemui",
    "com.android.settings",
    "com.android.launcher3",
    "com.android.phone",
    "com.android.contacts",
    "com.android.camera2",
    "com.android.gallery3d",
    "com.android.deskclock",
    "com.android.calculator2",
    "com.android.chrome",
    "com.android.inputmethod.latin",
    "com.android.permissioncontroller",
    "com.android.shell",
    "com.android.providers.settings",
]
# System packages that have a launcher icon.
LAUNCHABLE_SYSTEM = {
    "com.android.settings",
    "com.android.contacts",
    "com.android.camera2",
    "com.android.gallery3d",
    "com.android.deskclock",
    "com.android.calculator2",
    "com.android.chrome",
    "com.android.phone",
}

_manifest_cache: dict[str, str] | None = None
_manifest_lock = threading.Lock()


def manifest_apps() -> dict[str, str]:
    """package -> display name of every app that has a manifest in apps/ (empty when the registry is missing)."""
    global _manifest_cache
    with _manifest_lock:
        if _manifest_cache is None:
            found: dict[str, str] = {}
            try:
                from mobile_agent.apps import AppRegistry  # built by another part; optional here

                registry = AppRegistry.load()
                apps = registry.apps.values() if isinstance(registry.apps, dict) else registry.apps
                for app in apps:
                    found[str(app.package)] = str(app.name)
            except ImportError:
                pass
            except Exception as exc:  # a broken manifest must not take the simulated phone down
                log.warning("app manifests not loaded: %s", exc)
            _manifest_cache = found
        return _manifest_cache


class SettingsStore(dict):
    """`settings get/put` storage that tells the phone when a value changes (dark mode re-renders, ...)."""

    def __init__(self, phone: Phone, initial: dict[tuple[str, str], str]) -> None:
        super().__init__(initial)
        self._phone = phone

    def __setitem__(self, key: tuple[str, str], value: str) -> None:
        old = self.get(key)
        super().__setitem__(key, value)
        if old != value:
            self._phone._setting_changed(key, value)


FRIENDLY_SETTINGS = {
    ("global", "wifi_on"): ("wifi", lambda v: v == "1"),
    ("secure", "ui_night_mode"): ("dark_mode", lambda v: v == "2"),
    ("system", "screen_brightness"): (
        "brightness",
        lambda v: round(int(v) * 100 / 255) if v.isdigit() else v,
    ),
    ("global", "bluetooth_on"): ("bluetooth", lambda v: v == "1"),
    ("global", "airplane_mode_on"): ("airplane_mode", lambda v: v == "1"),
}


class Phone:
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

    # ------------------------------------------------------------------ identity and packages
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
    def fs(self) -> Any:
        if self._fs is None:
            from mobile_agent.sim.fs import FileSystem  # owned by the wire side

            self._fs = FileSystem()
        return self._fs

    @fs.setter
    def fs(self, value: Any) -> None:
        self._fs = value

    def installed_packages(self) -> list[str]:
        with self.lock:
            pkgs = dict.fromkeys(SYSTEM_PACKAGES)
            pkgs.update(dict.fromkeys(BUILTIN_APPS))
            pkgs.update(dict.fromkeys(manifest_apps()))
            pkgs.update(dict.fromkeys(self._installed_extra))
            return [p for p in pkgs if p not in self._removed]

    def is_installed(self, pkg: str) -> bool:
        return pkg in self.installed_packages()

    def package_path(self, pkg: str) -> str | None:
        if not self.is_installed(pkg):
            return None
        if pkg in SYSTEM_PACKAGES:
            return f"/system/priv-app/{pkg.rsplit('.', 1)[-1]}/{pkg.rsplit('.', 1)[-1]}.apk"
        return f"/data/app/{pkg}-1/base.apk"

    def launchable_packages(self) -> list[str]:
        """Packages with a launcher icon, in launcher order: the built-in apps first."""
        installed = self.installed_packages()
        launchable = [
            p for p in installed if p in LAUNCHABLE_SYSTEM or (p not in SYSTEM_PACKAGES and p != U2_PACKAGE)
        ]
        first = [p for p in BUILTIN_APPS if p in launchable]
        return first + [p for p in launchable if p not in first]

    def display_name(self, pkg: str) -> str:
        if pkg in BUILTIN_APPS:
            return BUILTIN_APPS[pkg].label
        if pkg in SYSTEM_LABELS:
            return SYSTEM_LABELS[pkg]
        label = self._installed_extra.get(pkg) or manifest_apps().get(pkg)
        return label or pkg

    def package_for_name(self, name: str) -> str | None:
        wanted = name.strip().lower()
        for pkg in self.installed_packages():
            if pkg.lower() == wanted or self.display_name(pkg).lower() == wanted:
                return pkg
        return None

    def launcher_activity(self, pkg: str) -> str | None:
        if not self.is_installed(pkg):
            return None
        if pkg == LAUNCHER:
            return self.launcher.launcher_activity
        if pkg in SYSTEM_PACKAGES and pkg not in LAUNCHABLE_SYSTEM:
            return None
        return self.app(pkg).launcher_activity

    def install(self, pkg: str, label: str | None = None) -> None:
        with self.lock:
            self._removed.discard(pkg)
            self._installed_extra[pkg] = label or self._installed_extra.get(pkg, "")
            self._record("install", package=pkg)
            self._changed()

    def uninstall(self, pkg: str) -> bool:
        with self.lock:
            if not self.is_installed(pkg) or pkg in SYSTEM_PACKAGES:
                return False
            self._stop_task(pkg)
            self._removed.add(pkg)
            self._installed_extra.pop(pkg, None)
            if pkg == U2_PACKAGE and self.ime_current() == ADB_KEYBOARD:
                self.settings[("secure", "default_input_method")] = LATIN_IME
            self._record("uninstall", package=pkg)
            self._changed()
            return True

    def app(self, pkg: str) -> SimApp:
        """The simulated app behind a package (a generic one for packages without their own world)."""
        if pkg == LAUNCHER:
            return self.launcher
        found = self._apps.get(pkg)
        if found is None:
            found = BUILTIN_APPS[pkg]() if pkg in BUILTIN_APPS else GenericApp(pkg, self.display_name(pkg))
            self._apps[pkg] = found
        return found

    # ------------------------------------------------------------------ foreground and navigation
    def current(self) -> tuple[str, str]:
        with self.lock:
            self._tree()  # settles time-based changes (splash countdown) first
            task = self.tasks[self.foreground]
            if self.showing_recents:
                return LAUNCHER, "com.android.launcher3.uioverrides.QuickstepLauncher"
            return task.package, task.top.activity

    def screen(self) -> tuple[str, str]:
        """(package, world screen id) in the foreground, popups included: ("com.tencent.mm", "popup:splash")."""
        with self.lock:
            self._tree()
            if self.locked:
                return "com.android.systemui", "lockscreen"
            if self.showing_recents:
                return LAUNCHER, "recents"
            task = self.tasks[self.foreground]
            if task.popups:
                return task.package, f"popup:{task.popups[0].kind}"
            return task.package, task.top.screen

    def launch(self, pkg: str, activity: str | None = None) -> bool:
        with self.lock:
            if not self.is_installed(pkg) or self.launcher_activity(pkg) is None:
                return False
            known = {self.app(pkg).launcher_activity, *self.app(pkg).activities.values()}
            if activity is not None and _full_activity(pkg, activity) not in known:
                return False
            cold = pkg not in self.tasks
        if cold and self.profile.cold_start:
            time.sleep(self.profile.cold_start)
        with self.lock:
            self._launch_locked(pkg, activity)
        return True

    def _launch_locked(self, pkg: str, activity: str | None) -> None:
        cold = pkg not in self.tasks
        if cold:
            task = Task(pkg, [self.app(pkg).root_page()])
            task.popups = [
                Popup(p["kind"], pkg, seconds=float(p.get("seconds", 3)))
                for p in self.popup_plan.get(pkg, [])
            ]
            if task.popups:
                task.popups[0].shown_at = time.monotonic()
            self.tasks[pkg] = task
        self._bring_to_front(pkg)
        self._record("launch", package=pkg, cold=cold)
        self._changed(screen=True)

    def _bring_to_front(self, pkg: str) -> None:
        self.showing_recents = False
        self.keyboard_shown = False
        self.foreground = pkg
        if pkg != LAUNCHER:
            if pkg in self.recents:
                self.recents.remove(pkg)
            self.recents.append(pkg)

    def force_stop(self, pkg: str) -> None:
        with self.lock:
            self._stop_task(pkg)
            self._record("force_stop", package=pkg)

    def _stop_task(self, pkg: str) -> None:
        if pkg == LAUNCHER or pkg not in self.tasks:
            return
        del self.tasks[pkg]
        if pkg in self.recents:
            self.recents.remove(pkg)
        if self.foreground == pkg:
            self.foreground = LAUNCHER
            self.keyboard_shown = False
        self._changed(screen=True)

    def clear_data(self, pkg: str) -> None:
        with self.lock:
            self._stop_task(pkg)
            if pkg in self._apps:
                self._apps[pkg].reset(self)
            self.state.logged_in.pop(pkg, None)
            self._record("clear_data", package=pkg)

    def _go_home(self) -> None:
        self.tasks[LAUNCHER].pages[1:] = []
        self._bring_to_front(LAUNCHER)
        self._changed(screen=True)

    def _push_page(self, task: Task, page: Page) -> None:
        task.pages.append(page)
        self.keyboard_shown = False
        self._changed(screen=True)

    def _pop_page(self, task: Task) -> None:
        if len(task.pages) > 1:
            task.pages.pop()
            self.keyboard_shown = False
            self._changed(screen=True)
        elif task.package != LAUNCHER:
            self._go_home()

    def _replace_page(self, task: Task, page: Page) -> None:
        task.pages[-1] = page
        self.keyboard_shown = False
        self._changed(screen=True)

    def _reset_task(self, task: Task) -> None:
        del task.pages[1:]
        self.keyboard_shown = False
        self._changed(screen=True)

    def _dismiss_popup(self, task: Task, how: str) -> None:
        if not task.popups:
            return
        popup = task.popups.pop(0)
        self.state.popups_dismissed.append({"package": task.package, "popup": popup.kind, "how": how})
        self._record("popup", package=task.package, popup=popup.kind, how=how)
        if task.popups:
            task.popups[0].shown_at = time.monotonic()
        self._changed(screen=True)

    def show_recents(self) -> None:
        with self.lock:
            self.showing_recents = True
            self.keyboard_shown = False
            self._changed(screen=True)

    # ------------------------------------------------------------------ input
    def _check_input(self) -> None:
        if self.faults.input_security_exception:
            raise InputSecurityError(
                SECURITY_EXCEPTION, "enable 'USB debugging (security settings)' on the phone"
            )

    def tap(self, x: int, y: int) -> None:
        self._check_input()
        if self.profile.tap:
            time.sleep(self.profile.tap)
        with self.lock:
            self._tap_locked(int(x), int(y))

    def _tap_locked(self, x: int, y: int) -> None:
        self._record("tap", x=x, y=y)
        if not self.screen_on:
            return
        tree = self._tree()
        if self.keyboard_shown and y >= self.keyboard_top():
            return  # the input method window takes the tap
        node = hit_test(tree, x, y, _tappable)
        now = time.monotonic()
        target = id(node) if node is not None else hash((x // 40, y // 40))
        if self._last_tap and now - self._last_tap[0] < DOUBLE_TAP_WINDOW and self._last_tap[1] == target:
            self._record("double_tap", x=x, y=y)
            self._last_tap = None
        else:
            self._last_tap = (now, target)
        if node is None:
            return
        if node.field_key is not None:
            self._focus(self._top_page(), node.field_key, keyboard=True)
        elif node.on_tap_at is not None:
            node.on_tap_at(x, y)
        elif node.on_click is not None:
            node.on_click()

    def long_press(self, x: int, y: int, duration_ms: int = 500) -> None:
        self._check_input()
        time.sleep(duration_ms / 1000 + self.profile.tap)
        with self.lock:
            self._record("long_press", x=int(x), y=int(y), duration_ms=duration_ms)
            if not self.screen_on:
                return
            node = hit_test(self._tree(), int(x), int(y), lambda n: n.on_long_click is not None or n.editable)
            if node is None:
                return
            if node.on_long_click is not None:
                node.on_long_click()
            else:
                self._focus(self._top_page(), node.field_key, keyboard=True)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self._gesture("swipe", [(x1, y1), (x2, y2)], duration_ms)

    def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 500) -> None:
        self._gesture("drag", [(x1, y1), (x2, y2)], duration_ms)

    def swipe_points(self, points: list[tuple[int, int]], duration_ms: int = 300) -> None:
        if not points:
            return
        self._gesture("swipe", [(int(x), int(y)) for x, y in points], duration_ms)

    def _gesture(self, kind: str, points: list[tuple[int, int]], duration_ms: int) -> None:
        self._check_input()
        delay = max(0, duration_ms) / 1000 + self.profile.swipe_extra
        if delay > 0 and self.profile.name != "instant":
            time.sleep(delay)
        (x1, y1), (x2, y2) = points[0], points[-1]
        with self.lock:
            if abs(x2 - x1) < 10 and abs(y2 - y1) < 10:
                if duration_ms >= 400:
                    self._record("long_press", x=x1, y=y1, duration_ms=duration_ms)
                    node = hit_test(self._tree(), x1, y1, lambda n: n.on_long_click is not None)
                    if node is not None and node.on_long_click is not None:
                        node.on_long_click()
                else:
                    self._tap_locked(x1, y1)
                return
            self._record(kind, x1=x1, y1=y1, x2=x2, y2=y2, duration_ms=duration_ms)
            if not self.screen_on:
                return
            tree = self._tree()
            node = hit_test(tree, x1, y1, lambda n: n.on_drag is not None or n.on_scroll is not None)
            if node is None:
                return
            if node.on_drag is not None:
                node.on_drag(x1, y1, x2, y2)
            elif node.on_scroll is not None:
                node.on_scroll(x1 - x2, y1 - y2)

    def key(self, code: int | str) -> None:
        self._check_input()
        if self.profile.key:
            time.sleep(self.profile.key)
        name = key_name(code)
        with self.lock:
            self._record("key", key=name or str(code))
            if name is None:
                return
            handler = getattr(self, f"_key_{name}", None)
            if handler is not None:
                handler()

    def _key_home(self) -> None:
        if self.screen_on and not self.locked:
            self._go_home()

    def _key_app_switch(self) -> None:
        if self.screen_on and not self.locked:
            self.showing_recents = True
            self.keyboard_shown = False
            self._changed(screen=True)

    def _key_back(self) -> None:
        if not self.screen_on or self.locked:
            return
        if self.keyboard_shown:
            self.keyboard_shown = False
            self._changed()
            return
        if self.showing_recents:
            self.showing_recents = False
            self._changed(screen=True)
            return
        task = self.tasks[self.foreground]
        if task.popups:
            popups.on_back(self, task)
            return
        app = self.app(task.package)
        if not app.on_back(Ctx(self, app, task)):
            self._pop_page(task)

    def _key_enter(self) -> None:
        built = self._built()
        if built.on_enter is not None:
            built.on_enter()

    def _key_delete(self) -> None:
        page = self._top_page()
        if page is not None and page.focus is not None and page.fields.get(page.focus):
            page.fields[page.focus] = page.fields[page.focus][:-1]
            self._changed()

    def _key_power(self) -> None:
        self.screen_on = not self.screen_on
        if not self.screen_on:
            self.locked = True
            self.keyboard_shown = False
        self._changed(screen=True)

    def _key_wakeup(self) -> None:
        if not self.screen_on:
            self.screen_on = True
            self._changed(screen=True)

    def _key_sleep(self) -> None:
        if self.screen_on:
            self._key_power()

    def unlock(self) -> None:
        with self.lock:
            self.screen_on = True
            self.locked = False
            self._record("unlock")
            self._changed(screen=True)

    def input_text(self, text: str) -> None:
        self._check_input()
        if self.profile.text:
            time.sleep(self.profile.text)
        with self.lock:
            page = self._top_page()
            if page is None or page.focus is None or not self.screen_on:
                self._record("text", text=text, ignored=True)
                return
            page.fields[page.focus] = page.fields.get(page.focus, "") + text
            self.state.typed.append(
                {"package": self.foreground, "screen": page.screen, "field": page.focus, "text": text}
            )
            self._record("text", text=text, field=page.focus)
            # The input method collapses once text is committed (u2 sends ADB_KEYBOARD_HIDE after typing), so a
            # screen looks the same after a Type action whichever input path the runtime used.
            self.keyboard_shown = False
            self._changed()

    def clear_text(self) -> None:
        self._check_input()
        with self.lock:
            page = self._top_page()
            self._record("clear_text")
            if page is not None and page.focus is not None and page.fields.get(page.focus):
                page.fields[page.focus] = ""
                self._changed()

    @property
    def clipboard(self) -> str:
        with self.lock:
            return self._clipboard

    @clipboard.setter
    def clipboard(self, text: str) -> None:
        with self.lock:
            self._clipboard = text
            self._record("clipboard", length=len(text))

    def paste(self) -> None:
        with self.lock:
            self._record("paste")
            if self._clipboard:
                self.input_text(self._clipboard)

    def hide_keyboard(self) -> None:
        with self.lock:
            if self.keyboard_shown:
                self.keyboard_shown = False
                self._changed()

    def _focus(self, page: Page | None, key: str | None, keyboard: bool) -> None:
        if page is None:
            return
        page.focus = key
        self.keyboard_shown = keyboard and key is not None
        self._changed()

    def _top_page(self) -> Page | None:
        if self.showing_recents or self.locked:
            return None
        task = self.tasks[self.foreground]
        return None if task.popups else task.top

    def keyboard_top(self) -> int:
        """y where the input method window starts (the screen bottom when it is hidden)."""
        if not self.keyboard_shown:
            return self.config.height - self.nav_bar_height
        share = 0.06 if self.ime_current() == ADB_KEYBOARD else 0.33
        return self.config.height - self.nav_bar_height - round(self.config.height * share)

    # ------------------------------------------------------------------ input methods
    def ime_list(self) -> list[str]:
        imes = [LATIN_IME]
        if self.is_installed(U2_PACKAGE):
            imes.append(ADB_KEYBOARD)
        return imes

    def ime_current(self) -> str:
        return self.settings.get(("secure", "default_input_method"), LATIN_IME)

    def ime_enable(self, ime_id: str) -> bool:
        with self.lock:
            if ime_id not in self.ime_list():
                return False
            enabled = self.settings.get(("secure", "enabled_input_methods"), "").split(":")
            if ime_id not in enabled:
                self.settings[("secure", "enabled_input_methods")] = ":".join(
                    [e for e in enabled if e] + [ime_id]
                )
            return True

    def ime_disable(self, ime_id: str) -> bool:
        with self.lock:
            enabled = [e for e in self.settings.get(("secure", "enabled_input_methods"), "").split(":") if e]
            if ime_id not in enabled:
                return False
            self.settings[("secure", "enabled_input_methods")] = ":".join(e for e in enabled if e != ime_id)
            if self.ime_current() == ime_id:
                self.settings[("secure", "default_input_method")] = LATIN_IME
            return True

    def ime_set(self, ime_id: str) -> bool:
        with self.lock:
            if not self.ime_enable(ime_id):
                return False
            self.settings[("secure", "default_input_method")] = ime_id
            self._record("ime", ime=ime_id)
            return True

    # ------------------------------------------------------------------ settings
    def _default_settings(self) -> dict[tuple[str, str], str]:
        return {
            ("global", "wifi_on"): "1",
            ("global", "bluetooth_on"): "0",
            ("global", "airplane_mode_on"): "0",
            ("global", "adb_enabled"): "1",
            ("global", "development_settings_enabled"): "1",
            ("global", "window_animation_scale"): "1.0",
            ("global", "transition_animation_scale"): "1.0",
            ("global", "animator_duration_scale"): "1.0",
            ("secure", "ui_night_mode"): "1",
            ("secure", "default_input_method"): LATIN_IME,
            ("secure", "enabled_input_methods"): LATIN_IME,
            ("secure", "android_id"): hashlib.sha1(self.config.serial.encode()).hexdigest()[:16],
            ("system", "screen_brightness"): "128",
            ("system", "screen_brightness_mode"): "0",
            ("system", "screen_off_timeout"): "60000",
            ("system", "pointer_location"): "0",
            ("system", "show_touches"): "0",
        }

    def _setting_changed(self, key: tuple[str, str], value: str) -> None:
        with self.lock:
            friendly = FRIENDLY_SETTINGS.get(key)
            if friendly is not None:
                name, convert = friendly
                self.state.settings_changed[name] = convert(value)
            self._record("setting", namespace=key[0], key=key[1], value=value)
            self._changed()

    @property
    def dark_mode(self) -> bool:
        return self.settings.get(("secure", "ui_night_mode")) == "2"

    @property
    def wifi_on(self) -> bool:
        return self.settings.get(("global", "wifi_on")) == "1"

    # ------------------------------------------------------------------ what is on screen
    @property
    def status_bar_height(self) -> int:
        return round(self.config.height * 0.04)

    @property
    def nav_bar_height(self) -> int:
        return round(self.config.height * 0.02)

    def window_size(self) -> tuple[int, int]:
        return self.config.width, self.config.height

    def _changed(self, screen: bool = False) -> None:
        """Something visible changed; with screen=True it is a new screen (animated, logged as a screen event)."""
        if screen and self.profile.transition > 0 and self._cache is not None:
            self._transition = (self._cache.fingerprint, time.monotonic())
        self._version += 1
        if screen:
            self._record_screen()

    def _record_screen(self) -> None:
        pkg, screen = self._screen_unlocked()
        if self._last_screen != (pkg, screen):
            self._last_screen = (pkg, screen)
            self._record("screen", package=pkg, screen=screen)

    def _built(self) -> _Built:
        cache = self._cache
        if cache is None or cache.version != self._version or time.monotonic() >= cache.valid_until:
            cache = self._build()
            self._cache = cache
        return cache

    def _tree(self) -> Node:
        return self._built().tree

    def _build(self) -> _Built:
        for _ in range(8):  # a build may settle time-based state (an expired splash) and ask for another
            version = self._version
            built = self._build_once()
            if version == self._version:
                break
        return built

    def _screen_unlocked(self) -> tuple[str, str]:
        if self.locked:
            return "com.android.systemui", "lockscreen"
        if self.showing_recents:
            return LAUNCHER, "recents"
        task = self.tasks[self.foreground]
        if task.popups:
            return task.package, f"popup:{task.popups[0].kind}"
        return task.package, task.top.screen

    def _build_once(self) -> _Built:
        task = self.tasks[self.foreground]
        if not self.screen_on:
            ctx = Ctx(self, self.launcher, self.tasks[LAUNCHER])
            tree, package = system.screen_off(ctx), "com.android.systemui"
        elif self.locked:
            ctx = Ctx(self, self.launcher, self.tasks[LAUNCHER])
            tree, package = system.lockscreen(ctx), "com.android.systemui"
        elif self.showing_recents:
            ctx = Ctx(self, self.launcher, self.tasks[LAUNCHER])
            tree, package = system.recents(ctx), LAUNCHER
        else:
            app = self.app(task.package)
            ctx = Ctx(self, app, task)
            tree = app.build(ctx)
            package = task.package
            if task.popups:
                popups.add_overlay(self, task, ctx, tree)
        set_package(tree, package)
        toast = self._toast
        if toast is not None:
            if time.monotonic() < toast[1]:
                ctx.expire_at(toast[1])
            else:
                self._toast = toast = None
        chrome = (
            self.config.clock,
            self.battery_level,
            self.wifi_on,
            self.dark_mode,
            self.screen_on,
            self.keyboard_top() if self.keyboard_shown else None,
            self.ime_current() if self.keyboard_shown else None,
            toast[0] if toast else None,
            ctx.secure,
            self.foreground == LAUNCHER and not self.showing_recents,
        )
        digest = hashlib.blake2b(repr((tree.signature(), chrome)).encode(), digest_size=12).hexdigest()
        return _Built(
            self._version,
            tree,
            digest,
            chrome,
            ctx.secure or not self.screen_on,
            ctx.on_enter,
            ctx.valid_until,
            package,
        )

    def show_toast(self, text: str, seconds: float = 2.0) -> None:
        with self.lock:
            self._toast = (text, time.monotonic() + seconds)
            self._record("toast", text=text)
            self._changed()

    def hierarchy_xml(self, max_depth: int = 50) -> str:
        if self.profile.hierarchy:
            time.sleep(self.profile.hierarchy)
        with self.lock:
            return dump_xml(self._tree(), rotation=self.orientation, max_depth=max_depth)

    @property
    def renderer(self) -> Renderer:
        if self._renderer is None:
            from mobile_agent.sim.render import Renderer

            self._renderer = Renderer(self.config.width, self.config.height)
        return self._renderer

    def screenshot(self, fmt: str = "png", quality: int = 80, scale: float = 1.0) -> bytes:
        if self.faults.screenshot_fail:
            raise ScreenshotFailed("screenshot failed (injected fault)")
        delay = (
            self.profile.screencap_png if fmt == "png" else self.profile.u2_screenshot
        ) + self.faults.screenshot_delay
        if delay > 0:
            time.sleep(delay)
        with self.lock:
            built = self._built()
            frame = None
            if self._transition is not None:
                old_fp, started = self._transition
                progress = (
                    (time.monotonic() - started) / self.profile.transition if self.profile.transition else 1
                )
                if progress >= 1 or old_fp == built.fingerprint:
                    self._transition = None
                else:
                    frame = (old_fp, min(3, int(progress * 4)))  # quantised: at most 3 intermediate frames
        return self.renderer.encode(built, fmt, quality=quality, scale=scale, transition=frame)

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


@dataclass
class _Built:
    version: int
    tree: Node
    fingerprint: str
    chrome: tuple
    black: bool
    on_enter: Any
    valid_until: float
    package: str


def _tappable(node: Node) -> bool:
    return node.clickable or node.field_key is not None or node.on_tap_at is not None


def _full_activity(pkg: str, activity: str) -> str:
    return pkg + activity if activity.startswith(".") else activity
