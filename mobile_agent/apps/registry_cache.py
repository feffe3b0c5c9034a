"""The built registry kept on disk between processes, so a new `run` or worker skips parsing every manifest.

Parsing and validating the shipped manifests costs ~60 ms of CPU on each start; loading the pickled result costs
~3 ms. An entry is found by a key over everything the build depends on: the folders and the digest of every file
the builder reads there (the caller's signature), this package's version, the Python and pydantic versions, and the
size and modification time of every source file of ``mobile_agent`` (a code change can change what is built). Anything
wrong with an entry — unreadable, corrupt, from another build — means a normal build, and the entry is rewritten.
An entry holds its key beside the build, so a file renamed onto another entry's name (in a folder others may
write) is a miss, not another folder's registry. Entries are named per checkout (a digest of where the package is):
two checkouts of one version — whose files' times and paths differ, so do their keys — keep an entry each instead
of replacing each other's on every start; a new build replaces only its own checkout's older entry, and at most
``KEEP`` entries of a kind are kept.

Where: ``$MOBILE_AGENT_CACHE``, else ``$XDG_CACHE_HOME/mobile-agent``, else ``~/.cache/mobile-agent``;
``MOBILE_AGENT_CACHE=`` (empty) turns the disk cache off. Entries are only read when this user owns them and no
one else may write them (a pickle runs code when loaded; a symbolic link is never followed), checked on the opened
file so that nothing can be swapped in between the check and the read, and written atomically with mode 0600.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import pickle
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, TypeVar

import mobile_agent

log = logging.getLogger(__name__)

CACHE_ENV = "MOBILE_AGENT_CACHE"
KEEP = 8  # entries of one kind (the checkouts last used)
FORMAT = 2  # bump when what is stored changes shape in a way the source fingerprint would not catch
Built = TypeVar("Built")


def cache_dir() -> Path | None:
    """The folder the disk cache uses, or None when it is turned off."""
    named = os.environ.get(CACHE_ENV)
    if named is not None:
        return Path(named).expanduser() if named.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "mobile-agent"


def _source_fingerprint() -> list[tuple[str, int, int]]:
    """(path, mtime_ns, size) of every module of the package: ~240 stat calls, under a millisecond."""
    found: list[tuple[str, int, int]] = []

    def walk(folder: str) -> None:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        walk(entry.path)
                elif entry.name.endswith(".py"):
                    info = entry.stat()
                    found.append((entry.path, info.st_mtime_ns, info.st_size))

    for root in mobile_agent.__path__:
        walk(root)
    return sorted(found)


def entry_key(signature: tuple) -> str:
    import pydantic  # the manifests' validation is pydantic's: another release may build them differently

    parts = (
        FORMAT,
        mobile_agent.__version__,
        sys.version,
        pydantic.VERSION,
        signature,
        _source_fingerprint(),
    )
    return hashlib.blake2b(repr(parts).encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


_OPEN_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
)


def _trusted(info: os.stat_result) -> bool:
    """A plain file of this user's, one name only (no hard link of it elsewhere), nobody else may write."""
    owned = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    return (
        owned
        and stat.S_ISREG(info.st_mode)
        and info.st_nlink == 1
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


def _open_trusted(path: Path) -> BinaryIO | None:
    """The entry opened for reading when it is trusted; decided on the opened file (O_NOFOLLOW: a symbolic link
    is refused by the kernel, O_NONBLOCK: a FIFO does not hang), so a swap after the check changes nothing."""
    if path.is_symlink():  # also where O_NOFOLLOW does not exist
        log.warning("ignoring the cache entry %s: it is a symbolic link", path)
        return None
    try:
        handle = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            log.warning("ignoring the cache entry %s: it is a symbolic link", path)
            return None
        raise
    if not _trusted(os.fstat(handle)):
        os.close(handle)
        log.warning("ignoring the cache entry %s: not a plain file of yours that only you may write", path)
        return None
    return os.fdopen(handle, "rb")


def _read(path: Path, key: str, kind: type) -> object | None:
    try:
        stored = _open_trusted(path)
        if stored is None:
            return None
        with stored:
            entry = pickle.load(stored)
    except FileNotFoundError:
        return None
    except Exception as exc:  # a torn or foreign entry is a miss, never an error: the build is the truth
        log.info("cache entry %s unusable (%s): building again", path, exc)
        return None
    if not (isinstance(entry, tuple) and len(entry) == 2 and entry[0] == key):
        log.info("cache entry %s holds another build: building again", path)
        return None
    return entry[1] if isinstance(entry[1], kind) else None


def _write(path: Path, key: str, value: object) -> None:
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # mode 0600
        try:
            with os.fdopen(handle, "wb") as out:
                pickle.dump((key, value), out, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except Exception as exc:  # a read-only or full disk costs the next start its time, nothing else
        log.info("could not write the cache entry %s: %s", path, exc)


def checkout() -> str:
    """Which copy of the package this is: a digest of the folders it is imported from."""
    where = repr(sorted(os.path.realpath(p) for p in mobile_agent.__path__))
    return hashlib.blake2b(where.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


def _drop_stale(folder: Path, prefix: str, scope: str, keep: Path) -> None:
    """This checkout's older entries, and beyond KEEP entries of the kind, the least recently written."""
    try:
        for old in folder.glob(f"{prefix}-{scope}-*.pickle"):
            if old != keep:
                old.unlink(missing_ok=True)
        entries = sorted(folder.glob(f"{prefix}-*.pickle"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in entries[KEEP:]:
            if old != keep:
                old.unlink(missing_ok=True)
    except OSError:
        pass


def cached(prefix: str, signature: tuple, kind: type[Built], build: Callable[[], Built]) -> Built:
    """What ``build()`` returns for this ``signature``: from the disk cache when an entry matches, else built and
    stored (replacing this checkout's older entry of the kind). Errors from ``build`` pass through and nothing is stored."""
    folder = cache_dir()
    if folder is None:
        return build()
    key, scope = entry_key(signature), checkout()
    path = folder / f"{prefix}-{scope}-{key}.pickle"
    found = _read(path, key, kind)
    if found is not None:
        return found  # type: ignore[return-value]
    value = build()
    _write(path, key, value)
    _drop_stale(folder, prefix, scope, path)
    return value


__all__ = ["CACHE_ENV", "KEEP", "cache_dir", "cached", "checkout", "entry_key"]
