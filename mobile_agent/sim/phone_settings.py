"""The simulated phone's settings (`settings get/put`) and input methods (`ime`), which live in those settings."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from mobile_agent.sim.phone_packages import ADB_KEYBOARD, LATIN_IME, U2_PACKAGE

if TYPE_CHECKING:
    from mobile_agent.sim.phone import Phone


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


class SettingsMixin:
    """Part of Phone: the settings store and the input methods chosen through it."""

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
