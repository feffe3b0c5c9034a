"""The simulated phone's /system/bin/sh as adbd runs it: the `sh` language (sh.py) with the Android commands
(commands/, one module per area) installed. Nothing here ever runs anything on the host."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mobile_agent.sim.shell.commands import activity, basics, files, input_ime, packages, screen, system
from mobile_agent.sim.shell.sh import CommandTable, ShellSession

if TYPE_CHECKING:
    from mobile_agent.sim.phone.phone import Phone

ANDROID_COMMANDS = CommandTable()
for _module in (basics, files, system, input_ime, activity, packages, screen):
    ANDROID_COMMANDS.update(_module.COMMANDS)


class AndroidShell(ShellSession):
    """One `sh -c` (or one interactive session) on the phone, with the Android commands installed."""

    def __init__(self, phone: Phone) -> None:
        super().__init__(phone, ANDROID_COMMANDS)
