"""`mobile-agent mcp`: the farm as an MCP server, over stdio (the default, for desktop clients) or streamable HTTP
(loopback by default, token-protected like the console). Needs the ``mcp`` extra: pip install 'mobile-agent[mcp]'.

Over stdio nothing but the protocol is written on stdout; over HTTP one line is printed,
``mcp: http://HOST:PORT/mcp token: TOKEN``, and clients send ``Authorization: Bearer TOKEN``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import typer

from mobile_agent.cli.farm_options import AdbOpt, DbOpt, DevicesOpt, inventory_path
from mobile_agent.errors import UserError

EXTRA_HINT = "install it with: python3 -m pip install 'mobile-agent[mcp]'"


def mcp_command(
    transport: str = typer.Option("stdio", "--transport", help="stdio (default) or http (streamable HTTP)."),
    host: str = typer.Option("127.0.0.1", "--host", help="HTTP: address to bind (default loopback only)."),
    port: int = typer.Option(8766, "--port", min=0, max=65535, help="HTTP: port (0: any free port)."),
    token_file: Path | None = typer.Option(
        None, "--token-file", help="HTTP: keep the access token in this file (created 0600 when missing)."
    ),
    db: str | None = DbOpt,
    devices: Path | None = DevicesOpt,
    adb: str | None = AdbOpt,
    base_url: list[str] = typer.Option(
        [], "--base-url", envvar="MOBILE_AGENT_BASE_URL", help="run_task's model endpoint(s) (repeatable)."
    ),
    model: str | None = typer.Option(None, "--model", envvar="MOBILE_AGENT_MODEL", help="Served model name."),
    family: str | None = typer.Option(None, "--family", envvar="MOBILE_AGENT_FAMILY", help="Model family."),
    policy: list[str] = typer.Option(
        [], "--policy", help="Safety policy words (ask|deny|allow, KIND@APP=...)."
    ),
    allow: list[str] = typer.Option(
        [], "--allow", help="Allow a consequential KIND or KIND@APP (repeatable)."
    ),
    deny: list[str] = typer.Option([], "--deny", help="Deny a consequential KIND or KIND@APP (repeatable)."),
    ask_timeout: float = typer.Option(
        300.0,
        "--ask-timeout",
        min=1.0,
        help="How long a held action waits for the person's answer (seconds).",
    ),
    max_steps: int = typer.Option(30, "--max-steps", min=1, help="run_task: steps per episode by default."),
) -> None:
    """Serve the farm over MCP: phones and tasks as tools, behind the safety gate and the recorder."""
    _require_sdk()
    if transport not in ("stdio", "http"):
        raise UserError(f"unknown transport {transport!r}", "use --transport stdio or --transport http")
    from mobile_agent.cli.safety import policy_from_options
    from mobile_agent.console.security import load_token

    safety = policy_from_options(policy, allow, deny)
    token = load_token(token_file) if transport == "http" else None
    sock = None
    if transport == "http":
        from mobile_agent.mcp.http import listen

        try:
            sock = listen(host, port)
        except OSError as exc:
            raise UserError(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}", "pick another --port"
            ) from exc
    from mobile_agent.mcp.setup import open_parts

    with open_parts(
        db=db,
        devices=inventory_path(devices),
        adb=adb,
        base_url=base_url,
        model=model,
        family=family,
        safety=safety,
        ask_timeout_s=ask_timeout,
        max_steps=max_steps,
    ) as parts:
        from mobile_agent.mcp.server import build_server

        server = build_server(parts)
        if sock is None:
            import anyio

            anyio.run(server.run_stdio_async)
            return
        _serve_http(server, sock, token or "", host)


def _require_sdk() -> None:
    """UserError (exit 2, one line and the install hint) when the SDK is missing or too old for MCPServer."""
    try:
        importlib.import_module("mcp.server.mcpserver")
    except ImportError as exc:
        raise UserError(
            f"`mobile-agent mcp` needs the MCP SDK, mcp>=2.3 (the mcp extra): {exc}", EXTRA_HINT
        ) from None


def _serve_http(server, sock, token: str, host: str) -> None:
    import uvicorn

    from mobile_agent.console.app import is_loopback
    from mobile_agent.mcp.http import http_app, url

    if not is_loopback(host):
        print(
            f"warning: the MCP server listens on {host}, not only this machine: put it behind TLS (a reverse "
            "proxy with HTTPS) so the token cannot be read on the network",
            file=sys.stderr,
        )
    print(f"mcp: {url(host, sock.getsockname()[1])} token: {token}", flush=True)
    config = uvicorn.Config(
        http_app(server, token, host), log_level="warning", access_log=False, lifespan="on"
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()


__all__ = ["mcp_command"]
