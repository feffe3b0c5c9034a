"""Reading the text a GUI model writes: wrappers, tags, and ``Verb(key=literal, ...)`` calls.

Tolerant of form (whitespace, code fences, ``<|begin_of_box|>`` tokens, text after the action, unescaped quotes
in a trailing text argument), strict on meaning: every failure is a ``ParseError`` that keeps the reply.
Arguments are read with ``ast.literal_eval`` only; nothing the model writes is ever evaluated.

Every reading runs in time linear in the reply: no pattern here can backtrack over a long run, calls are
scanned with one regex step per string or bracket, and what the stdlib parser is given is bounded (at most
``MAX_CALLS`` calls per reply, ``MAX_CALL_CODE`` characters outside strings per call, ``MAX_DEPTH`` brackets
deep). A reply past a bound is a ParseError saying which bound, never a wait.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, NamedTuple

from mobile_agent.errors import ParseError

PARSE_HINT = "the step is recorded as failed; the next prompt asks the model to answer in the exact format"

# Exceptions the stdlib parsers raise on hostile input (deep nesting, NUL bytes, huge numbers).
_LITERAL_ERRORS = (SyntaxError, ValueError, TypeError, MemoryError, RecursionError, OverflowError)

_BOX_TOKENS = re.compile(r"<\|(?:begin|end)_of_box\|>")
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*")
# A call starts where a name starts: not inside a longer name, so a long run of letters is scanned once, not once
# per letter. Leading digits belong to the run but not to the name (``1click(`` is ``click(``).
_CALL_SEARCH = re.compile(r"(?<![A-Za-z0-9_])[0-9]*+([A-Za-z_][A-Za-z0-9_]*+)\s*+\(")
_CALL_START = re.compile(r"[A-Za-z_][A-Za-z0-9_]*+\s*+\(")
_BARE_NAME = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*$")
_CALL_SHAPE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*$", re.DOTALL)


def fail(message: str, reply: str) -> ParseError:
    return ParseError(message, reply=reply, hint=PARSE_HINT)


def clean_reply(text: str) -> str:
    """Drop box tokens and code-fence markers, trim whitespace."""
    return _FENCE.sub("", _BOX_TOKENS.sub("", text)).strip()


def join_reasoning(text: str, reasoning: str | None) -> str:
    """Put a separately returned ``reasoning_content`` back in front of the reply as a ``<think>`` block."""
    if not reasoning or not reasoning.strip():
        return text
    if "<think>" in text or "</think>" in text:
        return text
    return f"<think>{reasoning.strip()}</think>\n{text}"


def split_think(text: str, open_tag: str = "<think>", close_tag: str = "</think>") -> tuple[str, str]:
    """(thought, rest). Handles a missing opening tag (chat templates often pre-fill it)."""
    close_at = text.find(close_tag)
    if close_at < 0:
        open_at = text.find(open_tag)
        if open_at >= 0:  # thinking never closed: there is no action to find after it
            return text[open_at + len(open_tag) :].strip(), ""
        return "", text
    head = text[:close_at]
    open_at = head.find(open_tag)
    thought = head[open_at + len(open_tag) :] if open_at >= 0 else head
    return thought.strip(), text[close_at + len(close_tag) :]


class ReplyParts(NamedTuple):
    raw: str  # the reply with any separately returned reasoning put back in front: what errors quote
    thought: str
    rest: str  # what follows the thinking, cleaned of box tokens and code fences


def split_reply(text: str, reasoning: str | None = None) -> ReplyParts:
    """Where every family's parse starts: join the reasoning back, clean the reply, split off the thinking."""
    raw = join_reasoning(text, reasoning)
    thought, rest = split_think(clean_reply(raw))
    return ReplyParts(raw, thought, rest)


def tag_body(text: str, tag: str) -> str | None:
    """The text inside the first ``<tag>...</tag>``; up to the end when the closing tag is missing."""
    start = text.find(f"<{tag}>")
    if start < 0:
        return None
    start += len(tag) + 2
    end = text.find(f"</{tag}>", start)
    return (text[start:] if end < 0 else text[start:end]).strip()


