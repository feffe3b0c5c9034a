"""File commands on the phone's simulated file system: md5sum, cat, ls, rm, mkdir, touch, chmod/chown/sync, grep."""

from __future__ import annotations

import hashlib
import re
import stat as stat_mod
import time

from mobile_agent.sim.phone.fs import FsError, normalize
from mobile_agent.sim.shell.sh import CommandTable, Ctx

COMMANDS = CommandTable()


def _split_flags(args: list[str]) -> tuple[set[str], list[str]]:
    flags: set[str] = set()
    rest = []
    for arg in args:
        if arg.startswith("-") and len(arg) > 1 and not rest:
            flags.update(arg[1:])
        else:
            rest.append(arg)
    return flags, rest


@COMMANDS.register("md5sum")
def _md5sum(ctx: Ctx) -> int:
    _, paths = _split_flags(ctx.args[1:])
    status = 0
    for path in paths:
        try:
            digest = hashlib.md5(ctx.phone.fs.read(normalize(path))).hexdigest()
        except FsError as exc:
            status = ctx.fail(f"md5sum: {path}: {exc.strerror}")
            continue
        ctx.out(f"{digest}  {path}\n")
    if not paths:
        ctx.out(f"{hashlib.md5(ctx.stdin).hexdigest()}  -\n")
    return status


@COMMANDS.register("cat")
def _cat(ctx: Ctx) -> int:
    _, paths = _split_flags(ctx.args[1:])
    if not paths:
        ctx.out(ctx.stdin)
        return 0
    status = 0
    for path in paths:
        try:
            ctx.out(ctx.phone.fs.read(normalize(path)))
        except FsError as exc:
            status = ctx.fail(f"cat: {path}: {exc.strerror}")
    return status


def _ls_line(name: str, mode: int, size: int, mtime: int) -> str:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(mtime))
    return f"{stat_mod.filemode(mode)} 1 shell shell {size:>8} {when} {name}\n"


@COMMANDS.register("ls")
def _ls(ctx: Ctx) -> int:
    flags, paths = _split_flags(ctx.args[1:])
    status = 0
    fs = ctx.phone.fs
    for path in paths or ["."]:
        st = fs.stat(normalize(path))
        if st is None:
            status = ctx.fail(f"ls: {path}: No such file or directory")
            continue
        if not st.is_dir or "d" in flags:
            ctx.out(_ls_line(path, st.mode, st.size, st.mtime) if "l" in flags else path + "\n")
            continue
        if len(paths) > 1:
            ctx.out(f"{path}:\n")
        for name, child in fs.listdir(normalize(path)):
            if name.startswith(".") and "a" not in flags:
                continue
            ctx.out(_ls_line(name, child.mode, child.size, child.mtime) if "l" in flags else name + "\n")
    return status


@COMMANDS.register("rm")
def _rm(ctx: Ctx) -> int:
    flags, paths = _split_flags(ctx.args[1:])
    status = 0
    for path in paths:
        try:
            ctx.phone.fs.remove(normalize(path), recursive="r" in flags or "R" in flags)
        except FsError as exc:
            if "f" in flags and exc.errno == 2:
                continue
            status = ctx.fail(f"rm: {path}: {exc.strerror}")
    return status


@COMMANDS.register("mkdir")
def _mkdir(ctx: Ctx) -> int:
    flags, paths = _split_flags(ctx.args[1:])
    status = 0
    for path in paths:
        try:
            ctx.phone.fs.mkdir(normalize(path), parents="p" in flags)
        except FsError as exc:
            status = ctx.fail(f"mkdir: '{path}': {exc.strerror}")
    return status


@COMMANDS.register("touch")
def _touch(ctx: Ctx) -> int:
    for path in _split_flags(ctx.args[1:])[1]:
        fs = ctx.phone.fs
        full = normalize(path)
        fs.write(full, fs.read(full) if fs.exists(full) and not fs.is_dir(full) else b"")
    return 0


@COMMANDS.register("chmod", "chown", "sync")
def _noop_on_paths(ctx: Ctx) -> int:
    for path in [a for a in ctx.args[2:] if not a.startswith("-")] if ctx.args[0] != "sync" else []:
        if not ctx.phone.fs.exists(normalize(path)):
            return ctx.fail(f"{ctx.args[0]}: {path}: No such file or directory")
    return 0


@COMMANDS.register("grep")
def _grep(ctx: Ctx) -> int:
    flags, rest = _split_flags(ctx.args[1:])
    if not rest:
        return ctx.fail("usage: grep [-ivqE] PATTERN [FILE...]", 2)
    pattern = re.compile(rest[0] if "E" in flags else re.escape(rest[0]), re.I if "i" in flags else 0)
    data = b"".join(ctx.phone.fs.read(normalize(p)) for p in rest[1:]) if rest[1:] else ctx.stdin
    matched = False
    for line in data.decode("utf-8", "replace").splitlines():
        if bool(pattern.search(line)) != ("v" in flags):
            matched = True
            if "q" not in flags:
                ctx.out(line + "\n")
    return 0 if matched else 1
