"""The simulated phone's /system/bin/sh: parses command lines like sh and runs a small set of Android commands.

Only the syntax adb clients really send is understood: words with '…', "…" and \\ quoting, $? / $VAR / ${VAR},
`VAR=val cmd`, `;` `&&` `||` `|` `&` and newlines, redirections `>`, `>>`, `2>`, `2>&1`, `<`. Command substitution
($(…) and backticks) is never performed: such text stays literal. Nothing here ever runs anything on the host;
every command is a Python function acting on the Phone. Outputs follow what the regexes in adbutils 2.12 and
uiautomator2 3.7.1 parse.
"""

from __future__ import annotations

import base64
import hashlib
import io
import logging
import re
import stat as stat_mod
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PIL import Image

from mobile_agent.sim.fs import FsError, normalize

if TYPE_CHECKING:
    from mobile_agent.sim.phone import Phone

log = logging.getLogger(__name__)

MAX_SLEEP = 10.0
U2_MAIN_CLASS = "com.wetest.uia2.Main"
U2_IME = "com.github.uiautomator/.AdbKeyboard"
ADBKEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"
SHELL_PID = 4242

# --- lexing --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lit:
    text: str
    quoted: bool


@dataclass(frozen=True)
class Var:
    name: str
    quoted: bool


Segment = Lit | Var


@dataclass
class Word:
    segments: list[Segment] = field(default_factory=list)

    def assignment(self) -> tuple[str, list[Segment]] | None:
        """(NAME, value segments) when the word is `NAME=value` with an unquoted name."""
        if not self.segments or not isinstance(self.segments[0], Lit) or self.segments[0].quoted:
            return None
        m = re.match(r"([A-Za-z_]\w*)=", self.segments[0].text)
        if not m:
            return None
        rest = Lit(self.segments[0].text[m.end() :], False)
        return m.group(1), [rest, *self.segments[1:]]


@dataclass(frozen=True)
class Op:
    text: str  # ; && || | & > >> < 2> 2>> >&1 2>&1


class ShellSyntaxError(ValueError):
    pass


def tokenize(line: str) -> list[Word | Op]:
    tokens: list[Word | Op] = []
    word: Word | None = None
    lit: list[str] = []
    lit_quoted = False
    i, n = 0, len(line)

    def flush_lit() -> None:
        nonlocal lit
        if lit:
            assert word is not None
            word.segments.append(Lit("".join(lit), lit_quoted))
            lit = []

    def start_word() -> Word:
        nonlocal word
        if word is None:
            word = Word()
        return word

    def add_char(ch: str, quoted: bool) -> None:
        nonlocal lit_quoted
        start_word()
        if lit and lit_quoted != quoted:
            flush_lit()
        lit_quoted = quoted
        lit.append(ch)

    def end_word() -> None:
        nonlocal word
        flush_lit()
        if word is not None:
            tokens.append(word)
            word = None

    def read_var(pos: int, quoted: bool) -> int | None:
        """Parse $NAME / ${NAME} / $? / $$ at line[pos] == '$'. Return the next position, or None if literal."""
        nxt = line[pos + 1] if pos + 1 < n else ""
        if nxt in ("?", "$", "#") or nxt.isdigit():
            name, end = nxt, pos + 2
        elif nxt == "{":
            close = line.find("}", pos + 2)
            if close == -1:
                raise ShellSyntaxError("bad substitution")
            name, end = line[pos + 2 : close], close + 1
        else:
            m = re.match(r"[A-Za-z_]\w*", line[pos + 1 :])
            if not m:
                return None
            name, end = m.group(0), pos + 1 + m.end()
        start_word()
        flush_lit()
        assert word is not None
        word.segments.append(Var(name, quoted))
        return end

    while i < n:
        ch = line[i]
        if ch in " \t":
            end_word()
            i += 1
        elif ch == "\n":
            end_word()
            tokens.append(Op(";"))
            i += 1
        elif ch == "#" and word is None:
            while i < n and line[i] != "\n":
                i += 1
        elif ch == "'":
            close = line.find("'", i + 1)
            if close == -1:
                raise ShellSyntaxError("unterminated quoted string")
            start_word()
            for c in line[i + 1 : close]:
                add_char(c, True)
            if close == i + 1:  # '' is an empty word, not nothing
                flush_lit()
                word.segments.append(Lit("", True))  # type: ignore[union-attr]
            i = close + 1
        elif ch == '"':
            start_word()
            i += 1
            empty = True
            while True:
                if i >= n:
                    raise ShellSyntaxError("unterminated quoted string")
                c = line[i]
                if c == '"':
                    i += 1
                    break
                empty = False
                if c == "\\" and i + 1 < n and line[i + 1] in '$`"\\\n':
                    if line[i + 1] != "\n":
                        add_char(line[i + 1], True)
                    i += 2
                elif c == "$" and (end := read_var(i, True)) is not None:
                    i = end
                else:
                    add_char(c, True)
                    i += 1
            if empty:
                flush_lit()
                word.segments.append(Lit("", True))  # type: ignore[union-attr]
        elif ch == "\\":
            if i + 1 < n and line[i + 1] != "\n":
                add_char(line[i + 1], True)
            i += 2
        elif ch == "$" and (end := read_var(i, False)) is not None:
            i = end
        elif ch in ";&|<>":
            fd_prefix = ""
            if ch == ">" and word is not None and not lit_quoted and "".join(lit) in ("1", "2"):
                if len(word.segments) == 0:
                    fd_prefix = "".join(lit)
                    lit = []
                    word = None
            end_word()
            two = line[i : i + 2]
            if two in ("&&", "||", ">>"):
                op, i = two, i + 2
            else:
                op, i = ch, i + 1
            if op in (">", ">>") and line[i : i + 1] == "&":
                m = re.match(r"&(\d)", line[i:])
                if not m:
                    raise ShellSyntaxError("bad redirection")
                op, i = op + m.group(0), i + 2
            tokens.append(Op(fd_prefix + op))
        else:
            add_char(ch, False)
            i += 1
    end_word()
    return tokens


