"""A farm of simulated phones registered with a real adb server.

    with SimFarm(2) as farm:                 # 2 phones, a private adb server on a free port
        d = farm.device(farm.serials[0])     # an adbutils.AdbDevice
        d.shell("getprop ro.product.model")

Each phone gets its own adbd on 127.0.0.1 (never the 5555-5585 range every adb server probes), the adb server is
found on `adb_port` or started from the adbutils-bundled binary, and every phone is `adb connect`ed and waited for.
On exit the phones are disconnected and stopped, and the adb server is killed only if the farm started it.
"""

from __future__ import annotations

import logging
import os
import random
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import adbutils

from mobile_agent.errors import DeviceError, UserError
from mobile_agent.sim.phone.phone import Phone, PhoneConfig
from mobile_agent.sim.profiles import profile as lookup_profile
from mobile_agent.sim.wire.adbd import AdbdServer
from mobile_agent.sim.wire.packets import VERSION_SKIP_CHECKSUM, AuthMode

log = logging.getLogger(__name__)

LOCALHOST = "127.0.0.1"
PROBED_PORTS = range(5555, 5586)  # adb servers show anything listening here as emulator-N
BLOCK_LOW = 10000  # free_port_block picks from here up to the ephemeral range
DEFAULT_ADB_PORT = 5037


def bundled_adb_path() -> str:
    """The adb binary shipped inside the adbutils wheel."""
    path = Path(adbutils.__file__).parent / "binaries" / "adb"
    if not path.is_file():
        raise UserError(
            "the adbutils wheel has no bundled adb binary", "install adb and set ADBUTILS_ADB_PATH"
        )
    return str(path)


