"""The `sh` language of the simulated phone: tokenizer, parser and the session that runs a command line.

Only the syntax adb clients really send is understood: words with '…', "…" and \\ quoting, $? / $VAR / ${VAR},
`VAR=val cmd`, `;` `&&` `||` `|` `&` and newlines, redirections `>`, `>>`, `2>`, `2>&1`, `<`. Command substitution
($(…) and backticks) is never performed: such text stays literal. Nothing here ever runs anything on the host:
a session looks every command name up in the CommandTable it was given (mobile_agent.sim.shell.commands holds the
Android ones), and each command is a Python function acting on the Phone.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mobile_agent.sim.phone.fs import FsError, normalize

if TYPE_CHECKING:
    from mobile_agent.sim.phone.phone import Phone

log = logging.getLogger(__name__)

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
    background: bool = False  # ended by "&": runs on, detached from the stream (like `nohup CMD &`)


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
        items.append(AndOrItem(connector, pipeline, background=tok.text == "&"))
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


class CommandTable(dict[str, CommandFn]):
    """Command name -> the function that runs it; `@table.register("name", ...)` adds one."""

    def register(self, *names: str) -> Callable[[CommandFn], CommandFn]:
        def add(fn: CommandFn) -> CommandFn:
            for name in names:
                self[name] = fn
            return fn

        return add


class Exit(int):
    """Status returned by `exit`: stops the rest of the line."""


class ShellSession:
    """One `sh -c` (or one interactive session): variables persist across the lines it runs."""

    def __init__(self, phone: Phone, commands: Mapping[str, CommandFn]) -> None:
        self.phone = phone
        self.commands = commands
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
            if item.background:
                self._run_detached(item.pipeline)
                self.status = 0
                continue
            self.status = self._run_pipeline(item.pipeline, io)
            if isinstance(self.status, Exit):
                self.status = int(self.status)
                break
        return self.status

    def _run_detached(self, pipeline: list[SimpleCommand]) -> None:
        """A background job: it outlives this stream (output not redirected is dropped, and it never sees a hangup,
        as a `nohup`-ed job)."""
        detached = ShellIO(stdout=lambda _: None, stderr=lambda _: None)
        threading.Thread(
            target=self._run_pipeline, args=(pipeline, detached), name="sim-sh-background", daemon=True
        ).start()

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
            if isinstance(status, Exit) and not last:
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

        fn = self.commands.get(args[0])
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
