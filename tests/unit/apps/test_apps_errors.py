"""A broken manifest gives one line naming the file and line, and a hint."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mobile_agent.apps.registry import AppRegistry, check_dirs, load_registry
from mobile_agent.errors import ConfigError, UserError

GOOD = """\
id: demo
name: 演示
aliases: [Demo, yanshi]
package: com.example.demo
category: tools
source:
  kind: common_knowledge
popups:
  - id: close_banner
    match: {text: 关闭}
hints: A demo app.
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load_only(folder: Path) -> AppRegistry:
    return load_registry(folder, include_shipped=False)


def assert_one_line(err: ConfigError, path: Path, line: int) -> None:
    assert isinstance(err, UserError) and err.exit_code == 2
    assert err.path == str(path) and err.line == line
    assert err.hint
    assert "\n" not in err.one_line()
    assert err.one_line().startswith(f"{path}:{line}: ")


def test_good_manifest_loads(tmp_path):
    write(tmp_path, "demo.yaml", GOOD)
    registry = load_only(tmp_path)
    assert registry.resolve("yanshi").package == "com.example.demo"


def test_bad_yaml_names_the_line(tmp_path):
    path = write(tmp_path, "demo.yaml", GOOD.replace("category: tools", "category: [tools"))
    with pytest.raises(ConfigError) as caught:
        load_only(tmp_path)
    assert "invalid YAML" in caught.value.message
    assert caught.value.path == str(path) and caught.value.line is not None and caught.value.line >= 5
    assert caught.value.hint


def test_wrong_type_names_the_field_and_line(tmp_path):
    path = write(tmp_path, "demo.yaml", GOOD.replace("aliases: [Demo, yanshi]", "aliases: {Demo: 1}"))
    with pytest.raises(ConfigError) as caught:
        load_only(tmp_path)
    assert_one_line(caught.value, path, 3)
    assert "aliases" in caught.value.message


def test_wrong_type_deep_inside_a_rule(tmp_path):
    path = write(
        tmp_path, "demo.yaml", GOOD.replace("match: {text: 关闭}", "match: {text: 关闭, text_pattern: '('}")
    )
    with pytest.raises(ConfigError) as caught:
        load_only(tmp_path)
    assert_one_line(caught.value, path, 10)
    assert "popups[0].match" in caught.value.message


def test_unknown_key_names_the_key_and_lists_allowed_ones(tmp_path):
    path = write(tmp_path, "demo.yaml", GOOD.replace("hints: A demo app.", "hint: A demo app."))
    with pytest.raises(ConfigError) as caught:
        load_only(tmp_path)
    assert_one_line(caught.value, path, 11)
    assert "unknown key 'hint'" in caught.value.message
    assert "hints" in caught.value.hint


def test_missing_key(tmp_path):
    path = write(tmp_path, "demo.yaml", GOOD.replace("package: com.example.demo\n", ""))
    with pytest.raises(ConfigError) as caught:
        load_only(tmp_path)
    assert_one_line(caught.value, path, 1)
    assert "missing required key 'package'" in caught.value.message


def test_unknown_category_lists_choices(tmp_path):
    path = write(tmp_path, "demo.yaml", GOOD.replace("category: tools", "category: toolz"))
    with pytest.raises(ConfigError) as caught:
        load_only(tmp_path)
    assert_one_line(caught.value, path, 5)
    assert "'tools'" in caught.value.message


def test_duplicate_key_in_one_file(tmp_path):
    path = write(tmp_path, "demo.yaml", GOOD + "package: com.example.other\n")
    with pytest.raises(ConfigError) as caught:
        load_only(tmp_path)
    assert_one_line(caught.value, path, 12)
    assert "duplicate key 'package'" in caught.value.message and "line 4" in caught.value.hint


