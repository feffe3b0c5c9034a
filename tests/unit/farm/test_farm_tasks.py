"""Task files: YAML and JSONL, defaults, repeats, requirements, checks, and errors that name file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from mobile_agent.errors import ConfigError
from mobile_agent.farm.tasks import ResetMode, expand, load_tasks, normalize_tags, to_new_tasks


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_yaml_with_defaults_strings_and_repeats(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "tasks.yaml",
        """\
defaults: {family: ui-tars, max_steps: 12, reset: force-stop}
tasks:
  - 打开设置
  - task: 给张三发微信说晚上好
    app: 微信
    repeats: 3
    priority: 5
    max_steps: 20
    requires: {vendor: Xiaomi, apps: [com.tencent.mm]}
""",
    )
    tasks = load_tasks(path)
    assert [t.line for t in tasks] == [3, 4]
    first, second = (t.spec for t in tasks)
    assert first.task == "打开设置" and first.max_steps == 12 and first.family == "ui-tars"
    assert first.reset is ResetMode.FORCE_STOP
    assert second.max_steps == 20 and second.repeats == 3 and second.priority == 5
    assert second.requires == ("apps:com.tencent.mm", "vendor:xiaomi")

    expanded = expand(tasks)
    assert [e.seq for e in expanded] == [0, 1, 2, 3]
    assert [e.label for e in expanded] == [
        "tasks.yaml:3",
        "tasks.yaml:4 #1",
        "tasks.yaml:4 #2",
        "tasks.yaml:4 #3",
    ]
    rows = to_new_tasks(tasks)
    assert rows[2].spec["repeat"] == 1 and rows[2].spec["family"] == "ui-tars"
    assert rows[3].requires == ("apps:com.tencent.mm", "vendor:xiaomi") and rows[3].priority == 5
    assert "repeats" not in rows[1].spec


def test_plain_list_and_jsonl_agree(tmp_path: Path) -> None:
    yaml_path = write(tmp_path, "a.yml", "- open settings\n- {task: turn on wifi, timeout: 30}\n")
    jsonl_path = write(
        tmp_path,
        "a.jsonl",
        '# comment\n\n"open settings"\n{"task": "turn on wifi", "timeout": 30}\n',
    )
    from_yaml = [t.spec for t in load_tasks(yaml_path)]
    from_jsonl = load_tasks(jsonl_path)
    assert from_yaml == [t.spec for t in from_jsonl]
    assert [t.line for t in from_jsonl] == [3, 4]


@pytest.mark.parametrize(
    ("name", "text", "line", "words"),
    [
        ("t.yaml", "tasks:\n  - task: ok\n  - task: bad\n    max_stepz: 3\n", 4, "unknown key 'max_stepz'"),
        ("t.yaml", "tasks:\n  - task: ok\n  - app: wechat\n", 3, "missing required key 'task'"),
        ("t.yaml", "- task: x\n  repeats: 0\n", 2, "repeats"),
        ("t.yaml", "- task: x\n  timeout: -5\n", 2, "timeout"),
        ("t.yaml", "- task: x\n  reset: reboot\n", 2, "reset"),
        ("t.yaml", "- task: '   '\n", 1, "empty"),
        ("t.yaml", "- task: x\n  requires: [{a: b}]\n", 2, "requires"),
        ("t.yaml", "- task: x\n- task: y\n  app: a: b\n", 3, "invalid YAML"),
        ("t.yaml", "defaults: {colour: red}\ntasks: [x]\n", 1, "unknown default 'colour'"),
        ("t.yaml", "jobs: [x]\n", 1, "unknown key 'jobs'"),
        ("t.yaml", "- 42\n", 1, "must be a string or a mapping"),
        ("t.jsonl", '{"task": "a"}\n{"task": "b",}\n', 2, "invalid JSON"),
        ("t.jsonl", '{"task": "a"}\n\n{"task": "b", "max_steps": "many"}\n', 3, "max_steps"),
    ],
)
def test_errors_name_file_and_line(tmp_path: Path, name: str, text: str, line: int, words: str) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(ConfigError) as caught:
        load_tasks(path)
    error = caught.value
    assert error.path == str(path) and error.line == line, error.one_line()
    assert words in error.message
    assert error.hint


def test_check_is_validated_with_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "t.yaml", "- task: x\n  check:\n    colour: red\n")
    with pytest.raises(ConfigError) as caught:
        load_tasks(path)
    assert caught.value.line == 2 and "check" in caught.value.message


def test_file_level_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_tasks(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="unknown task file type"):
        load_tasks(write(tmp_path, "t.txt", "x"))
    with pytest.raises(ConfigError, match="no tasks"):
        load_tasks(write(tmp_path, "empty.yaml", "# nothing\n"))


def test_normalize_tags() -> None:
    assert normalize_tags({"Vendor": " Xiaomi ", "android": 14, "apps": ["b", "a"], "root": True}) == (
        "android:14",
        "apps:a",
        "apps:b",
        "root:yes",
        "vendor:xiaomi",
    )
    assert normalize_tags(["Fast", "android:13", "fast"]) == ("android:13", "fast")
    assert normalize_tags(None) == ()
    with pytest.raises(ValueError):
        normalize_tags({"apps": [{"nested": 1}]})


def test_a_task_carries_its_own_safety_words(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "t.yaml",
        """\
defaults: {safety: {deny: pay}}
tasks:
  - task: 给张三发微信说晚上好
    safety: {allow: [send@com.tencent.mm]}
  - task: 打开设置
  - task: 关闭WLAN
    safety: ask
""",
    )
    rows = to_new_tasks(load_tasks(path))
    assert rows[0].spec["safety"] == {"policy": [], "allow": ["send@com.tencent.mm"], "deny": []}
    assert rows[1].spec["safety"] == {"policy": [], "allow": [], "deny": ["pay"]}  # from the defaults
    assert rows[2].spec["safety"]["policy"] == ["ask"]  # a bare word is a --policy word


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("- task: x\n  safety: {allow: [sned@com.tencent.mm]}\n", 2, "unknown kind 'sned'"),
        ("- task: x\n- task: y\n  safety:\n    policy: maybe\n", 3, "'maybe'"),
        ("- task: x\n  safety:\n    allow: 3\n", 3, "safety.allow"),
        ("- task: x\n  safety:\n    permit: [send]\n", 3, "unknown key 'safety.permit'"),
        ("- task: x\n  safety:\n    deny: [send@]\n", 2, "nothing after '@'"),
    ],
)
def test_bad_safety_words_name_file_and_line(tmp_path: Path, text: str, line: int, words: str) -> None:
    path = write(tmp_path, "t.yaml", text)
    with pytest.raises(ConfigError) as caught:
        load_tasks(path)
    assert caught.value.line == line and words in caught.value.message, caught.value.one_line()
    assert caught.value.hint
