"""sh builtins and the toybox identity applets: true, false, exit, echo, sleep, id, whoami, pwd, toybox, nohup."""

from __future__ import annotations

from dataclasses import replace

from mobile_agent.sim.shell.sh import CommandTable, Ctx, Exit

MAX_SLEEP = 10.0

COMMANDS = CommandTable()


@COMMANDS.register("true")
def _true(ctx: Ctx) -> int:
    return 0


@COMMANDS.register("false")
def _false(ctx: Ctx) -> int:
    return 1


@COMMANDS.register("exit")
def _exit(ctx: Ctx) -> int:
    return Exit(
        int(ctx.args[1]) & 0xFF if len(ctx.args) > 1 and ctx.args[1].isdigit() else ctx.session.status
    )


@COMMANDS.register("echo")
def _echo(ctx: Ctx) -> int:
    args, newline, escapes = ctx.args[1:], True, False
    while args and args[0] in ("-n", "-e", "-ne", "-en", "-E"):
        newline = newline and "n" not in args[0]
        escapes = escapes or "e" in args[0][1:]
        args = args[1:]
    text = " ".join(args)
    if escapes:
        text = text.replace("\\n", "\n").replace("\\t", "\t").replace("\\\\", "\\")
    ctx.out(text + ("\n" if newline else ""))
    return 0


@COMMANDS.register("sleep")
def _sleep(ctx: Ctx) -> int:
    try:
        seconds = float(ctx.args[1])
    except (IndexError, ValueError):
        return ctx.fail("sleep: need a number of seconds")
    ctx.io.flush()
    ctx.io.hangup.wait(min(max(seconds, 0.0), MAX_SLEEP))
    return 0


@COMMANDS.register("id")
def _id(ctx: Ctx) -> int:
    ctx.out(
        "uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),1015(sdcard_rw),"
        "1028(sdcard_r),3001(net_bt_admin),3002(net_bt),3003(inet),3006(net_bw_stats),3009(readproc) "
        "context=u:r:shell:s0\n"
    )
    return 0


@COMMANDS.register("whoami")
def _whoami(ctx: Ctx) -> int:
    ctx.out("shell\n")
    return 0


@COMMANDS.register("pwd")
def _pwd(ctx: Ctx) -> int:
    ctx.out("/\n")
    return 0


@COMMANDS.register("toybox")
def _toybox(ctx: Ctx) -> int:
    if len(ctx.args) < 2:
        ctx.out(" ".join(sorted(TOYBOX_APPLETS)) + "\n")
        return 0
    if ctx.args[1] not in TOYBOX_APPLETS:
        return ctx.fail(f"toybox: Unknown command {ctx.args[1]}")
    ctx.args = ctx.args[1:]
    return ctx.session.commands[ctx.args[0]](ctx)


TOYBOX_APPLETS = {
    "md5sum",
    "cat",
    "ls",
    "rm",
    "mkdir",
    "touch",
    "echo",
    "sleep",
    "id",
    "whoami",
    "pwd",
    "grep",
}
TOYBOX_APPLETS |= {"true", "false", "chmod", "chown", "sync"}


@COMMANDS.register("nohup")
def _nohup(ctx: Ctx) -> int:
    """Runs the command as given (a hangup never reaches a simulated job that `&` detached anyway)."""
    if len(ctx.args) < 2:
        return ctx.fail("usage: nohup COMMAND [ARG...]")
    fn = ctx.session.commands.get(ctx.args[1])
    if fn is None:
        return ctx.fail(f"nohup: {ctx.args[1]}: No such file or directory", 127)
    return fn(replace(ctx, args=ctx.args[1:]))
