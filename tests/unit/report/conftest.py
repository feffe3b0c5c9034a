"""A store with one recorded episode of every kind of step, built directly with ``record_step``."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from mobile_agent.actions import Action, Outcome, Size
from mobile_agent.model.families import get_family
from mobile_agent.store.records import ActionSource, StepRecord, StepTimings
from mobile_agent.store.store import TrajectoryStore

SCREEN = Size(1080, 2400)
FAMILY = "ui-venus-2"

HIERARCHY = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy rotation="0">
  <node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.tencent.mm"
        content-desc="" clickable="false" bounds="[0,0][1080,2400]">
    <node index="0" text="张三" resource-id="com.tencent.mm:id/name" class="android.widget.TextView"
          package="com.tencent.mm" content-desc="" clickable="true" bounds="[0,300][1080,460]" />
    <node index="1" text="发送" resource-id="com.tencent.mm:id/send" class="android.widget.Button"
          package="com.tencent.mm" content-desc="" clickable="true" bounds="[880,2200][1060,2320]" />
  </node>
</hierarchy>"""


def screen_image(label: str, colour: tuple[int, int, int] = (240, 240, 240)) -> bytes:
    img = Image.new("RGB", tuple(SCREEN), colour)
    pen = ImageDraw.Draw(img)
    pen.rectangle((0, 300, 1080, 460), fill=(200, 220, 255))
    pen.text((60, 120), label, fill=(0, 0, 0))
    out = io.BytesIO()
    img.save(out, "JPEG", quality=80)
    return out.getvalue()


@dataclass(frozen=True)
class Recorded:
    store: TrajectoryStore
    episode_id: str
    actions: list[Action | None]


def _reply(action: Action, thought: str) -> str:
    family = get_family(FAMILY)
    return family.format(action, family.geometry(SCREEN), thought)


STEPS: list[tuple[Action | None, str, ActionSource, str]] = [
    (Action.launch("微信"), "Open WeChat first.", ActionSource.MODEL, "com.android.launcher3"),
    (Action.tap(540, 380), "Open the chat with 张三.", ActionSource.MODEL, "com.tencent.mm"),
    (None, "", ActionSource.MODEL, "com.tencent.mm"),  # an unparseable reply
    (Action.press("back"), "popup rule: dismiss", ActionSource.RULE, "com.tencent.mm"),
    (Action.type("明天见 <b>"), "Type the message.", ActionSource.MODEL, "com.tencent.mm"),
    (Action.swipe(540, 1800, 540, 600), "Scroll up to check.", ActionSource.MODEL, "com.tencent.mm"),
    (Action.tap(970, 2260), "Tap send.", ActionSource.MODEL, "com.tencent.mm"),
    (Action.finish("sent"), "The message is sent.", ActionSource.MODEL, "com.tencent.mm"),
]


def record_episode(
    store: TrajectoryStore, task: str = "给张三发消息：明天见", run_id: str | None = None
) -> Recorded:
    episode = store.start_episode(task, device="sim-1", family=FAMILY, model="ui-venus-2", run_id=run_id)
    actions: list[Action | None] = []
    for index, (action, thought, source, app) in enumerate(STEPS):
        reply = _reply(action, thought) if action is not None and source is ActionSource.MODEL else None
        if action is None:
            reply = "<think>hmm</think><action>Clack(1, 2)</action>"
        store.record_step(
            episode.id,
            StepRecord(
                index=index,
                action=action,
                action_source=source,
                screen=SCREEN,
                foreground_app=app,
                raw_reply=reply,
                thought=thought or None,
                guard_decisions=[{"guard": "validity", "verdict": "allow", "reason": "ok"}],
                timings=StepTimings(
                    screenshot_ms=40,
                    model_ms=800 + index,
                    act_ms=50,
                    settle_ms=300,
                    total_ms=1200 + 10 * index,
                ),
                error_kind="parse" if action is None else None,
                error_text="unknown action 'Clack'" if action is None else None,
            ),
            screenshot=screen_image(f"step {index}", (240, 240 - 10 * index, 240)),
            hierarchy=HIERARCHY,
        )
        actions.append(action)
    store.finish_episode(episode.id, Outcome.FINISHED, answer="sent")
    return Recorded(store, episode.id, actions)


@pytest.fixture
def store(tmp_path: Path) -> TrajectoryStore:
    with TrajectoryStore.open(f"sqlite:///{tmp_path / 'db.sqlite'}", root=tmp_path / "data") as opened:
        yield opened


@pytest.fixture
def recorded(store: TrajectoryStore) -> Recorded:
    return record_episode(store)
