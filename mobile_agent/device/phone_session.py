"""Talking to one phone: its adb state, its uiautomator2 server (found running, else started; started again when
it lost UiAutomation) and the requests to it, each bounded by the call cap and the step's deadline.

The server is started detached (device/u2_server.py) and found running by the next run: the first request to a
server carries its set-up (``setConfigurator``), so connecting costs no request of its own; only when nothing
answers is the server started (the jar pushed when its md5 differs). A server that lost UiAutomation is started
again and the request asked again from the call that found it lost, as uiautomator2 itself does.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from functools import partial
from typing import TypeVar

import adbutils

from mobile_agent.device import u2_server
from mobile_agent.device.adb_server import AdbServerClient, adb_command
from mobile_agent.device.failures import TRANSPORT_ERRORS, server_lost_at, transport_error
from mobile_agent.device.u2_rpc import Answer, BatchUnsupported, Call, ServerUnreachable, U2Channel
from mobile_agent.errors import (
    AdbServerUnreachable,
    DeadlineExceeded,
    DeviceError,
    DeviceLost,
    DeviceNotFound,
    DeviceUnauthorized,
)
from mobile_agent.waits.deadlines import Abandoned, Deadline, call_within

log = logging.getLogger(__name__)
T = TypeVar("T")

RPC_TIMEOUT = 20.0
# No single device call (a screenshot, a hierarchy dump, a shell command, the server's start) is waited for longer
# than this, nor past the step's deadline: a call that has not returned by then is abandoned (deadlines.call_within).
CALL_TIMEOUT = 60.0


class PhoneSession:
    """The adb device and u2 server of one phone, and the requests to it. Thread-safe."""

    def __init__(
        self, serial: str, adb_address: str | None, client: AdbServerClient, idle_timeout_ms: int
    ) -> None:
        self.serial = serial
        self.adb_address = adb_address
        self.client = client
        self.idle_timeout_ms = idle_timeout_ms
        self.channel = U2Channel(self._open_stream)
        self.deadline: Deadline | None = None
        self.dump_waits_idle = False
        self._adb: adbutils.AdbDevice | None = None
        self._own_server = None  # uiautomator2's launch of a server, when the detached one would not start
        self._setup_lock = threading.Lock()
        self._checked = False  # the adb server says the phone is attached and authorised
        self._configured = False  # the running server has had its set-up (dumps wait for idle)
        self._batches: bool | None = None  # the server answers JSON-RPC batches (None: not asked yet)

    @property
    def adb(self) -> adbutils.AdbDevice:
        if self._adb is None:
            self._adb = self.client.device(self.serial)
        return self._adb

    def _open_stream(self):  # noqa: ANN202 - a socket to the server's port on the phone
        return self.adb.create_connection(adbutils.Network.TCP, u2_server.PORT)

    def start_server(self, *, restart: bool = False) -> None:
        with self._setup_lock:
            self._configured = False
            self.channel.close()
            if restart:
                self.bounded(lambda: u2_server.stop(self.adb), "stopping the uiautomator2 server")
            try:
                self.guard(lambda: u2_server.start_detached(self.adb, self.serial), "starting the u2 server")
            except u2_server.ServerNotStarted as exc:  # uiautomator2 then launches one held by this process
                log.warning("phone %s: the detached u2 server did not start (%s)", self.serial, exc)
                import uiautomator2

                self._own_server = self.guard(
                    lambda: uiautomator2.connect(self.adb), "the uiautomator2 connect"
                )

    def stop_server(self) -> bool:
        """Stop the phone's u2 server (it keeps running between runs otherwise). True when one was running."""
        self.channel.close()
        self._configured = False
        try:
            return self.bounded(lambda: u2_server.stop(self.adb), "stopping the uiautomator2 server")
        except DeviceError as exc:  # a phone that is gone has no server to stop
            log.warning("phone %s: %s", self.serial, exc.one_line())
            return False

    def forget_connections(self) -> None:
        """After the phone left the bus and came back: its connections are dead and its state is asked again (the
        u2 server is found running, else started, by the next request)."""
        self.channel.close()
        self._adb = None
        self._checked = self._configured = False

    def check_state(self) -> None:
        try:
            state = self.bounded(lambda: self.adb.get_state(), "adb get-state")
        except adbutils.AdbError as exc:
            text = str(exc)
            if "unauthorized" in text:
                state = "unauthorized"
            elif "not found" in text:
                raise DeviceNotFound(
                    f"phone {self.serial} is not attached",
                    f"check `{adb_command(self.adb_address, 'devices')}`",
                ) from None
            else:
                raise DeviceLost(f"phone {self.serial}: {text}", "check the cable or network") from None
        except OSError as exc:
            raise DeviceLost(f"adb server unreachable: {exc}", "is the adb server still running?") from None
        if state == "unauthorized":
            raise DeviceUnauthorized(
                f"phone {self.serial} is unauthorized",
                "unlock it and accept the 'Allow USB debugging' prompt",
            )
        if state != "device":
            raise DeviceLost(
                f"phone {self.serial} is {state}",
                f"reconnect it (replug the cable, or `{adb_command(self.adb_address, 'connect', self.serial)}` "
                "for a network phone)",
            )

    def bounded(self, call: Callable[[], T], what: str) -> T:
        """Run a device call on a helper thread, waiting at most CALL_TIMEOUT and never past the deadline."""
        deadline = self.deadline
        bound = deadline.bound(CALL_TIMEOUT) if deadline is not None else CALL_TIMEOUT
        try:
            return call_within(call, bound, name=f"adb-{self.serial}")
        except Abandoned:
            if deadline is not None and deadline.expired:
                raise deadline.exceeded(f"{what} on phone {self.serial}") from None
            raise DeviceError(
                f"phone {self.serial}: {what} did not answer within {bound:.0f} s",
                f"is the phone frozen? check it with `{adb_command(self.adb_address, '-s', self.serial, 'shell')}` "
                "or reboot it",
            ) from None
        except (AdbServerUnreachable, DeadlineExceeded):
            raise
        except Exception:
            if deadline is not None and deadline.expired:  # a read cut short by the deadline's socket timeout
                raise deadline.exceeded(f"{what} on phone {self.serial}") from None
            raise

    def guard(self, call: Callable[[], T], what: str = "a device call") -> T:
        """Run a bounded adb call, turning library exceptions into our error tree."""
        try:
            return self.bounded(call, what)
        except (DeviceError, DeadlineExceeded):
            raise
        except TRANSPORT_ERRORS as exc:
            raise transport_error(self.client, self.serial, exc) from None
        except Exception as exc:  # uiautomator2's own errors (its connect)
            raise DeviceError(f"phone {self.serial}: {what}: {type(exc).__name__}: {exc}") from None

    def _timeout(self, seconds: float) -> float:
        return max(0.1, self.deadline.bound(seconds)) if self.deadline is not None else seconds

    # ----- requests ---------------------------------------------------------------------------------------------
    def ask(
        self, calls: Sequence[Call], what: str, timeout: float = RPC_TIMEOUT, *, repeatable: bool = True
    ) -> list[Answer]:
        """The answers to ``calls`` from one request (one per call on a server without batches).

        Nothing answering means no server: it is started and the request sent again (nothing was done). A server
        that lost UiAutomation is started again and asked again from the call that found it lost."""
        if not self._checked:
            self.check_state()
            self._checked = True
        calls = list(calls)
        for _ in range(3):
            deferred = self.channel.take_deferred()
            setup = [] if self._configured else [u2_server.configure_call(self.idle_timeout_ms)]
            prefix = deferred + setup
            everything = prefix + calls
            if not everything:
                return []
            seconds = self._timeout(timeout)
            try:
                answers = self.bounded(partial(self._send, everything, seconds, repeatable), what)
            except ServerUnreachable:
                for call in deferred:
                    self.channel.defer(call)  # sent with the request once the server is up
                self.start_server()
                continue
            except TRANSPORT_ERRORS as exc:
                raise transport_error(self.client, self.serial, exc) from None
            except ValueError as exc:  # an answer that is not JSON-RPC
                raise DeviceError(f"phone {self.serial}: {what}: {exc}") from None
            head, answers = answers[: len(prefix)], answers[len(prefix) :]
            lost = server_lost_at(head + answers)
            if lost is not None:
                log.info("phone %s: the u2 server lost UiAutomation; starting it again", self.serial)
                done = max(0, lost - len(prefix))
                for call in deferred[lost:]:
                    self.channel.defer(call)  # not done: sent again to the new server
                self.start_server(restart=True)
                return answers[:done] + self.ask(calls[done:], what, timeout, repeatable=repeatable)
            if setup:
                self._configured = True
                self.dump_waits_idle = not head[-1].failed
            return answers
        raise DeviceError(
            f"phone {self.serial}: the uiautomator2 server does not answer",
            f"check it with `{adb_command(self.adb_address, '-s', self.serial, 'shell')}`",
        )

    def _send(self, calls: list[Call], timeout: float, repeatable: bool) -> list[Answer]:
        if self._batches is not False and len(calls) > 1:
            try:
                answers = self.channel.batch(calls, timeout, repeatable=repeatable)
            except BatchUnsupported:
                self._batches = False  # it refused the array as a request: nothing of it ran
            else:
                self._batches = True
                return answers
        return [self.channel.call(call, timeout, repeatable=repeatable) for call in calls]


__all__ = ["CALL_TIMEOUT", "RPC_TIMEOUT", "PhoneSession"]
