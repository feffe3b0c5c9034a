"""The sync: service over the wire: STAT/STA2/LST2, LIST/LIS2, SEND, RECV, FAIL."""

from __future__ import annotations

import os
import stat
import struct

import pytest
from raw_adb_client import RawAdbClient, RawStream
from sim_wire_fakes import FakePhone

from mobile_agent.sim.wire.adbd import AdbdServer


@pytest.fixture
def sync():
    phone = FakePhone()
    srv = AdbdServer(phone).start()
    client = RawAdbClient(srv.port)
    client.connect()
    stream = RawStream(client, "sync:")
    stream.phone = phone
    yield stream
    client.close()
    srv.stop()


def request(ident: bytes, path: str) -> bytes:
    encoded = path.encode()
    return ident + struct.pack("<I", len(encoded)) + encoded


def push(stream: RawStream, path: str, data: bytes, mode: int = 0o644, mtime: int = 1700000000) -> bytes:
    body = bytearray(request(b"SEND", f"{path},{stat.S_IFREG | mode}"))
    for start in range(0, len(data), 65536):
        chunk = data[start : start + 65536]
        body += b"DATA" + struct.pack("<I", len(chunk)) + chunk
    body += b"DONE" + struct.pack("<I", mtime)
    stream.write(bytes(body), chunk=256 * 1024)
    return stream.read_exact(8)


def pull(stream: RawStream, path: str) -> bytes:
    stream.write(request(b"RECV", path))
    out = bytearray()
    while True:
        ident, size = struct.unpack("<4sI", stream.read_exact(8))
        if ident == b"DONE":
            return bytes(out)
        assert ident == b"DATA", ident
        assert size <= 65536
        out += stream.read_exact(size)


def test_push_then_pull_is_byte_identical_and_creates_parents(sync):
    data = os.urandom(3 * 1024 * 1024 + 7)
    assert push(sync, "/sdcard/new/dir/file.bin", data) == b"OKAY\0\0\0\0"
    assert pull(sync, "/sdcard/new/dir/file.bin") == data
    st = sync.phone.fs.stat("/sdcard/new/dir/file.bin")
    assert st.size == len(data) and st.mtime == 1700000000 and stat.S_IMODE(st.mode) == 0o644


def test_stat_v1_and_v2(sync):
    sync.phone.fs.write("/sdcard/f", b"12345", mtime=1600000000)
    sync.write(request(b"STAT", "/sdcard/f"))
    ident, mode, size, mtime = struct.unpack("<4sIII", sync.read_exact(16))
    assert (ident, stat.S_ISREG(mode), size, mtime) == (b"STAT", True, 5, 1600000000)
    sync.write(request(b"STAT", "/missing"))
    assert struct.unpack("<4sIII", sync.read_exact(16)) == (b"STAT", 0, 0, 0)
    for ident in (b"STA2", b"LST2"):
        sync.write(request(ident, "/sdcard/f"))
        fields = struct.unpack("<4sIQQIIIIQqqq", sync.read_exact(72))
        assert fields[0] == ident and fields[1] == 0 and fields[8] == 5 and fields[10] == 1600000000
    sync.write(request(b"STA2", "/missing"))
    assert struct.unpack("<4sI", sync.read_exact(72)[:8]) == (b"STA2", 2)  # ENOENT


def test_list_v1_and_v2(sync):
    sync.phone.fs.write("/sdcard/d/a", b"1", make_parents=True)
    sync.phone.fs.write("/sdcard/d/b", b"22")
    sync.write(request(b"LIST", "/sdcard/d"))
    names = []
    while True:
        ident = sync.read_exact(4)
        if ident == b"DONE":
            sync.read_exact(16)
            break
        mode, size, mtime, namelen = struct.unpack("<IIII", sync.read_exact(16))
        names.append((sync.read_exact(namelen).decode(), size))
    assert names[2:] == [("a", 1), ("b", 2)] and [n for n, _ in names[:2]] == [".", ".."]
    sync.write(request(b"LIS2", "/sdcard/d"))
    names = []
    while True:
        ident = sync.read_exact(4)
        rest = sync.read_exact(72)
        if ident == b"DONE":
            break
        names.append(sync.read_exact(struct.unpack_from("<I", rest, 68)[0]).decode())
    assert names == [".", "..", "a", "b"]


def test_pull_missing_file_fails_with_a_message(sync):
    sync.write(request(b"RECV", "/nope"))
    ident, size = struct.unpack("<4sI", sync.read_exact(8))
    assert ident == b"FAIL" and sync.read_exact(size) == b"No such file or directory"


def test_push_fault_answers_fail(sync):
    sync.phone.faults.push_fail = True
    reply = push(sync, "/data/local/tmp/u2.jar", b"x" * 1000)
    assert reply[:4] == b"FAIL"
    assert not sync.phone.fs.exists("/data/local/tmp/u2.jar")


def test_unknown_request_fails_and_ends_the_session(sync):
    sync.write(request(b"WHAT", "/x"))
    assert sync.read_exact(4) == b"FAIL"
    sync.wait_closed()


def test_oversized_data_chunk_fails(sync):
    sync.write(request(b"SEND", "/sdcard/x,33188") + b"DATA" + struct.pack("<I", 70000))
    assert sync.read_exact(4) == b"FAIL"
