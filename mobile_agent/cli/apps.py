"""`mobile-agent apps ...`: list the known apps, show one, verify the manifests on a phone."""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mobile_agent.apps.registry import APPS_DIR_ENV, load_registry
from mobile_agent.apps.schema import CATEGORIES, AppManifest
from mobile_agent.apps.verify import adb_shell, record_verifications, verify_phone
from mobile_agent.errors import UserError

console = Console()

apps_app = typer.Typer(help="App manifests: list, show, verify on a phone.", no_args_is_help=True)

APPS_DIR_OPTION = typer.Option(
    None,
    "--apps-dir",
    envvar=APPS_DIR_ENV,
    help="A folder of extra manifests (overrides shipped ones by id).",
)


@apps_app.command("list")
def list_command(
    category: str | None = typer.Option(None, "--category", "-c", help=f"One of: {', '.join(CATEGORIES)}."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    apps_dir: str | None = APPS_DIR_OPTION,
) -> None:
    """Every known app with its package and aliases."""
    if category is not None and category not in CATEGORIES:
        raise UserError(f"unknown category {category!r}", f"choose one of: {', '.join(CATEGORIES)}")
    manifests = [m for m in load_registry(apps_dir) if category is None or m.category == category]
    if as_json:
        rows = [
            {"id": m.id, "name": m.name, "aliases": m.aliases, "packages": m.packages, "category": m.category}
            for m in manifests
        ]
        typer.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    table = Table(title=f"{len(manifests)} apps", title_justify="left")
    for column in ("id", "name", "category", "package", "aliases"):
        table.add_column(column, overflow="fold")
    for m in manifests:
        extra = f" (+{len(m.packages) - 1} vendor)" if len(m.packages) > 1 else ""
        table.add_row(m.id, m.name, m.category, m.package + extra, escape(", ".join(m.aliases)))
    console.print(table)


@apps_app.command("show")
def show_command(
    name: str = typer.Argument(..., help="An app name, alias or package (微信, WeChat, com.tencent.mm)."),
    as_json: bool = typer.Option(False, "--json", help="Print the manifest as JSON."),
    apps_dir: str | None = APPS_DIR_OPTION,
) -> None:
    """Everything known about one app."""
    registry = load_registry(apps_dir)
    manifest = registry.resolve(name)  # UnknownApp: one line with suggestions, exit 2
    if as_json:
        typer.echo(json.dumps(manifest.model_dump(mode="json"), ensure_ascii=False, indent=2))
        return
    _print_manifest(manifest, str(registry.path_of(manifest.id)))


def _print_manifest(m: AppManifest, path: str) -> None:
    out = console.print
    out(f"[bold]{escape(m.name)}[/] ({m.id}) — {m.category}   [dim]{escape(path)}[/]")
    out(f"aliases:  {escape(', '.join(m.aliases)) or '-'}")
    out(f"package:  {m.package}" + (f"  launch {m.launch_activity}" if m.launch_activity else ""))
    for v in m.variants:
        out(
            f"          {v.package}  ({', '.join(v.vendors)})"
            + (f"  launch {v.launch_activity}" if v.launch_activity else "")
        )
    src = m.source
    out(f"source:   {src.kind}" + (f" ({', '.join(src.lists)})" if src.lists else ""))
    if src.note:
        out(f"          {escape(src.note)}")
    for v in src.verified:
        version = f" v{v.app_version}" if v.app_version else ""
        out(f"          verified {v.package}{version} on {escape(v.device)} (Android {v.android}) {v.date}")
    if not src.verified:
        out(
            "          [yellow]not verified on a phone yet[/] (mobile-agent apps verify --device SERIAL --write)"
        )
    for link in m.deep_links:
        out(f"link:     {escape(link.uri)}" + (f"  {escape(link.description)}" if link.description else ""))
    walls = [w for w in ("login", "captcha") if getattr(m.walls, w)]
    if walls:
        out(f"walls:    {', '.join(walls)}")
    for rule in m.popups:
        out(f"popup:    {rule.id}" + (f"  {escape(rule.description)}" if rule.description else ""))
    for c in m.consequential:
        what = (
            ", ".join(c.text or []) or c.text_pattern or c.resource_id_pattern or c.content_desc_pattern or ""
        )
        out(f"careful:  {c.kind} ({c.scope}): {escape(what)}")
    if m.hints:
        out(f"hints:    {escape(m.hints.strip())}")


@apps_app.command("verify")
def verify_command(
    device: str = typer.Option(..., "--device", "-d", help="Serial of the phone to check."),
    adb: str | None = typer.Option(None, "--adb", envvar="MOBILE_AGENT_ADB", help="adb server HOST:PORT."),
    only: list[str] = typer.Option([], "--app", "-a", help="Check only this app (repeatable); default: all."),
    write: bool = typer.Option(False, "--write", help="Record the check in each installed app's manifest."),
    show_all: bool = typer.Option(False, "--all", help="Also list the apps that are missing."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    apps_dir: str | None = APPS_DIR_OPTION,
) -> None:
    """Which manifests' packages are installed on a phone, and whether their launch activity resolves."""
    import adbutils

    from mobile_agent.device.android import choose_serial, parse_adb_address

    registry = load_registry(apps_dir)
    serial = choose_serial(device, adb)
    host, port = parse_adb_address(adb)
    phone = adbutils.AdbClient(host=host, port=port).device(serial)
    app_ids = [registry.resolve(name).id for name in only] or None
    report = verify_phone(registry, adb_shell(phone), serial, app_ids=app_ids)
    written = record_verifications(registry, report) if write else []
    if as_json:
        payload = {
            "serial": serial,
            "model": report.phone.model,
            "android": report.phone.android,
            "apps": [
                {
                    "id": c.app_id,
                    "installed": c.installed,
                    "package": c.package,
                    "launch_activity": c.launch_activity,
                    "app_version": c.app_version,
                }
                for c in report.checks
            ],
            "written": [str(p) for p in written],
        }
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    table = Table(
        title=f"{serial}: {report.phone.model}, Android {report.phone.android}", title_justify="left"
    )
    for column in ("app", "package", "status", "launch activity", "version"):
        table.add_column(column, overflow="fold")
    for c in report.checks:
        if c.installed:
            launch = c.launch_activity or "[red]no launcher activity[/]"
            table.add_row(c.app_id, c.package, "[green]installed[/]", launch, c.app_version or "-")
        elif show_all:
            table.add_row(c.app_id, registry.get(c.app_id).package, "[dim]missing[/]", "-", "-")  # type: ignore[union-attr]
    console.print(table)
    console.print(
        f"{len(report.installed)} installed, {len(report.missing)} missing"
        + ("" if show_all else " (--all lists them)")
        + (f"; recorded in {len(written)} manifest(s)" if write else "")
    )
