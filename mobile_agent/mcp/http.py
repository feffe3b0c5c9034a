"""Streamable HTTP for the MCP server: loopback by default, every request with the token.

The token is the console's kind (mobile_agent.console.security: printed once, or kept in a 0600 file); a client
sends it as ``Authorization: Bearer TOKEN``. A request without it gets 401, with a wrong one 403, before the
MCP layer sees it. The SDK's own DNS-rebinding check (Host and Origin must be loopback) stays on for loopback.
"""

from __future__ import annotations

import hmac
import socket
from typing import Any

from mobile_agent.console.security import HEADERS

PATH = "/mcp"


class BearerGate:
    """ASGI middleware: an HTTP request passes only with ``Authorization: Bearer <token>``."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = None
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                scheme, _, rest = value.partition(b" ")
                if scheme.lower() == b"bearer":
                    given = rest.strip()
        if given is None:
            await _plain(
                send, 401, "unauthorized: send the token printed at start as Authorization: Bearer TOKEN"
            )
            return
        if not hmac.compare_digest(given, self.token):
            await _plain(send, 403, "forbidden: that is not this server's token")
            return
        await self.app(scope, receive, send)


async def _plain(send, status: int, text: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"www-authenticate", b'Bearer realm="mobile-agent"'),
                *HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": text.encode()})


def http_app(server: Any, token: str, host: str) -> BearerGate:
    """The SDK's streamable-HTTP app (its session manager runs in the app's lifespan) behind the token."""
    return BearerGate(server.streamable_http_app(streamable_http_path=PATH, host=host), token)


def listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    return sock


def url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{PATH}"


__all__ = ["PATH", "BearerGate", "http_app", "listen", "url"]
