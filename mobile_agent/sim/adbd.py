"""The simulated phone's adbd: the device side of the adb wire protocol over TCP.

A real adb server reaches it with `adb connect 127.0.0.1:PORT` and then treats it like a network phone. One
listening socket per phone, one thread per TCP connection (reads packets) and one thread per stream (runs the
service). Protocol facts are in docs/device-stack: 24-byte little-endian headers, CNXN/AUTH handshake, OPEN/OKAY/
WRTE/CLSE streams with one WRTE in flight per direction and per stream.
"""

from __future__ import annotations

import enum
import logging
import os
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mobile_agent.sim import shell as shell_mod
from mobile_agent.sim import sync as sync_mod

if TYPE_CHECKING:
    from mobile_agent.sim.phone import Phone

log = logging.getLogger(__name__)

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
SHELL_V2_FRAME = struct.Struct("<BI")
SHELL_V2_STDIN, SHELL_V2_STDOUT, SHELL_V2_STDERR, SHELL_V2_EXIT, SHELL_V2_CLOSE_STDIN = 0, 1, 2, 3, 4
U2_DEVICE_PORT = 9008

# Only what this module really implements: shell v2 framing, STA2/LST2, LIS2/DNT2, SEND creating parent dirs.
FEATURES = ("shell_v2", "stat_v2", "ls_v2", "fixed_push_mkdir")


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


class StreamClosed(ConnectionError):
    pass


class Stream:
    """One adb stream, seen by a service as a socket: recv(n) (b"" at EOF), sendall(data), close().

    Flow control: sendall sends one WRTE at a time and waits for the peer's OKAY; a received WRTE is acknowledged
    once the service has consumed all of its bytes.
    """

    def __init__(self, conn: _Connection, local_id: int, remote_id: int) -> None:
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


ServiceHandler = Callable[["Phone", Stream], None]


class _Connection:
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
        self.server._forget(self)

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


