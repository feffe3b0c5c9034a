"""The adb wire format: commands, protocol versions, the 24-byte little-endian header with its checksum and magic,
and the AUTH exchange modes a simulated adbd can play. Protocol facts are in docs/device-stack."""

from __future__ import annotations

import enum
import socket
import struct
import time
from dataclasses import dataclass

A_CNXN = 0x4E584E43
A_OPEN = 0x4E45504F
A_OKAY = 0x59414B4F
A_CLSE = 0x45534C43
A_WRTE = 0x45545257
A_AUTH = 0x48545541
A_STLS = 0x534C5453
A_SYNC = 0x434E5953
KNOWN_COMMANDS = {A_CNXN, A_OPEN, A_OKAY, A_CLSE, A_WRTE, A_AUTH, A_STLS, A_SYNC}

VERSION_CHECKSUMMED = 0x01000000  # old devices: payload checksums, 4 KiB payloads
VERSION_SKIP_CHECKSUM = 0x01000001
MAX_PAYLOAD_OLD = 4096
MAX_PAYLOAD = 1024 * 1024

AUTH_TOKEN = 1
AUTH_SIGNATURE = 2
AUTH_RSAPUBLICKEY = 3

HEADER = struct.Struct("<6I")


class AuthMode(str, enum.Enum):
    NONE = "none"  # no AUTH exchange at all (like an eng build)
    ACCEPT = "accept"  # AUTH exchange, every key accepted
    DENY = "deny"  # AUTH exchange, no key accepted: the adb server shows the phone "unauthorized"


class MalformedPacket(Exception):
    pass


@dataclass(frozen=True)
class Packet:
    command: int
    arg0: int
    arg1: int
    payload: bytes = b""

    @property
    def name(self) -> str:
        return struct.pack("<I", self.command).decode("ascii", "replace")


def encode_packet(packet: Packet, *, checksum: bool) -> bytes:
    data_check = sum(packet.payload) & 0xFFFFFFFF if checksum else 0
    header = HEADER.pack(
        packet.command,
        packet.arg0,
        packet.arg1,
        len(packet.payload),
        data_check,
        packet.command ^ 0xFFFFFFFF,
    )
    return header + packet.payload


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    """n bytes, or None at EOF before the first byte. A partial read then EOF is malformed."""
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            if got == 0:
                return None
            raise MalformedPacket(f"connection closed mid-packet ({got}/{n} bytes)")
        got += k
    return bytes(buf)


def read_packet(sock: socket.socket, *, verify_checksum: bool) -> Packet | None:
    header = _recv_exact(sock, HEADER.size)
    if header is None:
        return None
    command, arg0, arg1, length, data_check, magic = HEADER.unpack(header)
    if magic != command ^ 0xFFFFFFFF:
        raise MalformedPacket(f"bad magic {magic:#x} for command {command:#x}")
    if length > MAX_PAYLOAD:
        raise MalformedPacket(f"payload of {length} bytes is over the limit")
    payload = _recv_exact(sock, length) if length else b""
    if length and payload is None:
        raise MalformedPacket("connection closed before the payload")
    if verify_checksum and length and (sum(payload) & 0xFFFFFFFF) != data_check:
        raise MalformedPacket("payload checksum mismatch")
    return Packet(command, arg0, arg1, payload or b"")


def close_socket(sock: socket.socket, *, drain_seconds: float = 0.5, drain_limit: int = 1 << 20) -> None:
    """Close without losing what the peer has not read yet (an RST would drop it): shut writes, drain, close."""
    try:
        sock.shutdown(socket.SHUT_WR)
        sock.settimeout(0.1)
        deadline = time.monotonic() + drain_seconds
        drained = 0
        while drained < drain_limit and time.monotonic() < deadline:
            chunk = sock.recv(65536)
            if not chunk:
                break
            drained += len(chunk)
    except OSError:
        pass
    finally:
        sock.close()