# Bounds on what one reply may make the parsers do (see the module docstring).
MAX_CALLS = 16  # actions in one reply (the captcha prompt's grid asks for up to 9)
MAX_CALL_CODE = 2048  # characters outside string literals in one call (a real call has under 100)
MAX_DEPTH = 64  # brackets inside one call (the stdlib parser itself stops at 200)

_BRACKET_OR_QUOTE = re.compile(r"[()\[\]{}'\"]")
_QUOTE = re.compile(r"['\"]")
# The rest of a string literal after its opening quote, escapes included, in one possessive step.
_STRING_REST = {q: re.compile(rf"[^{q}\\]*+(?:\\.[^{q}\\]*+)*+{q}", re.DOTALL) for q in "'\""}


def _call_end(text: str, open_paren: int) -> int:
    """The index just past the parenthesis matching ``text[open_paren]`` (quote-aware); len(text) if none.

    Brackets nested deeper than ``MAX_DEPTH`` count as never closing: such a call cannot be read anyway.
    """
    depth = 0
    pos = open_paren
    while (mark := _BRACKET_OR_QUOTE.search(text, pos)) is not None:
        ch, pos = mark.group(), mark.end()
        if ch in "'\"":
            closing = _STRING_REST[ch].match(text, pos)
            if closing is None:
                return len(text)
            pos = closing.end()
        elif ch in "([{":
            depth += 1
            if depth > MAX_DEPTH:
                return len(text)
        else:
            depth -= 1
            if depth == 0:
                return pos
    return len(text)


def code_length(src: str, stop_after: int = MAX_CALL_CODE) -> int:
    """How many characters of ``src`` lie outside string literals (quotes count); counting stops past
    ``stop_after``, so a long source costs one regex step per string up to the bound."""
    code = 0
    pos = 0
    while code <= stop_after and (quote := _QUOTE.search(src, pos)) is not None:
        code += quote.end() - pos
        closing = _STRING_REST[quote.group()].match(src, quote.end())
        if closing is None:  # unclosed: the rest is one string the parser will refuse
            return code
        pos = closing.end()
        code += 1
    if code <= stop_after and pos < len(src):
        code += len(src) - pos
    return code


def extract_call(text: str) -> str | None:
    """The first ``name(...)`` in ``text`` up to its matching parenthesis (quote-aware), or a bare name.

    Anything after the call is dropped. When the parentheses never balance the rest of the text is returned,
    so the caller's parse fails with the whole story in the message.
    """
    calls = extract_calls(text, limit=1)
    return calls[0] if calls else None


# What may stand between two calls of one sequence: whitespace, commas, semicolons, '&' (UI-TARS' separator).
_BETWEEN_CALLS = re.compile(r"[\s,;&]*+")


def extract_calls(text: str, limit: int | None = None) -> list[str]:
    """The first call in ``text`` and every call that follows it separated only by ``, ; &`` or whitespace.

    Prose after a call ends the sequence (``click(..) then wait()`` is one click), as in ``extract_call``.
    """
    found = _CALL_SEARCH.search(text)
    if found is None:
        bare = _BARE_NAME.match(text)
        return [bare.group(1)] if bare else []
    calls: list[str] = []
    start, open_paren = found.start(1), found.end() - 1
    while limit is None or len(calls) < limit:
        end = _call_end(text, open_paren)
        calls.append(text[start:end].strip())
        gap = _BETWEEN_CALLS.match(text, end)
        match = _CALL_START.match(text, gap.end() if gap else end)
        if match is None:
            break
        start, open_paren = match.start(), match.end() - 1
    return calls


def calls_at(text: str, marker: re.Pattern[str], limit: int = MAX_CALLS + 1) -> list[str]:
    """Every call starting at ``marker`` that is not inside an earlier one (a call quoted in a string is), up
    to ``limit`` of them."""
    calls: list[str] = []
    pos = 0
    while len(calls) < limit and (match := marker.search(text, pos)) is not None:
        open_paren = text.index("(", match.start())
        end = _call_end(text, open_paren)
        calls.append(text[match.start() : end].strip())
        pos = end
    return calls


