"""Task files validated whole at load: family, model, app names, checks, safety words, each with file:line; every
shipped example validates."""

from __future__ import annotations

from pathlib import Path

import pytest

from mobile_agent.errors import ConfigError
from mobile_agent.farm.inventory import load_inventory
from mobile_agent.farm.tasks import load_tasks
from mobile_agent.model.families import FAMILIES

ROOT = Path(__file__).resolve().parents[3]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


SHIPPED_INVENTORIES = {"sim-devices.yaml"}  # examples/ also ships the `sim up` phones' inventory


@pytest.mark.parametrize(
    "path",
    sorted(p for p in (ROOT / "examples").glob("*.y*ml") if p.name not in SHIPPED_INVENTORIES),
    ids=lambda p: p.name,
)
def test_every_shipped_task_file_validates(path: Path) -> None:
    assert load_tasks(path)


def test_the_shipped_sim_up_inventory_validates() -> None:
    inventory = load_inventory(ROOT / "examples" / "sim-devices.yaml")
    assert len(inventory.phones) == 4 and inventory.adb == "127.0.0.1:15037"


def test_the_shipped_devices_file_validates() -> None:
    inventory = load_inventory(ROOT / "devices.yaml")
    assert len(inventory.phones) == 4 and inventory.adb == "127.0.0.1:5037"


def test_an_unknown_family_names_the_line_and_the_valid_names(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "tasks.yaml",
        "tasks:\n  - 打开设置\n  - task: Turn off Wi-Fi\n    app: settings\n    family: ui-tars-1.5\n",
    )
    with pytest.raises(ConfigError) as caught:
        load_tasks(path)
    assert caught.value.message.startswith(f"{path}:5: ") and "ui-tars-1.5" in caught.value.message
    assert all(name in caught.value.hint for name in FAMILIES)


def test_a_bad_default_is_reported_where_the_defaults_say_it(tmp_path: Path) -> None:
    path = write(tmp_path, "tasks.yaml", "defaults:\n  max_steps: 3\n  family: gpt-9\ntasks:\n  - 打开设置\n")
    with pytest.raises(ConfigError, match=r"tasks.yaml:3: family: unknown model family 'gpt-9'"):
        load_tasks(path)


def test_family_names_are_case_insensitive(tmp_path: Path) -> None:
    [task] = load_tasks(write(tmp_path, "t.jsonl", '{"task": "x", "family": "AutoGLM"}\n'))
    assert task.spec.family == "autoglm"


def test_an_unknown_app_suggests_known_ones(tmp_path: Path) -> None:
    path = write(tmp_path, "tasks.yaml", "- task: 发消息\n  app: 微信x\n")
    with pytest.raises(ConfigError) as caught:
        load_tasks(path)
    assert caught.value.message.startswith(f"{path}:2: unknown app '微信x'")
    assert "did you mean" in caught.value.message and "微信" in caught.value.message
    assert "apps list" in caught.value.hint


def test_an_app_in_the_defaults_is_checked_at_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "tasks.yaml", "defaults:\n  app: nosuchapp\ntasks: [a, b]\n")
    with pytest.raises(ConfigError, match=r"tasks.yaml:2: unknown app 'nosuchapp'"):
        load_tasks(path)


@pytest.mark.parametrize("app", ["微信", "WeChat", "settings", "com.example.shop"])
def test_known_names_aliases_and_package_names_pass(tmp_path: Path, app: str) -> None:
    assert load_tasks(write(tmp_path, "t.yaml", f"- task: x\n  app: {app}\n"))


@pytest.mark.parametrize(
    "entry, expected",
    [
        ('{"task": "x", "model": ""}', "model"),
        ('{"task": "x", "safety": {"allow": ["teleport"]}}', "safety"),
        ('{"task": "x", "check": {"state": ["len(orders) =="]}}', "t.jsonl:1"),
        ('{"task": "x", "check": {"nonsense": 1}}', "t.jsonl:1"),
    ],
)
def test_model_safety_words_and_checks_are_validated(tmp_path: Path, entry: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        load_tasks(write(tmp_path, "t.jsonl", entry + "\n"))
