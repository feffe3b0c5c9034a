"""Whether a model endpoint's base URL can name a server at all, checked before anything is sent: a malformed URL
is the caller's mistake (one line, exit 2), not an endpoint that is down (retries, exit 1)."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import SplitResult, urlsplit

from mobile_agent.errors import UserError
from mobile_agent.privacy.redact import redact_url

URL_HINT = "use a base URL such as http://127.0.0.1:8000/v1"
# One DNS label: letters, digits, '-' inside, '_' (seen in internal names); 1-63 characters.
LABEL = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?")


def check_base_url(url: str) -> SplitResult:
    """The parts of ``url``; UserError when it is not an http(s) URL with a host that could exist and a valid
    port. The URL is shown with its password masked."""
    shown = redact_url(url) if url.isprintable() else repr(url)
    if not url.isprintable() or any(ch.isspace() for ch in url):
        raise UserError(f"model endpoint {shown!r} holds spaces or control characters", hint=URL_HINT)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UserError(f"model endpoint {shown!r} is not a valid URL ({exc})", hint=URL_HINT) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"model endpoint {shown!r} is not an http(s) URL", hint=URL_HINT)
    if not valid_host(parts.hostname):
        raise UserError(f"model endpoint {shown!r} names no valid host ({parts.hostname!r})", hint=URL_HINT)
    if port == 0:
        raise UserError(f"model endpoint {shown!r} is not a valid URL (port 0)", hint=URL_HINT)
    return parts


def valid_host(host: str) -> bool:
    """An IP address, or a host name whose every label is a DNS label (a trailing dot allowed)."""
    try:
        ipaddress.ip_address(host.split("%", 1)[0] if ":" in host else host)
        return True
    except ValueError:
        pass
    name = host[:-1] if host.endswith(".") else host
    if not name or len(name) > 253:
        return False
    labels = name.split(".")
    if all(label.isdigit() for label in labels):  # 1.2.3.4.5: digits that are no address
        return False
    return all(LABEL.fullmatch(label) for label in labels)


__all__ = ["URL_HINT", "check_base_url", "valid_host"]
