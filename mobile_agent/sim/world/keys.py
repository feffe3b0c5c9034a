"""Android key codes and the names u2 / `input keyevent` use for them."""

from __future__ import annotations

KEYCODES: dict[str, int] = {
    "home": 3,
    "back": 4,
    "call": 5,
    "endcall": 6,
    "up": 19,
    "down": 20,
    "left": 21,
    "right": 22,
    "center": 23,
    "volume_up": 24,
    "volume_down": 25,
    "power": 26,
    "camera": 27,
    "clear": 28,
    "tab": 61,
    "space": 62,
    "enter": 66,
    "delete": 67,
    "menu": 82,
    "search": 84,
    "media_play_pause": 85,
    "page_up": 92,
    "page_down": 93,
    "escape": 111,
    "forward_del": 112,
    "volume_mute": 164,
    "app_switch": 187,
    "sleep": 223,
    "wakeup": 224,
}

ALIASES = {
    "del": "delete",
    "backspace": "delete",
    "recent": "app_switch",
    "recents": "app_switch",
    "dpad_up": "up",
    "dpad_down": "down",
    "dpad_left": "left",
    "dpad_right": "right",
    "dpad_center": "center",
    "mute": "volume_mute",
    "wake_up": "wakeup",
}

NAMES_BY_CODE = {code: name for name, code in KEYCODES.items()}


def key_name(code: int | str) -> str | None:
    """Canonical key name for a key code, a u2 key name or a KEYCODE_* constant; None when unknown."""
    if isinstance(code, int) or (isinstance(code, str) and code.strip().isdigit()):
        return NAMES_BY_CODE.get(int(code))
    name = code.strip().lower()
    if name.startswith("keycode_"):
        name = name[len("keycode_") :]
    name = ALIASES.get(name, name)
    return name if name in KEYCODES else None
