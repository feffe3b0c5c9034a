"""The farm's phones: the inventory (devices.yaml), merged with what the adb servers report.

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

What a phone says about itself and its health checks are in mobile_agent.farm.health; who holds a phone (a
worker's lease, a person) and the status ``mobile-agent devices`` shows are in mobile_agent.farm.leases.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import Any

import adbutils
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mobile_agent.device.adb_server import AdbServerClient
from mobile_agent.device.android import parse_adb_address
from mobile_agent.errors import AdbServerUnreachable, ConfigError, UserError
from mobile_agent.farm.tasks import normalize_tags

log = logging.getLogger(__name__)

DEFAULT_ADB = "127.0.0.1:5037"
INVENTORY_HINT = "see devices.yaml at the repository root for the inventory format"


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
    from mobile_agent.settings.values import load_settings

    default_adb = normalize_adb(adb or load_settings().adb)  # ADB_SERVER_SOCKET etc. as for adb
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
    """serial -> adb state on one server; None when the server does not answer (it is never started here)."""
    host, port = parse_adb_address(adb)
    try:
        return {d.serial: d.state for d in AdbServerClient(host, port).list()}
    except (adbutils.AdbError, OSError, AdbServerUnreachable) as exc:
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
                "start it with `mobile-agent adb -H HOST -P PORT start-server` (or `mobile-agent sim up`), "
                "or fix 'adb:' in devices.yaml",
            )
        raise UserError(
            f"no phones listed or attached (adb servers: {servers})",
            "attach a phone with USB debugging on, or list phones in devices.yaml",
        )
    return out


__all__ = [
    "FarmPhone",
    "Inventory",
    "PhoneEntry",
    "PhoneState",
    "adb_states",
    "discover",
    "load_inventory",
    "normalize_adb",
]