# --- parsing -------------------------------------------------------------------------------------------------

REDIRECT_OPS = {">", ">>", "1>", "1>>", "2>", "2>>", "<", ">&1", ">&2", "1>&2", "2>&1", "1>&1", "2>&2"}


@dataclass
class SimpleCommand:
    words: list[Word] = field(default_factory=list)
    redirects: list[tuple[str, Word | None]] = field(default_factory=list)


@dataclass
class AndOrItem:
    connector: str | None  # None for the first, else "&&", "||" or ";"
    pipeline: list[SimpleCommand]


def parse(tokens: list[Word | Op]) -> list[AndOrItem]:
    items: list[AndOrItem] = []
    pipeline: list[SimpleCommand] = []
    cmd = SimpleCommand()
    connector: str | None = None
    it = iter(range(len(tokens)))
    for idx in it:
        tok = tokens[idx]
        if isinstance(tok, Word):
            cmd.words.append(tok)
            continue
        if tok.text in REDIRECT_OPS:
            if tok.text.endswith(("&1", "&2")):
                cmd.redirects.append((tok.text, None))
                continue
            target = tokens[idx + 1] if idx + 1 < len(tokens) else None
            if not isinstance(target, Word):
                raise ShellSyntaxError(f"syntax error: unexpected '{tok.text}'")
            next(it)
            cmd.redirects.append((tok.text, target))
            continue
        if not cmd.words and not cmd.redirects:
            if tok.text == ";" and not pipeline:
                continue  # empty statements, e.g. a trailing newline
            raise ShellSyntaxError(f"syntax error: unexpected '{tok.text}'")
        pipeline.append(cmd)
        cmd = SimpleCommand()
        if tok.text == "|":
            continue
        items.append(AndOrItem(connector, pipeline))
        pipeline = []
        connector = ";" if tok.text == "&" else tok.text
    if cmd.words or cmd.redirects:
        pipeline.append(cmd)
    elif pipeline or connector in ("&&", "||"):
        raise ShellSyntaxError("syntax error: unexpected end of file")
    if pipeline:
        items.append(AndOrItem(connector, pipeline))
    return items


# --- running -------------------------------------------------------------------------------------------------


@dataclass
class ShellIO:
    """Where a command line's output goes. ``hangup`` is set when the client closed the stream."""

    stdout: Callable[[bytes], None]
    stderr: Callable[[bytes], None]
    hangup: threading.Event = field(default_factory=threading.Event)
    flush: Callable[[], None] = lambda: None


class _Sink:
    def __init__(self, target: Callable[[bytes], None] | None = None) -> None:
        self.buffer = bytearray()
        self.target = target

    def __call__(self, data: bytes) -> None:
        if self.target is not None:
            self.target(data)
        else:
            self.buffer += data


@dataclass
class Ctx:
    """What one simple command sees."""

    session: ShellSession
    args: list[str]
    env: dict[str, str]
    stdin: bytes
    out_fn: Callable[[bytes], None]
    err_fn: Callable[[bytes], None]
    io: ShellIO

    @property
    def phone(self) -> Phone:
        return self.session.phone

    def out(self, text: str | bytes) -> None:
        self.out_fn(text.encode() if isinstance(text, str) else text)

    def err(self, text: str) -> None:
        self.err_fn(text.encode())

    def fail(self, text: str, code: int = 1) -> int:
        self.err(text if text.endswith("\n") else text + "\n")
        return code


CommandFn = Callable[[Ctx], int]
COMMANDS: dict[str, CommandFn] = {}


def command(*names: str) -> Callable[[CommandFn], CommandFn]:
    def register(fn: CommandFn) -> CommandFn:
        for name in names:
            COMMANDS[name] = fn
        return fn

    return register


