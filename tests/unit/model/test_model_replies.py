"""Real-looking replies of each family, including the malformed shapes seen in the wild."""

from __future__ import annotations

import pytest

from mobile_agent.actions import Action, ActionKind, Key, Point, Size
from mobile_agent.errors import ParseError
from mobile_agent.model.families import get_family

PHONE = Size(1080, 2400)


def parse(family: str, text: str, reasoning: str | None = None):
    fam = get_family(family)
    return fam.parse(text, fam.geometry(PHONE), reasoning=reasoning)


def parse_error(family: str, text: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(family, text)
    assert info.value.reply.strip() == text.strip() or text in info.value.reply
    assert info.value.hint
    return info.value


# ---- UI-Venus-2 ---------------------------------------------------------------------------------------------


def test_venus2_plain_reply() -> None:
    p = parse(
        "ui-venus-2",
        "<think>The chat with 张三 is at the top.</think>\n<action>Click(point=(500, 180))</action>",
    )
    assert p.action == Action.tap(540, 433)
    assert p.thought == "The chat with 张三 is at the top."


def test_venus2_reasoning_content_is_joined_back() -> None:
    p = parse("ui-venus-2", "\n\n<action>LaunchApp(app='微信')</action>", reasoning="先打开微信")
    assert p.action == Action.launch("微信")
    assert p.thought == "先打开微信"


def test_venus2_template_prefilled_think_tag() -> None:
    p = parse("ui-venus-2", "I need to go back.\n</think>\n<action>PressBack()</action>")
    assert p.action == Action.press(Key.BACK)
    assert p.thought == "I need to go back."


def test_venus2_code_fence_box_tokens_and_trailing_text() -> None:
    text = (
        "```\n<think>scroll down</think>\n<action><|begin_of_box|>Swipe(start=(500, 800), end=(500, 200))"
        "<|end_of_box|></action>\n```\nI will now check the result."
    )
    p = parse("ui-venus-2", text)
    assert p.action.kind is ActionKind.SWIPE
    assert p.action.point == Point(540, 1921) and p.action.end == Point(540, 481)


def test_venus2_accepts_box_synonym_and_multiline_text() -> None:
    assert parse("ui-venus-2", "<action>LongPress(box=(10, 10))</action>").action == Action.long_press(11, 25)
    p = parse("ui-venus-2", "<think>t</think><action>Type(content='line one\nline two')</action>")
    assert p.action == Action.type("line one\nline two")


def test_venus2_unescaped_quote_in_text_is_tolerated() -> None:
    p = parse("ui-venus-2", "<think>t</think><action>Type(content='It's 5 o'clock')</action>")
    assert p.action == Action.type("It's 5 o'clock")


def test_venus2_answer_and_finished() -> None:
    assert parse("ui-venus-2", "<action>Answer(content='42')</action>").action == Action.answer("42")
    assert parse("ui-venus-2", "<action>Finished(content='')</action>").action == Action.finish(None)
    assert parse("ui-venus-2", "<action>Finished()</action>").action == Action.finish(None)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("<think>x</think><action>Clik(point=(1,2))</action>", "unknown action 'Clik'"),
        ("<think>x</think><action>Click()</action>", "missing argument point"),
        ("<think>x</think><action>Click(point=(1000, 5))</action>", "outside 0-999"),
        ("<think>x</think><action>Click(point=(1,2)</action>", "not Python literals|not an action call"),
        ("<think>x</think><action>GetScreenshot()</action>", "not supported"),
        ("<think>x</think><action>Click(point=(1,2), force=True)</action>", "unknown argument force"),
        ("<think>x</think><action>Click((1, 2))</action>", "positional"),
        ("<think>only thinking, never acted", "no <action>"),
        ("<think>x</think><action>Click(point=__import__('os'))</action>", "not Python literals"),
        ("<think>x</think><action>Type(content=['a'])</action>", "must be a string"),
        ("<think>x</think><action>LaunchApp(app='  ')</action>", "must not be empty"),
    ],
)
def test_venus2_errors_say_what_was_wrong(text: str, message: str) -> None:
    error = parse_error("ui-venus-2", text)
    assert error.message and __import__("re").search(message, error.message), error.message


