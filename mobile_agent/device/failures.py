"""What a failed device call means, in the runtime's error tree: the phone is gone, the adb server is, the phone
refuses injected input, another tool holds UiAutomation, or the u2 server lost UiAutomation and must be started
again."""

from __future__ import annotations

import http.client

import adbutils

from mobile_agent.device.adb_server import AdbServerClient, adb_command, check_reachable
from mobile_agent.device.u2_rpc import Answer
from mobile_agent.errors import (
    AdbServerUnreachable,
    DeviceError,
    DeviceLost,
    InputSecurityError,
    U2AlreadyRegistered,
)

# The answers after which uiautomator2 starts its server again (uiautomator2 3.7.1 core._jsonrpc_call)
_SERVER_LOST = ("UiAutomation not connected", "DeadObjectException", "DeadSystemRuntimeException")
TRANSPORT_ERRORS = (adbutils.AdbError, adbutils.AdbTimeout, OSError, EOFError, http.client.HTTPException)


class ServerLost(Exception):
    """The u2 server answered that UiAutomation is gone: start it again, then ask again from ``index``."""

    def __init__(self, index: int, text: str) -> None:
        super().__init__(text)
        self.index = index


def server_lost_at(answers: list[Answer]) -> int | None:
    """The first call whose answer says the server lost UiAutomation (None when none does)."""
    for i, answer in enumerate(answers):
        if answer.failed and any(s in answer.text() for s in _SERVER_LOST):
            return i
    return None


def security_error(serial: str) -> InputSecurityError:
    return InputSecurityError(
        f"phone {serial} refuses injected input (SecurityException)",
        "on Xiaomi/Redmi enable Developer options > 'USB debugging (Security settings)'; on others allow simulated input",
    )


def already_registered(serial: str) -> U2AlreadyRegistered:
    return U2AlreadyRegistered(
        f"phone {serial}: another tool holds UiAutomation (already registered)",
        "stop Appium, Maestro or other automation on the phone, then retry",
    )


def answer_error(serial: str, method: str, answer: Answer) -> DeviceError:
    """A call that answered a JSON-RPC error."""
    text = answer.text()
    if "SecurityException" in text or "INJECT_EVENTS" in text:
        return security_error(serial)
    if "already registered" in text:
        return already_registered(serial)
    return DeviceError(f"phone {serial}: {method}: {text or answer.error}")


def transport_error(client: AdbServerClient, serial: str, exc: BaseException) -> DeviceError:
    """A call that failed on the way: a dead adb server is not a lost phone (the hint says how to start one)."""
    if "SecurityException" in str(exc):
        return security_error(serial)
    try:
        check_reachable(client.host, client.port)
    except AdbServerUnreachable as dead:
        return dead
    try:
        online = client.device(serial).get_state() == "device"
    except Exception:  # noqa: BLE001 - any failure here means the phone is gone
        online = False
    if not online:
        return DeviceLost(f"phone {serial} went offline ({type(exc).__name__}: {exc})", "reconnect it")
    address = f"{client.host}:{client.port}"
    return DeviceError(
        f"phone {serial}: {type(exc).__name__}: {exc}",
        f"check the phone with `{adb_command(address, '-s', serial, 'shell')}`",
    )


__all__ = [
    "TRANSPORT_ERRORS",
    "ServerLost",
    "already_registered",
    "answer_error",
    "security_error",
    "server_lost_at",
    "transport_error",
]
