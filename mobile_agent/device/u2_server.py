"""The uiautomator2 server on the phone: started so that it outlives a run, reused by the next, stopped on request.

What uiautomator2 3.7.1 does itself (site-packages/uiautomator2/core.py, ``BasicUiautomatorServer``): on connect
it checks the md5 of /data/local/tmp/u2.jar (``toybox md5sum``), pushes the jar when it differs, pings the server
(``GET /ping`` over adb ``tcp:9008``) and, when nothing answers, launches ``CLASSPATH=/data/local/tmp/u2.jar
app_process / com.wetest.uia2.Main -p 9008`` on an adb shell stream it holds open. The server lives as long as that
stream: u2 registers ``atexit(stop_uiautomator)``, which closes it, and the process exiting closes it too. So each
``mobile-agent run`` started the server again (a new UiAutomation connection: seconds on a real phone).

Here the server is launched detached instead (``nohup ... &``, its output to a file on the phone): u2's connect
finds it answering and launches nothing, its atexit has nothing to close, and the next run reuses the server.
:func:`stop` asks it to quit (``GET /stop``, which the server's HTTP server answers: openatx/android-uiautomator-
server-jar, stub/AutomatorHttpServer.java).
"""

from __future__ import annotations

import hashlib
import time
from functools import cache

import adbutils

from mobile_agent.errors import U2AlreadyRegistered

PORT = 9008
JAR = "/data/local/tmp/u2.jar"
LOG = "/data/local/tmp/u2-server.log"
MAIN_CLASS = "com.wetest.uia2.Main"
START_TIMEOUT = 30.0


class ServerNotStarted(Exception):
    """The detached server did not answer in time; ``output`` is what it printed (``already registered`` ...)."""

    def __init__(self, output: str) -> None:
        super().__init__(output.strip() or "the uiautomator2 server did not answer")
        self.output = output


def _get(adb: adbutils.AdbDevice, path: str, timeout: float = 3.0) -> bytes | None:
    """The body of ``GET path`` on the phone's server, or None when nothing answers."""
    try:
        sock = adb.create_connection(adbutils.Network.TCP, PORT)
    except (adbutils.AdbError, OSError):
        return None
    try:
        sock.settimeout(timeout)
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    except (TimeoutError, OSError):
        return None
    finally:
        sock.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return body if head.startswith(b"HTTP/1.1 200") or head.startswith(b"HTTP/1.0 200") else None


def running(adb: adbutils.AdbDevice) -> bool:
    return _get(adb, "/ping") == b"pong"


@cache
def _jar() -> tuple[bytes, str]:
    from uiautomator2.utils import with_package_resource

    with with_package_resource("assets/u2.jar") as path:
        data = open(path, "rb").read()
    return data, hashlib.md5(data).hexdigest()


def _push_jar(adb: adbutils.AdbDevice) -> None:
    data, md5 = _jar()
    if md5 not in adb.shell(["toybox", "md5sum", JAR]):
        adb.sync.push(data, JAR, 0o755, check=True)


def start_detached(adb: adbutils.AdbDevice, serial: str, timeout: float = START_TIMEOUT) -> None:
    """Start the server so that it outlives this process (no-op when it answers already)."""
    if running(adb):
        return
    _push_jar(adb)
    adb.shell(f"CLASSPATH={JAR} nohup app_process / {MAIN_CLASS} -p {PORT} > {LOG} 2>&1 &")
    deadline = time.monotonic() + timeout
    delay = 0.05
    while time.monotonic() < deadline:
        if running(adb):
            return
        if "already registered" in adb.shell(["cat", LOG]):
            raise U2AlreadyRegistered(
                f"phone {serial}: another tool holds UiAutomation (already registered)",
                "stop Appium, Maestro or other automation on the phone, then retry",
            )
        time.sleep(delay)
        delay = min(0.5, delay * 2)
    raise ServerNotStarted(adb.shell(["cat", LOG]))


def configure_call(idle_timeout_ms: int):
    """The call that makes the server's view-tree dumps wait for idle.

    The u2.jar's dump waits for idle (stub/AccessibilityNodeInfoDumper ``getWindowRoots`` begins with
    ``device.waitForIdle()``), but only for the Configurator's waitForIdleTimeout, which AutomatorServiceImpl's
    constructor sets to 0 (sources in sim/wire/u2server.py); ``setConfigurator`` raises it, so that a dump taken
    beside the idle wait after an action describes the idle screen. A new server process forgets it: the device
    sends it at the front of its first request to every server it (re)starts or finds.
    """
    from mobile_agent.device.u2_rpc import Call

    return Call("setConfigurator", ({"waitForIdleTimeout": idle_timeout_ms},))


def stop(adb: adbutils.AdbDevice) -> bool:
    """Ask the server to quit; True when one was running."""
    return _get(adb, "/stop") is not None


__all__ = ["PORT", "ServerNotStarted", "configure_call", "running", "start_detached", "stop"]
