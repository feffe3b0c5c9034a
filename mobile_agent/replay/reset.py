"""Bringing a phone to a recording's start before step 0 (``replay --reset``), with Android's own commands.

``home`` presses HOME; ``force-stop`` first stops every app the recording was in (``am force-stop``), so each
starts afresh instead of resuming where the last replay left it (a chat still open); ``clear-data`` clears their
data instead (``pm clear``: accounts, settings and caches too, so only when asked). A recording that started
inside an app (not on the home screen) then has that app opened again, at the recorded activity when the phone
lets it be started (``am start -n``), else at its launcher entry (``monkey -p``). Whether the phone got there is
checked by the first step before anything is touched: another foreground app or activity stops the replay there.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import adbutils

from mobile_agent.actions import Action
from mobile_agent.device.android import AndroidDevice
from mobile_agent.errors import DeviceLost
from mobile_agent.replay.results import ResetMode
from mobile_agent.store.records import StepInfo

log = logging.getLogger(__name__)

LAUNCHERS = frozenset(
    {"com.android.launcher3", "com.android.launcher", "com.google.android.apps.nexuslauncher"}
)
# Never stopped or cleared by a reset: the system's own processes.
_SYSTEM = frozenset({"android", "com.android.systemui", "com.android.phone"})
_SHELL_TIMEOUT_S = 30


@dataclass(frozen=True)
class RecordedStart:
    """Where the recording started (the first replayed step's foreground), and the apps it was in."""

    app: str
    activity: str
    apps: tuple[str, ...]

    @property
    def on_home(self) -> bool:
        return not self.app or self.app in LAUNCHERS


def recorded_start(steps: list[StepInfo]) -> RecordedStart:
    first = steps[0] if steps else None
    apps = dict.fromkeys(
        s.foreground_app
        for s in steps
        if s.foreground_app and s.foreground_app not in LAUNCHERS and s.foreground_app not in _SYSTEM
    )
    return RecordedStart(
        (first.foreground_app or "") if first else "",
        (first.foreground_activity or "") if first else "",
        tuple(apps),
    )


def reset_phone(device: AndroidDevice, start: RecordedStart, mode: ResetMode) -> list[str]:
    """Do ``mode`` on the phone; returns what was done, one line per command, for the record."""
    if mode is ResetMode.NONE:
        return []
    done: list[str] = []
    for app in start.apps if mode is not ResetMode.HOME else ():
        args = ["am", "force-stop", app] if mode is ResetMode.FORCE_STOP else ["pm", "clear", app]
        out = _shell(device, args)
        if mode is ResetMode.CLEAR_DATA and "Success" not in out:
            log.warning("reset: `pm clear %s` said %r", app, out.strip()[:200])
        done.append(" ".join(args))
    device.perform(Action.press("home"))
    done.append("HOME")
    if not start.on_home:
        done.append(_open(device, start))
    device.settle()
    return done


def _open(device: AndroidDevice, start: RecordedStart) -> str:
    """The recorded app, at the recorded activity when the phone lets it be started, else at its launcher entry."""
    if start.activity:
        component = f"{start.app}/{start.activity}"
        out = _shell(device, ["am", "start", "-n", component])
        if "Error" not in out and "Exception" not in out:
            return f"am start -n {component}"
        log.info(
            "reset: %s cannot be started directly (%s); opening the app instead", component, out.strip()[:200]
        )
    device.launch(start.app)
    return f"monkey -p {start.app}"


def _shell(device: AndroidDevice, args: list[str]) -> str:
    """One shell command (an argument list, never a string built from recorded text); adb trouble -> DeviceLost."""
    try:
        return str(device.adb.shell(args, timeout=_SHELL_TIMEOUT_S))
    except (adbutils.AdbError, adbutils.AdbTimeout, OSError) as exc:
        raise DeviceLost(
            f"phone {device.serial}: `{' '.join(args[:2])}` failed: {exc}", "reconnect it"
        ) from None


def start_problem(start: RecordedStart, app: str | None, activity: str | None) -> str | None:
    """Why the phone is not at the recorded start (after a reset), or None when it is."""
    if app and start.app and app != start.app:
        return f"the reset left the phone in {app}, but the recording started in {start.app}"
    if activity and start.activity and app == start.app and activity != start.activity:
        return f"the reset left {app} at {activity}, but the recording started at {start.activity}"
    return None


__all__ = ["LAUNCHERS", "RecordedStart", "recorded_start", "reset_phone", "start_problem"]
