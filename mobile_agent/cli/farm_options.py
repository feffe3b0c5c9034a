"""What the farm's commands share: the console they print on, the options every one of them takes (the inventory,
the adb server, the store, --json) and how they find the inventory and print JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from mobile_agent.cli.output import output_console

console = output_console()

DEVICES_FILE = "devices.yaml"

DevicesOpt = typer.Option(
    None,
    "--devices",
    envvar="MOBILE_AGENT_DEVICES",
    help="Inventory file (default: ./devices.yaml if present).",
)
AdbOpt = typer.Option(None, "--adb", envvar="MOBILE_AGENT_ADB", help="Default adb server HOST:PORT.")
DbOpt = typer.Option(None, "--db", envvar="MOBILE_AGENT_DB", help="SQLAlchemy URL of the store.")
JsonOpt = typer.Option(False, "--json", help="Print JSON for machines instead of tables.")


def inventory_path(devices: Path | None) -> Path | None:
    if devices is not None:
        return devices
    default = Path(DEVICES_FILE)
    return default if default.is_file() else None


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")
    sys.stdout.flush()


__all__ = [
    "AdbOpt",
    "DEVICES_FILE",
    "DbOpt",
    "DevicesOpt",
    "JsonOpt",
    "console",
    "inventory_path",
    "print_json",
]
