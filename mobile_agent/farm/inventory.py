"""The farm's phones: the inventory (devices.yaml) merged with what adb servers report, their state, health checks
with optional preparation, and leases so two workers never drive one phone.

devices.yaml::

    adb: 127.0.0.1:5037          # default adb server for entries without their own (default 127.0.0.1:5037)
    discover: true               # also use attached phones that are not listed (default true)
    devices:
      - serial: 8XV7N18A12000123
        tags: {vendor: google, android: 14, accounts: [google], apps: [com.tencent.mm]}
        notes: desk 3, cracked screen
      - serial: 192.168.1.20:5555
        adb: 10.0.0.7:5037       # a phone on another host, through that host's adb server
        disabled: true           # listed but never used

    inventory = load_inventory("devices.yaml")
    phones = discover(inventory)                 # FarmPhone: the entry + adb state
    statuses = describe_phones(phones, store)    # model, Android, battery, screen, u2, busy, quarantined
    report = check_phone(phones[0], prepare=True)
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any

import adbutils
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mobile_agent.device.android import AndroidDevice, parse_adb_address
from mobile_agent.errors import ConfigError, DeviceError, MobileAgentError, UserError
from mobile_agent.farm.tasks import normalize_tags

log = logging.getLogger(__name__)

DEFAULT_ADB = "127.0.0.1:5037"
INVENTORY_HINT = "see devices.yaml at the repository root for the inventory format"
SHELL_TIMEOUT = 10.0
ADB_KEYBOARD = "com.github.uiautomator/.AdbKeyboard"


# ------------------------------------------------------------------------------------------------- inventory
class _EntrySchema(BaseModel):
    model_config = ConfigDict(extra="forbid")

    serial: str = Field(min_length=1)
    adb: str | None = None
    tags: tuple[str, ...] = ()
    notes: str | None = None
    disabled: bool = False

    @field_validator("tags", mode="before")
    @classmethod
    def _tags(cls, value: Any) -> tuple[str, ...]:
        return normalize_tags(value)

    @field_validator("adb")
    @classmethod
    def _adb(cls, value: str | None) -> str | None:
        return None if value is None else normalize_adb(value)


class _InventorySchema(BaseModel):
    model_config = ConfigDict(extra="forbid")

    adb: str = DEFAULT_ADB
    discover: bool = True
    devices: list[_EntrySchema] = Field(default_factory=list)

    @field_validator("adb")
    @classmethod
    def _adb(cls, value: str) -> str:
        return normalize_adb(value)


def normalize_adb(address: str | None) -> str:
    """``"host:port"`` in one spelling, so the same server is one key everywhere."""
    try:
        host, port = parse_adb_address(address)
    except UserError as exc:
        raise ValueError(exc.message) from None
    return f"{host}:{port}"


@dataclass(frozen=True)
class PhoneEntry:
    """One phone of the farm, from the inventory or discovered on an adb server."""

    serial: str
    adb: str = DEFAULT_ADB
    tags: tuple[str, ...] = ()
    notes: str | None = None
    disabled: bool = False
    listed: bool = True  # False: found on an adb server, not in devices.yaml
    line: int | None = None

    @property
    def key(self) -> str:
        """Unique across hosts: the same serial can exist behind two adb servers."""
        return f"{self.adb}/{self.serial}"

    def all_tags(self, extra: Sequence[str] = ()) -> frozenset[str]:
        """Declared tags, plus ``serial:<serial>`` so a task can pin itself to one phone."""
        return frozenset((*self.tags, f"serial:{self.serial.lower()}", *extra))


@dataclass(frozen=True)
class Inventory:
    phones: tuple[PhoneEntry, ...] = ()
    adb: str = DEFAULT_ADB
    discover: bool = True
    path: str | None = None

    @property
    def adb_servers(self) -> list[str]:
        servers = [self.adb] + [p.adb for p in self.phones]
        return list(dict.fromkeys(servers))


def load_inventory(path: str | Path | None, *, adb: str | None = None) -> Inventory:
    """Read devices.yaml. ``None`` means no file: every phone on the ``adb`` server, untagged."""
    default_adb = normalize_adb(adb) if adb else DEFAULT_ADB
    if path is None:
        return Inventory(adb=default_adb, discover=True)
    from mobile_agent.apps.yamlsrc import load_yaml

    shown = str(path)
    if not Path(path).is_file():
        raise ConfigError("device inventory not found", INVENTORY_HINT, path=shown)
    doc = load_yaml(path)
    data = doc.data if doc.data is not None else {}
    if isinstance(data, list):  # a bare list of devices
        data = {"devices": data}
        doc = replace(doc, lines={(("devices",) + loc): line for loc, line in doc.lines.items()})
    if not isinstance(data, dict):
        raise ConfigError("expected a mapping with a 'devices' list", INVENTORY_HINT, path=shown, line=1)
    if adb and "adb" not in data:
        data = {**data, "adb": adb}
    try:
        parsed = _InventorySchema.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        loc = tuple(first["loc"])
        field_name = ".".join(str(p) for p in loc)
        if first["type"] == "extra_forbidden":
            message = f"unknown key {field_name!r}"
        elif first["type"] == "missing":
            message = f"missing required key {field_name!r}"
        else:
            message = f"{field_name}: {first['msg'].removeprefix('Value error, ')}"
        raise ConfigError(message, INVENTORY_HINT, path=shown, line=doc.line_of(loc)) from None
    phones = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(parsed.devices):
        line = doc.line_of(("devices", index))
        phone = PhoneEntry(
            serial=entry.serial,
            adb=entry.adb or parsed.adb,
            tags=entry.tags,
            notes=entry.notes,
            disabled=entry.disabled,
            listed=True,
            line=line,
        )
        if phone.key in seen:
            raise ConfigError(
                f"phone {phone.serial} on {phone.adb} is listed twice",
                f"it is already on line {seen[phone.key]}; keep one entry",
                path=shown,
                line=line,
            )
        seen[phone.key] = line
        phones.append(phone)
    return Inventory(tuple(phones), adb=parsed.adb, discover=parsed.discover, path=shown)


# ------------------------------------------------------------------------------------------------- discovery
class PhoneState(str, Enum):
    ONLINE = "online"
    OFFLINE = "offline"
    UNAUTHORIZED = "unauthorized"
    ABSENT = "absent"  # listed, but its adb server does not know it
    UNREACHABLE = "unreachable"  # its adb server does not answer
    BUSY = "busy"  # a worker holds its lease
    RESERVED = "reserved"  # held for a person: an episode paused on it (needs_user), or is being resumed
    QUARANTINED = "quarantined"
    DISABLED = "disabled"

    def __str__(self) -> str:
        return self.value


_ADB_STATES = {"device": PhoneState.ONLINE, "unauthorized": PhoneState.UNAUTHORIZED}


@dataclass(frozen=True)
class FarmPhone:
    entry: PhoneEntry
    state: PhoneState

    @property
    def serial(self) -> str:
        return self.entry.serial

    @property
    def key(self) -> str:
        return self.entry.key


def adb_states(adb: str) -> dict[str, str] | None:
    """serial -> adb state on one server; None when the server does not answer."""
    host, port = parse_adb_address(adb)
    try:
        return {d.serial: d.state for d in adbutils.AdbClient(host=host, port=port).list()}
    except (adbutils.AdbError, OSError) as exc:
        log.info("adb server %s does not answer: %s", adb, exc)
        return None


def discover(inventory: Inventory) -> list[FarmPhone]:
    """The inventory's phones with their adb state, plus unlisted attached phones when ``discover`` is on."""
    states = {server: adb_states(server) for server in inventory.adb_servers}
    out: list[FarmPhone] = []
    listed = {p.key for p in inventory.phones}
    for entry in inventory.phones:
        server_states = states[entry.adb]
        if entry.disabled:
            state = PhoneState.DISABLED
        elif server_states is None:
            state = PhoneState.UNREACHABLE
        elif entry.serial not in server_states:
            state = PhoneState.ABSENT
        else:
            state = _ADB_STATES.get(server_states[entry.serial], PhoneState.OFFLINE)
        out.append(FarmPhone(entry, state))
    if inventory.discover:
        for server, server_states in states.items():
            for serial, adb_state in sorted((server_states or {}).items()):
                entry = PhoneEntry(serial=serial, adb=server, listed=False)
                if entry.key not in listed:
                    out.append(FarmPhone(entry, _ADB_STATES.get(adb_state, PhoneState.OFFLINE)))
    if not out:
        servers = ", ".join(inventory.adb_servers)
        unreachable = [s for s, found in states.items() if found is None]
        if unreachable:
            raise UserError(
                f"no phones: the adb server at {', '.join(unreachable)} does not answer",
                "start it with `adb start-server` (or `mobile-agent sim up`), or fix 'adb:' in devices.yaml",
            )
        raise UserError(
            f"no phones listed or attached (adb servers: {servers})",
            "attach a phone with USB debugging on, or list phones in devices.yaml",
        )
    return out


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
    return adbutils.AdbClient(host=host, port=port, socket_timeout=SHELL_TIMEOUT).device(entry.serial)