def free_port(host: str = LOCALHOST) -> int:
    """A TCP port nobody listens on now (the kernel's choice, outside 5555-5585)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind((host, 0))
            port = sock.getsockname()[1]
        if port not in PROBED_PORTS:
            return port


def free_port_block(count: int, host: str = LOCALHOST) -> int:
    """A base port with ``count`` consecutive free ports from it (for `sim up --base-port`), clear of 5555-5585.

    The block lies below the kernel's ephemeral range: a port there is never handed to an outgoing connection
    (the adb server's connections to the phones, say), so it stays free until the phones listen on it."""
    high = _ephemeral_low() - count
    if high <= BLOCK_LOW:  # an unusual ephemeral range: anywhere, then
        high = 65536 - count
    while True:
        base = random.randrange(BLOCK_LOW, high)
        if any(base + i in PROBED_PORTS for i in range(count)):
            continue
        socks: list[socket.socket] = []
        try:
            for offset in range(count):
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                socks.append(sock)
                sock.bind((host, base + offset))
            return base
        except OSError:
            continue
        finally:
            for sock in socks:
                sock.close()


def _ephemeral_low() -> int:
    """The first port of the kernel's range for outgoing connections (Linux; elsewhere the IANA default)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 49152


class AdbServer:
    """An adb server on host:port, either already running or started here from an adb binary."""

    def __init__(self, port: int, *, host: str = LOCALHOST, adb_path: str | None = None) -> None:
        if port == DEFAULT_ADB_PORT:
            log.warning("using the default adb server port %d: a user's own adb server may be there", port)
        self.host = host
        self.port = port
        self.adb_path = adb_path or os.environ.get("ADBUTILS_ADB_PATH") or bundled_adb_path()
        self.started_here = False
        self.client = adbutils.AdbClient(host=host, port=port)

    def is_running(self) -> bool:
        try:
            with socket.create_connection((self.host, self.port), timeout=1) as sock:
                sock.sendall(b"000chost:version")
                return sock.recv(4) == b"OKAY"
        except OSError:
            return False

    def ensure_running(self, timeout: float = 30.0) -> AdbServer:
        if self.is_running():
            return self
        if self.host != LOCALHOST:
            raise DeviceError(f"no adb server answers on {self.host}:{self.port}", "start it there first")
        cmd = [self.adb_path, "-P", str(self.port), "start-server"]
        log.info("starting adb server: %s", " ".join(cmd))
        try:
            done = subprocess.run(
                cmd, capture_output=True, text=True, timeout=timeout, env=_adb_env(self.port)
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise DeviceError(f"could not start the adb server on port {self.port}: {exc}") from exc
        if done.returncode != 0 or not self.is_running():
            raise DeviceError(
                f"adb server did not start on port {self.port}: {(done.stderr or done.stdout).strip()}",
                "is another program using that port?",
            )
        self.started_here = True
        return self

    def stop(self) -> None:
        """Kill the server, but only if it was started here."""
        if not self.started_here:
            return
        try:
            self.client.server_kill()
        except (adbutils.AdbError, OSError) as exc:
            log.debug("adb kill-server: %s", exc)
        deadline = time.monotonic() + 5
        while self.is_running() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.started_here = False


def _adb_env(port: int) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("ANDROID_SERIAL", None)
    env["ANDROID_ADB_SERVER_PORT"] = str(port)
    return env


@dataclass
class SimPhone:
    """One simulated phone of a farm: its world (Phone), its adbd and the serial the adb server knows it by."""

    serial: str
    phone: Phone
    adbd: AdbdServer

    @property
    def port(self) -> int:
        return self.adbd.port

    def drop(self, seconds: float) -> None:
        """Fall off the bus: every connection is cut and new ones refused for `seconds`."""
        self.phone.faults.go_offline(seconds)
        self.adbd.drop_connections()


class SimFarm:
    def __init__(
        self,
        n: int = 1,
        *,
        profile: str = "instant",
        adb_port: int | None = None,
        base_port: int | None = None,
        scenario: str | None = None,
        width: int = 1080,
        height: int = 2400,
        auth: AuthMode | str = AuthMode.ACCEPT,
        protocol_version: int = VERSION_SKIP_CHECKSUM,
        connect_timeout: float = 20.0,
    ) -> None:
        if n < 1:
            raise UserError(f"a farm needs at least one phone, got {n}", "pass n >= 1")
        lookup_profile(profile)  # a UserError for an unknown name, before anything starts
        if base_port is not None and not 1 <= base_port <= 65536 - n:
            raise UserError(
                f"--base-port {base_port} with {n} phone(s) needs ports up to {base_port + n - 1}; ports end at 65535",
                f"pick a base port from 1024 to {65536 - n}",
            )
        if adb_port is not None and not 1 <= adb_port <= 65535:
            raise UserError(f"adb port {adb_port} is not a TCP port", "pick a port from 1024 to 65535")
        self.n = n
        self.profile = profile
        self.scenario = scenario
        self.width = width
        self.height = height
        self.auth = AuthMode(auth)
        self.protocol_version = protocol_version
        self.connect_timeout = connect_timeout
        self._base_port = base_port
        self._adb_port = adb_port
        self.adb_server: AdbServer | None = None
        self.sims: dict[str, SimPhone] = {}

    # --- public view ----------------------------------------------------------------------------------------
    @property
    def serials(self) -> list[str]:
        return list(self.sims)

    @property
    def phones(self) -> dict[str, Phone]:
        return {serial: sim.phone for serial, sim in self.sims.items()}

    @property
    def adb_port(self) -> int:
        assert self.adb_server is not None, "the farm is not started"
        return self.adb_server.port

    @property
    def client(self) -> adbutils.AdbClient:
        assert self.adb_server is not None, "the farm is not started"
        return self.adb_server.client

    def device(self, serial: str) -> adbutils.AdbDevice:
        return self.client.device(serial)

    def drop(self, serial: str, seconds: float) -> None:
        self.sims[serial].drop(seconds)

    # --- lifecycle ------------------------------------------------------------------------------------------
    def __enter__(self) -> SimFarm:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> SimFarm:
        try:
            self._start_phones()
            self.adb_server = AdbServer(self._adb_port or free_port()).ensure_running()
            for serial in self.sims:
                self._connect(serial)
            expected = "unauthorized" if self.auth is AuthMode.DENY else "device"
            self.wait_for_state(self.serials, expected, self.connect_timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _start_phones(self) -> None:
        for index in range(self.n):
            port = self._phone_port(index)
            config = PhoneConfig(
                name=f"sim{index}-{port}", width=self.width, height=self.height, profile=self.profile
            )
            phone = Phone(config, scenario=self.scenario)
            try:
                adbd = AdbdServer(
                    phone, port=port, auth=self.auth, protocol_version=self.protocol_version
                ).start()
            except OSError as exc:
                raise UserError(
                    f"cannot listen on {LOCALHOST}:{port}: {exc.strerror}", "pick another --base-port"
                ) from exc
            serial = f"{LOCALHOST}:{adbd.port}"
            self.sims[serial] = SimPhone(serial, phone, adbd)

    def _phone_port(self, index: int) -> int:
        if self._base_port is None:
            return free_port()
        port = self._base_port + index
        if port in PROBED_PORTS:
            raise UserError(
                f"port {port} is in 5555-5585, which every adb server probes", "pick another base port"
            )
        return port

    def _connect(self, serial: str) -> None:
        reply = self.client.connect(serial, timeout=10)
        if "connected to" not in reply and "authenticate" not in reply:
            raise DeviceError(f"adb connect {serial} failed: {reply}")

    def states(self) -> dict[str, str]:
        return {info.serial: info.state for info in self.client.list()}

    def wait_for_state(self, serials: list[str], state: str, timeout: float) -> None:
        """Poll the adb server until every serial shows `state` (it can take a moment after connect)."""
        deadline = time.monotonic() + timeout
        while True:
            states = self.states()
            pending = [s for s in serials if states.get(s) != state]
            if not pending:
                return
            if time.monotonic() > deadline:
                shown = ", ".join(f"{s}={states.get(s, 'absent')}" for s in pending)
                raise DeviceError(f"simulated phones not {state} after {timeout:.0f} s: {shown}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.adb_server is not None and self.adb_server.is_running():
            for serial in self.sims:
                try:
                    self.client.disconnect(serial)
                except (adbutils.AdbError, OSError) as exc:
                    log.debug("adb disconnect %s: %s", serial, exc)
        for sim in self.sims.values():
            sim.phone.u2_stop()
            sim.adbd.stop()
        if self.adb_server is not None:
            self.adb_server.stop()
