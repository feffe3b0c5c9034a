"""Who may use the console: a token printed once at start (a cookie after the first visit), a CSRF token on every
form that changes something, and headers that keep the pages to themselves.

A request with ``?token=`` that matches gets the cookie and is sent to the same address without the token (so it
does not stay in the history or a Referer); without a valid cookie or token it gets 401, with a wrong token 403.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlencode

from mobile_agent.errors import UserError

COOKIE = "mobile_agent_console"
MIN_TOKEN = 16
HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data: blob:; script-src 'self'; "
        b"style-src 'self'; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]


def new_token() -> str:
    return secrets.token_urlsafe(24)


def load_token(path: Path | None) -> str:
    """A new token per start; with ``path``, the token in that file (created, readable only by this user, when
    missing). UserError when the file holds no usable token."""
    if path is None:
        return new_token()
    try:
        if path.exists():
            token = path.read_text(encoding="utf-8").strip()
            if len(token) < MIN_TOKEN or any(c.isspace() for c in token) or not token.isprintable():
                raise UserError(
                    f"the token file {path} holds no usable token (one line of at least {MIN_TOKEN} characters)",
                    "delete it to have a new one written, or put a long random token in it",
                )
            return token
        token = new_token()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(token + "\n")
        return token
    except OSError as exc:
        raise UserError(
            f"cannot use the token file {path}: {exc.strerror or exc}", "pass another --token-file"
        ) from exc


def csrf_token(token: str) -> str:
    """The value every state-changing form carries: derived from the access token, never the token itself."""
    return hmac.new(token.encode(), b"mobile-agent console csrf", hashlib.sha256).hexdigest()[:40]


class TokenGate:
    """ASGI middleware: every HTTP request needs the token (query, once) or its cookie; headers on every reply."""

    def __init__(self, app, token: str) -> None:
        self.app = app
        self.token = token

    def _ok(self, candidate: str | None) -> bool:
        return candidate is not None and hmac.compare_digest(candidate.encode(), self.token.encode())

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        cookie = _cookie(scope, COOKIE)
        given = query.get("token")
        if given is not None:
            if not self._ok(given):
                await _plain(send, 403, "forbidden: that is not this console's token")
                return
            rest = urlencode([(k, v) for k, v in query.items() if k != "token"])
            location = local_path(scope.get("path", "/")) + (f"?{rest}" if rest else "")
            await send(
                {
                    "type": "http.response.start",
                    "status": 303,
                    "headers": [
                        (b"location", location.encode("latin-1", "replace")),
                        (
                            b"set-cookie",
                            f"{COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/".encode(),
                        ),
                        *HEADERS,
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return
        if not self._ok(cookie):
            status = 403 if cookie is not None else 401
            await _plain(send, status, "unauthorized: open the address the console printed (with ?token=...)")
            return

        async def with_headers(message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        await self.app(scope, receive, with_headers)


def local_path(path: str) -> str:
    """``path`` as a redirect that stays on this console: one leading slash (``//host/x`` and ``/\\host`` would name
    another site), backslashes as ``/`` (browsers read them so), everything else percent-encoded."""
    return "/" + quote(path.replace("\\", "/").lstrip("/"), safe="/:@!$&'()*+,;=-._~")


def _cookie(scope, name: str) -> str | None:
    for key, value in scope.get("headers", []):
        if key == b"cookie":
            for part in value.decode("latin-1").split(";"):
                k, _, v = part.strip().partition("=")
                if k == name:
                    return v
    return None


async def _plain(send, status: int, text: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"), *HEADERS],
        }
    )
    await send({"type": "http.response.body", "body": text.encode()})


def same_origin(headers, host: str) -> bool:
    """A state-changing request comes from the console's own pages: its Origin (else Referer), when the browser
    sends one, names this host. The CSRF field is checked as well, always."""
    origin = headers.get("origin") or headers.get("referer")
    if not origin:
        return True
    rest = origin.split("://", 1)[-1]
    return rest.split("/", 1)[0] == host


__all__ = ["COOKIE", "TokenGate", "csrf_token", "load_token", "local_path", "new_token", "same_origin"]
