"""``mobile-agent devices`` (the farm's phones and their state) and ``mobile-agent devices check`` (health checks)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape
from rich.table import Table

from mobile_agent.cli.completion import complete_serial
from mobile_agent.cli.farm_options import (
    AdbOpt,
    DbOpt,
    DevicesOpt,
    JsonOpt,
    console,
    inventory_path,
    print_json,
)
from mobile_agent.errors import UserError

if TYPE_CHECKING:  # the commands import the library when they run, so `mobile-agent --help` stays quick
    from mobile_agent.farm.leases import PhoneStatus
    from mobile_agent.store.sightings import Sighting

devices_app = typer.Typer(
    help="The farm's phones: state, model, Android version, battery, screen, u2; health checks.",
    invoke_without_command=True,
    no_args_is_help=False,
)


@devices_app.callback()
def devices_list(
    ctx: typer.Context,
    devices: Path | None = DevicesOpt,
    adb: str | None = AdbOpt,
    db: str | None = DbOpt,
    no_probe: bool = typer.Option(False, "--no-probe", help="Do not start the u2 server to test it."),
    as_json: bool = JsonOpt,
) -> None:
    """List the phones of the inventory and the attached ones, with their state."""
    if ctx.invoked_subcommand is not None:
        return
    from mobile_agent.farm.inventory import discover, load_inventory
    from mobile_agent.farm.leases import describe_phones
    from mobile_agent.store.store import TrajectoryStore

    phones = discover(load_inventory(inventory_path(devices), adb=adb))
    store = TrajectoryStore.open(db) if db else None
    gone: list[Sighting] = []
    try:
        statuses = describe_phones(phones, store, probe=not no_probe)
        if store is not None:  # phones the farm's store knows that no adb server here lists now
            from mobile_agent.store.sightings import sightings

            known = {p.key for p in phones}  # a listed phone adb lacks reads absent in its own row
            gone = [seen for seen in sightings(store) if seen.key not in known]
    finally:
        if store is not None:
            store.close()
    if as_json:
        print_json([_status_dict(s) for s in statuses] + [_gone_dict(g) for g in gone])
        return
    table = Table("serial", "adb", "state", "model", "android", "battery", "screen", "u2", "tags", "notes")
    colours = {"online": "green", "busy": "cyan", "quarantined": "yellow", "reserved": "magenta"}
    for s in statuses:
        entry, facts = s.phone.entry, s.facts
        state = str(s.state)
        if s.reserved_by:
            state += f" for episode {s.reserved_by} until {s.reserved_until.astimezone():%H:%M:%S}"
        elif s.worker:
            state += f" ({s.worker})"
        if s.quarantine_reason:
            state += f": {s.quarantine_reason}"
        table.add_row(
            escape(entry.serial) + ("" if entry.listed else " [dim](discovered)[/]"),
            entry.adb,
            f"[{colours.get(str(s.state), 'red')}]{escape(state)}[/]",
            escape(facts.model or ""),
            escape(facts.android_version or ""),
            f"{facts.battery}%" if facts.battery is not None else "",
            facts.screen if s.state.value in ("online", "busy", "quarantined", "reserved") else "",
            escape(s.u2),
            escape(" ".join(entry.tags)),
            escape(entry.notes or ""),
        )
    for g in gone:
        state = f"gone, last seen {g.last_seen.astimezone():%Y-%m-%d %H:%M:%S}"
        table.add_row(escape(g.serial), escape(g.adb_server), f"[red]{escape(state)}[/]", *[""] * 7)
    console.print(table)


def _gone_dict(g: Sighting) -> dict[str, Any]:
    """A phone the store knows that adb does not list: ``state`` gone and when it was last heard of."""
    return {
        "serial": g.serial,
        "adb": g.adb_server,
        "listed": False,
        "state": "gone",
        "last_seen": g.last_seen.isoformat(),
    }


def _status_dict(s: PhoneStatus) -> dict[str, Any]:
    entry, facts = s.phone.entry, s.facts
    return {
        "serial": entry.serial,
        "adb": entry.adb,
        "listed": entry.listed,
        "state": str(s.state),
        "model": facts.model,
        "android_version": facts.android_version,
        "battery": facts.battery,
        "screen": facts.screen,
        "free_mb": facts.free_mb,
        "u2": None if not s.u2_checked else (s.u2_error is None),
        "u2_error": s.u2_error,
        "worker": s.worker,
        "quarantine_reason": s.quarantine_reason,
        "reserved_by": s.reserved_by,
        "reserved_until": s.reserved_until.isoformat() if s.reserved_until else None,
        "tags": list(entry.tags),
        "notes": entry.notes,
    }


@devices_app.command("check")
def devices_check(
    devices: Path | None = DevicesOpt,
    adb: str | None = AdbOpt,
    prepare: bool = typer.Option(
        False, "--prepare", help="Wake the phones, dismiss a keyguard without PIN and go home first."
    ),
    min_battery: int = typer.Option(20, "--min-battery", min=0, max=100, help="Lowest acceptable battery %."),
    min_free_mb: int = typer.Option(500, "--min-free-mb", min=0, help="Least free storage on /data, MiB."),
    serial: list[str] = typer.Option(
        [], "--device", "-d", autocompletion=complete_serial, help="Only these serials (repeatable)."
    ),
    as_json: bool = JsonOpt,
) -> None:
    """Health checks: screen on and unlocked, battery, free storage, u2 server starts, text input works."""
    from mobile_agent.farm.health import HealthThresholds, check_phones
    from mobile_agent.farm.inventory import discover, load_inventory

    phones = discover(load_inventory(inventory_path(devices), adb=adb))
    if serial:
        phones = [p for p in phones if p.serial in set(serial)]
        if not phones:
            raise UserError(
                f"none of {', '.join(serial)} is in the farm", "list the phones with `mobile-agent devices`"
            )
    reports = check_phones(phones, prepare=prepare, thresholds=HealthThresholds(min_battery, min_free_mb))
    if as_json:
        print_json(
            [
                {
                    "serial": r.phone.serial,
                    "adb": r.phone.entry.adb,
                    "ok": r.ok,
                    "prepared": list(r.prepared),
                    "checks": [
                        {"name": c.name, "status": str(c.status), "detail": c.detail, "fix": c.fix}
                        for c in r.checks
                    ],
                }
                for r in reports
            ]
        )
    else:
        marks = {"ok": "[green]✓[/]", "fail": "[red]✗[/]", "warn": "[yellow]![/]", "skip": "[dim]-[/]"}
        for r in reports:
            verdict = "[green]healthy[/]" if r.ok else "[red]not ready[/]"
            console.print(f"[bold]{escape(r.phone.serial)}[/] ({r.phone.entry.adb}): {verdict}")
            if r.prepared:
                console.print(f"  [dim]prepared: {escape(', '.join(r.prepared))}[/]")
            for c in r.checks:
                console.print(f"  {marks[str(c.status)]} {c.name}: {escape(c.detail)}")
                if c.fix and c.status.value == "fail":
                    console.print(f"      [dim]fix: {escape(c.fix)}[/]")
    raise typer.Exit(0 if all(r.ok for r in reports) else 1)


__all__ = [
    "devices_app",
    "devices_check",
    "devices_list",
]
