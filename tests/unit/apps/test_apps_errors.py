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
    err = load_error(tmp_path)
    assert "invalid YAML" in err.message
    assert err.path == str(path) and err.line is not None and err.line >= 5
    assert err.hint


def load_error(folder: Path) -> ConfigError:
    """The ConfigError loading `folder` raises."""
    with pytest.raises(ConfigError) as caught:
        load_only(folder)
    return caught.value


# One broken manifest: (its text, the line the error names, words in the message, words in the hint).
BROKEN = {
    "wrong_type_names_the_field_and_line": (
        GOOD.replace("aliases: [Demo, yanshi]", "aliases: {Demo: 1}"),
        3,
        ["aliases"],
        [],
    ),
    "wrong_type_deep_inside_a_rule": (
        GOOD.replace("match: {text: 关闭}", "match: {text: 关闭, text_pattern: '('}"),
        10,
        ["popups[0].match"],
        [],
    ),
    "unknown_key_names_the_key_and_lists_allowed_ones": (
        GOOD.replace("hints: A demo app.", "hint: A demo app."),
        11,
        ["unknown key 'hint'"],
        ["hints"],
    ),
    "missing_key": (
        GOOD.replace("package: com.example.demo\n", ""),
        1,
        ["missing required key 'package'"],
        [],
    ),
    "unknown_category_lists_choices": (
        GOOD.replace("category: tools", "category: toolz"),
        5,
        ["'tools'"],
        [],
    ),
    "duplicate_key_in_one_file": (
        GOOD + "package: com.example.other\n",
        12,
        ["duplicate key 'package'"],
        ["line 4"],
    ),
    "public_list_source_needs_lists": (
        GOOD.replace("kind: common_knowledge", "kind: public_list"),
        6,
        [],
        [],
    ),
    "not_a_mapping": ("- just\n- a list\n", 1, [], []),
}


@pytest.mark.parametrize(("text", "line", "in_message", "in_hint"), BROKEN.values(), ids=BROKEN.keys())
def test_a_broken_manifest_names_its_line(tmp_path, text, line, in_message, in_hint):
    path = write(tmp_path, "demo.yaml", text)
    err = load_error(tmp_path)
    assert_one_line(err, path, line)
    assert all(words in err.message for words in in_message)
    assert all(words in err.hint for words in in_hint)


OTHER = GOOD.replace("name: 演示", "name: 其他")
# Two manifests that clash: (the first one's file, the second one's file and text, the line the error names in the
# second, words in the message).
CLASHES = {
    "duplicate_alias_across_files": (
        "demo.yaml",
        "other.yaml",
        OTHER.replace("id: demo", "id: other")
        .replace("com.example.demo", "com.example.other")
        .replace("[Demo, yanshi]", "[ＤＥＭＯ]"),
        3,
        ["duplicate alias 'ＤＥＭＯ'", "demo.yaml:3"],
    ),
    "duplicate_package_across_files": (
        "demo.yaml",
        "other.yaml",
        OTHER.replace("id: demo", "id: other").replace("[Demo, yanshi]", "[]"),
        4,
        ["package com.example.demo is already listed"],
    ),
    "duplicate_id_in_one_folder": (
        "a.yaml",
        "b.yaml",
        OTHER.replace("[Demo, yanshi]", "[]").replace("example.demo", "example.b"),
        1,
        ["duplicate app id 'demo'"],
    ),
}


@pytest.mark.parametrize(
    ("first", "second", "text", "line", "in_message"), CLASHES.values(), ids=CLASHES.keys()
)
def test_clashing_manifests_name_the_second_ones_line(tmp_path, first, second, text, line, in_message):
    write(tmp_path, first, GOOD)
    path = write(tmp_path, second, text)
    err = load_error(tmp_path)
    assert_one_line(err, path, line)
    assert all(words in err.message for words in in_message)


def test_all_problems_are_collected(tmp_path):
    write(tmp_path, "a.yaml", GOOD.replace("category: tools", "category: 3"))
    write(tmp_path, "b.yaml", "id: [\n")
    errors = check_dirs([tmp_path])
    assert [Path(e.path).name for e in errors] == ["a.yaml", "b.yaml"]
    assert "also:" in load_error(tmp_path).hint


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
