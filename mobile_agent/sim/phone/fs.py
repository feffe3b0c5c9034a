"""The simulated phone's file system: an in-memory tree of directories and files.

Used by the shell emulator (ls, cat, rm, mkdir, redirections, md5sum) and by the sync service (push, pull, stat,
list). Paths are absolute POSIX paths; relative paths are resolved against "/" like an `adb shell` session.
"""

from __future__ import annotations

import posixpath
import stat as stat_mod
import threading
import time
from dataclasses import dataclass, field

DEFAULT_DIRS = (
    "/data/local/tmp",
    "/sdcard/Download",
    "/sdcard/DCIM",
    "/sdcard/Pictures",
    "/system/bin",
    "/system/app",
    "/storage/emulated/0",
    "/proc",
    "/dev",
)


class FsError(OSError):
    """A file operation failed; ``strerror`` matches the Android toybox wording."""


def _not_found(path: str) -> FsError:
    return FsError(2, "No such file or directory", path)


@dataclass
class FileStat:
    mode: int  # full st_mode, type bits included
    size: int
    mtime: int  # seconds since the epoch

    @property
    def is_dir(self) -> bool:
        return stat_mod.S_ISDIR(self.mode)

    @property
    def is_file(self) -> bool:
        return stat_mod.S_ISREG(self.mode)


@dataclass
class _Node:
    mode: int
    mtime: int
    data: bytes = b""
    children: dict[str, _Node] = field(default_factory=dict)

    @property
    def is_dir(self) -> bool:
        return stat_mod.S_ISDIR(self.mode)

    def stat(self) -> FileStat:
        return FileStat(self.mode, 4096 if self.is_dir else len(self.data), self.mtime)


def normalize(path: str, cwd: str = "/") -> str:
    """Absolute, normalized form of ``path`` (no trailing slash except for "/")."""
    joined = posixpath.join(cwd, path) if path else cwd
    normalized = posixpath.normpath(joined)
    return "/" + normalized.lstrip("/") if normalized != "/" else "/"


class FileSystem:
    """Thread-safe in-memory file system with the handful of operations adb and the shell need."""

    def __init__(self, dirs: tuple[str, ...] = DEFAULT_DIRS) -> None:
        self._lock = threading.Lock()
        self._root = _Node(stat_mod.S_IFDIR | 0o755, int(time.time()))
        for d in dirs:
            self.mkdir(d, parents=True)

    # --- lookups -------------------------------------------------------------------------------------------
    def _parts(self, path: str) -> list[str]:
        return [p for p in normalize(path).split("/") if p]

    def _find(self, path: str) -> _Node | None:
        node = self._root
        for part in self._parts(path):
            if not node.is_dir:
                return None
            child = node.children.get(part)
            if child is None:
                return None
            node = child
        return node

    def _parent_and_name(self, path: str, *, make_parents: bool) -> tuple[_Node, str]:
        parts = self._parts(path)
        if not parts:
            raise FsError(21, "Is a directory", path)
        node = self._root
        for part in parts[:-1]:
            child = node.children.get(part)
            if child is None:
                if not make_parents:
                    raise _not_found(path)
                child = node.children[part] = _Node(stat_mod.S_IFDIR | 0o771, int(time.time()))
            elif not child.is_dir:
                raise FsError(20, "Not a directory", path)
            node = child
        return node, parts[-1]

    def stat(self, path: str) -> FileStat | None:
        with self._lock:
            node = self._find(path)
            return node.stat() if node else None

    def exists(self, path: str) -> bool:
        return self.stat(path) is not None

    def is_dir(self, path: str) -> bool:
        st = self.stat(path)
        return bool(st and st.is_dir)

    def listdir(self, path: str) -> list[tuple[str, FileStat]]:
        with self._lock:
            node = self._find(path)
            if node is None:
                raise _not_found(path)
            if not node.is_dir:
                raise FsError(20, "Not a directory", path)
            return sorted((name, child.stat()) for name, child in node.children.items())

    # --- contents ------------------------------------------------------------------------------------------
    def read(self, path: str) -> bytes:
        with self._lock:
            node = self._find(path)
            if node is None:
                raise _not_found(path)
            if node.is_dir:
                raise FsError(21, "Is a directory", path)
            return node.data

    def write(
        self,
        path: str,
        data: bytes,
        *,
        mode: int = 0o644,
        mtime: int | None = None,
        make_parents: bool = False,
        append: bool = False,
    ) -> None:
        with self._lock:
            parent, name = self._parent_and_name(path, make_parents=make_parents)
            existing = parent.children.get(name)
            if existing is not None and existing.is_dir:
                raise FsError(21, "Is a directory", path)
            when = int(time.time()) if mtime is None else mtime
            if append and existing is not None:
                existing.data += data
                existing.mtime = when
                return
            permissions = stat_mod.S_IMODE(mode) or 0o644
            parent.children[name] = _Node(stat_mod.S_IFREG | permissions, when, bytes(data))

    def mkdir(self, path: str, *, parents: bool = False) -> None:
        with self._lock:
            if self._find(path) is not None:
                if parents and self._find(path).is_dir:
                    return
                raise FsError(17, "File exists", path)
            parent, name = self._parent_and_name(path, make_parents=parents)
            parent.children[name] = _Node(stat_mod.S_IFDIR | 0o771, int(time.time()))

    def remove(self, path: str, *, recursive: bool = False) -> None:
        with self._lock:
            node = self._find(path)
            if node is None:
                raise _not_found(path)
            if node.is_dir and not recursive:
                raise FsError(21, "Is a directory", path)
            parent, name = self._parent_and_name(path, make_parents=False)
            del parent.children[name]
