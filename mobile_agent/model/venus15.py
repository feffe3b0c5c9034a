"""UI-Venus-1.5: ``<think>..</think><action>..</action><conclusion>..</conclusion>``, coordinates 0-999.

History follows the reference: one user message holding the task, the earlier steps as text lines
``Step i: <think>..</think><action>..</action>`` (bounded here), and the current screenshot.
"""

from __future__ import annotations

import re
from typing import Any

from mobile_agent.actions import Action, ActionKind
from mobile_agent.model.base import CoordinateSpace, PromptContext, text_part
from mobile_agent.model.images import Geometry, ImagePolicy
from mobile_agent.model.syntax import clean_reply, split_think, tag_body
from mobile_agent.model.venus2 import VenusFamily

USER_PROMPT = """**你是一个手机图形界面智能体**
根据用户任务、之前的操作和当前截图，执行下一步操作来完成任务。

### 可用操作（{coordinates}）
- Click(box=(x1,y1))  点击指定位置
- LongPress(box=(x1,y1))  长按指定位置，可触发复制、转发、删除等选项
- Drag(start=(x1,y1), end=(x2,y2))  从起点长按后拖到终点，用于调整布局、滑块验证等
- Scroll(start=(x1,y1), end=(x2,y2))  从起点滑动到终点，用于滚动、切换选项卡、下拉通知栏等
- Type(content='')  在当前激活的输入框输入内容
- Launch(app='')  打开指定 app
- Wait()  等待页面加载
- Finished(content='')  任务结束
- CallUser(content='')  回答用户的问题，或在有多个符合要求的选项时请用户接管
- PressBack()  返回上一个界面
- PressHome()  回到桌面
- PressEnter()  回车，例如在搜索框输入后执行搜索
- PressRecent()  打开最近任务界面

### 用户任务
{task}

### 之前的操作和推理过程
{previous}

### 输出格式
<think>你的思考过程</think>
<action>执行的操作</action>
<conclusion>总结当前操作</conclusion>

### 提示
- 输入之前确认输入框已经激活（出现键盘）。
- 找不到入口时尝试搜索，或滑动查看更多选项卡。
- 进入与任务无关的界面时用 PressBack 回退。
- 结束前确认任务已经完整准确地完成。{hints}"""

_CONCLUSION = re.compile(r"<conclusion>.*?(</conclusion>|$)", re.DOTALL)


def step_line(reply: str) -> str:
    """The ``<think>..</think><action>..</action>`` part of a reply, for the history lines."""
    thought, rest = split_think(clean_reply(reply))
    action = tag_body(rest, "action")
    if action is None:
        return _CONCLUSION.sub("", clean_reply(reply)).strip()
    return f"<think>{thought}</think><action>{action}</action>"


class UIVenus15(VenusFamily):
    name = "ui-venus-1.5"
    image_policy = ImagePolicy(factor=28)
    max_history_images = 0  # the reference sends only the current screenshot
    point_verbs = {"Click": ActionKind.TAP, "LongPress": ActionKind.LONG_PRESS}
    gesture_verbs = {"Scroll": ActionKind.SWIPE, "Drag": ActionKind.DRAG}
    launch_verbs = ("Launch", "LaunchApp")
    point_arg_names = ("box", "point")
    text_verbs = {"CallUser": ActionKind.CALL_USER, "Finished": ActionKind.FINISH}
    supported_kinds = frozenset(ActionKind) - {ActionKind.DOUBLE_TAP, ActionKind.ANSWER}
    format_reminder = "<think>..</think><action> one action call </action><conclusion>..</conclusion>"
    coordinate_note = "坐标范围：左上角 (0,0) 到右下角 (999,999)"

    def compose_messages(self, prompt: PromptContext) -> list[dict[str, Any]]:
        lines = [f"Step {prompt.skipped + i}: {step_line(turn.reply)}" for i, turn in enumerate(prompt.turns)]
        if prompt.skipped:
            lines.insert(0, f"（前 {prompt.skipped} 步已省略）")
        text = USER_PROMPT.format(
            coordinates=self.coordinate_note,
            task=prompt.task,
            previous="\n".join(lines),
            hints=prompt.hints_block("应用知识"),
        )
        return [{"role": "user", "content": [text_part(text), prompt.screenshot_part()]}]

    def format(self, action: Action, geometry: Geometry, thought: str = "") -> str:
        call = self.format_call(action, geometry)
        return (
            f"<think>{thought}</think>\n<action>{call}</action>\n<conclusion>{action.describe()}</conclusion>"
        )


class UIVenusNavi(UIVenus15):
    """UI-Venus-Navi (UI-Venus 1.0): the 1.5 grammar, in absolute pixels of the smart-resized image.

    Its published run logs write ``Click(box=(126, 1052))`` on a phone screenshot: values above 999 that only
    pixels explain (``tests/data/real_replies``, the ``venusnavi-*`` entries).
    """

    name = "ui-venus-navi"
    coordinate_space = CoordinateSpace.IMAGE_PIXELS
    coordinate_note = "坐标为截图上的像素坐标，左上角为 (0,0)"


__all__ = ["UIVenus15", "UIVenusNavi", "step_line"]
