"""`mobile-agent doctor`: set-up checks a newcomer struggles with, each with how to fix a failure."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import typer
from PIL import Image
from rich.markup import escape

from mobile_agent.cli.completion import complete_family, complete_serial
from mobile_agent.cli.output import output_console
from mobile_agent.errors import MobileAgentError, ParseError

console = output_console()


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # ok | fail | skip
    detail: str
    fix: str | None = None


def run_checks(
    *, device: str | None, adb: str | None, base_url: str | None, model: str, family: str
) -> Iterator[Check]:
    yield from _device_checks(device, adb)
    yield from _model_checks(base_url, model, family)
    yield _safety_check()
    yield _font_check()


def _font_check() -> Check:
    """The simulated screens (demo, sim up) and the reports' action labels need a font with Chinese glyphs."""
    from mobile_agent.screen.fonts import FONT_HINT, cjk_font_path

    path = cjk_font_path()
    if path:
        return Check("CJK font", "ok", f"simulated screens and report labels draw Chinese with {path}")
    return Check(
        "CJK font", "skip", "none found: simulated screens and report labels show Chinese as boxes", FONT_HINT
    )


def _safety_check() -> Check:
    """Which way the safety gate reads controls the view tree leaves blind (icon-only, WebView, canvas)."""
    from mobile_agent.screen.ocr import describe_mode, ocr_available

    return Check("safety gate", "ok" if ocr_available() else "skip", describe_mode())


def doctor_command(
    device: str | None = typer.Option(
        None,
        "--device",
        "-d",
        autocompletion=complete_serial,
        help="Phone serial to check (default: ANDROID_SERIAL, else every attached phone).",
    ),
    adb: str | None = typer.Option(None, "--adb", help="adb server HOST:PORT (default: the configured one)."),
    base_url: str | None = typer.Option(
        None, "--base-url", help="Model endpoint to check (default: the configured one)."
    ),
    model: str | None = typer.Option(
        None, "--model", help="Model name it should serve (default: ui-venus-2)."
    ),
    family: str | None = typer.Option(
        None, "--family", autocompletion=complete_family, help="Output format family (default: ui-venus-2)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the checks as one JSON object."),
) -> None:
    """Check the set-up step by step and say how to fix each failure."""
    from mobile_agent.settings.values import load_settings

    settings = load_settings(
        device=device, adb=adb, base_url=[base_url] if base_url else None, model=model, family=family
    )
    checks = run_checks(
        device=settings.device,
        adb=settings.adb,
        base_url=settings.base_url[0],
        model=settings.model,
        family=settings.family,
    )
    if as_json:
        import json
        from dataclasses import asdict

        found = [asdict(check) for check in checks]
        failed = sum(check["status"] == "fail" for check in found)
        typer.echo(json.dumps({"ok": not failed, "checks": found}, ensure_ascii=False, indent=2))
        raise typer.Exit(1 if failed else 0)
    failed = 0
    for check in checks:
        mark = {"ok": "[green]✓[/]", "fail": "[red]✗[/]", "skip": "[yellow]-[/]"}[check.status]
        console.print(f"{mark} {escape(check.name)}: {escape(check.detail)}")
        if check.status == "fail":
            failed += 1
            if check.fix:
                console.print(f"    [dim]fix: {escape(check.fix)}[/]")
    raise typer.Exit(1 if failed else 0)


def _device_checks(device: str | None, adb: str | None) -> Iterator[Check]:
    from mobile_agent.device.android import ADB_KEYBOARD, AndroidDevice, list_devices, parse_adb_address

    host, port = parse_adb_address(adb)
    try:
        phones = list_devices(adb)
    except MobileAgentError as exc:
        yield Check("adb server", "fail", exc.message, exc.hint)
        return
    yield Check("adb server", "ok", f"{host}:{port} answers, {len(phones)} phone(s) attached")
    if not phones:
        yield Check(
            "phones",
            "fail",
            "no phone attached",
            f"plug one in with USB debugging on, or `mobile-agent adb -H {host} -P {port} connect PHONE_IP:5555`",
        )
        return
    for serial, state in phones:
        if state == "device":
            yield Check(f"phone {serial}", "ok", "authorized")
        elif state == "unauthorized":
            yield Check(
                f"phone {serial}", "fail", "unauthorized", "unlock the phone and accept 'Allow USB debugging'"
            )
        else:
            yield Check(
                f"phone {serial}",
                "fail",
                state,
                f"replug the cable or run `mobile-agent adb -H {host} -P {port} reconnect`",
            )
    ready = [s for s, st in phones if st == "device"]
    targets = [device] if device else ready
    for serial in targets:
        dev = AndroidDevice(serial, adb=adb)
        try:
            info = dev.server_info()
            yield Check(
                f"{serial} u2 server",
                "ok",
                f"started ({info.get('productName', '?')}, sdk {info.get('sdkInt', '?')})",
            )
        except MobileAgentError as exc:
            yield Check(
                f"{serial} u2 server", "fail", exc.message, exc.hint or "run `python -m uiautomator2 init`"
            )
            continue
        try:
            imes = dev.ime_list()
            how = "AdbKeyboard" if ADB_KEYBOARD in imes else "clipboard paste (AdbKeyboard not installed)"
            yield Check(f"{serial} text input", "ok", f"Chinese text goes through {how}")
        except MobileAgentError as exc:
            yield Check(f"{serial} text input", "fail", exc.message, exc.hint)


def _model_checks(base_url: str | None, model: str, family_name: str) -> Iterator[Check]:
    from mobile_agent.actions import Size
    from mobile_agent.model.base import PromptOptions
    from mobile_agent.model.client import ModelClient
    from mobile_agent.model.families import get_family
    from mobile_agent.model.images import Geometry, prepare_image

    if not base_url:
        yield Check("model endpoint", "skip", "no --base-url given")
        return
    try:
        family = get_family(family_name)
    except MobileAgentError as exc:
        yield Check("model family", "fail", exc.message, exc.hint)
        return
    client = ModelClient([base_url], model, timeout=30.0, max_retries=1)
    try:
        served = client.list_models()
    except MobileAgentError as exc:
        yield Check("model endpoint", "fail", exc.message, exc.hint or "is vLLM running? check --base-url")
        return
    yield Check("model endpoint", "ok", f"{base_url} answers")
    if model in served:
        yield Check("model name", "ok", f"{model!r} is served")
    else:
        yield Check(
            "model name",
            "fail",
            f"{model!r} is not served (served: {', '.join(served) or 'none'})",
            "pass --model with one of the served names (vLLM: --served-model-name)",
        )
        return
    blank = Image.new("RGB", (1080, 2400), "white")
    prepared = prepare_image(blank, family)
    messages = family.build_messages("打开设置", [], prepared, options=PromptOptions())
    try:
        reply = client.complete(messages)
    except MobileAgentError as exc:
        yield Check("model reply", "fail", exc.message, exc.hint)
        return
    try:
        parsed = family.parse(
            reply.text, Geometry(device=Size(1080, 2400), image=prepared.size), reasoning=reply.reasoning
        )
        yield Check("model reply", "ok", f"parsed as {parsed.action.describe()} in {reply.latency_s:.1f} s")
    except ParseError as exc:
        yield Check(
            "model reply",
            "fail",
            f"the {family_name} parser rejects the reply: {exc.message}",
            "check --family matches the served model, and that thinking / the reasoning parser are on",
        )
