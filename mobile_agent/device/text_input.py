"""Text into the focused field: through the AdbKeyboard IME when it is installed, else pasted from the clipboard.

The user's input method and clipboard are put back afterwards. Text reaches the phone as base64 in a broadcast
extra or as a JSON-RPC string, never inside a shell command line. What does not change within a session is read
once: the installed IMEs, the user's IME (only this runtime switches it, and it switches it back), whether the
clipboard takes text at all (checked by reading it back the first time).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from typing import Any

from mobile_agent.errors import DeviceError


class TextInput:
    def __init__(
        self,
        serial: str,
        keyboard: str,
        shell: Callable[[list[str]], str],
        rpc: Callable[..., Any],
    ) -> None:
        self.serial = serial
        self.keyboard = keyboard  # the AdbKeyboard's IME id
        self._shell = shell
        self._rpc = rpc
        self._imes: list[str] | None = None
        self._user_ime: str | None = None
        self._keyboard_enabled = False
        self._clipboard_takes_text = False

    def type(self, text: str) -> None:
        if self.keyboard not in self.ime_list():
            self._paste(text)
            return
        previous = self.user_ime()
        try:
            if previous != self.keyboard:
                if not self._keyboard_enabled:
                    self._shell(["ime", "enable", self.keyboard])
                    self._keyboard_enabled = True
                self._shell(["ime", "set", self.keyboard])
            encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
            out = self._shell(["am", "broadcast", "-a", "ADB_KEYBOARD_INPUT_TEXT", "--es", "text", encoded])
            if not re.search(r"result=-1\b", out):
                raise DeviceError(
                    f"phone {self.serial}: the AdbKeyboard did not accept the text ({out.strip()!r})"
                )
        finally:
            if previous and previous != self.keyboard:
                self._shell(["ime", "set", previous])

    def _paste(self, text: str) -> None:
        """What u2's own send_keys does without the AdbKeyboard; the user's clipboard is put back afterwards."""
        saved = self._rpc("getClipboard")
        self._rpc("setClipboard", None, text)
        if not self._clipboard_takes_text:  # some ROMs drop it silently: read it back once per session
            if self._rpc("getClipboard") != text:
                raise DeviceError(
                    f"phone {self.serial}: setting the clipboard failed", "install the AdbKeyboard IME"
                )
            self._clipboard_takes_text = True
        self._rpc("pasteClipboard")
        if saved is not None:
            self._rpc("setClipboard", None, saved)

    def user_ime(self) -> str:
        if self._user_ime is None:
            out = self._shell(["settings", "get", "secure", "default_input_method"]).strip()
            self._user_ime = "" if out == "null" else out
        return self._user_ime

    def ime_list(self) -> list[str]:
        if self._imes is None:
            out = self._shell(["ime", "list", "-s"])
            self._imes = [line.strip() for line in out.splitlines() if line.strip()]
        return list(self._imes)


__all__ = ["TextInput"]
