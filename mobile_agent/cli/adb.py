"""`mobile-agent adb ARGS...`: the adb that ships with adbutils, against the configured adb server.

``pip install`` puts no ``adb`` on PATH; this command runs the wheel's binary (``adbutils.adb_path()``) with
``-H HOST -P PORT`` of the server the other commands use (--adb, MOBILE_AGENT_ADB, ADB_SERVER_SOCKET,
ANDROID_ADB_SERVER_PORT, the config file), or of adb's own ``-H/-P/-L`` written before the command. adb starts a
server whenever it finds none; this command does not let it, except for ``start-server`` (and ``server``), which
the user asks for by name.
"""

from __future__ import annotations

import os
import subprocess

import typer

from mobile_agent.errors import UserError

ADB_HELP = "adb server HOST:PORT (default: the configured one; adb's own -H/-P/-L work too)."
VALUE_OPTIONS = {"-s", "-t", "-H", "-P", "-L"}  # adb's global options that take a value
STARTS_SERVER = {"start-server", "server", "nodaemon"}
NO_SERVER = {"version", "help", "keygen", "kill-server"}  # need no server (kill-server with none is a no-op)


def split_server(args: list[str]) -> tuple[str | None, str | None, list[str]]:
    """adb's -H HOST / -P PORT / -L tcp:HOST:PORT before the command, taken out; (host, port, the rest)."""
    host = port = None
    rest: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-H", "-P", "-L") and index + 1 < len(args) and not rest_has_command(rest):
            value = args[index + 1]
            if arg == "-H":
                host = value
            elif arg == "-P":
                port = value
            else:
                from mobile_agent.settings.values import adb_from_socket

                host, _, port = adb_from_socket(value).rpartition(":")
            index += 2
            continue
        rest.append(arg)
        index += 1
    return host, port, rest


def rest_has_command(rest: list[str]) -> bool:
    return command_of(rest) is not None


def command_of(args: list[str]) -> str | None:
    """The adb command word (devices, shell, ...) after the global options, if any."""
    index = 0
    while index < len(args):
        if args[index] in VALUE_OPTIONS:
            index += 2
        elif args[index].startswith("-"):
            index += 1
        else:
            return args[index]
    return None


def adb_command(
    ctx: typer.Context,
    adb: str | None = typer.Option(None, "--adb", help=ADB_HELP),
) -> None:
    """Run the adb that ships with mobile-agent against the configured adb server (e.g. `mobile-agent adb devices`)."""
    import adbutils

    from mobile_agent.device.adb_server import check_reachable
    from mobile_agent.device.android import parse_adb_address

    flag_host, flag_port, args = split_server(list(ctx.args))
    host, port = parse_adb_address(adb)
    if flag_host is not None:
        host = flag_host
    if flag_port is not None:
        try:
            port = int(flag_port)
        except ValueError:
            raise UserError(f"-P {flag_port!r} is not a port", "write -P PORT, e.g. -P 5037") from None
    command = command_of(args)
    if command not in STARTS_SERVER and command not in NO_SERVER and command is not None:
        check_reachable(host, port)  # adb would start a server here; we name the command that does instead
    env = dict(os.environ)
    env.pop("ADB_SERVER_SOCKET", None)  # adb refuses -H/-P together with a socket spec
    env["ANDROID_ADB_SERVER_PORT"] = str(port)
    try:
        binary = adbutils.adb_path()
    except Exception as exc:  # noqa: BLE001 - adbutils raises its own errors when the binary is missing
        raise UserError(
            f"the adb binary of adbutils is missing ({exc})", "reinstall: pip install -U adbutils"
        ) from None
    completed = subprocess.run([binary, "-H", host, "-P", str(port), *args], env=env, check=False)
    raise typer.Exit(completed.returncode)


__all__ = ["adb_command", "command_of", "split_server"]
