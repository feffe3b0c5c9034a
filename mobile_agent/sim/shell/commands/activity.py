"""The activity manager and monkey: `am start`, `am force-stop`, `am broadcast`, `monkey -p`; intent arguments."""

from __future__ import annotations

from dataclasses import dataclass, field

from mobile_agent.sim.shell.commands.input_ime import adb_keyboard_broadcast
from mobile_agent.sim.shell.sh import CommandTable, Ctx

COMMANDS = CommandTable()


@dataclass
class Intent:
    action: str | None = None
    categories: list[str] = field(default_factory=list)
    component: str | None = None
    data: str | None = None
    package: str | None = None
    extras: dict[str, str] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)  # -W -S ...

    def describe(self) -> str:
        parts = []
        if self.action:
            parts.append(f"act={self.action}")
        if self.categories:
            parts.append(f"cat=[{','.join(self.categories)}]")
        if self.data:
            parts.append(f"dat={self.data}")
        if self.package:
            parts.append(f"pkg={self.package}")
        if self.component:
            parts.append(f"cmp={self.component}")
        if self.extras:
            parts.append("(has extras)")
        return "Intent { " + " ".join(parts) + " }"


EXTRA_OPTIONS = {"-e", "--es", "--ei", "--ez", "--el", "--ef", "--eu", "--ecn", "--esn"}


def parse_intent(args: list[str]) -> Intent:
    intent = Intent()
    i = 0
    while i < len(args):
        arg = args[i]
        value = args[i + 1] if i + 1 < len(args) else ""
        if arg == "-a":
            intent.action, i = value, i + 2
        elif arg == "-c":
            intent.categories.append(value)
            i += 2
        elif arg == "-n":
            intent.component, i = value, i + 2
        elif arg == "-d":
            intent.data, i = value, i + 2
        elif arg == "-p":
            intent.package, i = value, i + 2
        elif arg in EXTRA_OPTIONS:
            intent.extras[value] = args[i + 2] if i + 2 < len(args) else ""
            i += 3
        elif arg in ("--esn",):
            intent.extras[value] = ""
            i += 2
        elif arg in ("-t", "-f", "--user", "-R", "-P", "--start-profiler", "--display", "--windowingMode"):
            i += 2
        elif arg.startswith("-"):
            intent.flags.add(arg)
            i += 1
        else:
            intent.data = intent.data or arg
            i += 1
    return intent


def _launch(ctx: Ctx, package: str, activity: str | None) -> bool:
    cold = ctx.phone.profile.cold_start
    if cold:
        ctx.io.flush()
    return bool(ctx.phone.launch(package, activity))


@COMMANDS.register("am")
def _am(ctx: Ctx) -> int:
    sub = ctx.args[1] if len(ctx.args) > 1 else ""
    rest = ctx.args[2:]
    if sub in ("start", "start-activity"):
        return _am_start(ctx, parse_intent(rest))
    if sub == "force-stop" and rest:
        ctx.phone.force_stop(rest[-1])
        return 0
    if sub == "broadcast":
        return _am_broadcast(ctx, parse_intent(rest))
    return ctx.fail(f"Unknown command: {sub}" if sub else "usage: am [subcommand] [options]", 255)


def _am_start(ctx: Ctx, intent: Intent) -> int:
    ctx.out(f"Starting: {intent.describe()}\n")
    package = activity = None
    if intent.component and "/" in intent.component:
        package, activity = intent.component.split("/", 1)
        if activity.startswith("."):
            activity = package + activity
    elif intent.package:
        package = intent.package
    elif intent.action and intent.action.startswith("android.settings."):
        package = "com.android.settings"
    if package is None:
        return ctx.fail(f"Error: Activity not started, unable to resolve {intent.describe()}")
    if "-S" in intent.flags:
        ctx.phone.force_stop(package)
    if not _launch(ctx, package, activity):
        ctx.out("Error type 3\n")
        return ctx.fail(f"Error: Activity class {{{intent.component or package}}} does not exist.")
    if "-W" in intent.flags:
        current_package, current_activity = ctx.phone.current()
        ctx.out(
            f"Status: ok\nLaunchState: COLD\nActivity: {current_package}/{current_activity}\n"
            "TotalTime: 0\nWaitTime: 1\nComplete\n"
        )
    return 0


def _am_broadcast(ctx: Ctx, intent: Intent) -> int:
    ctx.out(f"Broadcasting: {intent.describe()}\n")
    result, data = adb_keyboard_broadcast(ctx, intent.action or "", intent.extras)
    ctx.out(
        f'Broadcast completed: result={result}, data="{data}"\n'
        if data
        else f"Broadcast completed: result={result}\n"
    )
    return 0


@COMMANDS.register("monkey")
def _monkey(ctx: Ctx) -> int:
    args = ctx.args[1:]
    packages = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-p"]
    for package in packages:
        if package in ctx.phone.installed_packages() and _launch(ctx, package, None):
            ctx.out(
                "Events injected: 1\n## Network stats: elapsed time=5ms (0ms mobile, 0ms wifi, 5ms not connected)\n"
            )
            return 0
    ctx.err("** No activities found to run, monkey aborted.\n")
    return 252
