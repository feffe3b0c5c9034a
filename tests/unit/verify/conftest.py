from __future__ import annotations

import pytest

from mobile_agent.model.client import ModelClient
from mobile_agent.sim.servers.judge_server import JudgeScript, ScriptedJudgeServer


@pytest.fixture
def judge_server():
    with ScriptedJudgeServer(JudgeScript(), model="judge-test") as server:
        yield server


@pytest.fixture
def judge_client(judge_server):
    client = ModelClient([judge_server.base_url], "judge-test", max_retries=0, timeout=10)
    yield client
    client.close()
