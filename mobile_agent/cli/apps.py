"""`mobile-agent apps ...`: list the known apps, show one, verify the manifests on a phone."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from mobile_agent.apps.registry import APPS_DIR_ENV, AppRegistry, PopupMatch, load_registry
from mobile_agent.apps.schema import CATEGORIES, AppManifest
from mobile_agent.apps.verify import adb_shell, record_verifications, verify_phone
from mobile_agent.cli.completion import complete_serial
from mobile_agent.cli.output import output_console
from mobile_agent.cli.popup_rules import (
    POPUP_CATEGORIES_HELP,
    POPUP_RULES_HELP,
    import_report,
    report_data,
    use_popup_rules,
)
from mobile_agent.errors import UserError
from mobile_agent.screen.viewtree import ViewTree

console = output_console()

apps_app = typer.Typer(
    help="App manifests: list, show, verify on a phone, try popup rules on a dump.", no_args_is_help=True
)

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
    device: str | None = typer.Option(
        None,
        "--device",
        "-d",
        autocompletion=complete_serial,
        help="Serial of the phone to check (without it: only which packages no source confirms).",
    ),
    adb: str | None = typer.Option(None, "--adb", envvar="MOBILE_AGENT_ADB", help="adb server HOST:PORT."),
    only: list[str] = typer.Option([], "--app", "-a", help="Check only this app (repeatable); default: all."),
    write: bool = typer.Option(False, "--write", help="Record the check in each installed app's manifest."),
    show_all: bool = typer.Option(False, "--all", help="Also list the apps that are missing."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    apps_dir: str | None = APPS_DIR_OPTION,
) -> None:
    """Which manifests' packages are installed on a phone, and whether their launch activity resolves."""
    from mobile_agent.device.android import adb_client, choose_serial

    registry = load_registry(apps_dir)
    unconfirmed = [m for m in registry if not m.source.confirmed]
    if device is None:
        _print_unconfirmed(unconfirmed, as_json)
        return
    serial = choose_serial(device, adb)
    phone = adb_client(adb).device(serial)
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
            "unconfirmed": [{"id": m.id, "package": m.package} for m in unconfirmed],
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
    _print_unconfirmed(unconfirmed, False)


def _print_unconfirmed(unconfirmed: list[AppManifest], as_json: bool) -> None:
    """Packages that no public list, cited document or phone check confirms."""
    if as_json:
        rows = [{"id": m.id, "package": m.package, "kind": m.source.kind} for m in unconfirmed]
        typer.echo(json.dumps({"unconfirmed": rows}, ensure_ascii=False, indent=2))
        return
    if not unconfirmed:
        console.print("every manifest's package is confirmed by a source")
        return
    console.print(
        f"{len(unconfirmed)} package(s) no source confirms (check them on a phone with --device --write):"
    )
    for m in unconfirmed:
        console.print(f"  {m.id}: {m.package}")