def _shell(device: adbutils.AdbDevice, args: list[str]) -> str | None:
    try:
        result = device.shell2(args, timeout=SHELL_TIMEOUT)
    except (adbutils.AdbError, adbutils.AdbTimeout, OSError) as exc:
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


def hold_on(entry: PhoneEntry, holds: Sequence[Any]) -> Any:
    """The first of ``holds`` (``store.queue.PersonHold``) on this phone, or None. A hold recorded without an adb
    server (an episode run on the default server) matches the serial on any server."""
    for hold in holds:
        if hold.serial != entry.serial:
            continue
        if hold.adb_server is None:
            return hold
        try:
            if normalize_adb(hold.adb_server) == entry.adb:
                return hold
        except ValueError:
            continue
    return None


@dataclass(frozen=True)
class PhoneStatus:
    phone: FarmPhone
    state: PhoneState
    facts: PhoneFacts = field(default_factory=PhoneFacts)
    u2_error: str | None = None
    u2_checked: bool = False
    worker: str | None = None
    quarantine_reason: str | None = None
    reserved_by: str | None = None  # the episode a person holds the phone for
    reserved_until: datetime | None = None

    @property
    def u2(self) -> str:
        if not self.u2_checked:
            return "-"
        return "ok" if self.u2_error is None else f"fails: {self.u2_error}"


