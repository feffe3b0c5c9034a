"""The `sync:` service of the simulated adbd: stat, list, push (SEND) and pull (RECV) on the phone's FileSystem.

Requests are a 4-byte id, a little-endian length and a path; see docs in the adb source (file_sync_protocol.h).
Implemented: STAT, STA2, LST2 (stat_v2), LIST, LIS2 (ls_v2), SEND (v1, creates parent dirs: fixed_push_mkdir),
RECV (v1), QUIT. Anything else answers FAIL and ends the session.
"""

from __future__ import annotations

import errno
import logging
import stat as stat_mod
import struct
from typing import TYPE_CHECKING, Protocol

from mobile_agent.sim.phone.fs import FileStat, FsError, normalize

if TYPE_CHECKING:
    from mobile_agent.sim.phone.phone import Phone

log = logging.getLogger(__name__)

SYNC_DATA_MAX = 64 * 1024
MAX_PATH = 1024
REQUEST = struct.Struct("<4sI")
STAT_V1 = struct.Struct("<III")  # mode, size, mtime
STAT_V2 = struct.Struct("<IQQIIIIQqqq")  # error, dev, ino, mode, nlink, uid, gid, size, atime, mtime, ctime
DENT_V1 = struct.Struct("<IIII")  # mode, size, mtime, namelen
DENT_V2 = struct.Struct("<IQQIIIIQqqqI")  # stat_v2 fields + namelen
SHELL_UID = 2000
SEND_BATCH = 1024 * 1024


class SyncStream(Protocol):
    def recv(self, n: int) -> bytes: ...
    def recv_exact(self, n: int) -> bytes: ...
    def sendall(self, data: bytes) -> None: ...


class _EndSession(Exception):
    pass


def serve_sync(phone: Phone, stream: SyncStream) -> None:
    """Serve sync requests until QUIT, end of stream or an error."""
    session = _SyncSession(phone, stream)
    try:
        while session.serve_one():
            pass
    except _EndSession:
        pass


def _status(ident: bytes, message: str = "") -> bytes:
    encoded = message.encode()
    return ident + struct.pack("<I", len(encoded)) + encoded


def _stat_v2_fields(st: FileStat | None) -> tuple[int, ...]:
    if st is None:
        return (errno.ENOENT, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    nlink = 2 if st.is_dir else 1
    device, inode = 0xFD00, 0
    return (0, device, inode, st.mode, nlink, SHELL_UID, SHELL_UID, st.size, st.mtime, st.mtime, st.mtime)


class _SyncSession:
    def __init__(self, phone: Phone, stream: SyncStream) -> None:
        self.phone = phone
        self.fs = phone.fs
        self.stream = stream

    def _read_request(self) -> tuple[bytes, int] | None:
        first = self.stream.recv(REQUEST.size)
        if not first:
            return None
        header = first + (
            self.stream.recv_exact(REQUEST.size - len(first)) if len(first) < REQUEST.size else b""
        )
        return REQUEST.unpack(header)

    def _fail(self, message: str) -> None:
        self.stream.sendall(_status(b"FAIL", message))
        raise _EndSession

    def serve_one(self) -> bool:
        request = self._read_request()
        if request is None:
            return False
        ident, length = request
        if ident == b"QUIT":
            return False
        if length > MAX_PATH:
            self._fail(f"path too long: {length}")
        path = self.stream.recv_exact(length).decode("utf-8", "replace")
        handler = {
            b"STAT": self._stat,
            b"STA2": self._stat2,
            b"LST2": self._stat2,
            b"LIST": self._list,
            b"LIS2": self._list2,
            b"SEND": self._send,
            b"RECV": self._recv,
        }.get(ident)
        if handler is None:
            self._fail(f"unknown sync command {ident!r}")
        log.debug("sync %s %s", ident.decode("ascii", "replace"), path)
        handler(ident, path)
        return True

    def _stat(self, ident: bytes, path: str) -> None:
        st = self.fs.stat(normalize(path))
        fields = (st.mode, st.size & 0xFFFFFFFF, st.mtime) if st else (0, 0, 0)
        self.stream.sendall(b"STAT" + STAT_V1.pack(*fields))

    def _stat2(self, ident: bytes, path: str) -> None:
        st = self.fs.stat(normalize(path))
        self.stream.sendall(ident + STAT_V2.pack(*_stat_v2_fields(st)))

    def _entries(self, path: str) -> list[tuple[str, FileStat]]:
        full = normalize(path)
        st = self.fs.stat(full)
        if st is None or not st.is_dir:
            return []
        return [(".", st), ("..", st), *self.fs.listdir(full)]

    def _list(self, ident: bytes, path: str) -> None:
        out = bytearray()
        for name, st in self._entries(path):
            encoded = name.encode()
            out += b"DENT" + DENT_V1.pack(st.mode, st.size & 0xFFFFFFFF, st.mtime, len(encoded)) + encoded
        out += b"DONE" + bytes(DENT_V1.size)
        self.stream.sendall(bytes(out))

    def _list2(self, ident: bytes, path: str) -> None:
        out = bytearray()
        for name, st in self._entries(path):
            encoded = name.encode()
            out += b"DNT2" + DENT_V2.pack(*_stat_v2_fields(st), len(encoded)) + encoded
        out += b"DONE" + bytes(DENT_V2.size)
        self.stream.sendall(bytes(out))

    def _send(self, ident: bytes, spec: str) -> None:
        path, _, mode_text = spec.rpartition(",")
        if not path:
            path, mode_text = spec, str(stat_mod.S_IFREG | 0o644)
        try:
            mode = int(mode_text)
        except ValueError:
            mode = stat_mod.S_IFREG | 0o644
        chunks: list[bytes] = []
        while True:
            kind, size = REQUEST.unpack(self.stream.recv_exact(REQUEST.size))
            if kind == b"DATA":
                if size > SYNC_DATA_MAX:
                    self._fail(f"data chunk of {size} bytes is over {SYNC_DATA_MAX}")
                chunks.append(self.stream.recv_exact(size))
            elif kind == b"DONE":
                mtime = size
                break
            else:
                self._fail(f"unexpected {kind!r} during SEND")
        if self.phone.faults.push_fail:
            self._fail(f"couldn't create file: {path}: Read-only file system (simulated fault)")
        full = normalize(path)
        if self.fs.is_dir(full):
            self._fail(f"couldn't create file: {path}: Is a directory")
        try:
            self.fs.write(full, b"".join(chunks), mode=mode, mtime=mtime or None, make_parents=True)
        except FsError as exc:
            self._fail(f"couldn't create file: {path}: {exc.strerror}")
        self.stream.sendall(_status(b"OKAY"))

    def _recv(self, ident: bytes, path: str) -> None:
        try:
            data = self.fs.read(normalize(path))
        except FsError as exc:
            self._fail(exc.strerror or "No such file or directory")
        view = memoryview(data)
        batch = bytearray()
        for start in range(0, len(view), SYNC_DATA_MAX):
            chunk = view[start : start + SYNC_DATA_MAX]
            batch += b"DATA" + struct.pack("<I", len(chunk)) + chunk
            if len(batch) >= SEND_BATCH:
                self.stream.sendall(bytes(batch))
                batch.clear()
        batch += _status(b"DONE")
        self.stream.sendall(bytes(batch))