class ShellSession:
    """One `sh -c` (or one interactive session): variables persist across the lines it runs."""

    def __init__(self, phone: Phone) -> None:
        self.phone = phone
        self.vars: dict[str, str] = {}
        self.status = 0

    def run(self, line: str, io: ShellIO) -> int:
        """Run one command line as received from the wire; returns its exit status."""
        self.phone.shell_log.append(line)
        delay = self.phone.profile.shell
        if delay:
            time.sleep(delay)
        try:
            items = parse(tokenize(line))
        except ShellSyntaxError as exc:
            io.stderr(f"/system/bin/sh: {exc}\n".encode())
            self.status = 2
            return 2
        for item in items:
            if item.connector == "&&" and self.status != 0:
                continue
            if item.connector == "||" and self.status == 0:
                continue
            self.status = self._run_pipeline(item.pipeline, io)
            if isinstance(self.status, _Exit):
                self.status = int(self.status)
                break
        return self.status

    def expand(self, word: Word, env: dict[str, str] | None = None) -> str:
        parts = []
        for seg in word.segments:
            if isinstance(seg, Lit):
                parts.append(seg.text)
            elif seg.name == "?":
                parts.append(str(self.status))
            elif seg.name == "$":
                parts.append(str(SHELL_PID))
            elif seg.name == "#":
                parts.append("0")
            else:
                parts.append((env or {}).get(seg.name, self.vars.get(seg.name, "")))
        return "".join(parts)

    def _expand_words(self, words: list[Word], env: dict[str, str]) -> list[str]:
        result = []
        for word in words:
            text = self.expand(word, env)
            only_unquoted_vars = all(isinstance(s, Var) and not s.quoted for s in word.segments)
            if text or not only_unquoted_vars:  # an unset unquoted $X vanishes, like in sh
                result.append(text)
        return result

    def _run_pipeline(self, pipeline: list[SimpleCommand], io: ShellIO) -> int:
        stdin = b""
        status = 0
        for index, cmd in enumerate(pipeline):
            last = index == len(pipeline) - 1
            out = _Sink(io.stdout if last else None)
            status, stdin = self._run_simple(cmd, io, stdin, out)
            if isinstance(status, _Exit) and not last:
                status = int(status)
        return status

    def _run_simple(self, cmd: SimpleCommand, io: ShellIO, stdin: bytes, out: _Sink) -> tuple[int, bytes]:
        env: dict[str, str] = {}
        words = list(cmd.words)
        while words and (assign := words[0].assignment()) is not None:
            name, value = assign
            env[name] = self.expand(Word(value))
            words.pop(0)
        args = self._expand_words(words, {})  # sh expands words before prefix assignments apply
        if not args:
            self.vars.update(env)
            return 0, b""

        out_fn: Callable[[bytes], None] = out
        err_fn: Callable[[bytes], None] = io.stderr
        files: list[tuple[str, _Sink, bool]] = []
        for op, target in cmd.redirects:
            if op == "<":
                path = self.expand(target) if target else ""
                if normalize(path) == "/dev/null":
                    stdin = b""
                    continue
                try:
                    stdin = self.phone.fs.read(normalize(path))
                except FsError as exc:
                    io.stderr(f"/system/bin/sh: {path}: {exc.strerror}\n".encode())
                    return 1, b""
                continue
            if op == "2>&1":
                err_fn = out_fn
                continue
            if op in (">&2", "1>&2"):
                out_fn = err_fn
                continue
            if op.endswith(("&1", "&2")):
                continue
            path = normalize(self.expand(target)) if target else ""
            sink: _Sink = _Sink()
            if path != "/dev/null":
                files.append((path, sink, op.endswith(">>")))
            if op.startswith("2"):
                err_fn = sink
            else:
                out_fn = sink

        fn = COMMANDS.get(args[0])
        if fn is None:
            err_fn(f"/system/bin/sh: {args[0]}: not found\n".encode())
            status: int = 127
        else:
            ctx = Ctx(self, args, {**self.vars, **env}, stdin, out_fn, err_fn, io)
            try:
                status = fn(ctx)
            except FsError as exc:
                status = ctx.fail(f"{args[0]}: {exc.filename}: {exc.strerror}")
            except Exception as exc:  # a bug in a command must never kill the stream
                log.exception("sim shell: %r failed", args)
                status = ctx.fail(f"{args[0]}: {type(exc).__name__}: {exc}")
        for path, sink, append in files:
            try:
                self.phone.fs.write(path, bytes(sink.buffer), append=append)
            except FsError as exc:
                io.stderr(f"/system/bin/sh: {path}: {exc.strerror}\n".encode())
                status = 1
        return status, bytes(out.buffer)


class _Exit(int):
    """Status returned by `exit`: stops the rest of the line."""


# --- commands: basics ----------------------------------------------------------------------------------------


@command("true")
def _true(ctx: Ctx) -> int:
    return 0


