"""A control that runs something does what the thing it runs does.

Automation apps (MacroDroid, Tasker, Shortcuts, IFTTT, a script runner) act through their macros: "Test actions",
"Run now", 立即执行 carry no consequential word, yet they perform every step the macro lists at once, and a step
may send an SMS, call, pay or delete. So a run control takes the kind of the consequential steps the screen lists
(their names open with a verb: "Send SMS", "Delete files", "拨打电话"); with none listed, it runs nothing that
matters.
"""

from __future__ import annotations

import re

from mobile_agent.gate.finding import Finding
from mobile_agent.gate.lexicon import verb_kind
from mobile_agent.screen.context import ScreenReader, TargetContext
from mobile_agent.screen.text import fold, spaced

_RUN_ZH = re.compile(
    r"(立即|马上|手动)?(运行|执行|测试|试运行|触发)(宏|动作|任务|操作|脚本|流程|快捷指令)?(一次)?"
)
_RUN_EN = re.compile(
    r"(run|test|execute|trigger|fire)( it)?( now| once)?"
    r"( (the )?(all )?(actions?|macros?|tasks?|shortcuts?|scripts?|automations?|flows?|applets?|steps?))?( now)?"
)


def runs_steps(reader: ScreenReader, ctx: TargetContext, labels: list[str]) -> Finding | None:
    """A run or test control: the kind of the first consequential step the screen lists."""
    label = " ".join(labels).strip()
    if not label or not (_RUN_ZH.fullmatch(fold(label)) or _RUN_EN.fullmatch(spaced(label).strip())):
        return None
    own = {id(n) for n in ctx.target.node.iter("node")} if ctx.target is not None else set()
    for e in reader.visible:
        if id(e.node) in own or e.node.get("clickable") == "true":
            continue  # a step is listed as text; a button beside the list (Delete macro) is not run
        for text in (e.text, e.content_desc):
            found = verb_kind(text) if text.strip() else None
            if found is not None:
                return Finding(
                    found[0],
                    "label",
                    ctx.describe(),
                    f"'{label[:30]}' runs the listed step '{text[:40]}'",
                    (f"label '{label[:40]}'", f"step '{text[:60]}'"),
                )
    return None


__all__ = ["runs_steps"]