class AdbdServer:
    """adbd for one simulated phone, listening on host:port (port 0 picks a free one)."""

    def __init__(
        self,
        phone: Phone,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        auth: AuthMode | str = AuthMode.ACCEPT,
        protocol_version: int = VERSION_SKIP_CHECKSUM,
        fault_poll_interval: float = 0.1,
    ) -> None:
        self.phone = phone
        self.host = host
        self.auth = AuthMode(auth)
        self.protocol_version = protocol_version
        self._requested_port = port
        self._fault_poll_interval = fault_poll_interval
        self._listener: socket.socket | None = None
        self._connections: set[_Connection] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self.port = port

    @property
    def name(self) -> str:
        return f"adbd:{self.port}"

    @property
    def serial(self) -> str:
        return f"{self.host}:{self.port}"

    def banner(self) -> str:
        props = self.phone.props
        fields = [
            f"{key}={props.get(key, '')}"
            for key in ("ro.product.name", "ro.product.model", "ro.product.device")
        ]
        fields.append("features=" + ",".join(FEATURES))
        return "device::" + ";".join(fields)

    def route(self, service: str) -> ServiceHandler | None:
        return route_service(service, self.phone)

    # --- lifecycle ----------------------------------------------------------------------------------------
    def start(self) -> AdbdServer:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((self.host, self._requested_port))
        listener.listen(64)
        self._listener = listener
        self.port = listener.getsockname()[1]
        for target, name in ((self._accept_loop, "accept"), (self._watch_faults, "faults")):
            thread = threading.Thread(target=target, name=f"adbd-{self.port}-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)
        log.debug("%s listening", self.name)
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._listener is not None:
            try:
                self._listener.shutdown(socket.SHUT_RDWR)  # wakes accept(); see pitfall 5
            except OSError:
                pass
            self._listener.close()
        self.drop_connections()
        for thread in self._threads:
            thread.join(timeout=2)

    def __enter__(self) -> AdbdServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def drop_connections(self) -> None:
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            conn.shutdown()

    @property
    def connection_count(self) -> int:
        with self._lock:
            return len(self._connections)

    def _forget(self, conn: _Connection) -> None:
        with self._lock:
            self._connections.discard(conn)

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                sock, _ = self._listener.accept()
            except OSError:
                break
            if self._stopping.is_set() or self.phone.faults.offline:
                close_socket(sock)
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = _Connection(self, sock)
            with self._lock:
                self._connections.add(conn)
            threading.Thread(target=conn.run, name=f"adbd-{self.port}-conn", daemon=True).start()

    def _watch_faults(self) -> None:
        while not self._stopping.wait(self._fault_poll_interval):
            if self.phone.faults.offline and self.connection_count:
                log.info("%s: going offline", self.name)
                self.drop_connections()


# --- services ----------------------------------------------------------------------------------------------
class _ShellOutput:
    """Buffers a command's output into WRTEs; with shell v2 every chunk is framed `<BI` (id, length)."""

    FLUSH_AT = 64 * 1024

    def __init__(self, stream: Stream, *, v2: bool) -> None:
        self.stream = stream
        self.v2 = v2
        self.buffer = bytearray()
        self.lock = threading.Lock()

    def _add(self, kind: int, data: bytes) -> None:
        if not data:
            return
        with self.lock:
            if self.v2:
                self.buffer += SHELL_V2_FRAME.pack(kind, len(data))
            self.buffer += data
            full = len(self.buffer) >= self.FLUSH_AT
        if full:
            self.flush()

    def stdout(self, data: bytes) -> None:
        self._add(SHELL_V2_STDOUT, data)

    def stderr(self, data: bytes) -> None:
        self._add(SHELL_V2_STDERR, data)

    def flush(self) -> None:
        with self.lock:
            data = bytes(self.buffer)
            self.buffer.clear()
        if data:
            self.stream.sendall(data)

    def exit(self, code: int) -> None:
        if self.v2:
            with self.lock:
                self.buffer += SHELL_V2_FRAME.pack(SHELL_V2_EXIT, 1) + bytes([code & 0xFF])
        self.flush()


def _stdin_lines(stream: Stream, *, v2: bool) -> Iterator[str]:
    """Lines typed into an interactive shell (raw bytes with v1, stdin frames with v2), until EOF."""
    pending = bytearray()
    while True:
        if v2:
            header = stream.recv(SHELL_V2_FRAME.size)
            if not header:
                break
            if len(header) < SHELL_V2_FRAME.size:
                header += stream.recv_exact(SHELL_V2_FRAME.size - len(header))
            kind, length = SHELL_V2_FRAME.unpack(header)
            data = stream.recv_exact(length) if length else b""
            if kind == SHELL_V2_CLOSE_STDIN:
                break
            if kind != SHELL_V2_STDIN:
                continue
        else:
            data = stream.recv(4096)
            if not data:
                break
        pending += data
        while b"\n" in pending:
            line, _, rest = bytes(pending).partition(b"\n")
            pending = bytearray(rest)
            yield line.decode("utf-8", "replace").rstrip("\r")
    if pending.strip():
        yield pending.decode("utf-8", "replace")


def _serve_shell(phone: Phone, stream: Stream, command: str, *, v2: bool) -> None:
    output = _ShellOutput(stream, v2=v2)
    session = shell_mod.ShellSession(phone)
    io = shell_mod.ShellIO(output.stdout, output.stderr, stream.hangup, output.flush)
    if command.strip():
        code = session.run(command, io)
    else:
        code = 0
        for line in _stdin_lines(stream, v2=v2):
            if line.strip() == "exit":
                break
            code = session.run(line, io)
            output.flush()
    output.exit(code)


def _shell_handler(command: str, *, v2: bool) -> ServiceHandler:
    def handler(phone: Phone, stream: Stream) -> None:
        _serve_shell(phone, stream, command, v2=v2)

    return handler


def _u2_handler(phone: Phone, stream: Stream) -> None:
    from mobile_agent.sim.u2server import U2Server

    U2Server(phone).serve(stream)


def _sync_handler(phone: Phone, stream: Stream) -> None:
    sync_mod.serve_sync(phone, stream)


def _root_handler(phone: Phone, stream: Stream) -> None:
    stream.sendall(b"adbd cannot run as root in production builds\n")


def route_service(service: str, phone: Phone) -> ServiceHandler | None:
    """The handler for an OPEN's service name, or None to refuse it with CLSE."""
    name, sep, rest = service.partition(":")
    if not sep:
        return None
    if name == "shell" or name.startswith("shell,"):
        args = name.split(",")[1:]
        return _shell_handler(rest, v2="v2" in args)
    if name == "exec":
        return _shell_handler(rest, v2=False)
    if service == "sync:":
        return _sync_handler
    if name == "tcp":
        port = rest.rsplit(":", 1)[-1]
        # Nothing listens on tcp:9008 while the u2 server is not running: the connection is refused.
        return _u2_handler if port == str(U2_DEVICE_PORT) and phone.u2_running else None
    if service == "root:":
        return _root_handler
    return None
