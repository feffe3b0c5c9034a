"""Every exported record is a conversation a toolkit can train on, loaded with the `datasets` library and checked
row by row: no empty user turn (UI-Venus-2 sends the history turns beyond --history-images without their
screenshot, as its reference prompt does, which left `''` user turns in 3 of the 6 records of a 6-step episode),
user and assistant turns alternate, the task is in the first turn, the current screen in the last user turn."""

from __future__ import annotations

import pytest

from mobile_agent.model.families import FAMILIES
from mobile_agent.report import verdicts
from mobile_agent.report.export import IMAGE_TOKEN, ExportOptions, export_episodes

from .conftest import Recorded

datasets = pytest.importorskip("datasets", reason="the datasets library is in the [test] extra")


@pytest.fixture
def unverified(monkeypatch):
    monkeypatch.setattr(verdicts, "_reader", lambda store: None)


@pytest.mark.parametrize("per", ["step", "episode"])
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_no_record_has_an_empty_user_turn(
    recorded: Recorded, tmp_path, family: str, per: str, unverified
) -> None:
    store = recorded.store
    episode = store.episode(recorded.episode_id)
    result = export_episodes(
        store, [episode], tmp_path, ExportOptions(format="sharegpt", family=family, per=per)
    )
    rows = datasets.load_dataset("json", data_files=str(result.data_file), split="train")
    assert len(rows) == (6 if per == "step" else 1)
    for number, row in enumerate(rows):
        messages = row["messages"]
        turns = [m for m in messages if m["role"] != "system"]
        assert [m["role"] for m in turns] == ["user", "assistant"] * (len(turns) // 2), (family, number)
        empty = [m for m in turns if m["role"] == "user" and not m["content"].strip()]
        assert not empty, (family, number, messages)
        first = messages[0]["content"] + (messages[1]["content"] if messages[0]["role"] == "system" else "")
        assert episode.task in first, (family, number)
        last_user = [m for m in turns if m["role"] == "user"][-1]
        assert IMAGE_TOKEN in last_user["content"], (family, number)
        tokens = sum(m["content"].count(IMAGE_TOKEN) for m in messages)
        assert tokens == len(row["images"]), (family, number)
