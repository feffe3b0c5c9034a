"""The simulated phone's settings (`settings get/put`) and input methods (`ime`), which live in those settings."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from mobile_agent.sim.phone.packages import U2_PACKAGE

if TYPE_CHECKING:
    from mobile_agent.sim.phone.phone import Phone, PhoneConfig

LATIN_IME = "com.android.inputmethod.latin/.LatinIME"
ADB_KEYBOARD = "com.github.uiautomator/.AdbKeyboard"  # ships with the u2 apk (U2_PACKAGE)
# senzhk's ADB Keyboard (what Open-AutoGLM installs for typing): an input method once its apk is installed.
ADBKEYBOARD_PACKAGE = "com.android.adbkeyboard"
ADBKEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"

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


def default_settings(config: PhoneConfig) -> dict[tuple[str, str], str]:
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
        ("secure", "android_id"): hashlib.sha1(config.serial.encode()).hexdigest()[:16],
        ("system", "screen_brightness"): "128",
        ("system", "screen_brightness_mode"): "0",
        ("system", "screen_off_timeout"): "60000",
        ("system", "pointer_location"): "0",
        ("system", "show_touches"): "0",
    }


class Settings(dict):
    """Part of a Phone: the settings table, (namespace, key) -> value, as `settings get/put` sees it.

    Writing a new value tells the phone (the outcome's settings_changed, the event log, a re-render: dark mode);
    the input methods are chosen through it, like on Android.
    """

    def __init__(self, phone: Phone) -> None:
        super().__init__(default_settings(phone.config))
        self._phone = phone

    def __setitem__(self, key: tuple[str, str], value: str) -> None:
        old = self.get(key)
        super().__setitem__(key, value)
        if old != value:
            self._changed(key, value)

    def _changed(self, key: tuple[str, str], value: str) -> None:
        phone = self._phone
        with phone.lock:
            friendly = FRIENDLY_SETTINGS.get(key)
            if friendly is not None:
                name, convert = friendly
                phone.state.settings_changed[name] = convert(value)
            phone.record("setting", namespace=key[0], key=key[1], value=value)
            phone.display.changed()

    @property
    def dark_mode(self) -> bool:
        return self.get(("secure", "ui_night_mode")) == "2"

    @property
    def wifi_on(self) -> bool:
        return self.get(("global", "wifi_on")) == "1"

    # ------------------------------------------------------------------ input methods
    def ime_list(self) -> list[str]:
        imes = [LATIN_IME]
        if self._phone.packages.is_installed(U2_PACKAGE):
            imes.append(ADB_KEYBOARD)
        if self._phone.packages.is_installed(ADBKEYBOARD_PACKAGE):
            imes.append(ADBKEYBOARD_IME)
        return imes

    def ime_current(self) -> str:
        return self.get(("secure", "default_input_method"), LATIN_IME)

    def ime_enable(self, ime_id: str) -> bool:
        with self._phone.lock:
            if ime_id not in self.ime_list():
                return False
            enabled = self.get(("secure", "enabled_input_methods"), "").split(":")
            if ime_id not in enabled:
                self[("secure", "enabled_input_methods")] = ":".join([e for e in enabled if e] + [ime_id])
            return True

    def ime_disable(self, ime_id: str) -> bool:
        with self._phone.lock:
            enabled = [e for e in self.get(("secure", "enabled_input_methods"), "").split(":") if e]
            if ime_id not in enabled:
                return False
            self[("secure", "enabled_input_methods")] = ":".join(e for e in enabled if e != ime_id)
            if self.ime_current() == ime_id:
                self[("secure", "default_input_method")] = LATIN_IME
            return True

    def ime_set(self, ime_id: str) -> bool:
        with self._phone.lock:
            if not self.ime_enable(ime_id):
                return False
            self[("secure", "default_input_method")] = ime_id
            self._phone.record("ime", ime=ime_id)
            return True

    def package_removed(self, pkg: str) -> None:
        """An uninstalled package takes its input method along: without the u2 apk, back to the Latin IME."""
        gone = {U2_PACKAGE: ADB_KEYBOARD, ADBKEYBOARD_PACKAGE: ADBKEYBOARD_IME}.get(pkg)
        if gone is None:
            return
        enabled = [e for e in self.get(("secure", "enabled_input_methods"), "").split(":") if e]
        if gone in enabled:
            self[("secure", "enabled_input_methods")] = ":".join(e for e in enabled if e != gone)
        if self.ime_current() == gone:
            self[("secure", "default_input_method")] = LATIN_IME
