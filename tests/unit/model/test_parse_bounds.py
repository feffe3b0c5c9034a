"""Reply parsers run in linear time: a 1 MB adversarial reply of any family is parsed or refused within 1 s of CPU.

A parse runs on the worker's thread, where no timeout can interrupt it, so the bound is the parser's own. The
replies are built to defeat backtracking: long runs a pattern could rescan from every position (nested parens,
unclosed quotes, repeated ``click(``, whitespace, letters), tags opened and never closed, and mixes of them.
The budget is the process's CPU time, not the wall clock, so other processes on the machine do not count.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobile_agent.actions import Action, ActionKind, Size
from mobile_agent.errors import ParseError
from mobile_agent.model.families import FAMILIES
from mobile_agent.model.syntax import MAX_CALL_CODE, MAX_CALLS, MAX_DEPTH, code_length, extract_calls

MB = 1 << 20
BUDGET_S = 1.0
PHONE = Size(1080, 2400)
FAMILY_NAMES = sorted(FAMILIES)

FRAGMENTS = [
    "click(", "Click(", "do(", "finish(", "(", ")", "[", "]", "{", "}", "'", '"', "\\", " ", "\t", "\n", "\r",
    ",", "=", ":", ";", "&", "a", "1", ".", "-", "é", "点", "\u201c", "<think>", "</think>", "<action>",
    "</action>", "<answer>", "</answer>", "<tool_call>", "</tool_call>", "<conclusion>", "<|begin_of_box|>",
    "```", "<think_never_used_1>", "<point>", "Action:", "Action：", "Thought:", "scroll up()",
    "click>point>point>", "content='", "text=\"", "a=1,", "'a',", "Wait()", "Click(point=(1,2))",
    "Type(content='it's')", 'do(action="Tap", element=[1,2])', '{"name": "mobile_use", "arguments": {',
    '"action": "click", "coordinate": [1, 2]}}',
]  # fmt: skip


def parse_timed(name: str, text: str) -> tuple[float, Action | ParseError]:
    """(CPU seconds, the first action or the ParseError). Any other exception fails the test."""
    family = FAMILIES[name]
    geometry = family.geometry(PHONE)
    started = time.process_time()
    try:
        outcome: Action | ParseError = family.parse(text, geometry).action
    except ParseError as exc:
        outcome = exc
    return time.process_time() - started, outcome


def to_size(head: str, unit: str, tail: str, size: int = MB) -> str:
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


NAMED = {
    "nested parens": to_size("<action>Click(point=", "(", ")</action>"),
    "unclosed quote": to_size("<action>Type(content='", "x", ""),
    "repeated click(": to_size("", "click(", ""),
    "repeated Click( with args": to_size("<action>", "Click(point=(1, 2", ""),
    "whitespace run": to_size("<action>Click", " ", "x"),
    "whitespace then a call": to_size("", " \n\t", "Click(point=(1,2))"),
    "letters": to_size("", "a", ""),
    "letters after digits": to_size("", "1a", "("),
    "opened tags": to_size("", "<think><action><answer><tool_call>", ""),
    "seed think tags": to_size("", "<think_never_used_1>", ""),
    "text arguments": to_size("<action>Type(", "content='x', ", "content='it's')</action>"),
    "many calls": to_size("<action>", "Wait(), ", "</action>"),
    "many action lines": to_size("", "Action: press_back()\n", ""),
    "many quoted do(": to_size("", 'do(action="Back") ', ""),
    "json nesting": to_size("<tool_call>", '{"a": [', ""),
    "python dict": to_size("<tool_call>{", "'a': 1, ", "</tool_call>"),
    "backslashes": to_size("do(action='", "\\", ""),
    "mixed tags": to_size(
        "",
        '<think>a</think><action>Click(point=(1,2)</action><tool_call>{"a": [</tool_call>Action: click(',
        "",
    ),
}


@pytest.mark.parametrize("name", FAMILY_NAMES)
@pytest.mark.parametrize("case", sorted(NAMED))
def test_a_1mb_adversarial_reply_is_parsed_or_refused_within_budget(name: str, case: str) -> None:
    spent, _ = parse_timed(name, NAMED[case])
    assert spent < BUDGET_S, f"{name} took {spent:.2f} s of CPU on {case!r}"


@st.composite
def adversarial(draw: st.DrawFn) -> str:
    """A short pattern of fragments repeated to 1 MB, between a head and a tail of fragments."""
    pattern = "".join(draw(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=6)))
    head = "".join(draw(st.lists(st.sampled_from(FRAGMENTS), max_size=4)))
    tail = "".join(draw(st.lists(st.sampled_from(FRAGMENTS), max_size=4)))
    return to_size(head, pattern, tail)


@pytest.mark.parametrize("name", FAMILY_NAMES)
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(text=adversarial())
def test_any_1mb_reply_of_repeated_fragments_is_parsed_or_refused_within_budget(name: str, text: str) -> None:
    spent, _ = parse_timed(name, text)
    assert spent < BUDGET_S, f"{name} took {spent:.2f} s of CPU on {text[:120]!r}..."


# ---- the bounds, as behaviour ----------------------------------------------------------------------------


def test_a_long_text_argument_is_read_not_refused() -> None:
    text = "长" * MB
    _, action = parse_timed("ui-venus-2", f"<action>Type(content='{text}')</action>")
    assert action == Action.type(text)
    _, action = parse_timed("autoglm", f'<answer>do(action="Type", text="{text}")')
    assert action == Action.type(text)


def test_up_to_max_calls_are_a_sequence_and_one_more_is_refused() -> None:
    family = FAMILIES["ui-venus-2"]
    geometry = family.geometry(PHONE)
    body = ", ".join(["Click(point=(10, 10))"] * MAX_CALLS)
    assert len(family.parse(f"<action>{body}</action>", geometry).actions) == MAX_CALLS
    with pytest.raises(ParseError, match=f"more than {MAX_CALLS} actions"):
        family.parse(f"<action>{body}, Wait()</action>", geometry)
    blocks = "".join(["<action>Wait()</action>"] * (MAX_CALLS + 1))  # across blocks, too
    with pytest.raises(ParseError, match=f"more than {MAX_CALLS} actions"):
        family.parse(blocks, geometry)


@pytest.mark.parametrize(
    ("name", "reply"),
    [
        ("ui-tars", "Action: press_back()\n" * (MAX_CALLS + 1)),
        (
            "qwen3-vl",
            '<tool_call>{"name": "mobile_use", "arguments": {"action": "wait"}}</tool_call>'
            * (MAX_CALLS + 1),
        ),
        ("autoglm", 'do(action="Back") ' * (MAX_CALLS + 1)),
    ],
)
def test_every_family_refuses_more_than_max_calls(name: str, reply: str) -> None:
    _, outcome = parse_timed(name, reply)
    assert isinstance(outcome, ParseError) and f"more than {MAX_CALLS} actions" in outcome.message


def test_a_call_with_too_much_code_is_refused_with_the_bound_named() -> None:
    points = ", ".join(["(1, 2)"] * (MAX_CALL_CODE // 6 + 1))
    _, outcome = parse_timed("ui-venus-2", f"<action>Click(point=[{points}])</action>")
    assert isinstance(outcome, ParseError)
    assert "too long to read" in outcome.message and str(MAX_CALL_CODE) in outcome.message


def test_a_python_dict_tool_call_with_too_much_code_is_refused() -> None:
    items = ", ".join(f"'k{i}': {i}" for i in range(MAX_CALL_CODE // 8))
    _, outcome = parse_timed("qwen2.5-vl", "<tool_call>{'action': 'wait', " + items + "}</tool_call>")
    assert isinstance(outcome, ParseError) and "too long to read" in outcome.message
    _, outcome = parse_timed(
        "qwen2.5-vl", "<tool_call>{'name': 'mobile_use', 'arguments': {'action': 'wait'}}"
    )
    assert outcome == Action.wait()  # a short one is still read as a literal


def test_brackets_deeper_than_the_bound_never_close() -> None:
    deep = "Click(point=" + "(" * MAX_DEPTH + ")" * MAX_DEPTH + ")"
    assert extract_calls(deep + " Wait()") == [deep + " Wait()"]  # never closes: the rest is the call
    shallow = "Click(point=" + "(" * (MAX_DEPTH - 1) + ")" * (MAX_DEPTH - 1) + ")"
    assert extract_calls(shallow + ", Wait()") == [shallow, "Wait()"]


def test_code_length_counts_what_is_outside_strings() -> None:
    assert code_length("content='" + "x" * 10_000 + "'") == len("content=''")
    assert code_length(r"a='it\'s', b=" + '"q"') == len("a='', b=") + 2
    assert code_length("a='unclosed " + "x" * 10_000) == len("a='")
    assert code_length("(" * 10_000) == 10_000


def test_a_name_after_digits_still_starts_a_call() -> None:
    assert extract_calls("1click(point=(1,2))") == ["click(point=(1,2))"]
    assert extract_calls("x1click(a=1)") == ["x1click(a=1)"]
    assert extract_calls("点击click(a=1)") == ["click(a=1)"]


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_a_real_action_after_a_long_thought_is_still_found(name: str) -> None:
    family = FAMILIES[name]
    geometry = family.geometry(PHONE)
    reply = family.format(Action.wait(), geometry, thought="想" * (MB // 2))
    assert family.parse(reply, geometry).action.kind is ActionKind.WAIT
