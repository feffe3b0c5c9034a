"""The one YAML reader bounds what a file may cost: hostile files (billion laughs, 5000 levels deep, an alias
inside itself, a huge file) are a one-line ConfigError within a second, never MemoryError or RecursionError; and
task files, devices.yaml, scenarios and model scripts all go through it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobile_agent.apps import yamlsrc
from mobile_agent.apps.yamlsrc import parse_yaml
from mobile_agent.errors import ConfigError
from mobile_agent.farm.inventory import load_inventory
from mobile_agent.farm.tasks import load_tasks
from mobile_agent.sim.scenario import scenario_from_yaml
from mobile_agent.sim.servers.model_server import load_script


def billion_laughs(levels: int = 9) -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        name, prev = chr(97 + i), chr(96 + i)
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


HOSTILE = {
    "billion laughs": billion_laughs(),
    "5000 deep flow": "x: " + "[" * 5000 + "]" * 5000,
    "5000 deep block": "".join("  " * i + f"k{i}:\n" for i in range(5000)),
    "self alias": "a: &a [1, *a]\n",
    "alias key": "a: &a [1, 2]\n? *a\n: 3\n",
    "many aliases": "a: &a 1\nb: [" + ",".join(["*a"] * 5000) + "]\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_yaml_is_one_line_and_quick(name):
    started = time.monotonic()
    with pytest.raises(ConfigError) as caught:
        parse_yaml(HOSTILE[name], "hostile.yaml")
    assert time.monotonic() - started < 5
    assert "\n" not in caught.value.one_line() and caught.value.message.startswith("hostile.yaml")


def test_a_file_over_the_size_limit_is_refused_before_parsing(monkeypatch):
    monkeypatch.setattr(yamlsrc, "MAX_YAML_BYTES", 1000)
    with pytest.raises(ConfigError, match="over"):
        parse_yaml("a: " + "x" * 2000)


@pytest.mark.parametrize(
    "load",
    [load_tasks, load_inventory, lambda p: scenario_from_yaml(Path(p).read_text(), str(p)), load_script],
    ids=["tasks", "devices", "scenario", "model script"],
)
@pytest.mark.parametrize("name", ["billion laughs", "5000 deep flow"])
def test_every_yaml_file_kind_uses_the_bounded_reader(tmp_path, load, name):
    path = tmp_path / "file.yaml"
    path.write_text(HOSTILE[name])
    with pytest.raises(ConfigError, match="YAML refused"):
        load(path)


def test_ordinary_anchors_and_merges_still_work():
    doc = parse_yaml("base: &b {x: 1, y: 2}\nitem:\n  <<: *b\n  z: 3\nlist: [*b, *b]\n")
    assert doc.data["item"] == {"x": 1, "y": 2, "z": 3} and doc.data["list"] == [{"x": 1, "y": 2}] * 2


yaml_text = st.text(alphabet=st.sampled_from(list("ab:&*-[]{}, \n\t'\"!|>?#%@`\\0123")), max_size=200)


@settings(max_examples=400, deadline=None)
@given(yaml_text)
def test_any_text_is_data_or_a_config_error(text):
    try:
        parse_yaml(text, "fuzz.yaml")
    except ConfigError as exc:
        assert "\n" not in exc.one_line().strip() or exc.message  # one error, never another exception type


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=12), st.integers(min_value=2, max_value=12))
def test_alias_fan_out_is_bounded_whatever_the_shape(levels, fan):
    lines = ["a0: &a0 [" + ",".join(['"x"'] * fan) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * fan) + "]")
    expanded = sum(fan**i for i in range(1, levels + 1))
    try:
        doc = parse_yaml("\n".join(lines), "fan.yaml")
    except ConfigError as exc:
        assert "YAML refused" in exc.message and expanded > yamlsrc.MAX_NODES / 4
    else:
        assert expanded <= yamlsrc.MAX_NODES and len(doc.data) == levels
