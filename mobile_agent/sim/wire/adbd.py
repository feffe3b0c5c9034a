"""The simulated phone's adbd: the device side of the adb wire protocol over TCP.

A real adb server reaches it with `adb connect 127.0.0.1:PORT` and then treats it like a network phone. One
listening socket per phone, one thread per TCP connection (connection.py reads its packets) and one thread per
stream (services.py runs the service it opened). The wire format is in packets.py.
"""

from __future__ import annotations

import logging
import socket
import threading
from typing import TYPE_CHECKING

from mobile_agent.sim.wire.connection import Connection
from mobile_agent.sim.wire.packets import VERSION_SKIP_CHECKSUM, AuthMode, close_socket
from mobile_agent.sim.wire.services import ServiceHandler, route_service

if TYPE_CHECKING:
    from mobile_agent.sim.phone.phone import Phone

log = logging.getLogger(__name__)

# Only what this module really implements: shell v2 framing, STA2/LST2, LIS2/DNT2, SEND creating parent dirs.
FEATURES = ("shell_v2", "stat_v2", "ls_v2", "fixed_push_mkdir")


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
        self._connections: set[Connection] = set()
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

    def forget(self, conn: Connection) -> None:
        """A connection ended (the connection calls this itself)."""
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
            conn = Connection(self, sock)
            with self._lock:
                self._connections.add(conn)
            threading.Thread(target=conn.run, name=f"adbd-{self.port}-conn", daemon=True).start()

    def _watch_faults(self) -> None:
        while not self._stopping.wait(self._fault_poll_interval):
            if self.phone.faults.offline and self.connection_count:
                log.info("%s: going offline", self.name)
                self.drop_connections()
