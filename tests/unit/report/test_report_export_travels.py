"""Exports that travel: copied to another folder, each format still loads in the real `datasets` library with
every image found; --per episode gives one multi-turn record per episode."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mobile_agent.report import verdicts
from mobile_agent.report.export import IMAGE_TOKEN, ExportOptions, export_episodes, read_records

from .conftest import Recorded

datasets = pytest.importorskip("datasets", reason="the datasets library is in the [test] extra")


@pytest.fixture
def unverified(monkeypatch):
    monkeypatch.setattr(verdicts, "_reader", lambda store: None)


def _export_and_move(recorded: Recorded, tmp_path: Path, **options) -> tuple[Path, Path]:
    episode = recorded.store.episode(recorded.episode_id)
    result = export_episodes(recorded.store, [episode], tmp_path / "made", ExportOptions(**options))
    moved = tmp_path / "training-machine" / "data"
    shutil.copytree(tmp_path / "made", moved)
    shutil.rmtree(tmp_path / "made")  # nothing may still point at where it was written
    return moved, moved / result.data_file.name


@pytest.mark.parametrize("per", ["step", "episode"])
@pytest.mark.parametrize("fmt", ["sharegpt", "swift"])
def test_an_export_copied_elsewhere_loads_in_datasets_with_every_image(
    recorded: Recorded, tmp_path: Path, fmt: str, per: str, unverified
) -> None:
    folder, data_file = _export_and_move(recorded, tmp_path, format=fmt, per=per)
    loaded = datasets.load_dataset("json", data_files=str(data_file), split="train")
    assert len(loaded) >= 1 and set(loaded.column_names) == {"messages", "images"}
    # The paths as the toolkits resolve them (relative to the dataset folder), decoded by datasets' Image feature.
    resolved = loaded.map(lambda row: {"images": [str(folder / p) for p in row["images"]]})
    images = resolved.cast_column("images", datasets.Sequence(datasets.Image()))
    for row in images:
        assert row["images"], row
        for picture in row["images"]:
            assert picture.size[0] > 0
    for record in read_records(data_file):
        tokens = sum(m["content"].count(IMAGE_TOKEN) for m in record["messages"])
        assert tokens == len(record["images"])
    if fmt == "sharegpt":
        info = json.loads((folder / "dataset_info.json").read_text(encoding="utf-8"))
        assert info["mobile_agent_sharegpt"]["file_name"] == data_file.name


def test_per_episode_is_one_conversation_whose_assistant_turns_are_the_steps(
    recorded: Recorded, tmp_path: Path, unverified
) -> None:
    _, steps_file = _export_and_move(recorded, tmp_path / "s", format="sharegpt", per="step")
    _, episode_file = _export_and_move(recorded, tmp_path / "e", format="sharegpt", per="episode")
    steps, [episode] = read_records(steps_file), read_records(episode_file)
    answers = [m["content"] for m in episode["messages"] if m["role"] == "assistant"]
    assert answers[-len(steps) :] == [s["messages"][-1]["content"] for s in steps]
    roles = [m["role"] for m in episode["messages"] if m["role"] != "system"]
    assert all(a != b for a, b in zip(roles, roles[1:], strict=False))
    assert len(episode["images"]) == len(steps)  # each step's screenshot once


def test_a_step_export_says_how_to_train_on_the_last_turn_only(
    recorded: Recorded, tmp_path: Path, unverified
):
    episode = recorded.store.episode(recorded.episode_id)
    result = export_episodes(recorded.store, [episode], tmp_path, ExportOptions(format="sharegpt"))
    assert any("mask_history" in note for note in result.notes)
