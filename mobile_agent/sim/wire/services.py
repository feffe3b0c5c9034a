"""The services a simulated adbd opens streams to: `shell:` / `shell,v2:` / `exec:` (the phone's sh, with shell v2
framing), `sync:`, `tcp:9008` (the uiautomator2 server, while it runs) and `root:`.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from mobile_agent.sim.shell.android import AndroidShell
from mobile_agent.sim.shell.sh import ShellIO
from mobile_agent.sim.wire.sync import serve_sync
from mobile_agent.sim.wire.u2server import U2Server

if TYPE_CHECKING:
    from mobile_agent.sim.phone.phone import Phone
    from mobile_agent.sim.wire.connection import Stream

SHELL_V2_FRAME = struct.Struct("<BI")
SHELL_V2_STDIN, SHELL_V2_STDOUT, SHELL_V2_STDERR, SHELL_V2_EXIT, SHELL_V2_CLOSE_STDIN = 0, 1, 2, 3, 4
U2_DEVICE_PORT = 9008

ServiceHandler = Callable[["Phone", "Stream"], None]


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
    session = AndroidShell(phone)
    io = ShellIO(output.stdout, output.stderr, stream.hangup, output.flush)
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
    U2Server(phone).serve(stream)


def _sync_handler(phone: Phone, stream: Stream) -> None:
    serve_sync(phone, stream)


def _root_handler(phone: Phone, stream: Stream) -> None:
    stream.sendall(b"adbd cannot run as root in production builds\n")


STATS_COMMAND = "sim-requests"  # prints the phone's request counts as JSON; not counted itself


def request_kind(service: str) -> str | None:
    """How a stream open is counted among the phone's requests: ``shell <command>``, ``sync``; None for the u2
    port (each HTTP request on it is counted by the u2 server) and for the statistics command itself."""
    name, _, rest = service.partition(":")
    if name == "tcp":
        return None
    if name in ("shell", "exec") or name.startswith("shell,"):
        words = rest.split()
        first = next((w for w in words if "=" not in w), "")  # skip VAR=value prefixes
        return None if first == STATS_COMMAND else f"shell {first}".rstrip()
    return name.rstrip(":") or service


def count_request(phone: Phone, kind: str | None) -> None:
    """Count one request on the phone (a stand-in phone in a unit test may not count)."""
    counter = getattr(phone, "count_request", None)
    if kind is not None and counter is not None:
        counter(kind)


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
