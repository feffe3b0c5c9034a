"""Several hosts on one machine, as Linux network namespaces, for the multi-host farm tests.

Each host is a network namespace joined to the root namespace by a veth pair on a private /30 (root end
10.R.S.4i+1, host end 10.R.S.4i+2). Inside it, on the host's own loopback:

- its simulated phones (their adbd listening sockets are opened from a thread that entered the namespace, so only
  that host reaches them; the phones' state stays readable by the test, as a real phone's does when its host dies),
- its own adb server (the adbutils-bundled binary, started from inside the namespace, on a private port),
- its own simulated model endpoint,
- its farm worker (``ip netns exec NS python netns_worker.py ... worker``), with a hostname of its own (a UTS
  namespace), so that the other hosts can only learn it is gone from its lease, never from a pid.

The one PostgreSQL is the machine's (127.0.0.1 only); a TCP forwarder in the root namespace, bound to the root end
of each veth link and nowhere else, carries each host's connections to it. ``ip link set <root end> down`` cuts a
host off the database and nothing else. Nothing listens outside the namespaces and loopback but those forwarders.

Everything is undone by ``Lab.close()``: the hosts' processes (every pid in each namespace) are killed, the
phones, model endpoints and forwarders stopped, the namespaces deleted (which deletes their veth pairs).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import secrets
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from mobile_agent.sim.farm import SimFarm, bundled_adb_path, free_port_block
from mobile_agent.sim.servers.model_server import SimModelServer

T = TypeVar("T")

CLONE_NEWNET = 0x40000000
NETNS_DIR = Path("/var/run/netns")
WORKER_MAIN = Path(__file__).with_name("netns_worker.py")
PREFIX = "mh"  # every namespace and link made here starts with it


# ------------------------------------------------------------------------------------------- availability
def unavailable() -> str | None:
    """Why these tests cannot run here, or None."""
    if sys.platform != "linux":
        return "network namespaces need Linux"
    if os.geteuid() != 0:
        return "creating network namespaces needs root (run the test as root)"
    probe = f"{PREFIX}probe{os.getpid()}"
    try:
        made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`ip netns add` is not available: {exc}"
    if made.returncode != 0:
        return f"`ip netns add` failed: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, timeout=10)
    if not hasattr(socket, "sethostname") or _libc() is None:
        return "setns/sethostname are not available to Python here"
    return None


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done


def in_netns(ns: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args)`` on a fresh thread that first entered namespace ``ns``: the sockets it opens (and the threads
    and processes it starts) belong to that namespace. The calling thread never changes namespace."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            fd = os.open(NETNS_DIR / ns, os.O_RDONLY)
            try:
                libc = _libc()
                assert libc is not None
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, f"setns({ns}): {os.strerror(err)}")
            finally:
                os.close(fd)
            box["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller
            box["error"] = exc

    thread = threading.Thread(target=target, name=f"netns-{ns}")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def _free_subnet() -> tuple[int, int]:
    """A 10.R.S.0/24 that no address or route of the root namespace touches."""
    used = ip("-4", "addr").stdout + ip("-4", "route").stdout
    while True:
        r, s = secrets.randbelow(200) + 30, secrets.randbelow(250) + 1
        if f"10.{r}.{s}." not in used:
            return r, s


def remove_leftovers() -> None:
    """Namespaces a crashed earlier run of these tests left behind (their pytest process is gone)."""
    for path in NETNS_DIR.glob(f"{PREFIX}*") if NETNS_DIR.is_dir() else []:
        owner = path.name[len(PREFIX) :].split("x")[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            kill_namespace_processes(path.name)
            ip("netns", "del", path.name, check=False)


def namespace_pids(ns: str) -> list[int]:
    done = ip("netns", "pids", ns, check=False)
    return [int(p) for p in done.stdout.split() if p.isdigit()]


def kill_namespace_processes(ns: str, timeout: float = 10.0) -> list[int]:
    """kill -9 every process in namespace ``ns``; waits until they are gone. Returns the pids killed."""
    killed = namespace_pids(ns)
    for pid in killed:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() and _alive(p) for p in killed):
        time.sleep(0.05)
    return killed


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


# --------------------------------------------------------------------------------------------- forwarder
class Forwarder:
    """A TCP forwarder in the root namespace: accepts on ``listen`` (a veth address) and pipes every connection
    to ``target``. One selector thread; ``close()`` drops every connection."""

    def __init__(self, listen: tuple[str, int], target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(listen)
        self.address = self.listener.getsockname()[:2]
        self.listener.setblocking(False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, None)
        self.peers: dict[socket.socket, socket.socket] = {}
        self.events: list[tuple[float, str]] = []  # (time.time(), what): shown when a test fails
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, name=f"forward-{self.address[0]}", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopping.is_set():
            for key, _ in self.selector.select(0.1):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if sock is self.listener:
                    self._accept()
                else:
                    self._pipe(sock)
        for sock in [self.listener, *self.peers]:
            with contextlib.suppress(OSError):
                sock.close()

    def _accept(self) -> None:
        try:
            client, _ = self.listener.accept()
        except BlockingIOError:
            return
        try:
            upstream = socket.create_connection(self.target, timeout=5)
        except OSError as exc:
            self.events.append((time.time(), f"upstream refused: {exc}"))
            client.close()
            return
        self.events.append((time.time(), f"accepted {client.getpeername()}"))
        for one, other in ((client, upstream), (upstream, client)):
            one.setblocking(False)
            self.peers[one] = other
            self.selector.register(one, selectors.EVENT_READ, None)

    def _pipe(self, sock: socket.socket) -> None:
        other = self.peers.get(sock)
        try:
            data = sock.recv(65536)
            if data and other is not None:
                other.setblocking(True)
                other.sendall(data)
                other.setblocking(False)
                return
        except OSError as exc:
            self.events.append((time.time(), f"dropped: {exc}"))
        else:
            self.events.append((time.time(), "closed by one side"))
        for one in (sock, other):
            if one is not None and one in self.peers:
                self.selector.unregister(one)
                self.peers.pop(one, None)
                with contextlib.suppress(OSError):
                    one.close()

    def close(self) -> None:
        self.stopping.set()
        self.thread.join(5)


# ------------------------------------------------------------------------------------------------- hosts
@dataclass
class Host:
    """One host: its namespace, its link to the root namespace, its phones, adb server, model and worker."""

    name: str  # "a", "b", "c": the tag its phones carry (host:a)
    ns: str
    hostname: str
    link: str  # the root end of its veth pair: `ip link set LINK down` cuts it off the database
    root_addr: str
    addr: str
    db_url: str = ""
    farm: SimFarm | None = None
    model: SimModelServer | None = None
    inventory: Path | None = None
    workers: list[subprocess.Popen] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)

    @property
    def phones(self) -> dict[str, Any]:
        assert self.farm is not None
        return self.farm.phones

    def cut(self) -> None:
        ip("link", "set", self.link, "down")

    def restore(self) -> None:
        ip("link", "set", self.link, "up")

    def kill(self) -> list[int]:
        """kill -9 every process of this host (its worker and its adb server); its model endpoint stops too.
        The phones stay, as phones do when their host dies; nothing reaches them any more."""
        killed = kill_namespace_processes(self.ns)
        for proc in self.workers:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
        if self.model is not None:
            self.model.close()
        return killed


class Lab:
    """Builds hosts; ``close()`` undoes everything, also after a failure half-way."""

    def __init__(self, tmp: Path, pg_url: str) -> None:
        from sqlalchemy.engine import make_url

        remove_leftovers()
        self.tmp = tmp
        self.pg = make_url(pg_url)
        self.token = f"{os.getpid()}x{secrets.token_hex(2)}"
        self.subnet = _free_subnet()
        self.hosts: list[Host] = []
        self.forwarders: list[Forwarder] = []
        self.shots = tmp / "shots"  # one folder, as a share every host mounts

    # --- building ---------------------------------------------------------------------------------------
    def add_host(
        self,
        name: str,
        *,
        phones: int,
        scripts: Path,
        latency_ms: int = 0,
        scenario: str | None = None,
    ) -> Host:
        index = len(self.hosts)
        r, s = self.subnet
        ns = f"{PREFIX}{self.token}{name}"[:15]
        host = Host(
            name=name,
            ns=ns,
            hostname=f"{PREFIX}-{self.token}-{name}",
            link=f"{PREFIX}{self.token}r{index}"[:15],
            root_addr=f"10.{r}.{s}.{4 * index + 1}",
            addr=f"10.{r}.{s}.{4 * index + 2}",
        )
        self.hosts.append(host)
        peer = f"{PREFIX}{self.token}n{index}"[:15]
        ip("netns", "add", ns)
        ip("link", "add", host.link, "type", "veth", "peer", "name", peer)
        ip("link", "set", peer, "netns", ns)
        ip("addr", "add", f"{host.root_addr}/30", "dev", host.link)
        ip("link", "set", host.link, "up")
        ip("-n", ns, "addr", "add", f"{host.addr}/30", "dev", peer)
        ip("-n", ns, "link", "set", peer, "up")
        ip("-n", ns, "link", "set", "lo", "up")

        forwarder = Forwarder((host.root_addr, 0), (self.pg.host or "127.0.0.1", self.pg.port or 5432))
        self.forwarders.append(forwarder)
        host.db_url = self.pg.set(host=host.root_addr, port=forwarder.address[1]).render_as_string(
            hide_password=False
        )

        adb_port = 15100 + 100 * index + secrets.randbelow(90)
        base_port = free_port_block(phones)  # phones of different hosts get different serials
        host.farm = in_netns(
            ns,
            lambda: SimFarm(phones, adb_port=adb_port, base_port=base_port, scenario=scenario).start(),
        )
        host.model = in_netns(
            ns,
            lambda: SimModelServer(family="ui-venus-2", scripts=[scripts], latency_ms=latency_ms).start(),
        )
        host.inventory = self.tmp / f"host-{name}.yaml"
        inventory = {
            "adb": f"127.0.0.1:{adb_port}",
            "discover": False,
            "devices": [{"serial": serial, "tags": {"host": name}} for serial in host.farm.serials],
        }
        host.inventory.write_text(yaml.safe_dump(inventory), encoding="utf-8")
        return host

    def start_worker(self, host: Host, *args: str, lease_s: float) -> subprocess.Popen:
        """`mobile-agent worker` on ``host`` against the database through its link, its own phones and model."""
        assert host.model is not None and host.inventory is not None
        log = self.tmp / f"worker-{host.name}-{len(host.workers)}.log"
        env = {
            **os.environ,
            "MOBILE_AGENT_DATA": str(self.shots),
            "ADBUTILS_ADB_PATH": bundled_adb_path(),
            "ANDROID_ADB_SERVER_PORT": str(host.farm.adb_port if host.farm else 0),
            "PYTHONUNBUFFERED": "1",
        }
        cmd = ["ip", "netns", "exec", host.ns, sys.executable, str(WORKER_MAIN)]
        cmd += ["--hostname", host.hostname, "--lease", str(lease_s), "--"]
        cmd += ["worker", "--db", host.db_url, "--devices", str(host.inventory)]
        cmd += ["--base-url", host.model.base_url, "--model", host.model.served_model]
        cmd += ["--family", "ui-venus-2", "--json", *args]
        with log.open("w", encoding="utf-8") as out:
            proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
            )
        host.workers.append(proc)
        host.logs.append(log)
        return proc

    # --- reading ----------------------------------------------------------------------------------------
    def messages(self) -> list[tuple[str, str, str]]:
        """Every message the phones sent: (host, serial, text)."""
        return [
            (host.name, serial, sent["text"])
            for host in self.hosts
            for serial, phone in host.phones.items()
            for sent in phone.state.messages_sent
        ]

    def log_tail(self, limit: int = 4000) -> str:
        parts = []
        for host in self.hosts:
            for log in host.logs:
                text = log.read_text("utf-8", errors="replace") if log.exists() else ""
                parts.append(f"--- {log.name}\n{text[-limit:]}")
        return "\n".join(parts)

    def root_listeners(self) -> list[str]:
        """Local addresses this process listens on in the root namespace (TCP, IPv4 and IPv6)."""
        out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, timeout=10).stdout.splitlines()
        mine = f"pid={os.getpid()},"
        return [line.split()[3] for line in out if mine in line]

    # --- undoing ----------------------------------------------------------------------------------------
    def close(self) -> None:
        for host in self.hosts:
            with contextlib.suppress(Exception):
                kill_namespace_processes(host.ns)
            for proc in host.workers:
                if proc.poll() is None:
                    proc.kill()
                with contextlib.suppress(Exception):
                    proc.wait(10)
            if host.model is not None:
                with contextlib.suppress(Exception):
                    host.model.close()
            if host.farm is not None:
                farm = host.farm
                with contextlib.suppress(Exception):
                    in_netns(host.ns, farm.stop)
        for forwarder in self.forwarders:
            forwarder.close()
        for host in self.hosts:
            ip("link", "del", host.link, check=False)
            ip("netns", "del", host.ns, check=False)


def write_send_scripts(path: Path, labels: Iterable[str], *, park_ms: int = 0, prefix: str = "send") -> Path:
    """A WeChat send script per task label: open 微信, open 张三's chat, type ``晚上好 <label>``, send, finish.
    ``park_ms`` delays the model's answer that leads to the send (the request is in, the reply is not)."""
    docs = []
    for label in labels:
        send: dict[str, Any] = {"think": "点击发送", "action": {"kind": "tap", "point": [894, 949]}}
        if park_ms:
            send["delay_ms"] = park_ms
        docs.append(
            {
                "task": task_text(label),
                "turns": [
                    {"think": "打开微信", "action": {"kind": "launch", "app": "微信"}},
                    {"think": "点开张三", "action": {"kind": "tap", "point": [481, 122]}},
                    {"think": "点输入框", "action": {"kind": "tap", "point": [454, 949]}},
                    {"think": "输入", "action": {"kind": "type", "text": message_text(label)}},
                    send,
                    {"think": "发好了", "action": {"kind": "finish", "text": "sent"}},
                ],
            }
        )
    path.mkdir(parents=True, exist_ok=True)
    for index, doc in enumerate(docs):
        (path / f"{prefix}-{index:03d}.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True), "utf-8")
    return path


SEND_TURN = 4  # the script turn (0-based) whose answer is the tap on 发送


def task_text(label: str) -> str:
    return f"给张三发微信 [{label}]"


def message_text(label: str) -> str:
    return f"晚上好{label}"


def write_tasks(path: Path, labels: Iterable[str], **extra: Any) -> Path:
    lines = [
        json.dumps({"task": task_text(label), "app": "微信", **extra}, ensure_ascii=False) for label in labels
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def send_requests(model: SimModelServer) -> int:
    """How many requests for the send turn ``model`` has received (answered or still delayed)."""
    return sum(1 for r in list(model.requests) if getattr(r, "turn", None) == SEND_TURN)