def describe_phones(
    phones: Sequence[FarmPhone], store: Any = None, *, probe: bool = True, threads: int = 8
) -> list[PhoneStatus]:
    """What ``mobile-agent devices`` shows. Busy and reserved phones are not probed (a worker or a person is
    using them)."""
    leases: dict[str, Any] = {}
    holds: list[Any] = []
    if store is not None:
        from mobile_agent.store.queue import farm_devices, person_holds

        leases = {info.key: info for info in farm_devices(store)}
        holds = person_holds(store)

    def one(phone: FarmPhone) -> PhoneStatus:
        info = leases.get(phone.key)
        state = phone.state
        worker = info.worker if info is not None and info.busy() else None
        reason = info.quarantine_reason if info is not None else None
        hold = hold_on(phone.entry, holds)
        held = {"reserved_by": hold.episode_id, "reserved_until": hold.until} if hold is not None else {}
        common = dict(worker=worker, quarantine_reason=reason, **held)
        if state is PhoneState.ONLINE and hold is not None:
            state = PhoneState.RESERVED
        elif state is PhoneState.ONLINE and reason:
            state = PhoneState.QUARANTINED
        elif state is PhoneState.ONLINE and worker:
            state = PhoneState.BUSY
        if phone.state is not PhoneState.ONLINE:
            return PhoneStatus(phone, state, **common)
        facts = read_facts(phone.entry)
        if not probe or worker or hold is not None:
            return PhoneStatus(phone, state, facts, **common)
        return PhoneStatus(phone, state, facts, probe_u2(phone.entry), True, **common)

    if not phones:
        return []
    with ThreadPoolExecutor(max_workers=max(1, min(threads, len(phones)))) as pool:
        return list(pool.map(one, phones))


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
            PhoneState.ABSENT: f"attach it to the adb server at {phone.entry.adb} (adb connect / USB)",
            PhoneState.UNREACHABLE: f"start the adb server at {phone.entry.adb}",
            PhoneState.DISABLED: "remove 'disabled: true' from devices.yaml to use it",
        }.get(phone.state, "reconnect it (replug the cable / adb reconnect)")
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


# ---------------------------------------------------------------------------------------------------- leases
class DeviceLease:
    """A worker's hold on one phone, kept in the shared database so no other worker (on any host) drives it."""

    def __init__(self, store: Any, entry: PhoneEntry, worker: str, *, lease_s: float = 60.0) -> None:
        self.store = store
        self.entry = entry
        self.worker = worker
        self.lease_s = lease_s
        self.held = False

    def acquire(self) -> bool:
        from mobile_agent.store.queue import lease_device

        self.held = lease_device(
            self.store,
            self.entry.key,
            self.entry.serial,
            self.entry.adb,
            worker=self.worker,
            lease_s=self.lease_s,
        )
        return self.held

    renew = acquire

    def release(self) -> None:
        from mobile_agent.store.queue import release_device

        if self.held:
            release_device(self.store, self.entry.key, worker=self.worker)
            self.held = False

    def __enter__(self) -> DeviceLease:
        if not self.acquire():
            raise DeviceError(
                f"phone {self.entry.serial} is in use by another worker", "wait for it, or use another phone"
            )
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


__all__ = [
    "CheckStatus",
    "DeviceLease",
    "FarmPhone",
    "HealthCheck",
    "HealthReport",
    "HealthThresholds",
    "Inventory",
    "PhoneEntry",
    "PhoneFacts",
    "PhoneState",
    "PhoneStatus",
    "adb_states",
    "check_phone",
    "check_phones",
    "describe_phones",
    "discover",
    "hold_on",
    "load_inventory",
    "normalize_adb",
    "prepare_phone",
    "probe_online",
    "probe_u2",
    "read_facts",
]
