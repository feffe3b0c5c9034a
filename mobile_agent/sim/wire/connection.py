"""One TCP connection from an adb server to a simulated adbd: the CNXN/AUTH handshake, packet dispatch and the
streams multiplexed over it (OPEN/OKAY/WRTE/CLSE, one WRTE in flight per direction and per stream).

The connection reads packets on its own thread; each stream's service runs on a thread of its own and sees the
stream as a socket (``Stream``).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from typing import TYPE_CHECKING

from mobile_agent.sim.wire.packets import (
    A_AUTH,
    A_CLSE,
    A_CNXN,
    A_OKAY,
    A_OPEN,
    A_WRTE,
    AUTH_RSAPUBLICKEY,
    AUTH_SIGNATURE,
    AUTH_TOKEN,
    MAX_PAYLOAD,
    MAX_PAYLOAD_OLD,
    VERSION_CHECKSUMMED,
    VERSION_SKIP_CHECKSUM,
    AuthMode,
    MalformedPacket,
    Packet,
    close_socket,
    encode_packet,
    read_packet,
)
from mobile_agent.sim.wire.services import count_request, request_kind

if TYPE_CHECKING:
    from mobile_agent.sim.wire.adbd import AdbdServer
    from mobile_agent.sim.wire.services import ServiceHandler

log = logging.getLogger(__name__)


class StreamClosed(ConnectionError):
    pass


class Stream:
    """One adb stream, seen by a service as a socket: recv(n) (b"" at EOF), sendall(data), close().

    Flow control: sendall sends one WRTE at a time and waits for the peer's OKAY; a received WRTE is acknowledged
    once the service has consumed all of its bytes.
    """

    def __init__(self, conn: Connection, local_id: int, remote_id: int) -> None:
        self._conn = conn
        self.local_id = local_id
        self.remote_id = remote_id
        self._cond = threading.Condition()
        self._inbox = bytearray()
        self._unacked = False
        self._can_send = True
        self._peer_closed = False
        self._closed = False
        self.hangup = threading.Event()  # set when the peer closed the stream or the connection died

    # --- called by the connection's reader thread ------------------------------------------------------------
    def _deliver(self, data: bytes) -> None:
        with self._cond:
            self._inbox += data
            self._unacked = True
            self._cond.notify_all()

    def _on_okay(self) -> None:
        with self._cond:
            self._can_send = True
            self._cond.notify_all()

    def _on_peer_close(self) -> None:
        with self._cond:
            self._peer_closed = True
            self._cond.notify_all()
        self.hangup.set()

    # --- socket-like API for services ------------------------------------------------------------------------
    def recv(self, n: int) -> bytes:
        with self._cond:
            while not self._inbox and not self._peer_closed and not self._closed:
                self._cond.wait()
            if not self._inbox:
                return b""
            data = bytes(self._inbox[:n])
            del self._inbox[:n]
            ack = not self._inbox and self._unacked and not self._peer_closed
            if ack:
                self._unacked = False
        if ack:
            self._conn.send(Packet(A_OKAY, self.local_id, self.remote_id))
        return data

    def recv_exact(self, n: int) -> bytes:
        parts = []
        remaining = n
        while remaining:
            chunk = self.recv(remaining)
            if not chunk:
                raise StreamClosed(f"stream closed with {remaining} of {n} bytes unread")
            parts.append(chunk)
            remaining -= len(chunk)
        return b"".join(parts)

    def sendall(self, data: bytes) -> None:
        view = memoryview(data)
        step = self._conn.max_payload
        for start in range(0, len(view), step):
            with self._cond:
                while not self._can_send and not self._peer_closed and not self._closed:
                    self._cond.wait()
                if self._peer_closed or self._closed:
                    raise StreamClosed("stream closed by the host")
                self._can_send = False
            self._conn.send(Packet(A_WRTE, self.local_id, self.remote_id, bytes(view[start : start + step])))

    def wait_writable(self, timeout: float) -> None:
        """Wait until the last WRTE was acknowledged, so a CLSE does not overtake data."""
        with self._cond:
            self._cond.wait_for(lambda: self._can_send or self._peer_closed or self._closed, timeout)

    def close(self) -> None:
        with self._cond:
            if self._closed:
                return
            self._closed = True
            peer_closed = self._peer_closed
            self._cond.notify_all()
        self.hangup.set()
        self._conn.forget(self.local_id)
        if not peer_closed:
            self._conn.send(Packet(A_CLSE, self.local_id, self.remote_id))

    @property
    def peer_closed(self) -> bool:
        return self._peer_closed


class Connection:
    """One TCP connection from an adb server (or any client): handshake, packet dispatch, stream table."""

    def __init__(self, server: AdbdServer, sock: socket.socket) -> None:
        self.server = server
        self.phone = server.phone
        self.sock = sock
        self._send_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._streams: dict[int, Stream] = {}
        self._streams_lock = threading.Lock()
        self._next_id = 1
        self.version = VERSION_CHECKSUMMED
        self.max_payload = MAX_PAYLOAD_OLD
        self.online = False
        self._pending_cnxn: tuple[int, int] | None = None
        self._dead = False

    @property
    def checksummed(self) -> bool:
        return self.version < VERSION_SKIP_CHECKSUM

    def send(self, packet: Packet) -> None:
        data = encode_packet(packet, checksum=self.checksummed or packet.command == A_CNXN)
        with self._send_lock:
            if self._dead:
                return
            try:
                self.sock.sendall(data)
            except OSError:
                self._dead = True

    def forget(self, local_id: int) -> None:
        with self._streams_lock:
            self._streams.pop(local_id, None)

    def run(self) -> None:
        try:
            while True:
                packet = read_packet(self.sock, verify_checksum=self.online and self.checksummed)
                if packet is None:
                    break
                self._dispatch(packet)
        except MalformedPacket as exc:
            log.info("%s: dropping connection: %s", self.server.name, exc)
            self.shutdown(graceful=True)
        except OSError:
            pass  # dropped by a fault, by stop(), or by the peer
        finally:
            self.shutdown()

    def shutdown(self, *, graceful: bool = False) -> None:
        """Cut the connection. `graceful` lets the peer read what was sent (pitfall 4); a fault just cuts."""
        with self._state_lock:  # not the send lock: a sender may be blocked in sendall
            already = self._dead
            self._dead = True
        with self._streams_lock:
            streams = list(self._streams.values())
            self._streams.clear()
        for stream in streams:
            stream._on_peer_close()
        if already:
            self.sock.close()
        elif graceful:
            close_socket(self.sock)
        else:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.sock.close()
        self.server.forget(self)

    # --- packet handling ----------------------------------------------------------------------------------
    def _dispatch(self, p: Packet) -> None:
        if p.command == A_CNXN:
            self._on_cnxn(p)
        elif p.command == A_AUTH:
            self._on_auth(p)
        elif not self.online:
            log.debug("%s: %s before the handshake ignored", self.server.name, p.name)
        elif p.command == A_OPEN:
            self._on_open(p)
        elif p.command in (A_OKAY, A_WRTE, A_CLSE):
            self._on_stream_packet(p)
        else:
            log.debug("%s: ignoring %s", self.server.name, p.name)

    def _on_cnxn(self, p: Packet) -> None:
        version = min(p.arg0, self.server.protocol_version)
        max_payload = MAX_PAYLOAD_OLD if version < VERSION_SKIP_CHECKSUM else min(p.arg1, MAX_PAYLOAD)
        max_payload = max(max_payload, 256)
        if self.server.auth is AuthMode.NONE:
            self._accept(version, max_payload)
        else:
            self._pending_cnxn = (version, max_payload)
            self._send_token()

    def _send_token(self) -> None:
        self.send(Packet(A_AUTH, AUTH_TOKEN, 0, os.urandom(20)))

    def _on_auth(self, p: Packet) -> None:
        if self._pending_cnxn is None or self.online:
            return
        if self.server.auth is AuthMode.ACCEPT and p.arg0 in (AUTH_SIGNATURE, AUTH_RSAPUBLICKEY):
            self._accept(*self._pending_cnxn)
        elif p.arg0 == AUTH_SIGNATURE:
            self._send_token()  # "wrong key": the host tries its next key, then offers its public key
        # DENY + RSAPUBLICKEY: the user never taps "allow"; staying silent leaves the phone unauthorized.

    def _accept(self, version: int, max_payload: int) -> None:
        self.version = version
        self.max_payload = max_payload
        self.online = True
        banner = self.server.banner().encode()
        self.send(Packet(A_CNXN, version, max_payload, banner))

    def _on_open(self, p: Packet) -> None:
        service = p.payload.rstrip(b"\0").decode("utf-8", "replace")
        handler = self.server.route(service) if p.arg0 else None
        if handler is None:
            log.info("%s: refusing service %r", self.server.name, service[:80])
            self.send(Packet(A_CLSE, 0, p.arg0))
            return
        with self._streams_lock:
            local_id = self._next_id
            self._next_id += 1
            stream = Stream(self, local_id, p.arg0)
            self._streams[local_id] = stream
        self.send(Packet(A_OKAY, local_id, p.arg0))
        count_request(self.phone, request_kind(service))
        threading.Thread(
            target=self._serve_stream,
            args=(handler, stream, service),
            name=f"adbd-{service[:20]}",
            daemon=True,
        ).start()

    def _serve_stream(self, handler: ServiceHandler, stream: Stream, service: str) -> None:
        try:
            handler(self.phone, stream)
        except StreamClosed:
            pass
        except Exception:
            log.exception("%s: service %r failed", self.server.name, service[:80])
        finally:
            stream.wait_writable(5.0)
            stream.close()

    def _on_stream_packet(self, p: Packet) -> None:
        with self._streams_lock:
            stream = self._streams.get(p.arg1)
        if stream is None or (p.arg0 and stream.remote_id != p.arg0):
            if p.command == A_WRTE:
                self.send(Packet(A_CLSE, 0, p.arg0))
            return
        if p.command == A_OKAY:
            stream._on_okay()
        elif p.command == A_WRTE:
            stream._deliver(p.payload)
        else:
            self.forget(stream.local_id)
            stream._on_peer_close()
