"""Keep secrets out of everything the runtime writes or prints: the store, logs, reports, exports, the terminal.

Two layers, so that a secret is caught even where nobody thought of it:

- *known* secrets: every API key, URL password and secret query value the process was given is registered
  (``register_secret``, done by ``ModelClient`` and by ``secrets_in_url``) and replaced wherever it appears, in any
  text, also URL-encoded; that catches an endpoint that echoes the Authorization header back in an error body;
- *shapes* of secrets: ``Bearer <token>``, ``Authorization: <value>``, ``api_key=<value>`` (any secret-looking
  name), and the userinfo and secret query parameters of every URL in a text.

``redact_text`` applies both; the store applies it to every value it sends to the database, and once a secret is
known every log record of the process passes it too (``install_log_redaction``): the HTTP libraries underneath log
request URLs, user:password included.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any
from urllib.parse import SplitResult, parse_qsl, quote, quote_plus, urlencode, urlsplit

MASK = "***"

# Whole words (after splitting snake_case, kebab-case and camelCase) that mark a key as secret. Whole words, so
# that "max_tokens" or "prompt_tokens" are kept while "access_token" is dropped.
_SECRET_WORDS = frozenset(
    {"token", "secret", "password", "passwd", "pwd", "authorization", "apikey", "credential", "credentials"}
)
_SECRET_PAIRS = frozenset({("api", "key"), ("private", "key"), ("access", "key"), ("secret", "key")})
# In a URL's query a bare "key", a signature or an auth value is a credential too (Google-style ?key=...).
_SECRET_QUERY_NAMES = frozenset({"key", "sig", "signature", "auth", "code", "session"})
_WORD_SPLIT = re.compile(r"[^0-9a-zA-Z]+|(?<=[a-z0-9])(?=[A-Z])")

# Shapes: the value runs to whitespace, a quote, a comma or a separator of query strings and JSON.
_VALUE = r"[^\s\"'<>&,;}\]\\]+"
_BEARER = re.compile(r"(?i)\b(bearer)(\s+)([A-Za-z0-9._~+/=\-]{6,})")
_AUTH_HEADER = re.compile(
    r"(?i)\b((?:proxy-)?authorization|x-api-key|api-key)(\"?\s*[:=]\s*\"?(?:bearer\s+|basic\s+)?)("
    + _VALUE
    + ")"
)
_NAMED_VALUE = re.compile(
    r"(?i)\b([a-z0-9_\-]*(?:key|token|secret|password|passwd|pwd|sig|signature))(=)(" + _VALUE + ")"
)
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s\"'<>]+")
# What a hint or an example writes where the value goes (``key=value``, ``api_key=YOUR_KEY``, ``token=$TOKEN``,
# ``password=...``): kept, so that the help in an error message survives; a real secret is none of these.
_PLACEHOLDER_VALUE = re.compile(
    r"(?i)(?:(?:your|my|the)[_-]?)?(?:api[_-]?)?(?:key|token|secret|password|value|name|word|kind|action)s?"
    r"|\.\.\.|…|\*+|x+|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?"
)

# Secrets shorter than this are not searched for in free text: "EMPTY" or "x" would mask ordinary words.
_MIN_KNOWN = 6
_PLACEHOLDERS = frozenset({"EMPTY", "none", "None", "null", "sk-no-key-required", "dummy"})

_known: set[str] = set()
_known_lock = threading.Lock()
_known_pattern: re.Pattern[str] | None = None


def is_secret_key(name: str) -> bool:
    words = [w.lower() for w in _WORD_SPLIT.split(name) if w]
    if any(w in _SECRET_WORDS for w in words):
        return True
    return any(pair in _SECRET_PAIRS for pair in zip(words, words[1:], strict=False))


def _is_secret_query_name(name: str) -> bool:
    return is_secret_key(name) or name.lower() in _SECRET_QUERY_NAMES


def register_secret(value: str | None) -> None:
    """Remember ``value`` as a secret of this process: it is masked wherever it later appears."""
    global _known_pattern
    install_log_redaction()
    if not value or len(value) < _MIN_KNOWN or value in _PLACEHOLDERS:
        return
    forms = {value, quote(value, safe=""), quote_plus(value)}
    with _known_lock:
        if forms <= _known:
            return
        _known.update(forms)
        ordered = sorted(_known, key=len, reverse=True)  # the longest first, so no secret is half-masked
        _known_pattern = re.compile("|".join(re.escape(s) for s in ordered))


_log_redaction_installed = False


def install_log_redaction() -> None:
    """Every log record created from now on, by any library, carries its message (and traceback) redacted."""
    global _log_redaction_installed
    with _known_lock:
        if _log_redaction_installed:
            return
        _log_redaction_installed = True
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string is logging's to report, not ours
            return record
        cleaned = redact_text(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and record.exc_info[0] is not None:
            record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
        return record

    logging.setLogRecordFactory(factory)


def secrets_in_url(url: str) -> list[str]:
    """The password, the user and the secret query values of ``url``, each registered as a secret."""
    try:
        parts = urlsplit(url)
        found = [parts.password, parts.username] if "@" in parts.netloc else []
        found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if _is_secret_query_name(k)]
    except ValueError:
        return []
    values = [v for v in found if v]
    for value in values:
        register_secret(value)
    return values


def redact_url(url: str) -> str:
    """``scheme://user:secret@host/p?api_key=k&x=1`` -> ``scheme://***@host/p?api_key=***&x=1``."""
    try:
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        return _redact_known(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    secret_query = any(_is_secret_query_name(k) for k, _ in query)
    if netloc == parts.netloc and not secret_query:
        return _redact_known(url)  # as written: urlunsplit drops the empty host of sqlite:////abs/path
    new_query = parts.query
    if secret_query:
        masked = [(k, MASK if _is_secret_query_name(k) else v) for k, v in query]
        new_query = urlencode(masked, safe="*")
    return _redact_known(_unsplit(url, parts._replace(netloc=netloc, query=new_query)))


def _unsplit(original: str, parts: SplitResult) -> str:
    """``parts`` as a URL with ``original``'s scheme spelling and its ``//`` kept even around an empty host."""
    scheme = original[: len(parts.scheme)]
    rest = original[len(parts.scheme) + 1 :]
    out = f"{scheme}://{parts.netloc}" if rest.startswith("//") else f"{scheme}:{parts.netloc}"
    out += parts.path
    if parts.query:
        out += f"?{parts.query}"
    if parts.fragment:
        out += f"#{parts.fragment}"
    return out


def _redact_known(text: str) -> str:
    pattern = _known_pattern
    return pattern.sub(MASK, text) if pattern is not None else text


def redact_text(text: str) -> str:
    """``text`` with every known secret and every secret-shaped value masked."""
    if not text:
        return text
    text = _redact_known(text)
    if "://" in text:
        text = _URL.sub(lambda m: redact_url(m.group(0)), text)
    text = _AUTH_HEADER.sub(lambda m: m.group(1) + m.group(2) + MASK, text)
    text = _BEARER.sub(lambda m: m.group(1) + m.group(2) + MASK, text)
    return _NAMED_VALUE.sub(_mask_named, text)


def _mask_named(match: re.Match[str]) -> str:
    value = match.group(3)
    if _PLACEHOLDER_VALUE.fullmatch(value) and value not in _known:
        return match.group(0)
    return match.group(1) + match.group(2) + MASK


def scrub_secrets(value: Any) -> Any:
    """A copy of ``value`` (JSON-like) without secret-looking keys, at any depth; strings redacted."""
    if isinstance(value, dict):
        return {str(k): scrub_secrets(v) for k, v in value.items() if not is_secret_key(str(k))}
    if isinstance(value, (list, tuple)):
        return [scrub_secrets(v) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value


__all__ = [
    "MASK",
    "install_log_redaction",
    "is_secret_key",
    "redact_text",
    "redact_url",
    "register_secret",
    "scrub_secrets",
    "secrets_in_url",
]
