"""Java regular expressions (what GKD's ``~=`` runs) on the `regex` module, which shares most of Java's syntax.

`regex`'s VERSION1 mode treats inline flags as Java does (``a(?i)b`` folds case from there to the end of the
group), and has possessive and atomic groups, set operations (``[a-z&&[^aeiou]]``) and Unicode properties. What
Java spells differently is rewritten first: ``\\Q...\\E`` quoting, ``\\k<name>`` back-references, the
``\\p{javaLowerCase}`` and POSIX ``\\p{Alpha}`` classes (ASCII-only in Java), and the flags ``d`` (UNIX_LINES)
and ``U`` (UNICODE_CHARACTER_CLASS), which change nothing for Python strings. Java's ``matches`` is a whole-text
match: :func:`java_regex` patterns are used with ``fullmatch``.
"""

from __future__ import annotations

import re
from functools import lru_cache

_CLASS_BODIES = {  # Java's POSIX classes are ASCII unless UNICODE_CHARACTER_CLASS is set
    "Lower": "a-z",
    "Upper": "A-Z",
    "ASCII": "\\x00-\\x7F",
    "Alpha": "a-zA-Z",
    "Digit": "0-9",
    "Alnum": "a-zA-Z0-9",
    "Punct": "!-/:-@\\[-`{-~",
    "Graph": "!-~",
    "Print": " -~",
    "Blank": " \\t",
    "Cntrl": "\\x00-\\x1F\\x7F",
    "XDigit": "0-9a-fA-F",
    "Space": " \\t\\n\\x0B\\f\\r",
    "javaLowerCase": "\\p{Ll}",
    "javaUpperCase": "\\p{Lu}",
    "javaWhitespace": "\\s",
    "javaMirrored": "\\p{Bidi_Mirrored}",
    "javaLetter": "\\p{L}",
    "javaDigit": "\\p{Nd}",
    "javaLetterOrDigit": "\\p{L}\\p{Nd}",
    "javaAlphabetic": "\\p{Alphabetic}",
}
_FLAGS_RE = re.compile(r"\(\?([a-zA-Z]*)(-[a-zA-Z]*)?([:)])")
_PROPERTY_RE = re.compile(r"\\([pP])\{(Is)?([A-Za-z]+)\}")


class JavaRegexError(ValueError):
    """The pattern is not a usable regular expression. ``unsupported``: valid Java this module cannot run."""

    def __init__(self, message: str, *, unsupported: bool = False) -> None:
        super().__init__(message)
        self.unsupported = unsupported


def translate(pattern: str) -> str:
    """The pattern in the `regex` module's VERSION1 syntax."""
    out: list[str] = []
    i, in_class = 0, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt == "Q":
                end = pattern.find("\\E", i + 2)
                literal = pattern[i + 2 :] if end < 0 else pattern[i + 2 : end]
                out.append("".join("\\" + c if not c.isalnum() else c for c in literal))
                i = len(pattern) if end < 0 else end + 2
                continue
            if nxt == "k" and pattern.startswith("<", i + 2):
                close = pattern.find(">", i + 3)
                if close > 0:
                    out.append(f"(?P={pattern[i + 3 : close]})")
                    i = close + 1
                    continue
            m = _PROPERTY_RE.match(pattern, i)
            if m and m.group(3) in _CLASS_BODIES:
                body = _CLASS_BODIES[m.group(3)]
                negate = m.group(1) == "P"
                if in_class:
                    if negate:
                        raise JavaRegexError(f"\\P{{{m.group(3)}}} inside [...]", unsupported=True)
                    out.append(body)
                else:
                    out.append(f"[{'^' if negate else ''}{body}]")
                i = m.end()
                continue
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if ch == "[":
            in_class += 1
        elif ch == "]" and in_class:
            in_class -= 1
        elif ch == "(" and not in_class:
            m = _FLAGS_RE.match(pattern, i)
            if m:
                on = m.group(1).replace("d", "").replace("U", "")
                off = (m.group(2) or "").replace("d", "").replace("U", "")
                if on or len(off) > 1 or m.group(3) == ":":
                    out.append(f"(?{on}{off if len(off) > 1 else ''}{m.group(3)}")
                i = m.end()
                continue
        out.append(ch)
        i += 1
    return "".join(out)


@lru_cache(maxsize=2048)
def java_regex(pattern: str, multiline: bool = False):  # -> regex.Pattern
    """The compiled pattern. Raises JavaRegexError."""
    import regex  # only when a selector uses ~=

    flags = regex.V1 | (regex.MULTILINE if multiline else 0)
    try:
        return regex.compile(translate(pattern), flags)
    except (regex.error, JavaRegexError, OverflowError, RecursionError) as exc:
        if isinstance(exc, JavaRegexError):
            raise
        message = str(exc)
        raise JavaRegexError(f"bad regular expression {pattern!r}: {message}") from None
