"""What an action, a frame and a shell command are as u2 JSON-RPC calls, and what their answers mean.

Method names and parameters are the u2.jar's (openatx/android-uiautomator-server-jar @ d0449b9,
stub/AutomatorService.java): ``click(x, y[, ms])``, ``swipe``/``drag(x1, y1, x2, y2, steps)`` (5 ms a step),
``pressKey(name)``, ``waitForIdle(timeout)`` (void), ``takeScreenshot(scale, quality)`` (base64 JPEG or null),
``deviceInfo()`` (the active window's package, the display's real size in its current rotation: UiDevice
``getCurrentPackageName`` and ``getDisplaySize`` → ``Display.getRealSize``), ``executeShellCommand(command,
timeout)`` (``Runtime.exec``: the command is split on whitespace and run without a shell, as the server's uid — the
same as ``adb shell``; it answers ``{stdout, stderr, returnCode}``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mobile_agent.actions import Action, ActionKind, Key, Size
from mobile_agent.device.u2_rpc import Answer, Call

KEY_NAMES = {Key.BACK: "back", Key.HOME: "home", Key.ENTER: "enter", Key.RECENT: "recent"}
SHELL_TIMEOUT_MS = 20_000
JPEG_QUALITY = 80
FOREGROUND_COMMAND = "dumpsys window windows"
# adbutils 2.12 AdbDevice.app_current's first pattern (the focused window is "package/activity")
_FOCUSED = re.compile(r"mCurrentFocus=Window\{.*\s+(?P<package>[^\s]+)/(?P<activity>[^\s]+)\}")
_PACKAGE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+")
LAUNCH_COMMAND = "monkey -p {package} -c android.intent.category.LAUNCHER 1"
# How long an action's own call may take on the phone, beyond its gesture's duration, before the wait for idle
# that follows it begins (a tap is held 100 ms: androidx InteractionController.clickNoSync). Settling counts a
# request as idle in time only when it answered within the settle timeout plus this.
ACTION_ALLOWANCE_S = 0.5
LAUNCH_ALLOWANCE_S = 3.0  # `monkey` starts a VM of its own and returns once the app's activity is started


@dataclass(frozen=True)
class DeviceInfo:
    size: Size | None
    package: str | None


def shell_call(command: str, timeout_ms: int = SHELL_TIMEOUT_MS) -> Call:
    """A shell command (no quoting, no shell syntax: words separated by single spaces) run by the u2 server."""
    return Call("executeShellCommand", (command, timeout_ms))


def shell_output(answer: Answer) -> str | None:
    """The stdout of an ``executeShellCommand`` answer, None when it failed or did not run."""
    result = answer.result
    if answer.failed or not isinstance(result, dict):
        return None
    if result.get("returnCode", 0) == -1 and not result.get("stdout"):
        return None  # timed out, or the command could not be started
    out = result.get("stdout")
    return out if isinstance(out, str) else None


def frame_calls(scale: float, idle_timeout_s: float | None) -> list[Call]:
    """Wait for idle (when ``idle_timeout_s``), then the frame and what the phone says about its screen."""
    calls = [Call("waitForIdle", (int(idle_timeout_s * 1000),))] if idle_timeout_s is not None else []
    return [*calls, Call("takeScreenshot", (scale, JPEG_QUALITY)), Call("deviceInfo")]


def device_info(answer: Answer) -> DeviceInfo:
    info = answer.result if not answer.failed and isinstance(answer.result, dict) else {}
    width, height = info.get("displayWidth"), info.get("displayHeight")
    size = (
        Size(width, height)
        if type(width) is int and type(height) is int and width > 0 and height > 0
        else None
    )
    package = info.get("currentPackageName")
    return DeviceInfo(size, package if isinstance(package, str) and package else None)


def foreground_of(dumpsys: str | None) -> tuple[str, str] | None:
    """(package, activity) of the focused window in ``dumpsys window windows``; None when it names none."""
    found = _FOCUSED.search(dumpsys or "")
    return (found["package"], found["activity"]) if found else None


def packages_of(listing: str | None) -> set[str]:
    """The packages ``pm list packages`` prints."""
    return {line[8:].strip() for line in (listing or "").splitlines() if line.startswith("package:")}


def action_calls(action: Action, package: str | None) -> tuple[list[Call], float]:
    """The calls that perform ``action`` in one request, and how long they may take on the phone (seconds).
    Typing, a double tap and a wait are not single requests (see AndroidDevice.perform)."""
    k, p, e = action.kind, action.point, action.end
    if k is ActionKind.TAP:
        return [Call("click", (p.x, p.y))], ACTION_ALLOWANCE_S
    if k is ActionKind.LONG_PRESS:
        ms = action.duration_ms or 800
        return [Call("click", (p.x, p.y, ms))], ms / 1000 + ACTION_ALLOWANCE_S
    if k in (ActionKind.SWIPE, ActionKind.DRAG):
        ms = action.duration_ms or (300 if k is ActionKind.SWIPE else 1000)
        steps = max(2, int(ms / 5))
        return [Call(k.value, (p.x, p.y, e.x, e.y, steps))], steps * 0.005 + ACTION_ALLOWANCE_S
    if k is ActionKind.KEY:
        return [Call("pressKey", (KEY_NAMES[action.key],))], ACTION_ALLOWANCE_S
    if k is ActionKind.LAUNCH:
        if not package or not _PACKAGE.fullmatch(package):
            raise ValueError(f"launch of {action.app!r} has no resolved package")
        return [shell_call(LAUNCH_COMMAND.format(package=package))], LAUNCH_ALLOWANCE_S
    raise ValueError(f"{k.value} is not one call")


def launch_refused(output: str | None) -> bool:
    return output is None or "No activities found" in output or "monkey aborted" in output


def results(answers: Sequence[Answer]) -> list[Any]:
    return [a.result for a in answers]


__all__ = [
    "ACTION_ALLOWANCE_S",
    "FOREGROUND_COMMAND",
    "KEY_NAMES",
    "DeviceInfo",
    "action_calls",
    "device_info",
    "foreground_of",
    "frame_calls",
    "launch_refused",
    "packages_of",
    "shell_call",
    "shell_output",
]
