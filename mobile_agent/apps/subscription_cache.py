"""GKD subscription files read and parsed once per process, keyed by their content.

`run --popup-rules FILE` reads the file once to check it before the phone is touched, then every registry the
process builds reads it again: both get the same parsed object as long as the bytes are the same (a digest of the
content, so a file rewritten within the same second is read anew). The JSON5 parser is pyjson5 (a C extension:
0.02-0.07 s for the largest public subscriptions, against 7-34 s for the pure-Python json5 package).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from mobile_agent.errors import UserError

MAX_BYTES = 32 * 1024 * 1024
KEEP = 8  # parsed files kept per process
HINT = "pass a GKD subscription file (the compiled dist/*.json5 of a rule repository)"

Built = TypeVar("Built")
_BUILT: OrderedDict[tuple[bytes, str], object] = OrderedDict()
_LOCK = threading.Lock()


def read_bytes(path: str | Path) -> tuple[Path, bytes]:
    """The file's bytes. Raises UserError (one line with a hint) when it cannot be read."""
    p = Path(path).expanduser()
    try:
        if p.is_dir():
            raise UserError(f"popup rules file {p} is a folder", HINT)
        if p.stat().st_size > MAX_BYTES:
            raise UserError(f"{p}: larger than {MAX_BYTES // (1024 * 1024)} MB", HINT)
        return p, p.read_bytes()
    except FileNotFoundError:
        raise UserError(f"popup rules file {p} does not exist", HINT) from None
    except OSError as exc:
        raise UserError(f"cannot read popup rules file {p}: {exc.strerror or exc}", HINT) from None


def digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def cached(data: bytes, kind: str, build: Callable[[bytes], Built]) -> Built:
    """``build(data)``, built once per process for the same bytes and kind and shared by every caller."""
    key = (digest(data), kind)
    with _LOCK:
        if key in _BUILT:
            _BUILT.move_to_end(key)
            return _BUILT[key]  # type: ignore[return-value]
    built = build(data)
    with _LOCK:
        _BUILT[key] = built
        while len(_BUILT) > KEEP:
            _BUILT.popitem(last=False)
    return built


def parse_json5(data: bytes, source: str) -> object:
    """The parsed content. Raises UserError."""
    import pyjson5  # only when a subscription is read

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UserError(f"{source} is not UTF-8 text ({exc.reason} at byte {exc.start})", HINT) from None
    try:
        return pyjson5.loads(text)
    except pyjson5.Json5Exception as exc:
        first = str(exc.args[0] if exc.args else exc).splitlines()[0][:200]
        raise UserError(f"{source} is not valid JSON5: {first}", HINT) from None
