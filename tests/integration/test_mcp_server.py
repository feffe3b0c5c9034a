"""`mobile-agent mcp` through the MCP SDK's own client, over stdio (started exactly as the README's mcpServers
snippet says) and over streamable HTTP, against simulated phones behind the real adb server.

Proven here: the tools are listed; list_phones shows the farm; device calls are recorded as steps with source mcp
(and `mobile-agent show` lists them); a consequential tap (确认转账 on the simulated Alipay) is put to the person
by elicitation and, answered "no", leaves the phone's state unchanged, while the same tap with the gate allowing
transfers does the harm (the control); without elicitation the question waits in the inbox and a "no" there
refuses it; HTTP without the token is refused; run_task returns an episode id and runs it to a verified finish;
bad arguments get a tool error, never a traceback.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp.server.mcpserver", reason="the mcp extra is not installed (pip install '.[mcp]')")

import httpx2  # noqa: E402 - after the skip: the SDK brings it
from mcp import ClientSession, StdioServerParameters, stdio_client, types  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from mobile_agent.sim.servers.model_server import SimModelServer  # noqa: E402
from mobile_agent.store.store import TrajectoryStore  # noqa: E402
from tests.integration.inventory import inventory_file

pytestmark = pytest.mark.slow

README = Path(__file__).resolve().parents[2] / "README.md"
# The simulated Alipay's transfer to 李四 (mobile_agent/sim/scenarios/alipay_transfer.yaml), up to 确认转账: each
# target is found in view_tree as a calling agent would; the last tap's consequence is read off the screen alone.
TO_THE_CONFIRM = [("launch", "支付宝"), ("tap", "转账"), ("tap", "李四"), ("type", "100")]
CONFIRM = "确认转账"
DRILL = "task: mcp drill\nturns:\n  - action: {kind: finish, text: done}\n"
TOOLS = {
    "list_phones",
    "run_task",
    "episode",
    "stop_episode",
    "hold_phone",
    "release_phone",
    "screenshot",
    "view_tree",
    "tap",
    "long_press",
    "swipe",
    "type",
    "key",
    "launch",
    "back",
    "home",
}


def readme_config() -> dict:
    """The mcpServers entry of the README, as a desktop client reads it."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```json\n(\{\s*\"mcpServers\".*?)\n```", text, re.S)
    assert block is not None, "the README has no mcpServers snippet"
    return json.loads(block.group(1))["mcpServers"]["mobile-agent"]


@pytest.fixture
def world(sim_farm, adb_server, tmp_path: Path):
    farm = sim_farm(1, scenario="alipay_transfer")
    devices = inventory_file(tmp_path / "devices.yaml", farm.adb_port, farm.serials[:1])
    (tmp_path / "drill.yaml").write_text(DRILL, encoding="utf-8")
    with SimModelServer(family="ui-venus-2", scripts=[tmp_path / "drill.yaml"]) as model:
        env = {
            "MOBILE_AGENT_DB": f"sqlite:///{tmp_path / 'mcp.db'}",
            "MOBILE_AGENT_DATA": str(tmp_path / "data"),
            "MOBILE_AGENT_DEVICES": str(devices),
            "MOBILE_AGENT_BASE_URL": model.base_url,
            "MOBILE_AGENT_MODEL": model.served_model,
            "MOBILE_AGENT_FAMILY": "ui-venus-2",
            "MOBILE_AGENT_CACHE": os.environ["MOBILE_AGENT_CACHE"],
            "ADBUTILS_ADB_PATH": os.environ["ADBUTILS_ADB_PATH"],
            "ANDROID_ADB_SERVER_PORT": os.environ["ANDROID_ADB_SERVER_PORT"],
        }
        yield farm, env, tmp_path


def transfers(farm) -> list:
    return [t for phone in farm.phones.values() for t in phone.state.transfers]


def text_of(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


@asynccontextmanager
async def stdio_session(env: dict, *extra: str, elicit=None):
    config = readme_config()
    command = config["command"]
    assert shutil.which(command), f"{command} is not on PATH (pip install -e '.[mcp]')"
    params = StdioServerParameters(
        command=command, args=[*config["args"], *extra], env={**config.get("env", {}), **env}
    )
    with open(Path(env["MOBILE_AGENT_DATA"]).parent / "server.log", "a") as errlog:  # the server's stderr
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, elicitation_callback=elicit) as session:
                await session.initialize()
                yield session