@command("false")
def _false(ctx: Ctx) -> int:
    return 1


@command("exit")
def _exit(ctx: Ctx) -> int:
    return _Exit(
        int(ctx.args[1]) & 0xFF if len(ctx.args) > 1 and ctx.args[1].isdigit() else ctx.session.status
    )


@command("echo")
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


@command("sleep")
def _sleep(ctx: Ctx) -> int:
    try:
        seconds = float(ctx.args[1])
    except (IndexError, ValueError):
        return ctx.fail("sleep: need a number of seconds")
    ctx.io.flush()
    ctx.io.hangup.wait(min(max(seconds, 0.0), MAX_SLEEP))
    return 0


@command("id")
def _id(ctx: Ctx) -> int:
    ctx.out(
        "uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),1015(sdcard_rw),"
        "1028(sdcard_r),3001(net_bt_admin),3002(net_bt),3003(inet),3006(net_bw_stats),3009(readproc) "
        "context=u:r:shell:s0\n"
    )
    return 0


@command("whoami")
def _whoami(ctx: Ctx) -> int:
    ctx.out("shell\n")
    return 0


@command("pwd")
def _pwd(ctx: Ctx) -> int:
    ctx.out("/\n")
    return 0


@command("toybox")
def _toybox(ctx: Ctx) -> int:
    if len(ctx.args) < 2:
        ctx.out(" ".join(sorted(TOYBOX_APPLETS)) + "\n")
        return 0
    if ctx.args[1] not in TOYBOX_APPLETS:
        return ctx.fail(f"toybox: Unknown command {ctx.args[1]}")
    ctx.args = ctx.args[1:]
    return COMMANDS[ctx.args[0]](ctx)


# --- commands: files -----------------------------------------------------------------------------------------


def _split_flags(args: list[str]) -> tuple[set[str], list[str]]:
    flags: set[str] = set()
    rest = []
    for arg in args:
        if arg.startswith("-") and len(arg) > 1 and not rest:
            flags.update(arg[1:])
        else:
            rest.append(arg)
    return flags, rest


@command("md5sum")
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


@command("cat")
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


@command("ls")
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


@command("rm")
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


@command("mkdir")
def _mkdir(ctx: Ctx) -> int:
    flags, paths = _split_flags(ctx.args[1:])
    status = 0
    for path in paths:
        try:
            ctx.phone.fs.mkdir(normalize(path), parents="p" in flags)
        except FsError as exc:
            status = ctx.fail(f"mkdir: '{path}': {exc.strerror}")
    return status


@command("touch")
def _touch(ctx: Ctx) -> int:
    for path in _split_flags(ctx.args[1:])[1]:
        fs = ctx.phone.fs
        full = normalize(path)
        fs.write(full, fs.read(full) if fs.exists(full) and not fs.is_dir(full) else b"")
    return 0


@command("chmod", "chown", "sync")
def _noop_on_paths(ctx: Ctx) -> int:
    for path in [a for a in ctx.args[2:] if not a.startswith("-")] if ctx.args[0] != "sync" else []:
        if not ctx.phone.fs.exists(normalize(path)):
            return ctx.fail(f"{ctx.args[0]}: {path}: No such file or directory")
    return 0


@command("grep")
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


# --- commands: system information ----------------------------------------------------------------------------


@command("getprop")
def _getprop(ctx: Ctx) -> int:
    props = ctx.phone.props
    if len(ctx.args) == 1:
        ctx.out("".join(f"[{key}]: [{value}]\n" for key, value in sorted(props.items())))
    else:
        ctx.out(props.get(ctx.args[1], ctx.args[2] if len(ctx.args) > 2 else "") + "\n")
    return 0


@command("wm")
def _wm(ctx: Ctx) -> int:
    config = ctx.phone.config
    sub = ctx.args[1] if len(ctx.args) > 1 else ""
    if sub == "size" and len(ctx.args) == 2:
        ctx.out(f"Physical size: {config.width}x{config.height}\n")
    elif sub == "density" and len(ctx.args) == 2:
        ctx.out(f"Physical density: {config.density}\n")
    else:
        return ctx.fail(f"wm: unsupported in the simulator: {' '.join(ctx.args[1:])}", 255)
    return 0


def _short_hash(*parts: object) -> str:
    return f"{zlib.crc32('/'.join(map(str, parts)).encode()):08x}"[:7]


def _pid_of(package: str) -> int:
    return 1000 + zlib.crc32(package.encode()) % 30000


def _task_id(package: str) -> int:
    return 10 + zlib.crc32(package.encode()) % 90


def _activity_record(package: str, activity: str) -> str:
    return f"ActivityRecord{{{_short_hash(package, activity)} u0 {package}/{activity} t{_task_id(package)}}}"


