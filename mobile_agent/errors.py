"""One exception tree for the whole runtime.

Every error a user can cause or fix carries a ``hint``; the CLI prints ``error: <message>`` and ``hint: <hint>`` on
one line each and exits with code 2 for user errors, 1 for everything else. No traceback reaches a user.
"""

from __future__ import annotations


class MobileAgentError(Exception):
    """Base of every error the runtime raises on purpose."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def one_line(self) -> str:
        return f"{self.message} (hint: {self.hint})" if self.hint else self.message


class UserError(MobileAgentError):
    """Bad input from the user: arguments, files, configuration. Exit code 2."""

    exit_code = 2


class ConfigError(UserError):
    """A configuration, manifest, scenario or task file is wrong. Names the file and line when known."""

    def __init__(
        self, message: str, hint: str | None = None, *, path: str | None = None, line: int | None = None
    ):
        where = f"{path}:{line}: " if path and line else (f"{path}: " if path else "")
        super().__init__(where + message, hint)
        self.path = path
        self.line = line


class DeviceError(MobileAgentError):
    """Something went wrong talking to a phone."""

    kind = "device"


class DeviceNotFound(DeviceError, UserError):
    kind = "device_not_found"


class DeviceLost(DeviceError):
    """The phone went offline or its connection broke mid-operation."""

    kind = "device_lost"


class DeviceUnauthorized(DeviceError, UserError):
    kind = "unauthorized"


class AdbServerUnreachable(DeviceError, UserError):
    """Nothing answers at the adb server's address. The runtime never starts a server itself: the hint says how."""

    kind = "adb"


class U2AlreadyRegistered(DeviceError):
    """Another tool (Appium, Maestro, ...) holds the phone's UiAutomation."""

    kind = "u2_already_registered"


class InputSecurityError(DeviceError):
    """A vendor security setting blocks injected input (Xiaomi: 'USB debugging (security settings)')."""

    kind = "input_blocked"


class ModelError(MobileAgentError):
    """The model endpoint failed after retries."""

    kind = "model"


class ModelUnavailable(ModelError):
    kind = "model_unavailable"


class DeadlineExceeded(MobileAgentError):
    """A wait ran past the step's or the episode's deadline; the episode ends as ``timeout``."""

    kind = "timeout"


class ParseError(MobileAgentError):
    """A model reply could not be turned into an action. Recorded as a failed step, never a crash."""

    kind = "parse"

    def __init__(self, message: str, reply: str = "", hint: str | None = None) -> None:
        super().__init__(message, hint)
        self.reply = reply


class StoreError(MobileAgentError):
    kind = "store"
