"""The Android commands of the simulated phone's shell, one module per area; ANDROID_COMMANDS joins them."""

from __future__ import annotations

from mobile_agent.sim.commands import activity, basics, files, input_ime, packages, screen, system
from mobile_agent.sim.sh import CommandTable

ANDROID_COMMANDS = CommandTable()
for _module in (basics, files, system, input_ime, activity, packages, screen):
    ANDROID_COMMANDS.update(_module.COMMANDS)

__all__ = ["ANDROID_COMMANDS"]