def _dumpsys_window(ctx: Ctx) -> str:
    phone = ctx.phone
    package, activity = phone.current()
    record = _activity_record(package, activity)
    if phone.locked:
        focus = f"Window{{{_short_hash('shade')} u0 NotificationShade}}"
    else:
        focus = f"Window{{{_short_hash(package, activity, 'w')} u0 {package}/{activity}}}"
    return (
        "WINDOW MANAGER WINDOWS (dumpsys window windows)\n"
        f"  Window #0 {focus}:\n"
        f"    mDisplayId=0 rootTaskId={_task_id(package)} mSession=Session{{{_short_hash(package)} "
        f"{_pid_of(package)}:u0a10123}}\n"
        f"    mHasSurface={str(phone.screen_on).lower()} isReadyForDisplay()={str(phone.screen_on).lower()}\n"
        "\n"
        f"  mGlobalConfiguration={{1.0 ?mcc?mnc [zh_CN] ldltr sw411dp w411dp h914dp 440dpi nrml long port}}\n"
        f"  mCurrentFocus={focus}\n"
        f"  mFocusedApp={record}\n"
        f"  mShowingLockscreen={str(phone.locked).lower()} mShowingDream=false mDreamingLockscreen=false\n"
    )


def _dumpsys_activity(ctx: Ctx, what: str) -> str:
    package, activity = ctx.phone.current()
    record = _activity_record(package, activity)
    task = _task_id(package)
    if what == "top":
        return (
            "TASK dumpsys activity top\n"
            f"TASK 10123:{package} id={task} userId=0\n"
            f"  ACTIVITY {package}/{activity} {_short_hash(package, activity)} pid={_pid_of(package)}\n"
        )
    return (
        "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n"
        "Display #0 (activities from top to bottom):\n"
        f"  * Task{{{_short_hash(task)} #{task} type=standard A=10123:{package} U=0 visible=true "
        "mode=fullscreen translucent=false sz=1}\n"
        f"    * {record}\n"
        "\n"
        f"  ResumedActivity: {record}\n"
        f"  mResumedActivity: {record}\n"
        f"  topResumedActivity={record}\n"
    )


def _dumpsys_display(ctx: Ctx) -> str:
    config, rotation = ctx.phone.config, ctx.phone.orientation
    w, h = (config.height, config.width) if rotation % 2 else (config.width, config.height)
    viewport = (
        f"DisplayViewport{{type=INTERNAL, valid=true, isActive=true, displayId=0, uniqueId='local:0', "
        f"physicalPort=0, orientation={rotation}, logicalFrame=Rect(0, 0 - {w}, {h}), "
        f"physicalFrame=Rect(0, 0 - {w}, {h}), deviceWidth={w}, deviceHeight={h}}}"
    )
    return (
        "DISPLAY MANAGER (dumpsys display)\n"
        f"  mViewports=[{viewport}]\n"
        f'  mBaseDisplayInfo=DisplayInfo{{"Built-in Screen", displayId 0, real {config.width} x {config.height}, '
        f"rotation {rotation}, density {config.density}, state {'ON' if ctx.phone.screen_on else 'OFF'}}}\n"
    )


def _dumpsys_battery(ctx: Ctx) -> str:
    return (
        "Current Battery Service state:\n  AC powered: false\n  USB powered: true\n  Wireless powered: false\n"
        "  Max charging current: 500000\n  Max charging voltage: 5000000\n  Charge counter: 3000000\n"
        "  status: 2\n  health: 2\n  present: true\n"
        f"  level: {ctx.phone.battery_level}\n  scale: 100\n  voltage: 4200\n  temperature: 280\n"
        "  technology: Li-ion\n"
    )


def _dumpsys_power(ctx: Ctx) -> str:
    on = ctx.phone.screen_on
    return (
        "POWER MANAGER (dumpsys power)\n\nPower Manager State:\n"
        f"  mWakefulness={'Awake' if on else 'Asleep'}\n  mWakefulnessChanging=false\n  mIsPowered=true\n"
        f"  mHoldingWakeLockSuspendBlocker={str(on).lower()}\n"
        f"  mHoldingDisplaySuspendBlocker={str(on).lower()}\n"
        f"Display Power: state={'ON' if on else 'OFF'}\n"
    )


def _dumpsys_input_method(ctx: Ctx) -> str:
    return f"  mCurMethodId={ctx.phone.ime_current()}\n  mInputShown=false\n"


def _dumpsys_package(ctx: Ctx, package: str) -> str:
    if package not in ctx.phone.installed_packages():
        return ""
    return (
        f"Packages:\n  Package [{package}] ({_short_hash(package)}):\n    userId=10123\n"
        f"    codePath={ctx.phone.package_path(package) or ''}\n    versionCode=1 minSdk=24 targetSdk=33\n"
        "    versionName=1.0.0\n    pkgFlags=[ HAS_CODE ALLOW_CLEAR_USER_DATA ]\n"
        "    firstInstallTime=2024-01-01 08:00:00\n    lastUpdateTime=2024-01-01 08:00:00\n"
    )


