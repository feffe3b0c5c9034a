"""Test doubles for the wire side: a tiny stand-in for mobile_agent.sim.phone.phone.Phone that records calls; only the CONTRACT names are used."""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass, field

from PIL import Image

from mobile_agent.sim.phone.fs import FileSystem
from mobile_agent.sim.profiles import PROFILES, Faults
from mobile_agent.sim.shell.android import AndroidShell
from mobile_agent.sim.shell.sh import ShellIO

U2_IME = "com.github.uiautomator/.AdbKeyboard"
LATIN = "com.android.inputmethod.latin/.LatinIME"


@dataclass
class FakeConfig:
    name: str = "fake"
    width: int = 1080
    height: int = 2400
    density: int = 440
    model: str = "FakeModel"


@dataclass
class FakePhone:
    config: FakeConfig = field(default_factory=FakeConfig)
    profile: object = PROFILES["instant"]
    faults: Faults = field(default_factory=Faults)
    settings: dict = field(default_factory=dict)
    fs: FileSystem = field(default_factory=FileSystem)
    calls: list = field(default_factory=list)
    shell_log: list = field(default_factory=list)
    typed: list = field(default_factory=list)
    foreground: tuple = ("com.android.launcher3", "com.android.launcher3.Launcher")
    packages: list = field(default_factory=lambda: ["android", "com.android.settings", "com.tencent.mm"])
    imes: list = field(default_factory=lambda: [LATIN, U2_IME])
    ime: str = LATIN
    clipboard: str = ""
    screen_on: bool = True
    locked: bool = False
    battery_level: int = 77
    orientation: int = 0
    u2_running: bool = False
    u2_error: str | None = None
    lock: threading.RLock = field(default_factory=threading.RLock)

    @property
    def props(self) -> dict[str, str]:
        return {
            "ro.product.model": self.config.model,
            "ro.build.version.sdk": "33",
            "ro.product.name": "fake",
        }

    def installed_packages(self):
        return list(self.packages)

    def package_path(self, pkg):
        return f"/data/app/{pkg}-1/base.apk" if pkg in self.packages else None

    def launcher_activity(self, pkg):
        return f"{pkg}.Main" if pkg in self.packages else None

    def current(self):
        return self.foreground

    def launch(self, pkg, activity=None):
        self.calls.append(("launch", pkg, activity))
        if pkg not in self.packages:
            return False
        self.foreground = (pkg, activity or f"{pkg}.Main")
        return True

    def force_stop(self, pkg):
        self.calls.append(("force_stop", pkg))

    def clear_data(self, pkg):
        self.calls.append(("clear_data", pkg))

    def install(self, pkg, label=None):
        self.packages.append(pkg)

    def uninstall(self, pkg):
        if pkg in self.packages:
            self.packages.remove(pkg)
            return True
        return False

    def tap(self, x, y):
        self.calls.append(("tap", x, y))

    def swipe(self, x1, y1, x2, y2, duration_ms):
        self.calls.append(("swipe", x1, y1, x2, y2, duration_ms))

    def drag(self, x1, y1, x2, y2, duration_ms):
        self.calls.append(("drag", x1, y1, x2, y2, duration_ms))

    def key(self, code):
        self.calls.append(("key", code))

    def input_text(self, text):
        self.typed.append(text)

    def clear_text(self):
        self.calls.append(("clear_text",))

    def ime_list(self):
        return list(self.imes)

    def ime_current(self):
        return self.ime

    def ime_set(self, ime_id):
        if ime_id not in self.imes:
            return False
        self.ime = ime_id
        return True

    def ime_enable(self, ime_id):
        return ime_id in self.imes

    def hierarchy_xml(self):
        return '<hierarchy rotation="0"><node text="hi" /></hierarchy>'

    def screenshot(self, fmt="png", quality=80):
        buf = io.BytesIO()
        Image.new("RGB", (self.config.width // 10, self.config.height // 10), (10, 20, 30)).save(
            buf, format="PNG" if fmt == "png" else "JPEG"
        )
        return buf.getvalue()

    def u2_start(self):
        if self.u2_error:
            return self.u2_error
        self.u2_running = True
        return None

    def u2_stop(self):
        self.u2_running = False


@dataclass
class Result:
    stdout: str
    stderr: str
    code: int


class Runner:
    def __init__(self, phone: FakePhone) -> None:
        self.phone = phone
        self.session = AndroidShell(phone)

    def __call__(self, line: str) -> Result:
        out, err = bytearray(), bytearray()
        code = self.session.run(line, ShellIO(out.extend, err.extend))
        return Result(out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), code)

    def raw(self, line: str) -> bytes:
        out = bytearray()
        self.session.run(line, ShellIO(out.extend, lambda b: None))
        return bytes(out)
