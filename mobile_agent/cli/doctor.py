"""`mobile-agent doctor`: set-up checks a newcomer struggles with, each with how to fix a failure."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import typer
from PIL import Image
from rich.console import Console
from rich.markup import escape

from mobile_agent.errors import MobileAgentError, ParseError

console = Console()


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


def _safety_check() -> Check:
    """Which way the safety gate reads controls the view tree leaves blind (icon-only, WebView, canvas)."""
    from mobile_agent.screen.ocr import describe_mode, ocr_available

    return Check("safety gate", "ok" if ocr_available() else "skip", describe_mode())


def doctor_command(
    device: str | None = typer.Option(None, "--device", "-d"),
    adb: str | None = typer.Option(None, "--adb", envvar="MOBILE_AGENT_ADB"),
    base_url: str = typer.Option(
        "http://127.0.0.1:8000/v1",
        "--base-url",
        envvar="MOBILE_AGENT_BASE_URL",
        help="Model endpoint to check.",
    ),
    model: str = typer.Option("ui-venus-2", "--model", envvar="MOBILE_AGENT_MODEL"),
    family: str = typer.Option("ui-venus-2", "--family", envvar="MOBILE_AGENT_FAMILY"),
) -> None:
    """Check the set-up step by step and say how to fix each failure."""
    failed = 0
    for check in run_checks(device=device, adb=adb, base_url=base_url, model=model, family=family):
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
            "plug one in with USB debugging on, or `adb connect HOST:PORT`",
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
            yield Check(f"phone {serial}", "fail", state, "replug the cable or run `adb reconnect`")
    ready = [s for s, st in phones if st == "device"]
    targets = [device] if device else ready
    for serial in targets:
        dev = AndroidDevice(serial, adb=adb)
        try:
            info = dev._rpc("deviceInfo")
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
