"""How long each family's reply parser takes on long adversarial replies (the goal: a 1 MB reply parsed or refused
within 1 s; issue 23).

    python bench/reply_parsing.py [--sizes 65536,1048576] [--repeat 3]

Prints one JSON object: per family, the slowest case at each size (median CPU seconds of ``--repeat`` runs) and the
case it was, plus the load average when the bench started. The cases are the named ones of
``tests/unit/model/test_parse_bounds.py`` (nested parens, unclosed quotes, repeated ``click(``, whitespace runs,
opened tags, mixed tags, ...), rebuilt at each size.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mobile_agent.actions import Size  # noqa: E402
from mobile_agent.errors import ParseError  # noqa: E402
from mobile_agent.model.families import FAMILIES  # noqa: E402

CASES = {
    "nested parens": ("<action>Click(point=", "(", ")</action>"),
    "unclosed quote": ("<action>Type(content='", "x", ""),
    "repeated click(": ("", "click(", ""),
    "repeated Click( with args": ("<action>", "Click(point=(1, 2", ""),
    "whitespace run": ("<action>Click", " ", "x"),
    "letters": ("", "a", ""),
    "opened tags": ("", "<think><action><answer><tool_call>", ""),
    "seed think tags": ("", "<think_never_used_1>", ""),
    "text arguments": ("<action>Type(", "content='x', ", "content='it's')</action>"),
    "many calls": ("<action>", "Wait(), ", "</action>"),
    "many quoted do(": ("", 'do(action="Back") ', ""),
    "json nesting": ("<tool_call>", '{"a": [', ""),
    "python dict": ("<tool_call>{", "'a': 1, ", "</tool_call>"),
    "mixed tags": ("", '<think>a</think><action>Click(point=(1,2)</action><tool_call>{"a": [</tool_call>Action: click(', ""),
}  # fmt: skip


def build(head: str, unit: str, tail: str, size: int) -> str:
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


def cpu_seconds(name: str, text: str) -> float:
    family = FAMILIES[name]
    geometry = family.geometry(Size(1080, 2400))
    started = time.process_time()
    try:
        family.parse(text, geometry)
    except ParseError:
        pass
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="65536,1048576")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    result: dict[str, object] = {"load_average": os.getloadavg(), "repeat": args.repeat, "families": {}}
    for name in sorted(FAMILIES):
        per_size = {}
        for size in sizes:
            timings = {
                case: statistics.median(cpu_seconds(name, build(*parts, size)) for _ in range(args.repeat))
                for case, parts in CASES.items()
            }
            worst = max(timings, key=timings.__getitem__)
            per_size[str(size)] = {"slowest_case": worst, "cpu_s": round(timings[worst], 4)}
        result["families"][name] = per_size  # type: ignore[index]
    print(json.dumps(result, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
