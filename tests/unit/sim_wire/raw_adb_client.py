"""A minimal host side of the adb wire protocol, for poking the simulated adbd directly in tests."""

from __future__ import annotations

import socket
import struct

from mobile_agent.sim.wire.packets import (
    A_AUTH,
    A_CLSE,
    A_CNXN,
    A_OKAY,
    A_OPEN,
    A_WRTE,
    VERSION_SKIP_CHECKSUM,
    Packet,
    encode_packet,
    read_packet,
)


class RawAdbClient:
    def __init__(self, port: int, *, timeout: float = 5.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.checksum = True
        self.next_id = 100

    def close(self) -> None:
        self.sock.close()

    def send(self, command: int, arg0: int, arg1: int, payload: bytes = b"") -> None:
        self.sock.sendall(encode_packet(Packet(command, arg0, arg1, payload), checksum=self.checksum))

    def recv(self) -> Packet | None:
        return read_packet(self.sock, verify_checksum=self.checksum)

    def connect(self, version: int = VERSION_SKIP_CHECKSUM, max_payload: int = 1 << 20) -> Packet:
        """CNXN, answering AUTH with a (fake) signature; returns the device's CNXN."""
        self.send(A_CNXN, version, max_payload, b"host::features=shell_v2\0")
        reply = self.recv()
        if reply is not None and reply.command == A_AUTH:
            self.send(A_AUTH, 2, 0, b"\x01" * 256)
            reply = self.recv()
        assert reply is not None and reply.command == A_CNXN, reply
        self.checksum = reply.arg0 < VERSION_SKIP_CHECKSUM
        return reply

    def open(self, service: str) -> tuple[int, Packet]:
        self.next_id += 1
        local = self.next_id
        self.send(A_OPEN, local, 0, service.encode() + b"\0")
        return local, self.recv()

    def read_stream(self, local: int, remote: int, *, ack: bool = True) -> bytes:
        """Collect WRTE payloads until CLSE, acknowledging each one."""
        data = bytearray()
        while True:
            packet = self.recv()
            assert packet is not None, "connection closed"
            if packet.command == A_WRTE:
                data += packet.payload
                if ack:
                    self.send(A_OKAY, local, remote)
            elif packet.command == A_CLSE:
                return bytes(data)

    def run(self, service: str) -> bytes:
        local, reply = self.open(service)
        assert reply.command == A_OKAY, reply
        return self.read_stream(local, reply.arg0)


def shell_v2_frames(data: bytes) -> list[tuple[int, bytes]]:
    frames = []
    while data:
        kind, length = struct.unpack_from("<BI", data)
        frames.append((kind, data[5 : 5 + length]))
        data = data[5 + length :]
    return frames


class RawStream:
    """Both directions of one stream over a RawAdbClient, with the protocol's flow control."""

    def __init__(self, client: RawAdbClient, service: str) -> None:
        self.client = client
        self.local, reply = client.open(service)
        assert reply.command == A_OKAY, reply
        self.remote = reply.arg0
        self.inbox = bytearray()
        self.closed = False

    def _pump(self) -> Packet:
        packet = self.client.recv()
        assert packet is not None, "connection closed"
        if packet.command == A_WRTE:
            self.inbox += packet.payload
            self.client.send(A_OKAY, self.local, self.remote)
        elif packet.command == A_CLSE:
            self.closed = True
        return packet

    def write(self, data: bytes, chunk: int = 4096) -> None:
        for start in range(0, len(data), chunk):
            self.client.send(A_WRTE, self.local, self.remote, data[start : start + chunk])
            while self._pump().command != A_OKAY:
                assert not self.closed, "stream closed while writing"

    def read_exact(self, n: int) -> bytes:
        while len(self.inbox) < n:
            assert not self.closed, f"stream closed with {len(self.inbox)}/{n} bytes"
            self._pump()
        data = bytes(self.inbox[:n])
        del self.inbox[:n]
        return data

    def wait_closed(self) -> None:
        while not self.closed:
            self._pump()