async def point_of(session: ClientSession, serial: str, label: str) -> dict:
    """The tap point view_tree gives for the element labelled ``label`` (exactly, else the first containing it)."""
    tree = text_of(await session.call_tool("view_tree", {"serial": serial}))
    found = re.findall(r"^'(.*?)' .* tap=\((\d+),(\d+)\)", tree, re.M)
    exact = [(x, y) for text, x, y in found if text == label] or [
        (x, y) for text, x, y in found if label in text
    ]
    assert exact, f"no {label!r} on the screen:\n{tree}"
    return {"x": int(exact[0][0]), "y": int(exact[0][1])}


async def drive_to_confirm(session: ClientSession, serial: str) -> dict:
    """Every step up to the confirm button; returns the confirm button's tap point."""
    for name, what in TO_THE_CONFIRM:
        if name == "launch":
            args = {"app_name": what}
        elif name == "type":
            args = {"text": what}
        else:
            args = await point_of(session, serial, what)
        result = await session.call_tool(name, {"serial": serial, **args})
        assert not result.is_error, text_of(result)
    return await point_of(session, serial, CONFIRM)


def test_stdio_tools_phones_recorded_steps_and_a_refused_transfer(world) -> None:
    farm, env, tmp_path = world
    serial = farm.serials[0]
    asked: list[str] = []

    async def elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": "no"})

    async def scenario() -> tuple[str, str]:
        async with stdio_session(env, elicit=elicit) as session:
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert TOOLS <= names
            (prompt,) = (await session.list_prompts()).prompts
            got = await session.get_prompt(prompt.name, {"task": "打开设置"})
            assert "打开设置" in got.messages[0].content.text and "run_task" in got.messages[0].content.text
            phones = json.loads(text_of(await session.call_tool("list_phones", {})))["phones"]
            assert [(p["serial"], p["state"]) for p in phones] == [(serial, "online")]

            bad = await session.call_tool("tap", {"serial": serial, "x": "left", "y": 3})
            assert bad.is_error and "Traceback" not in text_of(bad)
            off = await session.call_tool("tap", {"serial": serial, "x": 5000, "y": 3})
            assert off.is_error and "off the" in text_of(off)
            unknown = await session.call_tool("key", {"serial": serial, "name": "volume"})
            assert unknown.is_error and "unknown key" in text_of(unknown)

            tree = text_of(await session.call_tool("view_tree", {"serial": serial}))
            assert "tap=(" in tree
            shot = await session.call_tool("screenshot", {"serial": serial})
            assert any(isinstance(c, types.ImageContent) for c in shot.content)

            confirm = await drive_to_confirm(session, serial)
            refused = await session.call_tool("tap", {"serial": serial, **confirm})
            assert refused.is_error, text_of(refused)
            assert "consent" in text_of(refused) and "transfer" in text_of(refused)
            rel = await session.call_tool("release_phone", {"serial": serial})
            assert not rel.is_error, text_of(rel)
            released = json.loads(text_of(rel))
            return released["episode_id"], released["outcome"]

    episode_id, outcome = anyio.run(scenario)
    assert outcome == "finished"
    assert len(asked) == 1 and "TRANSFER" in asked[0] and "确认转账" in asked[0]
    assert transfers(farm) == []  # the person said no: nothing happened on the phone

    with TrajectoryStore.open(env["MOBILE_AGENT_DB"]) as store:
        steps = store.steps(episode_id)
        assert [str(s.action_source) for s in steps] == [
            "mcp"
        ] * 6  # the off-screen tap, 4 actions, the refusal
        assert all(store.screenshot_path(s) is not None and store.screenshot_path(s).is_file() for s in steps)
        last = steps[-1]
        assert [d["guard"] for d in last.guard_decisions if d["verdict"] != "allow"][-2:] == [
            "safety",
            "human",
        ]
    shown = subprocess.run(
        [sys.executable, "-m", "mobile_agent.cli.app", "show", episode_id],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert "mcp" in shown.stdout and "tap(" in shown.stdout


def test_with_the_gate_allowing_transfers_the_same_tap_does_the_harm(world) -> None:
    farm, env, _ = world
    serial = farm.serials[0]

    async def scenario() -> str:
        async with stdio_session(env, "--allow", "transfer") as session:
            confirm = await drive_to_confirm(session, serial)
            done = await session.call_tool("tap", {"serial": serial, **confirm})
            assert not done.is_error, text_of(done)
            return text_of(done)

    said = anyio.run(scenario)
    assert [t["to"] for t in transfers(farm)] == ["李四"], (
        said
    )  # the control: the gate is what kept it from happening


def test_the_person_typing_the_kinds_word_lets_the_transfer_through(world) -> None:
    farm, env, _ = world
    serial = farm.serials[0]

    async def elicit(context, params):
        return types.ElicitResult(action="accept", content={"answer": "transfer"})

    async def scenario() -> str:
        async with stdio_session(env, elicit=elicit) as session:
            confirm = await drive_to_confirm(session, serial)
            done = await session.call_tool("tap", {"serial": serial, **confirm})
            assert not done.is_error, text_of(done)
            episode_id = json.loads(text_of(done))["episode_id"]
            (phone,) = json.loads(text_of(await session.call_tool("list_phones", {})))["phones"]
            assert phone["holder"] is not None  # this server's lease while it drives the phone
            stopped = json.loads(text_of(await session.call_tool("stop_episode", {"episode_id": episode_id})))
            assert stopped["outcome"] == "interrupted"
            (phone,) = json.loads(text_of(await session.call_tool("list_phones", {})))["phones"]
            assert phone["holder"] is None and phone["state"] == "online"
            return episode_id

    episode_id = anyio.run(scenario)
    assert [t["to"] for t in transfers(farm)] == ["李四"]
    with TrajectoryStore.open(env["MOBILE_AGENT_DB"]) as store:
        last = store.steps(episode_id)[-1]
        human = [d for d in last.guard_decisions if d["guard"] == "human"]
        assert human == [
            {
                "guard": "human",
                "verdict": "allow",
                "reason": "transfer",
                "kind": "transfer",
                "source": "elicitation",
            }
        ]
        assert last.status == "done"


class HttpServer:
    def __init__(self, env: dict, tmp_path: Path) -> None:
        token_file = tmp_path / "token"
        self.proc = subprocess.Popen(
            ["mobile-agent", "mcp", "--transport", "http", "--port", "0", "--token-file", str(token_file)],
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        line = self.proc.stdout.readline()
        match = re.match(r"mcp: (\S+) token: (\S+)", line)
        assert match, f"unexpected first line {line!r}"
        self.url, self.token = match.group(1), match.group(2)
        assert self.token == token_file.read_text().strip()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def http_server(world):
    farm, env, tmp_path = world
    server = HttpServer(env, tmp_path)
    try:
        yield farm, env, server
    finally:
        server.stop()


def test_http_needs_the_token_and_runs_a_task(http_server) -> None:
    farm, env, server = http_server
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    headers = {"accept": "application/json, text/event-stream"}
    assert httpx2.post(server.url, json=init, headers=headers).status_code == 401
    wrong = {**headers, "authorization": "Bearer not-the-token"}
    assert httpx2.post(server.url, json=init, headers=wrong).status_code == 403

    async def scenario() -> dict:
        client = httpx2.AsyncClient(headers={"authorization": f"Bearer {server.token}"}, timeout=120)
        async with client, streamable_http_client(server.url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                phones = json.loads(text_of(await session.call_tool("list_phones", {})))["phones"]
                assert phones[0]["serial"] == farm.serials[0]
                started = await session.call_tool(
                    "run_task", {"task": "mcp drill", "check": {"screen_text": ["支付宝"]}}
                )
                assert not started.is_error, text_of(started)
                first = json.loads(text_of(started))
                assert first["episode_id"], first
                deadline = time.monotonic() + 120
                while True:
                    view = json.loads(
                        text_of(await session.call_tool("episode", {"episode_id": first["episode_id"]}))
                    )
                    if view["status"] == "ended" and view["verdict"] is not None:
                        break
                    assert time.monotonic() < deadline, view
                    await anyio.sleep(0.3)
                progress: list[str] = []

                async def on_progress(done, total, message) -> None:
                    progress.append(message or "")

                waited = await session.call_tool(
                    "run_task", {"task": "mcp drill", "wait": True}, progress_callback=on_progress
                )
                assert not waited.is_error, text_of(waited)
                recent = await session.read_resource("mobile-agent://episodes")
                report = await session.read_resource(f"mobile-agent://episodes/{first['episode_id']}")
                return view, json.loads(text_of(waited)), progress, recent, report

    view, waited, progress, recent, report = anyio.run(scenario)
    assert view["outcome"] == "finished" and [s["source"] for s in view["trajectory"]] == ["model"]
    assert view["verdict"]["verdict"] == "complete"
    assert waited["outcome"] == "finished" and waited["episode_id"] != view["episode_id"]
    assert progress[0] == f"episode {waited['episode_id']} started" and progress[1].startswith(
        "step 1: finish"
    )
    listed = json.loads(recent.contents[0].text)
    assert {e["episode_id"] for e in listed} >= {view["episode_id"], waited["episode_id"]}
    assert json.loads(report.contents[0].text)["verdict"]["verdict"] == "complete"


def test_without_elicitation_the_question_waits_in_the_inbox(http_server) -> None:
    farm, env, server = http_server
    serial = farm.serials[0]
    answered: list[str] = []

    def answer_no() -> None:  # the person, at the inbox (the console answers through the same function)
        from mobile_agent.farm.inbox import answer, list_waiting

        with TrajectoryStore.open(env["MOBILE_AGENT_DB"]) as store:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                waiting = list_waiting(store)
                if waiting:
                    answer(store, [waiting[0].episode_id], "no", who="tester")
                    answered.append(waiting[0].episode_id)
                    return
                time.sleep(0.2)

    async def scenario() -> str:
        client = httpx2.AsyncClient(headers={"authorization": f"Bearer {server.token}"}, timeout=180)
        async with client, streamable_http_client(server.url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                confirm = await drive_to_confirm(session, serial)
                person = threading.Thread(target=answer_no)
                person.start()
                refused = await session.call_tool("tap", {"serial": serial, **confirm})
                person.join(130)
                assert refused.is_error, text_of(refused)
                return text_of(refused)

    said = anyio.run(scenario)
    assert answered and "tester answered 'no'" in said
    assert transfers(farm) == []


SLOW = (
    "task: mcp slow\nturns:\n" + "  - action: {kind: wait}\n" * 3 + "  - action: {kind: finish, text: done}\n"
)


def test_stop_episode_stops_a_task_after_its_current_step_and_it_is_not_run_again(world) -> None:
    farm, env, tmp_path = world
    (tmp_path / "slow.yaml").write_text(SLOW, encoding="utf-8")

    async def scenario(base_url: str) -> tuple[dict, dict]:
        async with stdio_session(env, "--base-url", base_url) as session:
            started = json.loads(text_of(await session.call_tool("run_task", {"task": "mcp slow"})))
            episode_id = started["episode_id"]
            assert episode_id, started
            while (
                json.loads(text_of(await session.call_tool("episode", {"episode_id": episode_id})))["steps"]
                < 1
            ):
                await anyio.sleep(0.1)
            stopped = await session.call_tool("stop_episode", {"episode_id": episode_id})
            assert not stopped.is_error, text_of(stopped)
            await anyio.sleep(2.0)  # a requeued task would be claimed again by now
            task = json.loads(text_of(await session.call_tool("episode", {"task_id": started["task_id"]})))
            return json.loads(text_of(stopped)), task

    with SimModelServer(family="ui-venus-2", scripts=[tmp_path / "slow.yaml"], latency_ms=700) as slow:
        stopped, task = anyio.run(scenario, slow.base_url)
    assert stopped["outcome"] == "interrupted" and stopped["steps"] < 4
    assert task["episode_id"] == stopped["episode_id"]  # the task's one episode: it was not run again
    with TrajectoryStore.open(env["MOBILE_AGENT_DB"]) as store:
        from mobile_agent.store import queue_status as qs

        (run,) = store.list_runs()
        (row,) = qs.list_tasks(store, run.id)
        assert (row.outcome, row.attempts) == ("error:stopped", 1)


def test_without_elicitation_a_yes_in_the_inbox_lets_it_through(http_server) -> None:
    farm, env, server = http_server
    serial = farm.serials[0]

    def answer_yes() -> None:
        from mobile_agent.farm.inbox import answer, list_waiting

        with TrajectoryStore.open(env["MOBILE_AGENT_DB"]) as store:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not (waiting := list_waiting(store)):
                time.sleep(0.2)
            answer(store, [waiting[0].episode_id], "yes", who="tester")

    async def scenario() -> dict:
        client = httpx2.AsyncClient(headers={"authorization": f"Bearer {server.token}"}, timeout=180)
        async with client, streamable_http_client(server.url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                confirm = await drive_to_confirm(session, serial)
                person = threading.Thread(target=answer_yes)
                person.start()
                done = await session.call_tool("tap", {"serial": serial, **confirm})
                person.join(130)
                assert not done.is_error, text_of(done)
                return json.loads(text_of(done))

    done = anyio.run(scenario)
    assert [t["to"] for t in transfers(farm)] == ["李四"]
    with TrajectoryStore.open(env["MOBILE_AGENT_DB"]) as store:
        steps = store.steps(done["episode_id"])
        asked, acted = steps[-2], steps[-1]  # the step that waited for the person, then the approved action
        assert asked.action == acted.action and acted.status == "done"
        assert any(d["verdict"] == "ask" for d in asked.guard_decisions)
        assert [d["source"] for d in acted.guard_decisions if d["guard"] == "human"] == ["inbox"]
        assert store.episode(done["episode_id"]).is_running  # the phone is still this client's to drive
