"""Text into the focused field: through the AdbKeyboard IME when it is installed, else pasted from the clipboard.

Typing is a list of u2 JSON-RPC calls that go in the same request as the wait for idle and the frame after it
(device/u2_rpc.py); shell commands ride along as ``executeShellCommand``. The user's input method and clipboard
are put back afterwards: the IME in the same request, the clipboard at the front of the next one (its old text is
only known once this request answers). Text reaches the phone as base64 in a broadcast extra or as a JSON-RPC
string, never inside a shell command line.

What does not change within a session is read once: the installed IMEs and the user's IME (only this runtime
switches it, and it switches it back), both asked beside the first view-tree dump (``session_calls``); whether the
clipboard takes text at all, checked by reading it back the first time, before anything is pasted.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mobile_agent.device.u2_calls import shell_call, shell_output
from mobile_agent.device.u2_rpc import Answer, Call
from mobile_agent.errors import DeviceError

_ACCEPTED = re.compile(r"result=-1\b")
Send = Callable[[Sequence[Call]], list[Answer]]


@dataclass
class TypingPlan:
    """The calls that type one text, and what to check in their answers."""

    calls: list[Call]
    broadcast_at: int | None = None  # the AdbKeyboard broadcast (its output says whether it took the text)
    enables_keyboard: bool = False
    restores_clipboard: bool = False
    saved_at: int | None = None  # the call that read the user's clipboard, when it is in this plan
    saved: str | None = None  # the user's clipboard, when it was read before the plan


@dataclass
class _Facts:
    imes: list[str] | None = None
    user_ime: str | None = None
    keyboard_enabled: bool = False
    clipboard_takes_text: bool = False


class TextInput:
    def __init__(self, serial: str, keyboard: str) -> None:
        self.serial = serial
        self.keyboard = keyboard  # the AdbKeyboard's IME id
        self._facts = _Facts()

    # ----- what a session reads once ---------------------------------------------------------------------------
    def session_calls(self) -> list[Call]:
        """The calls that read what typing needs, while it is not known (none once it is)."""
        facts = self._facts
        calls = []
        if facts.imes is None:
            calls.append(shell_call("ime list -s"))
        if facts.user_ime is None:
            calls.append(shell_call("settings get secure default_input_method"))
        return calls

    def learn(self, calls: Sequence[Call], answers: Sequence[Answer]) -> None:
        """Take the answers to ``session_calls`` (in a request of any shape)."""
        for call, answer in zip(calls, answers, strict=True):
            if call.method != "executeShellCommand" or answer.failed:
                continue
            command, out = call.params[0], shell_output(answer)
            if out is None:
                continue
            if command == "ime list -s":
                self._facts.imes = [line.strip() for line in out.splitlines() if line.strip()]
            elif command == "settings get secure default_input_method":
                value = out.strip()
                self._facts.user_ime = "" if value == "null" else value

    def ime_list(self, send: Send) -> list[str]:
        self._read_facts(send)
        return list(self._facts.imes or [])

    def _read_facts(self, send: Send) -> None:
        calls = self.session_calls()
        if calls:
            self.learn(calls, send(calls))
        if self._facts.imes is None or self._facts.user_ime is None:
            raise DeviceError(
                f"phone {self.serial}: could not read its input methods", "is the phone responding?"
            )

    # ----- typing ----------------------------------------------------------------------------------------------
    def plan(self, text: str, send: Send) -> TypingPlan:
        """The calls that type ``text``; ``send`` asks what is not known yet (the first time only)."""
        self._read_facts(send)
        facts = self._facts
        if self.keyboard not in (facts.imes or []):
            return self._paste_plan(text, send)
        calls: list[Call] = []
        previous = facts.user_ime or ""
        enables = False
        if previous != self.keyboard:
            if not facts.keyboard_enabled:
                calls.append(shell_call(f"ime enable {self.keyboard}"))
                enables = True
            calls.append(shell_call(f"ime set {self.keyboard}"))
        encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
        calls.append(shell_call(f"am broadcast -a ADB_KEYBOARD_INPUT_TEXT --es text {encoded}"))
        broadcast_at = len(calls) - 1
        if previous and previous != self.keyboard:
            calls.append(shell_call(f"ime set {previous}"))
        return TypingPlan(calls, broadcast_at=broadcast_at, enables_keyboard=enables)

    def _paste_plan(self, text: str, send: Send) -> TypingPlan:
        """What u2's own send_keys does without the AdbKeyboard. Some ROMs drop the clipboard silently: the first
        time, it is set and read back before anything is pasted (and put back at once when it did not take)."""
        if self._facts.clipboard_takes_text:
            calls = [Call("getClipboard"), Call("setClipboard", (None, text)), Call("pasteClipboard")]
            return TypingPlan(calls, restores_clipboard=True, saved_at=0)
        saved, _, echoed = send(
            [Call("getClipboard"), Call("setClipboard", (None, text)), Call("getClipboard")]
        )
        user = None if saved.failed else saved.result
        if echoed.failed or echoed.result != text:
            if user is not None:
                send([Call("setClipboard", (None, user))])
            raise DeviceError(
                f"phone {self.serial}: setting the clipboard failed", "install the AdbKeyboard IME"
            )
        self._facts.clipboard_takes_text = True
        return TypingPlan([Call("pasteClipboard")], restores_clipboard=True, saved=user)

    def finish(self, plan: TypingPlan, answers: Sequence[Answer], defer: Callable[[Call], None]) -> None:
        """Check the answers to ``plan.calls`` (in order); the user's clipboard goes back with the next request
        (``defer``)."""
        if plan.restores_clipboard:
            saved = plan.saved if plan.saved_at is None else answers[plan.saved_at].result
            if saved is not None:
                defer(Call("setClipboard", (None, saved)))
        failed = next((a for a in answers if a.failed), None)
        if plan.broadcast_at is not None:
            if plan.enables_keyboard and failed is None:
                self._facts.keyboard_enabled = True
            out = shell_output(answers[plan.broadcast_at]) or ""
            if not _ACCEPTED.search(out):
                raise DeviceError(
                    f"phone {self.serial}: the AdbKeyboard did not accept the text ({out.strip()!r})"
                )
        if failed is not None:
            raise DeviceError(f"phone {self.serial}: typing failed ({failed.text()})")


__all__ = ["TextInput", "TypingPlan"]
