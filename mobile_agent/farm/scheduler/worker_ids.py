"""Worker ids (host:pid:random) and telling a dead batch process on this host from a live one."""

from __future__ import annotations

import os
import secrets
import socket


def new_worker_id() -> str:
    """host:pid:random — the host and pid let `--resume` tell a dead batch process from a live one."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


def worker_is_dead(worker: str) -> bool:
    """True only when the worker ran on this host and its process is gone. Other hosts: rely on lease expiry."""
    host, _, rest = worker.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
