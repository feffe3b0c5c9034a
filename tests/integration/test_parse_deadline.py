"""Every reply parse runs inside the step's deadline (issue 23): a parse that passes it ends the step like any
other wait that overran it — the step written with the reply, marked ``timeout``, one line — instead of holding
the phone's worker until the parse is done. Through the real stack (the adb server from the adbutils wheel,
adbutils and uiautomator2 against a simulated phone, the model client against the simulated model); the parser
is a real family's, made slow for replies that hold a tap (the shipped parsers are linear: bench/reply_parsing.py).
"""

from __future__ import annotations

import threading
import time

import pytest

from mobile_agent.actions import Action, Outcome
from mobile_agent.agent.config import AgentConfig
from mobile_agent.agent.runtime import run_task
from mobile_agent.model.base import Parsed
from mobile_agent.model.families import FAMILIES
from mobile_agent.model.images import Geometry
from mobile_agent.model.venus2 import UIVenus2
from mobile_agent.sim.servers.model_server import Script, SimModelServer, Turn
from mobile_agent.store.store import TrajectoryStore

TASK = "解析超时测试：打开微信"
STEP_LIMIT_S = 3.0
PARSE_S = 12.0  # far past the step's limit; the episode must not wait for it


class SlowParse(UIVenus2):
    """UI-Venus-2 whose parser takes PARSE_S over a reply that holds a Click (a stand-in for a pathological
    parser); other replies parse as shipped."""

    name = "ui-venus-2-slow-parse"

    def __init__(self) -> None:
        super().__init__()
        self.released = threading.Event()  # set at teardown, so the abandoned parse ends with the test

    def parse(self, text: str, geometry: Geometry, reasoning: str | None = None) -> Parsed:
        if "Click" in text:
            self.released.wait(PARSE_S)
        return super().parse(text, geometry, reasoning)


@pytest.fixture
def slow_family(monkeypatch):
    family = SlowParse()
    monkeypatch.setitem(FAMILIES, family.name, family)
    yield family
    family.released.set()


@pytest.fixture
def model():
    turns = (
        Turn(action=Action.launch("微信")),
        Turn(action=Action.tap(481, 122)),
        Turn(action=Action.finish("x")),
    )
    with SimModelServer(
        family="ui-venus-2", scripts=[Script(task=TASK, turns=turns)], model_name="sim"
    ) as server:
        yield server


def test_a_parse_past_the_step_deadline_ends_the_step_as_a_timeout(sim_farm, tmp_path, model, slow_family):
    farm = sim_farm(1, scenario="wechat_send")
    with TrajectoryStore.open(root=tmp_path / "replays") as store:
        started = time.monotonic()
        result = run_task(
            TASK,
            device=farm.serials[0],
            adb=f"127.0.0.1:{farm.adb_port}",
            base_url=model.base_url,
            model="sim",
            family=slow_family.name,
            store=store,
            config=AgentConfig(timeout_s=60, step_timeout_s=STEP_LIMIT_S),
        )
        elapsed = time.monotonic() - started
        assert result.outcome == Outcome.TIMEOUT, result.detail
        assert elapsed < 2 * STEP_LIMIT_S + 4 < PARSE_S, (
            elapsed
        )  # the launch step, then the limit of the next
        assert "\n" not in (result.detail or "") and "parsing the model's reply" in (result.detail or "")
        assert f"step limit of {STEP_LIMIT_S:.0f} s" in result.detail
        steps = store.steps(result.episode_id)
        assert [s.action.kind.value if s.action else None for s in steps] == ["launch", None]
        last = steps[-1]
        assert last.error_kind == "timeout" and "parsing the model's reply" in (last.error_text or "")
        assert "Click" in (last.raw_reply or "")  # what the model said is kept with the step
        assert store.episode(result.episode_id).outcome == Outcome.TIMEOUT
    assert (
        farm.phones[farm.serials[0]].events_of("tap") == []
    )  # nothing was done on the phone for the unparsed reply
