"""Typing is a list of u2 calls that rides in the action's request: it reads what a session does not change once
(the IMEs and the user's IME, beside the first view tree; whether the clipboard takes text, before anything is
pasted) and still puts the user's clipboard and IME back every time."""

from __future__ import annotations

import pytest

from mobile_agent.device.text_input import TextInput
from mobile_agent.device.u2_rpc import Answer, Call
from mobile_agent.errors import DeviceError

KEYBOARD = "com.github.uiautomator/.AdbKeyboard"
LATIN = "com.android.inputmethod.latin/.LatinIME"


class Phone:
    """Answers u2 calls as the u2.jar does (shell commands as ShellCommandResult objects)."""

    def __init__(self, imes: list[str], clipboard_works: bool = True, keyboard_accepts: bool = True) -> None:
        self.imes, self.ime, self.clipboard = imes, LATIN, "the user's"
        self.works, self.accepts = clipboard_works, keyboard_accepts
        self.requests: list[list[str]] = []
        self.typed: list[str] = []
        self.deferred: list[Call] = []

    def send(self, calls: list[Call]) -> list[Answer]:
        self.requests.append([self._name(c) for c in calls])
        return [self._answer(c) for c in calls]

    def defer(self, call: Call) -> None:
        self.deferred.append(call)

    def flush(self) -> None:
        self.send(self.deferred)
        self.deferred.clear()

    @staticmethod
    def _name(call: Call) -> str:
        if call.method == "executeShellCommand":
            return " ".join(call.params[0].split()[:2])
        return call.method

    def _answer(self, call: Call) -> Answer:
        if call.method == "getClipboard":
            return Answer(self.clipboard)
        if call.method == "setClipboard":
            if self.works:
                self.clipboard = call.params[1]
            return Answer(None)
        if call.method == "pasteClipboard":
            self.typed.append(self.clipboard)
            return Answer(None)
        words = call.params[0].split()
        out = ""
        if words[:2] == ["ime", "list"]:
            out = "\n".join(self.imes) + "\n"
        elif words[:2] == ["settings", "get"]:
            out = self.ime + "\n"
        elif words[:2] == ["ime", "set"]:
            self.ime = words[2]
        elif words[0] == "am" and self.accepts and self.ime == KEYBOARD:
            self.typed.append(words[-1])
            out = "Broadcast completed: result=-1\n"
        elif words[0] == "am":
            out = "Broadcast completed: result=0\n"
        return Answer({"stdout": out, "stderr": "", "returnCode": 0})


def _type(text: TextInput, phone: Phone, words: str) -> list[str]:
    """Type as the device does: the plan's calls in the action's request; returns that request's calls."""
    plan = text.plan(words, phone.send)
    answers = phone.send(plan.calls)
    text.finish(plan, answers, phone.defer)
    return phone.requests[-1]


def test_the_session_facts_ride_with_another_request_and_are_asked_once():
    phone = Phone([LATIN])
    text = TextInput("SIM1", KEYBOARD)
    session = text.session_calls()
    text.learn(session, phone.send(session))
    assert text.session_calls() == []
    _type(text, phone, "a")
    assert ["ime list", "settings get"] not in phone.requests[1:]


def test_pasting_checks_the_clipboard_once_then_is_one_request_and_restores_it_every_time():
    phone = Phone([LATIN])
    text = TextInput("SIM1", KEYBOARD)
    first = _type(text, phone, "晚上好")
    assert phone.requests[:2] == [
        ["ime list", "settings get"],
        ["getClipboard", "setClipboard", "getClipboard"],
    ]
    assert first == ["pasteClipboard"]  # the text was set and read back first
    phone.flush()
    assert phone.clipboard == "the user's"
    second = _type(text, phone, "明天见")
    assert second == ["getClipboard", "setClipboard", "pasteClipboard"]
    assert phone.deferred == [Call("setClipboard", (None, "the user's"))]  # put back with the next request
    phone.flush()
    assert phone.typed == ["晚上好", "明天见"] and phone.clipboard == "the user's"


def test_a_clipboard_that_does_not_take_text_is_an_error_and_nothing_is_pasted():
    phone = Phone([LATIN], clipboard_works=False)
    with pytest.raises(DeviceError, match="clipboard"):
        _type(TextInput("SIM1", KEYBOARD), phone, "x")
    assert phone.typed == [] and phone.clipboard == "the user's"


def test_the_adb_keyboard_is_enabled_once_and_the_users_ime_put_back_in_the_same_request():
    phone = Phone([LATIN, KEYBOARD])
    text = TextInput("SIM1", KEYBOARD)
    assert _type(text, phone, "a") == ["ime enable", "ime set", "am broadcast", "ime set"]
    assert _type(text, phone, "b") == ["ime set", "am broadcast", "ime set"]
    assert phone.ime == LATIN and len(phone.typed) == 2


def test_a_keyboard_that_refuses_the_text_is_an_error():
    phone = Phone([LATIN, KEYBOARD], keyboard_accepts=False)
    with pytest.raises(DeviceError, match="did not accept"):
        _type(TextInput("SIM1", KEYBOARD), phone, "a")
    assert phone.ime == LATIN
