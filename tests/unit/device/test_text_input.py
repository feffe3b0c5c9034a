"""Typing reads what a session does not change once (the IMEs, the user's IME, whether the clipboard takes text)
and still puts the user's clipboard and IME back every time."""

from __future__ import annotations

import pytest

from mobile_agent.device.text_input import TextInput
from mobile_agent.errors import DeviceError

KEYBOARD = "com.github.uiautomator/.AdbKeyboard"
LATIN = "com.android.inputmethod.latin/.LatinIME"


class Phone:
    def __init__(self, imes: list[str], clipboard_works: bool = True) -> None:
        self.imes, self.ime, self.clipboard, self.works = imes, LATIN, "the user's", clipboard_works
        self.calls: list[str] = []
        self.typed: list[str] = []

    def shell(self, args: list[str]) -> str:
        self.calls.append(" ".join(args[:2]))
        if args[:2] == ["ime", "list"]:
            return "\n".join(self.imes) + "\n"
        if args[:2] == ["settings", "get"]:
            return self.ime + "\n"
        if args[:2] == ["ime", "set"]:
            self.ime = args[2]
        if args[0] == "am":
            self.typed.append(args[-1])
            return "Broadcast completed: result=-1"
        return ""

    def rpc(self, method: str, *params):
        self.calls.append(method)
        if method == "getClipboard":
            return self.clipboard
        if method == "setClipboard" and self.works:
            self.clipboard = params[1]
        if method == "pasteClipboard":
            self.typed.append(self.clipboard)
        return None


def test_pasting_checks_the_clipboard_once_and_restores_it_every_time():
    phone = Phone([LATIN])
    text = TextInput("SIM1", KEYBOARD, phone.shell, phone.rpc)
    text.type("晚上好")
    first = list(phone.calls)
    phone.calls.clear()
    text.type("明天见")
    assert phone.typed == ["晚上好", "明天见"] and phone.clipboard == "the user's"
    assert first == [
        "ime list",
        "getClipboard",
        "setClipboard",
        "getClipboard",
        "pasteClipboard",
        "setClipboard",
    ]
    assert phone.calls == ["getClipboard", "setClipboard", "pasteClipboard", "setClipboard"]


def test_a_clipboard_that_does_not_take_text_is_an_error():
    phone = Phone([LATIN], clipboard_works=False)
    with pytest.raises(DeviceError, match="clipboard"):
        TextInput("SIM1", KEYBOARD, phone.shell, phone.rpc).type("x")


def test_the_adb_keyboard_is_enabled_once_and_the_users_ime_put_back_every_time():
    phone = Phone([LATIN, KEYBOARD])
    text = TextInput("SIM1", KEYBOARD, phone.shell, phone.rpc)
    text.type("a")
    phone.calls.clear()
    text.type("b")
    assert phone.ime == LATIN and len(phone.typed) == 2
    assert phone.calls == ["ime set", "am broadcast", "ime set"]