def test_duplicate_alias_across_files(tmp_path):
    write(tmp_path, "demo.yaml", GOOD)
    other = GOOD.replace("id: demo", "id: other").replace("com.example.demo", "com.example.other")
    path = write(
        tmp_path,
        "other.yaml",
        other.replace("name: 演示", "name: 其他").replace("[Demo, yanshi]", "[ＤＥＭＯ]"),
    )
    with pytest.raises(ConfigError) as caught:
        load_only(tmp_path)
    assert_one_line(caught.value, path, 3)
    assert "duplicate alias 'ＤＥＭＯ'" in caught.value.message
    assert "demo.yaml:3" in caught.value.message


def test_duplicate_package_across_files(tmp_path):
    write(tmp_path, "demo.yaml", GOOD)
    other = (
        GOOD.replace("id: demo", "id: other")
        .replace("name: 演示", "name: 其他")
        .replace("[Demo, yanshi]", "[]")
    )
    path = write(tmp_path, "other.yaml", other)
    with pytest.raises(ConfigError) as caught:
        load_only(tmp_path)
    assert_one_line(caught.value, path, 4)
    assert "package com.example.demo is already listed" in caught.value.message


def test_duplicate_id_in_one_folder(tmp_path):
    write(tmp_path, "a.yaml", GOOD)
    other = (
        GOOD.replace("name: 演示", "name: 其他")
        .replace("[Demo, yanshi]", "[]")
        .replace("example.demo", "example.b")
    )
    path = write(tmp_path, "b.yaml", other)
    with pytest.raises(ConfigError) as caught:
        load_only(tmp_path)
    assert_one_line(caught.value, path, 1)
    assert "duplicate app id 'demo'" in caught.value.message


def test_all_problems_are_collected(tmp_path):
    write(tmp_path, "a.yaml", GOOD.replace("category: tools", "category: 3"))
    write(tmp_path, "b.yaml", "id: [\n")
    errors = check_dirs([tmp_path])
    assert [Path(e.path).name for e in errors] == ["a.yaml", "b.yaml"]
    with pytest.raises(ConfigError) as caught:
        load_only(tmp_path)
    assert "also:" in caught.value.hint


def test_public_list_source_needs_lists(tmp_path):
    path = write(tmp_path, "demo.yaml", GOOD.replace("kind: common_knowledge", "kind: public_list"))
    with pytest.raises(ConfigError) as caught:
        load_only(tmp_path)
    assert_one_line(caught.value, path, 6)


def test_not_a_mapping(tmp_path):
    path = write(tmp_path, "demo.yaml", "- just\n- a list\n")
    with pytest.raises(ConfigError) as caught:
        load_only(tmp_path)
    assert_one_line(caught.value, path, 1)


def test_missing_apps_dir_is_a_user_error(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load_registry(tmp_path / "nope")
    assert caught.value.hint and "apps folder" in caught.value.message


def test_user_folder_overrides_a_shipped_manifest_by_id(tmp_path):
    write(
        tmp_path,
        "wechat.yaml",
        GOOD.replace("id: demo", "id: wechat").replace("com.example.demo", "com.tencent.mm"),
    )
    registry = load_registry(tmp_path)
    assert registry.resolve("yanshi").id == "wechat"
    assert registry.by_package("com.tencent.mm").name == "演示"
    assert registry.lookup("weixin") is None  # the shipped aliases went with the shipped manifest


def test_user_folder_cannot_steal_a_shipped_package(tmp_path):
    path = write(tmp_path, "mine.yaml", GOOD.replace("com.example.demo", "com.tencent.mm"))
    with pytest.raises(ConfigError) as caught:
        load_registry(tmp_path)
    assert caught.value.path == str(path) and "wechat.yaml" in caught.value.message


def test_environment_variable_adds_a_folder(tmp_path, monkeypatch):
    write(tmp_path, "demo.yaml", GOOD)
    monkeypatch.setenv("MOBILE_AGENT_APPS", str(tmp_path))
    assert load_registry().resolve("演示").id == "demo"
    assert AppRegistry.load().resolve("演示").id == "demo"