@dataclass
class Call:
    """A parsed ``name(key=value, ...)`` with typed accessors that raise ParseError naming what is wrong."""

    name: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    reply: str = ""

    def only(self, *allowed: str) -> Call:
        unknown = sorted(set(self.kwargs) - set(allowed))
        if unknown:
            expected = ", ".join(allowed) if allowed else "no arguments"
            raise fail(
                f"{self.name}: unknown argument {', '.join(unknown)} (expected {expected})", self.reply
            )
        return self

    def has(self, *names: str) -> bool:
        return any(n in self.kwargs for n in names)

    def value(self, *names: str) -> Any:
        for name in names:
            if name in self.kwargs:
                return self.kwargs[name]
        raise fail(f"{self.name}: missing argument {names[0]}", self.reply)

    def text(self, *names: str, required: bool = True) -> str | None:
        if not required and not self.has(*names):
            return None
        value = self.value(*names)
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise fail(f"{self.name}: {names[0]} must be a string, got {value!r:.60}", self.reply)
        return str(value)

    def pair(self, *names: str) -> tuple[float, float]:
        return to_pair(self.value(*names), f"{self.name}: {names[0]}", self.reply)


_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"
_NUMBERS_IN_TEXT = re.compile(_NUMBER)


def _is_number(v: Any) -> bool:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    return isinstance(v, int) or math.isfinite(v)


def to_pair(value: Any, what: str, reply: str) -> tuple[float, float]:
    """A point from ``(x, y)``, ``[x, y]``, a 4-number box (its centre) or a string holding those numbers."""
    if isinstance(value, str):
        numbers = [m.group() for m in islice(_NUMBERS_IN_TEXT.finditer(value), 5)]  # 5 is already too many
        try:
            value = [float(n) if "." in n else int(n) for n in numbers]
        except ValueError as exc:  # an integer past Python's 4300-digit limit
            raise fail(f"{what}: not a point: {value!r:.60}", reply) from exc
    if not isinstance(value, (tuple, list)) or len(value) not in (2, 4) or not all(map(_is_number, value)):
        raise fail(f"{what}: expected two numbers (x, y), got {value!r:.80}", reply)
    if len(value) == 4:
        x1, y1, x2, y2 = value
        return ((x1 + x2) / 2, (y1 + y2) / 2)
    return (value[0], value[1])


def _literal_kwargs(src: str, reply: str) -> dict[str, Any]:
    tree = ast.parse(f"_({src})", mode="eval")
    call = tree.body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.func.id != "_":
        raise SyntaxError("not a single call")
    if call.args:
        raise fail("positional arguments are not accepted; write key=value", reply)
    out: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is None:
            raise fail("**arguments are not accepted", reply)
        out[kw.arg] = ast.literal_eval(kw.value)
    return out


_CURLY_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


def _straight_quotes(src: str) -> str:
    """``action=\u201cTap\u201d``: curly quotes used as string delimiters (tried only when the literal fails)."""
    return src.translate(_CURLY_QUOTES)


_KWARG_START = re.compile(r"(?:^|,)\s*+([A-Za-z_]\w*+)\s*+=\s*+(['\"])")
_UNESCAPED_TRIES = 4  # text arguments tried as the verbatim one; each try parses the arguments before it


def _with_unescaped_text(src: str, text_keys: frozenset[str], reply: str) -> dict[str, Any] | None:
    """Models write ``Type(content='it's')``: take the last text argument verbatim up to the closing quote."""
    tail = src.rstrip()
    tries = 0
    for match in _KWARG_START.finditer(src):
        key, quote = match.group(1), match.group(2)
        if key not in text_keys or not tail.endswith(quote) or len(tail) <= match.end():
            continue
        tries += 1
        if tries > _UNESCAPED_TRIES:
            return None
        head = src[: match.start()].strip()
        try:
            kwargs = _literal_kwargs(head, reply) if head else {}
        except _LITERAL_ERRORS:
            continue
        kwargs[key] = tail[match.end() : -1]
        return kwargs
    return None


