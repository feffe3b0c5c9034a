"""`mobile-agent console`: the web console over the store (phones, runs, episodes, the inbox), on loopback.

It prints exactly one line, ``console: http://HOST:PORT/?token=TOKEN``; open it in a browser (the token becomes a
cookie). Binding anything but loopback prints a warning on stderr: put the console behind TLS then.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import typer

from mobile_agent.cli.farm_options import DbOpt
from mobile_agent.console.security import load_token
from mobile_agent.errors import UserError


def console_command(
    db: str | None = DbOpt,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (default loopback only)."),
    port: int = typer.Option(8765, "--port", min=0, max=65535, help="Port (0: any free port)."),
    token_file: Path | None = typer.Option(
        None, "--token-file", help="Keep the access token in this file (created 0600 when missing)."
    ),
    user: str | None = typer.Option(
        None, "--user", help="Who answers from this console (default: the OS user)."
    ),
    adb: str | None = typer.Option(
        None, "--adb", help="adb server (HOST:PORT) of phones outside the farm, for the live page."
    ),
    live_fps: float = typer.Option(
        8.0, "--live-fps", min=0.5, max=30.0, help="Most frames a second the live page takes from a phone."
    ),
) -> None:
    """Serve the web console: phones (with a live screen to watch and control), runs with progress, episodes step
    by step, and the inbox to answer."""
    import uvicorn

    from mobile_agent.console.app import console_url, create_app, is_loopback
    from mobile_agent.farm.inbox import os_user
    from mobile_agent.store.store import TrajectoryStore

    if adb is not None:
        from mobile_agent.device.adb_server import parse_adb_address

        parse_adb_address(adb)  # a UserError (exit 2, one line) before anything listens
    token = load_token(token_file)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UserError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}", "pick another --port"
        ) from exc
    sock.listen(128)
    bound = sock.getsockname()[1]
    with TrajectoryStore.open(db) as store:
        app = create_app(store, token, user=user or os_user(), adb=adb, live_fps=live_fps)
        if not is_loopback(host):
            print(
                f"warning: the console listens on {host}, not only this machine: put it behind TLS (a reverse "
                "proxy with HTTPS) so the token and the pages cannot be read on the network",
                file=sys.stderr,
            )
        print(f"console: {console_url(host, bound, token)}", flush=True)
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
        try:
            uvicorn.Server(config).run(sockets=[sock])
        finally:
            sock.close()


__all__ = ["console_command"]