@apps_app.command("popups")
def popups_command(
    tree: Path | None = typer.Argument(None, help="A uiautomator dump (window_dump.xml)."),
    app: str | None = typer.Option(
        None, "--app", "-a", help="Package or app name of the screen (default: the dump's main package)."
    ),
    activity: str | None = typer.Option(
        None, "--activity", help="Foreground activity, for activity filters."
    ),
    popup_rules: list[str] = typer.Option([], "--popup-rules", help=POPUP_RULES_HELP),
    popup_categories: str | None = typer.Option(None, "--popup-categories", help=POPUP_CATEGORIES_HELP),
    report: bool = typer.Option(
        False,
        "--report",
        help="Report on each --popup-rules file: what acts, and every rule refused and why.",
    ),
    show_all: bool = typer.Option(False, "--all", help="List every rule tried and why it did not fire."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    apps_dir: str | None = APPS_DIR_OPTION,
) -> None:
    """Which popup rule would fire on a dump, and where it would tap (for people who write rules); with
    --report, what each subscription brings."""
    if tree is None and not report:
        raise UserError(
            "give a dump to try the rules on, or --report", "mobile-agent apps popups window_dump.xml"
        )
    if report and not popup_rules:
        raise UserError("--report reads the --popup-rules files", "add --popup-rules FILE.json5")
    imports = use_popup_rules(popup_rules, popup_categories, quiet=True)
    if tree is None:
        if as_json:
            payload = {"subscriptions": [report_data(i) for i in imports]}
            typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        else:
            typer.echo("\n\n".join(import_report(i) for i in imports))
        return
    try:
        xml = tree.read_bytes()
    except OSError as exc:
        raise UserError(
            f"cannot read {tree}: {exc.strerror or exc}", "pass the path of a uiautomator dump"
        ) from None
    parsed = ViewTree.parse(xml)
    if parsed is None:
        raise UserError(
            f"{tree} is not a uiautomator dump (XML)",
            "dump one with `mobile-agent adb shell uiautomator dump /sdcard/ui.xml` and "
            "`mobile-agent adb pull /sdcard/ui.xml`",
        )
    registry = load_registry(apps_dir)
    package = _screen_package(registry, app, parsed)
    outcomes = registry.explain_popups(package, xml, activity=activity)
    fired = next((o for o in outcomes if o.fires), None)
    if as_json:
        payload = {
            "package": package,
            "fires": _outcome_json(fired) if fired else None,
            "tried": [_outcome_json(o) for o in outcomes] if show_all else None,
            "subscriptions": [report_data(i) for i in imports] if report else [i.brief() for i in imports],
        }
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    for imported in imports:
        console.print(escape(import_report(imported) if report else imported.brief()))
    if fired is None:
        console.print(f"{escape(package)}: no popup rule fires ({len(outcomes)} tried; --all says why)")
    else:
        console.print(f"{escape(package)}: {escape(_describe(fired))}")
    if show_all:
        for o in outcomes:
            mark = "[green]fires[/]" if o.fires else "[dim]no[/]"
            console.print(f"  {mark} {escape(_rule_name(o))}: {escape(o.reason)}")


def _screen_package(registry: AppRegistry, app: str | None, tree: ViewTree) -> str:
    if app:
        manifest = registry.lookup(app)
        if manifest is not None:
            return manifest.package
        if "." in app:
            return app.strip()
        raise UserError(
            f"unknown app {app!r}", "pass a package name or a known app name (mobile-agent apps list)"
        )
    counts: dict[str, int] = {}
    for e in tree.elements:
        if e.package and e.package != "com.android.systemui":
            counts[e.package] = counts.get(e.package, 0) + 1
    if not counts:
        raise UserError("the dump names no app package", "pass --app PACKAGE")
    return max(counts, key=lambda k: counts[k])


def _rule_name(o: PopupMatch) -> str:
    return f"{o.app_id or 'shared'}:{o.rule.id}"


def _describe(o: PopupMatch) -> str:
    assert o.action is not None
    where = o.action.describe()
    element = o.element
    label = ""
    if element is not None:
        label = element.text or element.content_desc or element.resource_id or element.class_name
    return f"{_rule_name(o)} ({o.description}) -> {where}" + (f" on {label!r}" if label else "")


def _outcome_json(o: PopupMatch) -> dict:
    e = o.element
    b = e.bounds if e is not None else None
    return {
        "rule": o.rule.id,
        "app": o.app_id,
        "description": o.description,
        "fires": o.fires,
        "action": o.action.describe() if o.action else None,
        "tap": [o.action.point.x, o.action.point.y] if o.action and o.action.point else None,
        "reason": o.reason,
        "element": None
        if e is None
        else {
            "text": e.text,
            "resource_id": e.resource_id,
            "content_desc": e.content_desc,
            "class": e.class_name,
            "bounds": [b.left, b.top, b.right, b.bottom] if b else None,
        },
        "sources": o.rule.sources,
    }