def parse_call(expr: str, reply: str, text_keys: frozenset[str] = frozenset()) -> Call:
    """Parse ``Name(key=literal, ...)`` (or a bare ``Name``) into a Call. ParseError on anything else."""
    shape = _CALL_SHAPE.match(expr)
    if shape is None:
        bare = _BARE_NAME.match(expr)
        if bare:
            return Call(bare.group(1), {}, reply)
        raise fail(f"not an action call: {expr.strip()!r:.120}", reply)
    name, src = shape.group(1), shape.group(2).strip()
    if not src:
        return Call(name, {}, reply)
    if code_length(src) > MAX_CALL_CODE:
        raise fail(
            f"{name}: the call is too long to read (over {MAX_CALL_CODE} characters outside its strings)",
            reply,
        )
    attempts = dict.fromkeys((src, src.replace("\r", "\\r").replace("\n", "\\n"), _straight_quotes(src)))
    for attempt in attempts:
        try:
            return Call(name, _literal_kwargs(attempt, reply), reply)
        except _LITERAL_ERRORS:
            continue
    kwargs = _with_unescaped_text(src, text_keys, reply)
    if kwargs is not None:
        return Call(name, kwargs, reply)
    raise fail(f"{name}: arguments are not Python literals: {src!r:.120}", reply)


def parse_first_call(text: str, reply: str, missing: str, text_keys: frozenset[str] = frozenset()) -> Call:
    """The first action call in ``text`` (see ``extract_call``), parsed; ParseError ``missing`` when none."""
    expr = extract_call(text)
    if not expr:
        raise fail(missing, reply)
    return parse_call(expr, reply, text_keys)


def parse_calls(text: str, reply: str, missing: str, text_keys: frozenset[str] = frozenset()) -> list[Call]:
    """Every call of the sequence ``extract_calls`` finds, parsed; ParseError ``missing`` when there is none."""
    return parse_calls_in([text], reply, missing, text_keys)


def parse_calls_in(
    texts: Iterable[str], reply: str, missing: str, text_keys: frozenset[str] = frozenset()
) -> list[Call]:
    """The calls of every text in turn (each as ``parse_calls``): ParseError ``missing`` for a text without one,
    and ParseError when there are more than ``MAX_CALLS`` in all."""
    calls: list[Call] = []
    for text in texts:
        exprs = extract_calls(text, limit=MAX_CALLS + 1 - len(calls))
        if not exprs:
            raise fail(missing, reply)
        if len(calls) + len(exprs) > MAX_CALLS:
            raise too_many_calls(reply)
        calls.extend(parse_call(expr, reply, text_keys) for expr in exprs)
    return calls


def too_many_calls(reply: str) -> ParseError:
    return fail(f"more than {MAX_CALLS} actions in one reply (at most {MAX_CALLS} are read)", reply)


def tag_bodies(text: str, tag: str) -> list[str]:
    """The text inside every ``<tag>...</tag>``, in order; the last runs to the end when left unclosed."""
    bodies: list[str] = []
    pos = 0
    opening, closing = f"<{tag}>", f"</{tag}>"
    while (start := text.find(opening, pos)) >= 0:
        start += len(opening)
        end = text.find(closing, start)
        if end < 0:
            bodies.append(text[start:].strip())
            break
        bodies.append(text[start:end].strip())
        pos = end + len(closing)
    return bodies


_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    if ch.isprintable():
        return ch
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def py_str(value: str) -> str:
    """A single-quoted Python literal, the way the models write text arguments."""
    return "'" + "".join(map(_escape, value)) + "'"


__all__ = [
    "Call",
    "MAX_CALLS",
    "MAX_CALL_CODE",
    "MAX_DEPTH",
    "PARSE_HINT",
    "ReplyParts",
    "clean_reply",
    "calls_at",
    "code_length",
    "extract_call",
    "extract_calls",
    "fail",
    "join_reasoning",
    "parse_call",
    "parse_calls",
    "parse_calls_in",
    "parse_first_call",
    "py_str",
    "split_reply",
    "split_think",
    "tag_bodies",
    "tag_body",
    "to_pair",
    "too_many_calls",
]
