"""The simulated phone's /system/bin/sh: the `sh` language (mobile_agent.sim.sh) running the Android commands
(mobile_agent.sim.commands). Nothing here ever runs anything on the host.

The names below are the ones adbd.py and the tests import; they stay importable from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mobile_agent.sim import sh
from mobile_agent.sim.apk import apk_package_name
from mobile_agent.sim.commands import ANDROID_COMMANDS
from mobile_agent.sim.sh import ShellIO, ShellSyntaxError, parse, tokenize

if TYPE_CHECKING:
    from mobile_agent.sim.phone import Phone

__all__ = ["ShellIO", "ShellSession", "ShellSyntaxError", "apk_package_name", "parse", "tokenize"]


class ShellSession(sh.ShellSession):
    """One `sh -c` (or one interactive session) on the phone, with the Android commands installed."""

    def __init__(self, phone: Phone) -> None:
        super().__init__(phone, ANDROID_COMMANDS)
