"""Wiring the server's parts from the command's options: the store, the inventory, the farm's agent runner and
queue, and the phones the device tools drive. Everything opened here is closed when the server stops: running
tasks end as interrupted, driven phones are released."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from mobile_agent.farm.inventory import discover, load_inventory
from mobile_agent.farm.scheduler.runner import AgentRunner, EpisodeDefaults, ModelSettings
from mobile_agent.farm.tasks import ResetMode
from mobile_agent.gate.policy import SafetyPolicy
from mobile_agent.mcp.drive import Drives
from mobile_agent.mcp.server import ServerParts
from mobile_agent.mcp.tasks import TaskService
from mobile_agent.store.store import TrajectoryStore


@contextmanager
def open_parts(
    *,
    db: str | None = None,
    devices: Path | None = None,
    adb: str | None = None,
    base_url: Sequence[str] = (),
    model: str | None = None,
    family: str | None = None,
    safety: SafetyPolicy | None = None,
    ask_timeout_s: float = 300.0,
    max_steps: int = 30,
) -> Iterator[ServerParts]:
    from mobile_agent.settings.values import load_settings

    settings = load_settings(base_url=list(base_url), model=model, family=family, db=db, adb=adb)
    inventory = load_inventory(devices, adb=adb)
    with TrajectoryStore.open(settings.db) as store:
        runner = AgentRunner(
            store,
            ModelSettings(tuple(settings.base_url), settings.model, settings.family),
            defaults=EpisodeDefaults(max_steps=max_steps, reset=ResetMode.NONE, reserve_s=ask_timeout_s),
            apps_dir=settings.apps_dir,
            safety=safety,
        )
        tasks = TaskService(store, inventory, runner)

        def adb_of(serial: str) -> str | None:
            for phone in discover(inventory):
                if phone.serial == serial:
                    return phone.entry.adb
            return None

        drives = Drives(
            store, adb_of=adb_of, registry=lambda: runner.registry, policy=safety or SafetyPolicy()
        )
        parts = ServerParts(store, tasks, drives, ask_timeout_s)
        try:
            yield parts
        finally:
            parts.close()


__all__ = ["open_parts"]
