"""Screen, hierarchy and the u2 server: screencap, `uiautomator dump` and `app_process` (the u2 server's launch)."""

from __future__ import annotations

import io

from PIL import Image

from mobile_agent.sim.phone.fs import normalize
from mobile_agent.sim.shell.sh import CommandTable, Ctx

U2_MAIN_CLASS = "com.wetest.uia2.Main"

COMMANDS = CommandTable()


def _png_to_raw(png: bytes) -> bytes:
    image = Image.open(io.BytesIO(png)).convert("RGBA")
    header = image.width.to_bytes(4, "little") + image.height.to_bytes(4, "little")
    return header + (1).to_bytes(4, "little") + (0).to_bytes(4, "little") + image.tobytes()


@COMMANDS.register("screencap")
def _screencap(ctx: Ctx) -> int:
    flags: set[str] = set()
    rest: list[str] = []
    args = iter(ctx.args[1:])
    for arg in args:
        if arg == "-d":
            next(args, None)  # display id: the simulated phone has one display
        elif arg.startswith("-"):
            flags.add(arg)
        else:
            rest.append(arg)
    if ctx.phone.faults.screenshot_fail:
        return ctx.fail("screencap: Capturing failed.")
    try:
        png = ctx.phone.screenshot("png")
    except Exception as exc:
        return ctx.fail(f"screencap: Capturing failed: {exc}")
    as_png = "-p" in flags or (rest and rest[0].endswith(".png"))
    data = png if as_png else _png_to_raw(png)
    if rest:
        ctx.phone.fs.write(normalize(rest[0]), data)
    else:
        ctx.out(data)
    return 0


XML_DECLARATION = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"


@COMMANDS.register("uiautomator")
def _uiautomator(ctx: Ctx) -> int:
    args = ctx.args[1:]
    if not args or args[0] != "dump":
        return ctx.fail("Usage: uiautomator <subcommand> [options]\n  dump [--compressed] [file]")
    files = [a for a in args[1:] if not a.startswith("-")]
    target = files[0] if files else "/sdcard/window_dump.xml"
    xml = ctx.phone.hierarchy_xml()
    if not xml.lstrip().startswith("<?xml"):
        xml = XML_DECLARATION + xml
    if target in ("/dev/tty", "/dev/stdout"):
        ctx.out(xml)
    else:
        ctx.phone.fs.write(normalize(target), xml.encode())
    ctx.out(f"UI hierchary dumped to: {target}\n")
    return 0


@COMMANDS.register("app_process")
def _app_process(ctx: Ctx) -> int:
    args = ctx.args[1:]
    main_class = next((a for a in args if not a.startswith("-") and not a.startswith("/")), None)
    classpath = ctx.env.get("CLASSPATH", "")
    if main_class != U2_MAIN_CLASS or not classpath or not ctx.phone.fs.exists(normalize(classpath)):
        return ctx.fail(f"Error: Could not find class '{main_class}'")
    error = ctx.phone.u2_start()
    if error:
        ctx.out(error if error.endswith("\n") else error + "\n")
        return 1
    ctx.out("[server] INFO: [UiAutomator2Server] Starting Server\n")
    ctx.io.flush()
    # The server lives as long as this shell stream (pitfall 10), and the stream ends when the server dies.
    while ctx.phone.u2_running and not ctx.io.hangup.wait(0.5):
        pass
    if ctx.io.hangup.is_set():
        ctx.phone.u2_stop()
        return 137
    return 1