# ---- UI-Venus-1.5 -------------------------------------------------------------------------------------------


def test_venus15_reply_with_conclusion() -> None:
    text = (
        "<think>需要向下滚动查看更多</think>\n<action>Scroll(start=(500,700), end=(500,300))</action>\n"
        "<conclusion>向下滚动列表</conclusion>"
    )
    p = parse("ui-venus-1.5", text)
    assert p.action == Action.swipe(540, 1681, 540, 721)
    assert p.thought == "需要向下滚动查看更多"


def test_venus15_has_no_double_click() -> None:
    assert "unknown action" in parse_error("ui-venus-1.5", "<action>DoubleClick(box=(1,1))</action>").message


# ---- AutoGLM ------------------------------------------------------------------------------------------------


def test_autoglm_launch() -> None:
    p = parse(
        "autoglm",
        '<think>用户要给张三发消息，先打开微信。</think>\n<answer>do(action="Launch", app="微信")</answer>',
    )
    assert p.action == Action.launch("微信")
    assert p.thought == "用户要给张三发消息，先打开微信。"


def test_autoglm_sensitive_tap_and_trailing_text_after_answer() -> None:
    text = (
        '<think>点击支付按钮</think><answer>do(action="Tap", element=[500, 900], message="确认支付 ¥30")</answer>'
        "\n好的，我已经点击了。"
    )
    p = parse("autoglm", text)
    assert p.action == Action(ActionKind.TAP, point=Point(540, 2161), sensitive="确认支付 ¥30")


def test_autoglm_box_wrapper_and_no_tags() -> None:
    p = parse("autoglm", '<think>x</think><answer><|begin_of_box|>do(action="Back")<|end_of_box|></answer>')
    assert p.action == Action.press(Key.BACK)
    p = parse("autoglm", '我需要向上滑动。\ndo(action="Swipe", start=[500,800], end=[500,200])')
    assert p.action.kind is ActionKind.SWIPE and p.thought == "我需要向上滑动。"


def test_autoglm_take_over_wait_type_finish() -> None:
    assert parse(
        "autoglm", '<answer>do(action="Take_over", message="请登录")</answer>'
    ).action == Action.call_user("请登录")
    assert parse("autoglm", '<answer>do(action="Wait", duration="2 seconds")</answer>').action == Action.wait(
        2000
    )
    assert parse("autoglm", '<answer>do(action="Type_Name", text="张三")</answer>').action == Action.type(
        "张三"
    )
    assert parse("autoglm", '<answer>do(action="Type", text="他说"你好"")</answer>').action == Action.type(
        '他说"你好"'
    )
    assert parse("autoglm", '<answer>finish(message="已发送")</answer>').action == Action.finish("已发送")


@pytest.mark.parametrize("verb", ["Note", "Call_API", "Interact"])
def test_autoglm_placeholders_are_refused_not_finished(verb: str) -> None:
    error = parse_error("autoglm", f'<answer>do(action="{verb}", message="x")</answer>')
    assert f"{verb} operation is not supported" in error.message


@pytest.mark.parametrize(
    "text",
    [
        '<answer>do(action="Tap", element=[500, 900</answer>',
        '<answer>do(action="Tap", element=[500])</answer>',
        '<answer>do(action="Tap", element=[1000, 5])</answer>',
        '<answer>do(action="Fly")</answer>',
        "<answer>I am done</answer>",
        "The task looks complete.",
        '<answer>do(action="Wait", duration="soon")</answer>',
    ],
)
def test_autoglm_malformed_is_a_parse_error_never_a_finish(text: str) -> None:
    parse_error("autoglm", text)


