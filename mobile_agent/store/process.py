"""Who a process is (host, pid, start time), written as one owner key, and whether the owner behind a key is gone.

The start time tells a live process from a new one that got the same pid after the first died: on Linux it is the
boot id plus the process's start tick from /proc, elsewhere empty (then only "is the pid alive" is checked).

    key = this_process()                 # "build-7:4242:3f1c9a2e-1735021"
    owner_gone(key)                      # None while it runs; the reason once it is gone (same host only)
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


@dataclass(frozen=True)
class Owner:
    host: str
    pid: int
    start: str  # "" when the platform does not say

    @property
    def key(self) -> str:
        return f"{self.host}:{self.pid}:{self.start}"

    @classmethod
    def parse(cls, key: str) -> Owner | None:
        """An owner key (or a farm worker id host:pid:random); None when it is not one."""
        host, sep, rest = key.partition(":")
        pid_text, _, start = rest.partition(":")
        if not sep or not host or not pid_text.isdigit():
            return None
        return cls(host, int(pid_text), start)


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()[:8]
    except OSError:
        return ""


def process_start(pid: int) -> str | None:
    """The start time of process ``pid`` as "<boot>-<ticks>", "" when unknown here, None when no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None if Path("/proc/self/stat").exists() else ""
    except OSError:
        return ""
    # Field 22 (starttime); the command name (field 2) may hold spaces and parentheses, so split after its ')'.
    fields = stat.rpartition(")")[2].split()
    if len(fields) < 20:
        return ""
    return f"{_boot_id()}-{fields[19]}"


@lru_cache(maxsize=1)
def _this(pid: int) -> Owner:
    return Owner(socket.gethostname(), pid, process_start(pid) or "")


def this_process() -> str:
    """The owner key of the calling process (recomputed after a fork)."""
    return _this(os.getpid()).key


def owner_gone(key: str) -> str | None:
    """Why the process behind ``key`` is known to be gone, or None (alive, or on another host: ask its heartbeat)."""
    owner = Owner.parse(key)
    if owner is None or owner.host != socket.gethostname():
        return None
    recorded = owner.start if "-" in owner.start else ""  # a farm worker id ends in a random tag, not a start
    if owner.pid == os.getpid():
        if recorded and recorded != _this(owner.pid).start:
            return f"process {owner.pid} on {owner.host} is gone (the pid now belongs to another process)"
        return None
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return f"process {owner.pid} on {owner.host} is gone"
    except PermissionError:
        pass  # alive, another user's
    start = process_start(owner.pid)
    if start is None:
        return f"process {owner.pid} on {owner.host} is gone"
    if recorded and start and start != recorded:
        return f"process {owner.pid} on {owner.host} is gone (the pid now belongs to another process)"
    return None


def is_this_host(key: str) -> bool:
    owner = Owner.parse(key)
    return owner is not None and owner.host == socket.gethostname()


__all__ = ["Owner", "is_this_host", "owner_gone", "process_start", "this_process"]