@command("dumpsys")
def _dumpsys(ctx: Ctx) -> int:
    service = ctx.args[1] if len(ctx.args) > 1 else ""
    rest = ctx.args[2:]
    if service == "window":
        ctx.out(_dumpsys_window(ctx))
    elif service == "activity":
        what = rest[0] if rest else "activities"
        ctx.out(_dumpsys_activity(ctx, "top" if what == "top" else "activities"))
    elif service == "display":
        ctx.out(_dumpsys_display(ctx))
    elif service == "battery":
        ctx.out(_dumpsys_battery(ctx))
    elif service == "power":
        ctx.out(_dumpsys_power(ctx))
    elif service == "input_method":
        ctx.out(_dumpsys_input_method(ctx))
    elif service == "package" and rest:
        ctx.out(_dumpsys_package(ctx, rest[-1]))
    else:
        return ctx.fail(f"Can't find service: {service}")
    return 0


# --- commands: input -----------------------------------------------------------------------------------------

INPUT_SOURCES = {
    "touchscreen",
    "touchpad",
    "keyboard",
    "dpad",
    "gamepad",
    "mouse",
    "stylus",
    "trackball",
    "joystick",
}

SECURITY_EXCEPTION = (
    "java.lang.SecurityException: Injecting input events requires the caller (or the source of the "
    "instrumentation, if any) to have the INJECT_EVENTS permission.\n"
)


def _key_arg(raw: str) -> int | str:
    """`input keyevent` takes 4, KEYCODE_BACK or BACK; the phone normalizes names."""
    return int(raw) if raw.lstrip("-").isdigit() else raw


def _num(raw: str) -> int:
    return int(float(raw))


@command("input")
def _input(ctx: Ctx) -> int:
    args = ctx.args[1:]
    if args and args[0] in INPUT_SOURCES:
        args = args[1:]
    if len(args) >= 2 and args[0] == "-d":
        args = args[2:]
    if not args:
        return ctx.fail("Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]")
    sub, rest = args[0], args[1:]
    phone = ctx.phone
    if ctx.phone.faults.input_security_exception:
        return ctx.fail(f"Exception occurred while executing '{sub}':\n{SECURITY_EXCEPTION}")
    try:
        if sub == "tap" and len(rest) == 2:
            phone.tap(_num(rest[0]), _num(rest[1]))
        elif sub in ("swipe", "draganddrop") and len(rest) in (4, 5):
            x1, y1, x2, y2 = (_num(v) for v in rest[:4])
            duration = _num(rest[4]) if len(rest) == 5 else 300
            if sub == "swipe":
                phone.swipe(x1, y1, x2, y2, duration)
            else:
                phone.drag(x1, y1, x2, y2, duration)
        elif sub == "keyevent" and rest:
            codes = [a for a in rest if a not in ("--longpress", "--doubletap", "--async")]
            for code in codes:
                phone.key(_key_arg(code))
        elif sub == "text" and rest:
            text = rest[0].replace("%s", " ")
            if not text.isascii():
                # Android's KeyCharacterMap cannot map non-ASCII characters: nothing is typed.
                return ctx.fail("java.lang.NullPointerException: Attempt to get length of null array")
            phone.input_text(text)
        else:
            return ctx.fail(f"Error: Unknown command or bad arguments: {sub} {' '.join(rest)}")
    except ValueError:
        return ctx.fail(f"Error: Invalid arguments for command: {sub}")
    except PermissionError as exc:
        return ctx.fail(f"Exception occurred while executing '{sub}':\njava.lang.SecurityException: {exc}")
    return 0


# --- commands: activity manager, monkey, package manager -----------------------------------------------------


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


@command("am")
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


