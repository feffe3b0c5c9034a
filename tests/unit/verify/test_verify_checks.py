"""Task checks: the schema, screen and state points, named points, hooks."""

from __future__ import annotations

import textwrap

import pytest

from mobile_agent.errors import ConfigError
from mobile_agent.verify.checks import TaskCheck, activity_matches, run_checks, screen_texts_of
from mobile_agent.verify.verdict import Verdict

CHAT_XML = """<?xml version='1.0' encoding='UTF-8'?>
<hierarchy rotation="0">
  <node text="" package="com.tencent.mm" bounds="[0,0][1080,2400]">
    <node text="张三" package="com.tencent.mm" bounds="[0,100][1080,200]" />
    <node text="晚上好" class="android.widget.EditText" package="com.tencent.mm" bounds="[0,2200][900,2300]" />
    <node text="" content-desc="表情" package="com.tencent.mm" bounds="[900,2200][1000,2300]" />
  </node>
</hierarchy>"""

TYPED_NOT_SENT = {
    "messages_sent": [],
    "typed": [{"package": "com.tencent.mm", "screen": "chat", "field": "msg", "text": "晚上好"}],
    "orders": [],
    "screen": "chat",
}

WECHAT_POINTS = {
    "points": [
        {"name": "chat with 张三 opened", "screen_text": ["张三"], "state": ["screen == chat"]},
        {"name": "text 晚上好 typed", "state": ["typed contains {text: ~晚上好}"]},
        {"name": "message sent", "state": ["messages_sent contains {contact: 张三, text: 晚上好}"]},
    ]
}


def _run(check: TaskCheck, state=TYPED_NOT_SENT, xml=CHAT_XML):
    return run_checks(
        check,
        final_hierarchy=xml,
        final_package="com.tencent.mm",
        final_activity="com.tencent.mm.ui.chatting.ChattingUI",
        phone_state=state,
        final_step=4,
    )


def test_typed_but_not_sent_is_partial_on_named_points():
    result = _run(TaskCheck.parse(WECHAT_POINTS))
    assert result.verdict is Verdict.PARTIAL and result.authoritative
    assert [(p.description, p.met) for p in result.points] == [
        ("chat with 张三 opened", True),
        ("text 晚上好 typed", True),
        ("message sent", False),
    ]
    assert all(p.step == 4 for p in result.points)
    assert "actual: []" in result.points[2].evidence


def test_sent_message_is_complete():
    sent = dict(
        TYPED_NOT_SENT, messages_sent=[{"app": "com.tencent.mm", "contact": "张三", "text": "晚上好"}]
    )
    assert _run(TaskCheck.parse(WECHAT_POINTS), state=sent).verdict is Verdict.COMPLETE


def test_each_top_level_part_is_its_own_point():
    check = TaskCheck.parse(
        {
            "app": "com.tencent.mm",
            "activity": ".ui.chatting.ChattingUI",
            "screen_text": ["晚上好", "发送"],
            "state": ["len(messages_sent) == 1"],
        }
    )
    result = _run(check)
    assert [p.met for p in result.points] == [True, True, True, False, False]
    assert result.verdict is Verdict.PARTIAL


def test_state_without_a_simulated_phone_is_not_evaluated_and_not_ground_truth():
    check = TaskCheck.parse({"screen_text": ["晚上好"], "state": ["len(messages_sent) == 1"]})
    result = run_checks(check, final_hierarchy=CHAT_XML, final_package="com.tencent.mm")
    assert [p.met for p in result.points] == [True, None]
    assert not result.authoritative
    assert (
        result.verdict is Verdict.COMPLETE
    )  # only what could be evaluated counts; combine() treats it as weak


def test_state_lines_can_name_the_final_app_from_the_episode():
    check = TaskCheck.parse({"state": ["foreground == com.tencent.mm"]})
    assert _run(check, state={"messages_sent": []}).verdict is Verdict.COMPLETE


def test_failed_when_nothing_is_met():
    check = TaskCheck.parse({"app": "com.sankuai.meituan", "state": ["len(orders) >= 1"]})
    assert _run(check).verdict is Verdict.FAILED


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({"state": ["messages_sent has 3"]}, "check.state"),
        ({"state": ["bogus contains 1"]}, "unknown path 'bogus'"),
        ({"hook": "no_colon"}, "package.module:function"),
        ({"app": "x", "colour": "red"}, "check.colour"),
        ({}, "the check is empty"),
        ({"points": [{"name": "nothing"}]}, "has nothing to check"),
    ],
)
def test_bad_checks_are_config_errors_with_the_place(data, needle):
    with pytest.raises(ConfigError) as caught:
        TaskCheck.parse(data, path="tasks.yaml", line=7)
    assert needle in caught.value.message
    assert caught.value.message.startswith("tasks.yaml:7: ") or needle == "has nothing to check"
    assert caught.value.hint


def test_hooks_are_imported_and_their_answers_become_points(tmp_path, monkeypatch):
    (tmp_path / "my_hooks.py").write_text(
        textwrap.dedent(
            """
            from mobile_agent.verify.verdict import CompletionPoint

            def sent(ctx):
                return bool(ctx.phone_state["messages_sent"]), "looked at messages_sent"

            def two(ctx):
                return [CompletionPoint("a", True), CompletionPoint("b", ctx.final_package == "x")]

            def broken(ctx):
                raise RuntimeError("boom")

            def odd(ctx):
                return 42
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sent = _run(TaskCheck.parse({"hook": "my_hooks:sent"}))
    assert sent.verdict is Verdict.FAILED and sent.authoritative
    assert sent.points[0].evidence == "looked at messages_sent"
    assert _run(TaskCheck.parse({"hook": "my_hooks:two"})).verdict is Verdict.PARTIAL
    broken = _run(TaskCheck.parse({"hook": "my_hooks:broken"}))
    assert broken.verdict is None and "RuntimeError: boom" in broken.points[0].evidence
    with pytest.raises(ConfigError, match="returned int"):
        _run(TaskCheck.parse({"hook": "my_hooks:odd"}))
    with pytest.raises(ConfigError, match="cannot import"):
        _run(TaskCheck.parse({"hook": "no_such_module_xyz:fn"}))
    with pytest.raises(ConfigError, match="has no function"):
        _run(TaskCheck.parse({"hook": "my_hooks:missing"}))


def test_activity_forms():
    assert activity_matches(".ui.LauncherUI", "com.tencent.mm.ui.LauncherUI", "com.tencent.mm")
    assert activity_matches("com.tencent.mm/.ui.LauncherUI", "com.tencent.mm.ui.LauncherUI", None)
    assert not activity_matches(".ui.Other", "com.tencent.mm.ui.LauncherUI", "com.tencent.mm")


def test_screen_texts_include_content_desc_and_survive_bad_xml():
    assert screen_texts_of(CHAT_XML) == ["张三", "晚上好", "表情"]
    assert screen_texts_of("<not xml") == []


def test_from_scenario_uses_its_check_lines():
    from mobile_agent.sim.scenario import load_scenario

    check = TaskCheck.from_scenario(load_scenario("wechat_partial"))
    state = {"messages_sent": [{"app": "com.tencent.mm", "contact": "张三", "text": "明天开会"}]}
    result = run_checks(check, final_hierarchy=None, final_package="com.tencent.mm", phone_state=state)
    assert result.verdict is Verdict.PARTIAL
