"""The adb server, reached like the user's own tools reach it: at the address given, and never started by us.

adbutils opens a new socket for every request, and when the connect fails it runs ``adb start-server`` (on the
port in ANDROID_ADB_SERVER_PORT, else 5037, whatever port the client was made for) and tries again
(``AdbConnection._safe_connect``). uiautomator2 reaches the phone through the same client's connections. So every
connection this runtime opens goes through :class:`AdbServerClient`, whose connections fail instead: a dead
server is :class:`~mobile_agent.errors.AdbServerUnreachable`, with the command that would start it as the hint.

Each connection's socket also gets a read timeout (the client's cap, or less when its deadline is nearer): by
default adbutils waits on a silent server or phone forever.
"""

from __future__ import annotations

import socket

import adbutils
from adbutils.errors import AdbConnectionError

from mobile_agent.errors import AdbServerUnreachable, DeviceNotFound, UserError
from mobile_agent.waits.deadlines import Deadline

DEFAULT_ADB_PORT = 5037
READ_TIMEOUT = 60.0  # no single adb or uiautomator2 read waits longer than this
MIN_READ_TIMEOUT = 0.1  # a socket timeout of 0 would mean non-blocking


def adb_command(address: str | None, *args: str) -> str:
    """A command line that works after ``pip install``: the adb that ships with adbutils, via ``mobile-agent adb``,
    against the server at ``address`` (HOST:PORT; None for the configured one)."""
    server: list[str] = []
    if address:
        host, _, port = address.rpartition(":")
        if host and host not in ("127.0.0.1", "localhost"):
            server += ["-H", host]
        server += ["-P", port]
    return " ".join(["mobile-agent adb", *server, *args])


def start_hint(host: str, port: int) -> str:
    if host in ("127.0.0.1", "localhost", "::1"):
        command = f"mobile-agent adb -P {port} start-server"
        return f"start it with `{command}` (or `mobile-agent sim up` for simulated phones), or pass --adb HOST:PORT"
    command = f"mobile-agent adb -a -P {port} start-server"
    return f"start it on {host} with `{command}`, or fix the adb server address (--adb, devices.yaml)"


def unreachable(host: str, port: int, why: object) -> AdbServerUnreachable:
    return AdbServerUnreachable(
        f"cannot reach the adb server at {host}:{port} ({why}); mobile-agent never starts one itself",
        start_hint(host, port),
    )


def check_reachable(host: str, port: int, timeout: float = 2.0) -> None:
    """A plain TCP connect, so nothing that could start a server runs. AdbServerUnreachable when refused."""
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        raise unreachable(host, port, exc.strerror or exc) from None


class _Connection(adbutils.AdbConnection):
    """adbutils' connection, minus the fallback that runs `adb start-server` when the connect fails."""

    def _safe_connect(self) -> socket.socket:
        return self._create_socket()


class AdbServerClient(adbutils.AdbClient):
    """An explicit adbutils client for one adb server that never starts a server and never waits forever.

    ``deadline``, when set, shortens every socket's read timeout to the time left (the device sets it per step).
    """

    def __init__(self, host: str, port: int, *, read_timeout: float = READ_TIMEOUT) -> None:
        super().__init__(host=host, port=port)
        self.read_timeout = read_timeout
        self.deadline: Deadline | None = None
        self._server_version: int | None = None

    def make_connection(self, timeout: float | None = None) -> adbutils.AdbConnection:
        try:
            conn = _Connection(self.host, self.port)
        except (adbutils.AdbTimeout, AdbConnectionError) as exc:
            raise unreachable(self.host, self.port, exc) from None
        cap = min(timeout or self.read_timeout, self.read_timeout)
        if self.deadline is not None:
            cap = self.deadline.bound(cap)
        conn.conn.settimeout(max(MIN_READ_TIMEOUT, cap))
        return conn

    def server_version(self) -> int:
        # adbutils asks before every transport it opens to a phone by serial (one more connection to the server
        # per shell command or u2 request); a running server's version does not change, so it is asked once.
        if self._server_version is None:
            self._server_version = super().server_version()
        return self._server_version


def adb_server_client(host: str, port: int, *, read_timeout: float = READ_TIMEOUT) -> AdbServerClient:
    """A client for the server at host:port, after checking that something listens there."""
    check_reachable(host, port)
    return AdbServerClient(host, port, read_timeout=read_timeout)


def parse_adb_address(address: str | None) -> tuple[str, int]:
    """``"host:port"`` / ``"port"`` / None -> (host, port). None is the configured server (MOBILE_AGENT_ADB,
    ADB_SERVER_SOCKET, ANDROID_ADB_SERVER_PORT, the config file; else 127.0.0.1:5037), as for adb itself."""
    if not address:
        from mobile_agent.settings.values import load_settings

        address = load_settings().adb
    host, _, port = address.rpartition(":")
    try:
        number = int(port)
    except ValueError:
        number = 0
    if not 1 <= number <= 65535 or any(c.isspace() for c in address):
        raise UserError(
            f"bad adb server address {address!r}" + (" (a port is 1-65535)" if number else ""),
            "write it as HOST:PORT, e.g. 127.0.0.1:5037",
        )
    return (host or "127.0.0.1"), number


def adb_client(adb: str | None = None) -> AdbServerClient:
    """An explicit client for the adb server at ``adb`` that never starts a server (see device/adb_server.py),
    after checking that something listens there; AdbServerUnreachable, with the command to start one, otherwise."""
    host, port = parse_adb_address(adb)
    return adb_server_client(host, port)


def list_devices(adb: str | None = None) -> list[tuple[str, str]]:
    """(serial, state) of every phone the adb server knows."""
    client = adb_client(adb)
    try:
        return [(d.serial, d.state) for d in client.list(extended=False)]
    except (adbutils.AdbError, OSError) as exc:
        host, port = parse_adb_address(adb)
        raise UserError(
            f"the adb server at {host}:{port} failed to list phones ({exc})",
            f"restart it: mobile-agent adb -H {host} -P {port} kill-server, then start-server",
        ) from None


def choose_serial(serial: str | None, adb: str | None = None) -> str:
    """The phone to use: the given serial, else ANDROID_SERIAL (the configured device), else the only attached one."""
    from mobile_agent.settings.values import load_settings

    serial = serial or load_settings().device
    devices = list_devices(adb)
    if serial:
        states = dict(devices)
        if serial not in states:
            known = ", ".join(s for s, _ in devices) or "none"
            raise DeviceNotFound(f"phone {serial!r} is not attached", f"attached phones: {known}")
        return serial
    ready = [s for s, state in devices if state == "device"]
    if len(ready) == 1:
        return ready[0]
    if not ready:
        listed = "; ".join(f"{s} ({st})" for s, st in devices) or "none"
        raise DeviceNotFound(
            f"no phone is ready (attached: {listed})",
            "connect a phone with USB debugging on and accept the prompt, or start simulated ones: mobile-agent sim up",
        )
    raise UserError(
        f"{len(ready)} phones are attached: {', '.join(ready)}",
        "choose one with --device SERIAL (or ANDROID_SERIAL=SERIAL, as for adb)",
    )


__all__ = [
    "DEFAULT_ADB_PORT",
    "adb_client",
    "choose_serial",
    "list_devices",
    "parse_adb_address",
    "READ_TIMEOUT",
    "AdbServerClient",
    "adb_command",
    "adb_server_client",
    "check_reachable",
    "start_hint",
    "unreachable",
]