def _decode_b64(text: str) -> str | None:
    try:
        return base64.b64decode(text, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None


def _adb_keyboard_broadcast(ctx: Ctx, intent: Intent) -> tuple[int, str | None]:
    """(result, data) of the broadcasts the AdbKeyboard IMEs answer; (0, None) when no receiver is active."""
    phone, action, extras = ctx.phone, intent.action or "", intent.extras
    ime = phone.ime_current()
    if ime == U2_IME and action.startswith("ADB_KEYBOARD_"):
        if action == "ADB_KEYBOARD_INPUT_TEXT":
            text = _decode_b64(extras.get("text", ""))
            if text is None:
                return 0, "invalid base64 text"
            phone.input_text(text)
        elif action == "ADB_KEYBOARD_CLEAR_TEXT":
            phone.clear_text()
        elif action == "ADB_KEYBOARD_INPUT_KEYCODE":
            phone.key(int(extras.get("code", "0")))
        elif action in ("ADB_KEYBOARD_EDITOR_CODE", "ADB_KEYBOARD_SMART_ENTER"):
            phone.key("enter")
        elif action == "ADB_KEYBOARD_GET_CLIPBOARD":
            return -1, base64.b64encode(phone.clipboard.encode()).decode()
        elif action == "ADB_KEYBOARD_SET_CLIPBOARD":
            phone.clipboard = _decode_b64(extras.get("text", "")) or ""
        elif action != "ADB_KEYBOARD_HIDE":
            return 0, None
        return -1, "success"
    if ime == ADBKEYBOARD_IME and action in (
        "ADB_INPUT_TEXT",
        "ADB_INPUT_B64",
        "ADB_CLEAR_TEXT",
        "ADB_INPUT_CODE",
    ):
        if action == "ADB_INPUT_TEXT":
            phone.input_text(extras.get("msg", ""))
        elif action == "ADB_INPUT_B64":
            phone.input_text(_decode_b64(extras.get("msg", "")) or "")
        elif action == "ADB_CLEAR_TEXT":
            phone.clear_text()
        else:
            phone.key(int(extras.get("code", "0")))
    return 0, None


def _am_broadcast(ctx: Ctx, intent: Intent) -> int:
    ctx.out(f"Broadcasting: {intent.describe()}\n")
    result, data = _adb_keyboard_broadcast(ctx, intent)
    ctx.out(
        f'Broadcast completed: result={result}, data="{data}"\n'
        if data
        else f"Broadcast completed: result={result}\n"
    )
    return 0


@command("monkey")
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


@command("pm")
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
        ctx.out(_dumpsys_package(ctx, rest[-1]))
        return 0
    if sub == "install":
        return _pm_install(ctx, rest)
    if sub == "uninstall":
        return _pm_uninstall(ctx, rest)
    return ctx.fail(f"Unknown command: {sub}" if sub else "usage: pm [list|path|clear|grant|dump] ...", 255)


@command("cmd")
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


# --- commands: input methods and settings --------------------------------------------------------------------


@command("ime")
def _ime(ctx: Ctx) -> int:
    sub = ctx.args[1] if len(ctx.args) > 1 else ""
    rest = [a for a in ctx.args[2:] if not a.startswith("-")]
    phone = ctx.phone
    if sub == "list":
        ids = phone.ime_list()
        if "-s" in ctx.args:
            ctx.out("".join(f"{ime}\n" for ime in ids))
        else:
            ctx.out("".join(f"{ime}:\n  mId={ime} mSettingsActivityName=null\n" for ime in ids))
        return 0
    if sub in ("set", "enable", "disable") and rest:
        ime_id = rest[0]
        if ime_id not in phone.ime_list():
            return ctx.fail(f"Unknown input method {ime_id} cannot be {sub}d for user #0")
        if sub == "set":
            phone.ime_set(ime_id)
            ctx.out(f"Input method {ime_id} selected for user #0\n")
        elif sub == "enable":
            phone.ime_enable(ime_id)
            ctx.out(f"Input method {ime_id}: now enabled for user #0\n")
        else:
            ctx.out(f"Input method {ime_id}: now disabled for user #0\n")
        return 0
    return ctx.fail("ime: unknown command; use list, set, enable or disable", 255)


DEFAULT_IME_SETTING = ("secure", "default_input_method")


@command("settings")
def _settings(ctx: Ctx) -> int:
    args = [a for a in ctx.args[1:]]
    if "--user" in args:
        at = args.index("--user")
        del args[at : at + 2]
    sub, rest = (args[0], args[1:]) if args else ("", [])
    phone = ctx.phone
    if sub == "get" and len(rest) == 2:
        key = (rest[0], rest[1])
        value = phone.ime_current() if key == DEFAULT_IME_SETTING else phone.settings.get(key)
        ctx.out(f"{'null' if value is None else value}\n")
        return 0
    if sub == "put" and len(rest) >= 3:
        key = (rest[0], rest[1])
        if key == DEFAULT_IME_SETTING and rest[2] in phone.ime_list():
            phone.ime_set(rest[2])
        phone.settings[key] = rest[2]
        return 0
    if sub == "delete" and len(rest) == 2:
        deleted = phone.settings.pop((rest[0], rest[1]), None) is not None
        ctx.out(f"Deleted {int(deleted)} rows\n")
        return 0
    if sub == "list" and len(rest) == 1:
        ctx.out("".join(f"{k}={v}\n" for (ns, k), v in sorted(phone.settings.items()) if ns == rest[0]))
        return 0
    return ctx.fail("usage: settings [--user N] get|put|delete|list NAMESPACE [KEY [VALUE]]", 255)


# --- commands: screen, hierarchy and the u2 server -----------------------------------------------------------


def _png_to_raw(png: bytes) -> bytes:
    image = Image.open(io.BytesIO(png)).convert("RGBA")
    header = image.width.to_bytes(4, "little") + image.height.to_bytes(4, "little")
    return header + (1).to_bytes(4, "little") + (0).to_bytes(4, "little") + image.tobytes()


@command("screencap")
def _screencap(ctx: Ctx) -> int:
    flags: set[str] = set()
    rest: list[str] = []
    args = iter(ctx.args[1:])
    for arg in args:
        if arg == "-d":
            next(args, None)  # display id: the simulated phone has one display
        elif arg.startswith("-"):
            flags.add(arg)
        else:
            rest.append(arg)
    if ctx.phone.faults.screenshot_fail:
        return ctx.fail("screencap: Capturing failed.")
    try:
        png = ctx.phone.screenshot("png")
    except Exception as exc:
        return ctx.fail(f"screencap: Capturing failed: {exc}")
    as_png = "-p" in flags or (rest and rest[0].endswith(".png"))
    data = png if as_png else _png_to_raw(png)
    if rest:
        ctx.phone.fs.write(normalize(rest[0]), data)
    else:
        ctx.out(data)
    return 0


XML_DECLARATION = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"


@command("uiautomator")
def _uiautomator(ctx: Ctx) -> int:
    args = ctx.args[1:]
    if not args or args[0] != "dump":
        return ctx.fail("Usage: uiautomator <subcommand> [options]\n  dump [--compressed] [file]")
    files = [a for a in args[1:] if not a.startswith("-")]
    target = files[0] if files else "/sdcard/window_dump.xml"
    xml = ctx.phone.hierarchy_xml()
    if not xml.lstrip().startswith("<?xml"):
        xml = XML_DECLARATION + xml
    if target in ("/dev/tty", "/dev/stdout"):
        ctx.out(xml)
    else:
        ctx.phone.fs.write(normalize(target), xml.encode())
    ctx.out(f"UI hierchary dumped to: {target}\n")
    return 0


@command("app_process")
def _app_process(ctx: Ctx) -> int:
    args = ctx.args[1:]
    main_class = next((a for a in args if not a.startswith("-") and not a.startswith("/")), None)
    classpath = ctx.env.get("CLASSPATH", "")
    if main_class != U2_MAIN_CLASS or not classpath or not ctx.phone.fs.exists(normalize(classpath)):
        return ctx.fail(f"Error: Could not find class '{main_class}'")
    error = ctx.phone.u2_start()
    if error:
        ctx.out(error if error.endswith("\n") else error + "\n")
        return 1
    ctx.out("[server] INFO: [UiAutomator2Server] Starting Server\n")
    ctx.io.flush()
    # The server lives as long as this shell stream (pitfall 10), and the stream ends when the server dies.
    while ctx.phone.u2_running and not ctx.io.hangup.wait(0.5):
        pass
    if ctx.io.hangup.is_set():
        ctx.phone.u2_stop()
        return 137
    return 1


# --- commands: package installation --------------------------------------------------------------------------


def apk_package_name(apk: bytes) -> str | None:
    """The `package` attribute of an APK's binary AndroidManifest.xml (AXML), or None if unreadable."""
    import struct
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(apk)) as archive:
            manifest = archive.read("AndroidManifest.xml")
    except (zipfile.BadZipFile, KeyError, OSError):
        return None
    strings: list[str] = []
    offset = 8  # skip the XML file header chunk
    while offset + 8 <= len(manifest):
        chunk_type, header_size, chunk_size = struct.unpack_from("<HHI", manifest, offset)
        if chunk_size < 8:
            return None
        if chunk_type == 0x0001:  # string pool
            count, _, flags, strings_start = struct.unpack_from("<IIII", manifest, offset + 8)
            utf8 = bool(flags & 0x100)
            for index in range(count):
                (rel,) = struct.unpack_from("<I", manifest, offset + header_size + 4 * index)
                strings.append(_pool_string(manifest, offset + strings_start + rel, utf8))
        elif chunk_type == 0x0102:  # start element
            name_index, attr_start, attr_size, attr_count = struct.unpack_from("<IHHH", manifest, offset + 20)
            if strings[name_index] == "manifest":
                base = offset + 16 + attr_start
                for k in range(attr_count):
                    _, attr_name, raw_value = struct.unpack_from("<III", manifest, base + k * attr_size)
                    if strings[attr_name] == "package" and raw_value != 0xFFFFFFFF:
                        return strings[raw_value]
                return None
        offset += chunk_size
    return None


def _pool_string(data: bytes, pos: int, utf8: bool) -> str:
    if utf8:
        pos += 2 if data[pos] & 0x80 else 1  # length in characters
        length = data[pos]
        if length & 0x80:
            length = ((length & 0x7F) << 8) | data[pos + 1]
            pos += 1
        return data[pos + 1 : pos + 1 + length].decode("utf-8", "replace")
    length = int.from_bytes(data[pos : pos + 2], "little")
    if length & 0x8000:
        length = ((length & 0x7FFF) << 16) | int.from_bytes(data[pos + 2 : pos + 4], "little")
        pos += 2
    return data[pos + 2 : pos + 2 + 2 * length].decode("utf-16-le", "replace")


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
