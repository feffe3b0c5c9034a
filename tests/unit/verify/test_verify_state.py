"""State lines on a snapshot agree with the scenario module's own evaluation on the live phone."""

from __future__ import annotations

import re

import pytest

from mobile_agent.sim.phone.phone import Phone
from mobile_agent.sim.scenario import evaluate, list_scenarios, load_scenario, phone_state
from mobile_agent.verify.checklang import evaluate_line, parse_check

EXTRA_LINES = [
    "typed contains {text: ~晚上}",
    "typed lacks {text: 转账}",
    "len(typed) >= 1",
    "screen == chat",
    "screen != home",
    "foreground == com.tencent.mm",
    "balance > 100",
    "settings_changed.wifi == false",
    "messages_sent contains {contact: 张三}",
]


def _centre(xml: str, text: str) -> tuple[int, int]:
    pattern = 'text="' + re.escape(text) + r'"[^>]*bounds="\[(\d+),(\d+)\]\[(\d+),(\d+)\]"'
    found = re.search(pattern, xml)
    assert found, f"{text} not on screen"
    x1, y1, x2, y2 = map(int, found.groups())
    return (x1 + x2) // 2, (y1 + y2) // 2


@pytest.fixture(scope="module")
def typed_phone() -> Phone:
    phone = Phone()
    phone.launch("com.tencent.mm")
    phone.tap(*_centre(phone.hierarchy_xml(), "张三"))
    phone.tap(490, 2277)
    phone.input_text("晚上好")
    return phone


def test_snapshot_evaluation_matches_the_live_phone(typed_phone):
    lines = [line for name in list_scenarios() for line in load_scenario(name).checks] + EXTRA_LINES
    snapshot = phone_state(typed_phone)
    for line in lines:
        check = parse_check(line)
        assert evaluate_line(check, snapshot) == evaluate(check, typed_phone), line


def test_snapshot_names_the_screen(typed_phone):
    snapshot = phone_state(typed_phone)
    assert snapshot["screen"] == "chat" and snapshot["foreground"] == "com.tencent.mm"
    assert evaluate_line("typed contains {text: 晚上好}", snapshot)[0]
    assert not evaluate_line("messages_sent contains {contact: 张三}", snapshot)[0]
