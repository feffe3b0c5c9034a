"""A terminal runs the line on Enter: what the line does decides, not the key.

A newline typed into a chat sends the message; typed into a terminal (Termux, an SSH client, adb shell in an app)
it runs a command. The command is read as a shell reads it, one simple command at a time (``;``, ``&&``, ``||``,
``|``), past ``sudo`` and the like. Precaution inverts the question here as everywhere: a line runs without a person
only when every command in it is known to only read or show (``ls``, ``cat``, ``cd``, ``grep`` ...) and nothing is
written over (``>``). Removing files (``rm``, ``dd``, ``find -delete`` ...) is ``delete``, reaching others (``curl``
with data, ``ssh``, ``termux-sms-send``) is ``send``, ``termux-telephony-call`` calls, and any other command asks.
"""

from __future__ import annotations

import re
import shlex

from mobile_agent.gate.finding import Finding
from mobile_agent.screen.context import ScreenReader
from mobile_agent.screen.viewtree import Element

_TERMINAL_CLASS = re.compile(r"Terminal|Console|ShellView|EmulatorView", re.I)
_TERMINAL_APP = re.compile(r"termux|terminal|connectbot|juicessh|termius|\bssh|jackpal|androidterm", re.I)
_PROMPT = re.compile(r"(?:[$#%>]|\$\s*>)\s(?P<line>[^\n]*)$")

# Commands that only read or show, change the shell's own state, or open an editor a person then drives.
_READS = frozenset(
    """ls ll la dir cd pwd cat less more head tail grep egrep fgrep rg find locate which whereis type whoami id
    date cal df du free ps top htop uname uptime clear reset_term history man help info file stat wc sort uniq
    tree env printenv echo printf true false test [ sleep nano vi vim nvim emacs micro ping termux-info
    termux-setup-storage hostname ifconfig ip getprop dumpsys md5sum sha1sum sha256sum diff cmp column cut tr
    basename dirname realpath readlink exit logout""".split()
)
# Subcommands that only list or search.
_READ_SUBCOMMANDS = {
    "pkg": {"list-installed", "list-all", "search", "show", "files"},
    "apt": {"list", "search", "show", "policy"},
    "git": {"status", "log", "diff", "show", "branch"},
    "pm": {"list", "path"},
}
_DELETES = frozenset("rm rmdir shred dd mkfs wipe truncate unlink srm".split())
_SENDS = frozenset(
    "ssh scp sftp rsync nc ncat netcat mail mailx sendmail mutt termux-sms-send termux-share telnet ftp".split()
)
_CALLS = frozenset({"termux-telephony-call"})
_PREFIXES = frozenset("sudo su tsu doas busybox toybox env command exec time nohup nice ionice xargs".split())


def in_terminal(reader: ScreenReader | None, package: str) -> Element | None:
    """The terminal view that has the focus (or the only one on screen), in an app that is a terminal."""
    if reader is None:
        return None
    views = [e for e in reader.visible if _TERMINAL_CLASS.search(e.class_name) or "terminal" in e.resource_id]
    if not views or not (_TERMINAL_APP.search(package or "") or _TERMINAL_APP.search(views[0].package)):
        return None
    focused = [e for e in views if e.node.get("focused") == "true"]
    return (focused or views)[0]


def prompt_line(view: Element) -> str:
    """What is already typed after the terminal's last prompt ("~ $ ls" → "ls")."""
    last = view.text.rstrip("\n").rsplit("\n", 1)[-1] if view.text else ""
    m = _PROMPT.search(last)
    return m.group("line") if m else ""


def command_finding(line: str, how: str) -> Finding | None:
    """What running ``line`` does: None when every command only reads, else its kind."""
    line = line.strip()
    if not line:
        return None
    kind, why = _judge(line)
    if kind is None:
        return None
    return Finding(
        kind, "type", "", f"{how} runs '{line[:60]}' in a terminal: {why}", (f"command '{line[:60]}'",)
    )


def _judge(line: str) -> tuple[str | None, str]:
    worst: tuple[str | None, str] = (None, "")
    rank = {None: 0, "sensitive": 1, "send": 2, "call": 2, "delete": 3}
    for command in re.split(r"&&|\|\||[;|\n]|(?<![>&\d])&(?!>)", line):
        found = _one(command.strip())
        if rank[found[0]] > rank[worst[0]]:
            worst = found
    return worst


def _one(command: str) -> tuple[str | None, str]:
    if not command:
        return None, ""
    redirect = re.search(r"(?<![>2&])>(?!>)\s*(?!/dev/null)(\S+)", command)
    try:
        words = shlex.split(re.sub(r"\d?>>?\s*\S+", " ", command), comments=True)
    except ValueError:
        return "sensitive", "a command the gate cannot read"
    while words and (words[0] in _PREFIXES or re.fullmatch(r"\w+=\S*", words[0]) or words[0].startswith("-")):
        words = words[1:]
    if not words:
        return None, ""
    name = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    if name in _DELETES or (name == "find" and any(a in ("-delete", "-exec", "-execdir") for a in args)):
        return "delete", f"'{name}' removes files"
    if name in ("pm", "cmd") and args[:1] and args[0] in ("uninstall", "clear", "reset-permissions"):
        return "delete", f"'{name} {args[0]}' removes an app's data"
    if name in _CALLS:
        return "call", f"'{name}' places a call"
    if name in _SENDS or (
        name in ("curl", "wget") and any(re.match(r"-(d|F|T|X|-data|-upload|-post)", a) for a in args)
    ):
        return "send", f"'{name}' sends data to another party"
    if redirect is not None:
        return "delete", f"'>' writes over {redirect.group(1)[:40]}"
    if name in _READS or args[:1] and args[0] in _READ_SUBCOMMANDS.get(name, ()):
        return None, ""
    return "sensitive", f"'{name}' is not known to only read"


__all__ = ["command_finding", "in_terminal", "prompt_line"]
