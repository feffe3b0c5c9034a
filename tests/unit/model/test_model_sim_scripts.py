"""Loading simulated-model scripts: good files load, bad ones name the file and the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from mobile_agent.actions import Action, Point
from mobile_agent.errors import ConfigError, UserError
from mobile_agent.model.client import ModelClient, resolve_api_key
from mobile_agent.sim.servers.model_server import SHIPPED_SCRIPTS, SimModelServer, load_scripts

GOOD = """\
task: 给张三发微信说晚上好
scenario: wechat_send
turns:
  - think: 打开微信
    action: {kind: launch, app: 微信}
  - action: {kind: tap, point: [500, 180]}
  - malformed: "<action>Clik(</action>"
  - http_error: 503
  - delay_ms: 1500
    action: {kind: wait}
  - action: {kind: finish, text: 已发送}
"""


def write(tmp_path: Path, text: str, name: str = "script.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_script_loads(tmp_path: Path) -> None:
    (script,) = load_scripts(write(tmp_path, GOOD))
    assert script.task == "给张三发微信说晚上好" and script.scenario == "wechat_send"
    assert script.turns[0].action == Action.launch("微信") and script.turns[0].think == "打开微信"
    assert script.turns[1].action.point == Point(500, 180)
    assert script.turns[2].malformed == "<action>Clik(</action>"
    assert script.turns[3].http_error == 503
    assert script.turns[4].delay_ms == 1500 and script.turns[4].action == Action.wait()
    assert script.turns[4].line == 9


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("task: t\nturns:\n  - action: {kind: tap, point: [500, 1000]}\n", 3, "integers 0-999"),
        ("task: t\nturns:\n  - action: {kind: jump}\n", 3, "bad action"),
        ("task: t\nturns:\n  - think: x\n", 3, "exactly one of"),
        ("task: t\nturns:\n  - action: {kind: wait}\n    colour: red\n", 4, "unknown key 'colour'"),
        ("task: t\nturns:\n  - http_error: 200\n", 3, "400-599"),
        ("task: t\nturns:\n  - delay_ms: -5\n    action: {kind: wait}\n", 3, "delay_ms"),
        ("task: t\nturns: []\n", 2, "non-empty list"),
        ("turns:\n  - action: {kind: wait}\n", 1, "needs task"),
        ("task: t\nturns:\n  - action: {kind: tap\n", 4, "invalid YAML"),
        ("task: t\nturns:\n  - action: {kind: launch}\n", 3, "launch needs an app"),
    ],
)
def test_bad_scripts_name_file_and_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_scripts(path)
    assert info.value.path == str(path)
    assert info.value.line == line, info.value.message
    assert message in info.value.message
    assert info.value.hint


def test_a_folder_loads_every_yaml_and_duplicate_tasks_are_refused(tmp_path: Path) -> None:
    write(tmp_path, GOOD, "a.yaml")
    write(tmp_path, "task: other\nturns:\n  - action: {kind: wait}\n", "b.yaml")
    write(tmp_path, "not a script", "notes.txt")
    assert [s.task for s in load_scripts(tmp_path)] == ["给张三发微信说晚上好", "other"]
    write(tmp_path, GOOD, "c.yaml")
    with pytest.raises(ConfigError, match="already scripted"):
        load_scripts(tmp_path)
    with pytest.raises(ConfigError, match="no such script"):
        load_scripts(tmp_path / "missing")


def test_shipped_scripts_load_when_present() -> None:
    if not SHIPPED_SCRIPTS.is_dir():
        pytest.skip("the simulated phone's scripts are not there yet")
    assert load_scripts(SHIPPED_SCRIPTS)


def test_server_rejects_unknown_family() -> None:
    with pytest.raises(UserError, match="unknown model family"):
        SimModelServer(family="gpt-5", scripts=[])


def test_client_configuration_errors_and_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MOBILE_AGENT_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert resolve_api_key(None) == "EMPTY"
    monkeypatch.setenv("OPENAI_API_KEY", "from-openai")
    assert resolve_api_key(None) == "from-openai"
    monkeypatch.setenv("MOBILE_AGENT_API_KEY", "from-ours")
    assert resolve_api_key(None) == "from-ours"
    assert resolve_api_key("explicit") == "explicit"
    with pytest.raises(UserError, match="no model endpoint"):
        ModelClient([], "m")
    with pytest.raises(UserError, match="not an http"):
        ModelClient(["ftp://host/v1"], "m")
    with pytest.raises(UserError, match="no model name"):
        ModelClient(["http://127.0.0.1:9/v1"], " ")
    client = ModelClient(["http://user:pw@127.0.0.1:9/v1"], "m", api_key="sk-secret")
    assert "sk-secret" not in repr(client) and "pw" not in repr(client)
    assert client.endpoints == ["http://***@127.0.0.1:9/v1"]
    client.close()
