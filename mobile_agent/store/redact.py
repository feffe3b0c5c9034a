"""Keep secrets out of the database: drop secret-looking keys from JSON and passwords from URLs."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

# Whole words (after splitting snake_case, kebab-case and camelCase) that mark a key as secret. Whole words, so
# that "max_tokens" or "prompt_tokens" are kept while "access_token" is dropped.
_SECRET_WORDS = frozenset(
    {"token", "secret", "password", "passwd", "pwd", "authorization", "apikey", "credential", "credentials"}
)
_SECRET_PAIRS = frozenset({("api", "key"), ("private", "key"), ("access", "key"), ("secret", "key")})
_WORD_SPLIT = re.compile(r"[^0-9a-zA-Z]+|(?<=[a-z0-9])(?=[A-Z])")


def is_secret_key(name: str) -> bool:
    words = [w.lower() for w in _WORD_SPLIT.split(name) if w]
    if any(w in _SECRET_WORDS for w in words):
        return True
    return any(pair in _SECRET_PAIRS for pair in zip(words, words[1:], strict=False))


def scrub_secrets(value: Any) -> Any:
    """A copy of ``value`` (JSON-like) without secret-looking keys, at any depth; URL passwords masked."""
    if isinstance(value, dict):
        return {str(k): scrub_secrets(v) for k, v in value.items() if not is_secret_key(str(k))}
    if isinstance(value, (list, tuple)):
        return [scrub_secrets(v) for v in value]
    if isinstance(value, str) and "://" in value and "@" in value:
        return redact_url(value)
    return value


def redact_url(url: str) -> str:
    """``scheme://user:secret@host/...`` -> ``scheme://user:***@host/...``; anything else unchanged."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if parts.password is None:
        return url
    userinfo, _, hostinfo = parts.netloc.rpartition("@")
    user = userinfo.split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{hostinfo}"))


__all__ = ["is_secret_key", "redact_url", "scrub_secrets"]
