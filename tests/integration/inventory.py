"""A farm inventory file (devices.yaml) listing simulated phones behind one adb server, as tests write it."""

from __future__ import annotations

from pathlib import Path

import yaml


def inventory_file(path: Path, adb_port: int, serials: list[str]) -> Path:
    """``path`` holding an inventory of ``serials`` on the adb server at ``adb_port``, with discovery off."""
    data = {"adb": f"127.0.0.1:{adb_port}", "discover": False, "devices": [{"serial": s} for s in serials]}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path