# ---- UI-TARS-1.5 --------------------------------------------------------------------------------------------


def test_uitars_box_token_form_in_resized_pixels() -> None:
    fam = get_family("ui-tars")
    assert fam.geometry(PHONE).image == Size(672, 1484)
    p = parse("ui-tars", "Thought: 点击搜索框\nAction: click(start_box='<|box_start|>(235,512)<|box_end|>')")
    assert p.action == Action.tap(378, 828)
    assert p.thought == "点击搜索框"


def test_uitars_point_form_scroll_and_type() -> None:
    p = parse(
        "ui-tars", "Thought: more below\nAction: scroll(point='<point>336 742</point>', direction='down')"
    )
    assert p.action == Action.swipe(540, 1200, 540, 0)
    p = parse("ui-tars", "Thought: search\nAction: type(content='coffee\\n')")
    assert p.action == Action.type("coffee\n")
    p = parse("ui-tars", "Thought: open\nAction: open_app(app_name='Settings')\n\nAction: press_back()")
    assert p.action == Action.launch("Settings")


def test_uitars_errors() -> None:
    assert (
        "direction"
        in parse_error("ui-tars", "Action: scroll(point='<point>1 1</point>', direction='in')").message
    )
    assert "no 'Action:'" in parse_error("ui-tars", "Thought: I clicked it").message
    assert "outside" in parse_error("ui-tars", "Action: click(point='<point>700 100</point>')").message


# ---- Qwen-VL mobile_use -------------------------------------------------------------------------------------


def test_qwen25_pixels_of_the_smart_resized_image() -> None:
    text = 'I tap the button.\n<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [336, 742]}}\n</tool_call>'
    p = parse("qwen2.5-vl", text)
    assert p.action == Action.tap(540, 1200)
    assert p.thought == "I tap the button."


def test_qwen3_is_0_999_and_the_default() -> None:
    text = '<tool_call>{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [500, 500]}}</tool_call>'
    assert parse("qwen3-vl", text).action == Action.tap(540, 1201)
    assert parse("qwen-vl", text).action == Action.tap(540, 1201)


@pytest.mark.parametrize(
    ("arguments", "action"),
    [
        ('{"action": "system_button", "button": "Back"}', Action.press(Key.BACK)),
        ('{"action": "system_button", "button": "Menu"}', Action.press(Key.RECENT)),
        ('{"action": "open", "text": "Chrome"}', Action.launch("Chrome")),
        ('{"action": "wait", "time": 2}', Action.wait(2000)),
        ('{"action": "long_press", "coordinate": [0, 0], "time": 1.5}', Action.long_press(0, 1, 1500)),
        ('{"action": "terminate", "status": "failure"}', Action.finish("failure")),
        ('{"action": "answer", "text": "3 unread"}', Action.answer("3 unread")),
        ('{"action": "interact", "text": "Which one?"}', Action.call_user("Which one?")),
        ('"{\\"action\\": \\"type\\", \\"text\\": \\"hi\\"}"', Action.type("hi")),
    ],
)
def test_qwen_actions(arguments: str, action: Action) -> None:
    text = f'<tool_call>\n{{"name": "mobile_use", "arguments": {arguments}}}\n</tool_call>'
    assert parse("qwen3-vl", text).action == action


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "computer_use", "arguments": {"action": "click", "coordinate": [1, 1]}}</tool_call>',
        '<tool_call>{"name": "mobile_use", "arguments": {"action": "key", "text": "volume_up"}}</tool_call>',
        '<tool_call>{"name": "mobile_use", "arguments": {"action": "click"}}</tool_call>',
        '<tool_call>{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [1, 1000]}}</tool_call>',
        '<tool_call>{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [1, 1]</tool_call>',
        "I think the task is done.",
    ],
)
def test_qwen_errors(text: str) -> None:
    parse_error("qwen3-vl", text)
