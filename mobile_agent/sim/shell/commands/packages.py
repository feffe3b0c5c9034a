"""The package manager: `pm list/path/clear/grant/dump/install/uninstall` and `cmd package`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mobile_agent.sim.phone.fs import FsError, normalize
from mobile_agent.sim.shell.apk import apk_package_name
from mobile_agent.sim.shell.commands.activity import parse_intent
from mobile_agent.sim.shell.commands.system import dumpsys_package
from mobile_agent.sim.shell.sh import CommandTable, Ctx

if TYPE_CHECKING:
    from mobile_agent.sim.phone.phone import Phone

COMMANDS = CommandTable()


def _is_system_package(phone: Phone, package: str) -> bool:
    check = getattr(phone, "is_system_package", None)
    if callable(check):
        return bool(check(package))
    return package == "android" or package.startswith(("com.android.", "com.google.android."))


def _pm_list_packages(ctx: Ctx, args: list[str]) -> int:
    flags = {a for a in args if a.startswith("-")}
    user_values = {args[i + 1] for i, a in enumerate(args[:-1]) if a == "--user"}
    filters = [a for a in args if not a.startswith("-") and a not in user_values]
    for package in sorted(ctx.phone.installed_packages()):
        system = _is_system_package(ctx.phone, package)
        if ("-3" in flags and system) or ("-s" in flags and not system):
            continue
        if filters and filters[0] not in package:
            continue
        prefix = f"{ctx.phone.package_path(package)}=" if "-f" in flags else ""
        ctx.out(f"package:{prefix}{package}\n")
    return 0


@COMMANDS.register("pm")
def _pm(ctx: Ctx) -> int:
    sub = ctx.args[1] if len(ctx.args) > 1 else ""
    rest = ctx.args[2:]
    phone = ctx.phone
    if sub == "list" and rest[:1] == ["packages"]:
        return _pm_list_packages(ctx, rest[1:])
    if sub == "path" and rest:
        path = phone.package_path(rest[-1])
        if not path:
            return 1
        ctx.out(f"package:{path}\n")
        return 0
    if sub == "clear" and rest:
        if rest[-1] not in phone.installed_packages():
            ctx.out("Failed\n")
            return 1
        phone.clear_data(rest[-1])
        ctx.out("Success\n")
        return 0
    if sub in ("grant", "revoke") and len(rest) >= 2:
        return 0
    if sub == "dump" and rest:
        ctx.out(dumpsys_package(ctx, rest[-1]))
        return 0
    if sub == "install":
        return _pm_install(ctx, rest)
    if sub == "uninstall":
        return _pm_uninstall(ctx, rest)
    return ctx.fail(f"Unknown command: {sub}" if sub else "usage: pm [list|path|clear|grant|dump] ...", 255)


@COMMANDS.register("cmd")
def _cmd(ctx: Ctx) -> int:
    service = ctx.args[1] if len(ctx.args) > 1 else ""
    rest = ctx.args[2:]
    if service == "package" and rest[:1] == ["resolve-activity"]:
        args = [a for a in rest[1:] if a != "--brief"]
        package = parse_intent(args).data or ""
        activity = _launcher_activity(ctx.phone, package)
        if activity is None:
            ctx.out("No activity found\n")
            return 0
        ctx.out(
            f"priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n{package}/{activity}\n"
        )
        return 0
    if service == "package" and rest[:2] == ["list", "packages"]:
        return _pm_list_packages(ctx, rest[2:])
    return ctx.fail(f"Can't find service: {service}" if service else "cmd: no service given", 20)


def _launcher_activity(phone: Phone, package: str) -> str | None:
    if package not in phone.installed_packages():
        return None
    resolve = getattr(phone, "launcher_activity", None)
    return resolve(package) if callable(resolve) else None


def _pm_install(ctx: Ctx, args: list[str]) -> int:
    paths = [a for a in args if not a.startswith("-")]
    if not paths:
        return ctx.fail("Error: no package specified", 255)
    try:
        apk = ctx.phone.fs.read(normalize(paths[-1]))
    except FsError:
        ctx.out(f"Failure [INSTALL_FAILED_INVALID_URI: Can't open file: {paths[-1]}]\n")
        return 1
    package = apk_package_name(apk)
    if package is None:
        ctx.out("Failure [INSTALL_PARSE_FAILED_NOT_APK: Failed to parse APK]\n")
        return 1
    ctx.phone.install(package)
    ctx.out("Success\n")
    return 0


def _pm_uninstall(ctx: Ctx, args: list[str]) -> int:
    packages = [a for a in args if not a.startswith("-")]
    if packages and ctx.phone.uninstall(packages[-1]):
        ctx.out("Success\n")
        return 0
    ctx.out("Failure [DELETE_FAILED_INTERNAL_ERROR]\n")
    return 1
