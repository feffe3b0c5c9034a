"""What a phone tells about itself (model, Android version, battery, screen, lock, free storage), whether its
u2 server answers, and the health checks of ``mobile-agent devices check``, with optional preparation.

    facts = read_facts(phone.entry)              # PhoneFacts, each field best effort
    report = check_phone(phone, prepare=True)    # HealthReport: screen, battery, storage, u2 server, text input
    why_not = probe_online(phone.entry)          # None when a quarantined phone is usable again
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import Enum

import adbutils

from mobile_agent.device.adb_server import AdbServerClient, adb_command
from mobile_agent.device.android import ADB_KEYBOARD, AndroidDevice, parse_adb_address
from mobile_agent.errors import AdbServerUnreachable, MobileAgentError
from mobile_agent.farm.inventory import FarmPhone, PhoneEntry, PhoneState, adb_states

log = logging.getLogger(__name__)

SHELL_TIMEOUT = 10.0


# ------------------------------------------------------------------------------------------------ phone info
@dataclass(frozen=True)
class PhoneFacts:
    """What one look at a phone tells (None: could not be read)."""

    model: str | None = None
    android_version: str | None = None
    battery: int | None = None
    screen_on: bool | None = None
    locked: bool | None = None
    free_mb: int | None = None

    @property
    def screen(self) -> str:
        if self.screen_on is None:
            return "?"
        if not self.screen_on:
            return "off"
        return "locked" if self.locked else "on"

    def tags(self) -> tuple[str, ...]:
        """Discovered facts as tags, so a task can require ``android:14`` without the inventory saying it."""
        out = []
        if self.android_version:
            out.append(f"android:{self.android_version.lower()}")
        if self.model:
            out.append(f"model:{self.model.lower()}")
        return tuple(out)


def _adb_device(entry: PhoneEntry) -> adbutils.AdbDevice:
    host, port = parse_adb_address(entry.adb)
    return AdbServerClient(host, port, read_timeout=SHELL_TIMEOUT).device(entry.serial)


def _shell(device: adbutils.AdbDevice, args: list[str]) -> str | None:
    try:
        result = device.shell2(args, timeout=SHELL_TIMEOUT)
    except (adbutils.AdbError, adbutils.AdbTimeout, OSError, AdbServerUnreachable) as exc:
        log.debug("%s: %s failed: %s", device.serial, " ".join(args), exc)
        return None
    return result.output if result.returncode == 0 else None


def read_facts(entry: PhoneEntry) -> PhoneFacts:
    """Model, Android version, battery, screen, lock and free storage, each best effort."""
    device = _adb_device(entry)
    model = _shell(device, ["getprop", "ro.product.model"])
    version = _shell(device, ["getprop", "ro.build.version.release"])
    battery = _shell(device, ["dumpsys", "battery"])
    power = _shell(device, ["dumpsys", "power"])
    window = _shell(device, ["dumpsys", "window"])
    storage = _shell(device, ["df", "-k", "/data"])
    return PhoneFacts(
        model=(model or "").strip() or None,
        android_version=(version or "").strip() or None,
        battery=parse_battery(battery),
        screen_on=parse_screen_on(power),
        locked=parse_locked(window),
        free_mb=parse_free_mb(storage),
    )


def parse_battery(text: str | None) -> int | None:
    match = re.search(r"^\s*level:\s*(\d+)", text or "", re.MULTILINE)
    return int(match.group(1)) if match else None


def parse_screen_on(text: str | None) -> bool | None:
    if not text:
        return None
    match = re.search(r"mWakefulness=(\w+)", text) or re.search(r"Display Power: state=(\w+)", text)
    if not match:
        return None
    return match.group(1).lower() in ("awake", "on")


def parse_locked(text: str | None) -> bool | None:
    if not text:
        return None
    for pattern in (r"mShowingLockscreen=(\w+)", r"mDreamingLockscreen=(\w+)", r"isStatusBarKeyguard=(\w+)"):
        match = re.search(pattern, text)
        if match:
            return match.group(1) == "true"
    return None


def parse_free_mb(text: str | None) -> int | None:
    """``df -k /data``: the 'Available' column of the last line, in MiB."""
    if not text:
        return None
    lines = [line.split() for line in text.strip().splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    header, values = lines[0], lines[-1]
    try:
        column = next(i for i, name in enumerate(header) if name.lower().startswith("avail"))
        return int(values[column]) // 1024
    except (StopIteration, IndexError, ValueError):
        return None


def probe_u2(entry: PhoneEntry) -> str | None:
    """Start (or reach) the uiautomator2 server and ask it one question. None when it works, else why not."""
    device = AndroidDevice(entry.serial, adb=entry.adb)
    try:
        device.screen_size()
    except MobileAgentError as exc:
        return exc.message
    except Exception as exc:  # noqa: BLE001 - u2 raises many unrelated types; the status line says which
        return f"{type(exc).__name__}: {exc}"
    return None


# --------------------------------------------------------------------------------------------- health checks
@dataclass(frozen=True)
class HealthThresholds:
    min_battery: int = 20
    min_free_mb: int = 500


class CheckStatus(str, Enum):
    OK = "ok"
    FAIL = "fail"
    WARN = "warn"  # could not be measured, or not fatal
    SKIP = "skip"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class HealthCheck:
    name: str
    status: CheckStatus
    detail: str
    fix: str | None = None


@dataclass(frozen=True)
class HealthReport:
    phone: FarmPhone
    checks: tuple[HealthCheck, ...]
    prepared: tuple[str, ...] = ()  # what --prepare did

    @property
    def ok(self) -> bool:
        return all(c.status is not CheckStatus.FAIL for c in self.checks)

    @property
    def failures(self) -> list[HealthCheck]:
        return [c for c in self.checks if c.status is CheckStatus.FAIL]


def prepare_phone(entry: PhoneEntry) -> list[str]:
    """Wake the phone, dismiss a keyguard that has no PIN, go home. Returns what was done."""
    device = _adb_device(entry)
    done = []
    facts = read_facts(entry)
    if facts.screen_on is False:
        _shell(device, ["input", "keyevent", "KEYCODE_WAKEUP"])
        done.append("woke the screen")
    if read_facts(entry).locked:
        # `wm dismiss-keyguard` only works without a PIN/pattern; a swipe up is the fallback for old ROMs.
        _shell(device, ["wm", "dismiss-keyguard"])
        if read_facts(entry).locked:
            size = _shell(device, ["wm", "size"]) or ""
            match = re.search(r"(\d+)x(\d+)", size)
            w, h = (int(match.group(1)), int(match.group(2))) if match else (1080, 2400)
            _shell(device, ["input", "swipe", str(w // 2), str(h * 4 // 5), str(w // 2), str(h // 5), "300"])
        done.append("dismissed the keyguard")
    _shell(device, ["input", "keyevent", "KEYCODE_HOME"])
    done.append("went home")
    return done


def check_phone(
    phone: FarmPhone, *, prepare: bool = False, thresholds: HealthThresholds | None = None
) -> HealthReport:
    """Screen on and unlocked, battery, free storage, u2 server starts, text input works."""
    limits = thresholds or HealthThresholds()
    name = phone.serial
    if phone.state is not PhoneState.ONLINE:
        fix = {
            PhoneState.UNAUTHORIZED: "unlock the phone and accept the 'Allow USB debugging' prompt",
            PhoneState.ABSENT: f"attach it to the adb server at {phone.entry.adb} (USB, or "
            f"`{adb_command(phone.entry.adb, 'connect', phone.serial)}`)",
            PhoneState.UNREACHABLE: f"start the adb server: `{adb_command(phone.entry.adb, 'start-server')}`",
            PhoneState.DISABLED: "remove 'disabled: true' from devices.yaml to use it",
        }.get(phone.state, f"reconnect it (replug the cable / `{adb_command(phone.entry.adb, 'reconnect')}`)")
        return HealthReport(phone, (HealthCheck("adb", CheckStatus.FAIL, f"{name} is {phone.state}", fix),))
    prepared: list[str] = prepare_phone(phone.entry) if prepare else []
    facts = read_facts(phone.entry)
    checks = [HealthCheck("adb", CheckStatus.OK, "online")]
    checks.append(_screen_check(facts, prepare))
    checks.append(_battery_check(facts, limits))
    checks.append(_storage_check(facts, limits))
    u2_error = probe_u2(phone.entry)
    if u2_error is None:
        checks.append(HealthCheck("u2 server", CheckStatus.OK, "starts and answers"))
        checks.append(_text_input_check(phone.entry))
    else:
        checks.append(
            HealthCheck(
                "u2 server",
                CheckStatus.FAIL,
                u2_error,
                "stop other automation (Appium, Maestro) on the phone; check `mobile-agent doctor`",
            )
        )
        checks.append(HealthCheck("text input", CheckStatus.SKIP, "needs the u2 server"))
    return HealthReport(phone, tuple(checks), tuple(prepared))


def _screen_check(facts: PhoneFacts, prepared: bool) -> HealthCheck:
    if facts.screen_on is None:
        return HealthCheck("screen", CheckStatus.WARN, "could not read the screen state (dumpsys power)")
    if not facts.screen_on:
        return HealthCheck("screen", CheckStatus.FAIL, "the screen is off", "run with --prepare to wake it")
    if facts.locked:
        fix = "unlock it by hand: it has a PIN or pattern" if prepared else "run with --prepare to dismiss it"
        return HealthCheck("screen", CheckStatus.FAIL, "on, but the keyguard is showing", fix)
    if facts.locked is None:
        return HealthCheck("screen", CheckStatus.WARN, "on; could not read the lock state")
    return HealthCheck("screen", CheckStatus.OK, "on and unlocked")


def _battery_check(facts: PhoneFacts, limits: HealthThresholds) -> HealthCheck:
    if facts.battery is None:
        return HealthCheck("battery", CheckStatus.WARN, "could not read the level (dumpsys battery)")
    if facts.battery < limits.min_battery:
        return HealthCheck(
            "battery", CheckStatus.FAIL, f"{facts.battery}% (< {limits.min_battery}%)", "charge the phone"
        )
    return HealthCheck("battery", CheckStatus.OK, f"{facts.battery}%")


def _storage_check(facts: PhoneFacts, limits: HealthThresholds) -> HealthCheck:
    if facts.free_mb is None:
        return HealthCheck("storage", CheckStatus.WARN, "could not read free storage (df -k /data)")
    if facts.free_mb < limits.min_free_mb:
        return HealthCheck(
            "storage",
            CheckStatus.FAIL,
            f"{facts.free_mb} MiB free (< {limits.min_free_mb} MiB)",
            "free space on the phone (screenshots and u2 need room)",
        )
    return HealthCheck("storage", CheckStatus.OK, f"{facts.free_mb} MiB free")


def _text_input_check(entry: PhoneEntry) -> HealthCheck:
    """AdbKeyboard present (how Chinese text is typed), or else a clipboard round trip through u2."""
    device = _adb_device(entry)
    imes = (_shell(device, ["ime", "list", "-s"]) or "").split()
    if ADB_KEYBOARD in imes:
        return HealthCheck("text input", CheckStatus.OK, "AdbKeyboard is available")
    token = f"mobile-agent-{secrets.token_hex(4)}"
    try:
        u2 = AndroidDevice(entry.serial, adb=entry.adb).u2
        u2.set_clipboard(token)
        echoed = u2.clipboard
    except Exception as exc:  # noqa: BLE001 - any failure means text cannot be typed this way
        return HealthCheck(
            "text input",
            CheckStatus.FAIL,
            f"no AdbKeyboard and the clipboard does not work ({type(exc).__name__}: {exc})",
            "install the uiautomator2 app (python -m uiautomator2 init) to get AdbKeyboard",
        )
    if echoed != token:
        return HealthCheck(
            "text input",
            CheckStatus.FAIL,
            "no AdbKeyboard and the clipboard did not keep the text",
            "install the uiautomator2 app (python -m uiautomator2 init) to get AdbKeyboard",
        )
    return HealthCheck("text input", CheckStatus.OK, "via the clipboard (no AdbKeyboard)")


def check_phones(
    phones: Sequence[FarmPhone], *, prepare: bool = False, thresholds: HealthThresholds | None = None
) -> list[HealthReport]:
    if not phones:
        return []
    with ThreadPoolExecutor(max_workers=min(8, len(phones))) as pool:
        return list(pool.map(lambda p: check_phone(p, prepare=prepare, thresholds=thresholds), phones))


def probe_online(entry: PhoneEntry) -> str | None:
    """Quick probe of a quarantined phone: adb state, then the u2 server. None when usable."""
    states = adb_states(entry.adb)
    if states is None:
        return f"adb server {entry.adb} does not answer"
    state = states.get(entry.serial)
    if state != "device":
        return f"{entry.serial} is {state or 'absent'}"
    return probe_u2(entry)


__all__ = [
    "CheckStatus",
    "HealthCheck",
    "HealthReport",
    "HealthThresholds",
    "PhoneFacts",
    "check_phone",
    "check_phones",
    "parse_battery",
    "parse_free_mb",
    "parse_locked",
    "parse_screen_on",
    "prepare_phone",
    "probe_online",
    "probe_u2",
    "read_facts",
]
