"""Training-data export: the toolkits' schemas, and records that parse back into the recorded actions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from mobile_agent.actions import Action
from mobile_agent.model.families import get_family
from mobile_agent.model.images import Geometry
from mobile_agent.report import verdicts
from mobile_agent.report.export import (
    IMAGE_TOKEN,
    ExportFormat,
    ExportOptions,
    ImageMode,
    export_episodes,
    read_records,
)
from mobile_agent.store.records import ActionSource

from .conftest import SCREEN, STEPS, Recorded, record_episode

MODEL_STEPS = [a for a, _, source, _ in STEPS if a is not None and source is ActionSource.MODEL]


@pytest.fixture
def unverified(monkeypatch):
    monkeypatch.setattr(verdicts, "_reader", lambda store: None)


def _export(recorded: Recorded, out: Path, **options) -> tuple:
    episode = recorded.store.episode(recorded.episode_id)
    result = export_episodes(recorded.store, [episode], out, ExportOptions(**options))
    return result, read_records(result.data_file)


def _image_path(out: Path, name: str) -> Path:
    path = Path(name)
    return path if path.is_absolute() else out / path


def _assert_close(parsed: Action, recorded: Action, family_round_trip: Action) -> None:
    assert parsed.kind is recorded.kind
    assert (parsed.key, parsed.app) == (recorded.key, recorded.app)
    # Text as the family can say it (Qwen's terminate carries no message): what its own format+parse keeps.
    assert parsed.text == family_round_trip.text
    if recorded.kind.value in ("type", "launch"):
        assert parsed.text == recorded.text
    for mine, theirs in ((parsed.point, recorded.point), (parsed.end, recorded.end)):
        assert (mine is None) == (theirs is None)
        if mine is not None:  # the 0-999 grid cannot name every pixel of a 1080-wide screen
            assert abs(mine.x - theirs.x) <= 2 and abs(mine.y - theirs.y) <= 2


@pytest.mark.parametrize("family_name", ["ui-venus-2", "autoglm", "ui-tars", "qwen2.5-vl", "qwen3-vl"])
@pytest.mark.parametrize("fmt", ["sharegpt", "swift"])
def test_records_parse_back_into_the_recorded_actions(
    recorded: Recorded, tmp_path: Path, family_name: str, fmt: str, unverified
) -> None:
    family = get_family(family_name)
    expected = [a for a in MODEL_STEPS if a.kind in family.supported_kinds]
    result, records = _export(recorded, tmp_path, format=fmt, family=family_name)
    assert result.records == len(records) == len(expected)
    for record, action in zip(records, expected, strict=True):
        messages, images = record["messages"], record["images"]
        assert set(record) == {"messages", "images"}
        assert all(set(m) == {"role", "content"} for m in messages)
        assert sum(m["content"].count(IMAGE_TOKEN) for m in messages) == len(images) >= 1
        roles = [m["role"] for m in messages if m["role"] != "system"]
        assert roles[0] == "user" and roles[-1] == "assistant"
        assert all(a != b for a, b in zip(roles, roles[1:], strict=False))  # user and assistant alternate
        current = _image_path(tmp_path, images[-1])
        with Image.open(current) as img:
            geometry = Geometry(device=SCREEN, image=type(SCREEN)(*img.size))
        parsed = family.parse(messages[-1]["content"], geometry)
        round_trip = family.parse(family.format(action, geometry), geometry).action
        _assert_close(parsed.action, action, round_trip)
        assert not any(Path(p).is_absolute() for p in images)  # relative to the dataset folder: it travels


def test_sharegpt_writes_the_llamafactory_dataset_info_entry(
    recorded: Recorded, tmp_path: Path, unverified
) -> None:
    (tmp_path / "dataset_info.json").write_text(
        json.dumps({"mine": {"file_name": "x.json"}}), encoding="utf-8"
    )
    result, _ = _export(recorded, tmp_path, format="sharegpt", dataset_name="phone")
    info = json.loads(result.dataset_info.read_text(encoding="utf-8"))
    assert info["mine"] == {"file_name": "x.json"}  # entries already there are kept
    assert info["phone"] == {
        "file_name": "phone.jsonl",
        "formatting": "sharegpt",
        "columns": {"messages": "messages", "images": "images"},
        "tags": {
            "role_tag": "role",
            "content_tag": "content",
            "user_tag": "user",
            "assistant_tag": "assistant",
            "system_tag": "system",
        },
    }
    swift, _ = _export(recorded, tmp_path / "swift", format="swift")
    assert swift.dataset_info is None


def test_history_carries_earlier_steps_in_the_family_syntax(
    recorded: Recorded, tmp_path: Path, unverified
) -> None:
    _, records = _export(recorded, tmp_path, format="sharegpt", family="ui-venus-2")
    last = records[-1]["messages"]
    assistants = [m["content"] for m in last if m["role"] == "assistant"]
    assert len(assistants) == len(MODEL_STEPS)
    assert "LaunchApp(app='微信')" in assistants[0]
    assert "<think>Open the chat with 张三.</think>" in assistants[1]
    assert len(records[-1]["images"]) == 3  # two history screenshots (the family's bound) and the current one


def test_copy_writes_working_size_images_and_reference_points_at_the_store(
    recorded: Recorded, tmp_path: Path, unverified
) -> None:
    _, copied = _export(recorded, tmp_path / "copy", format="sharegpt", images=ImageMode.COPY)
    family = get_family("ui-venus-2")
    with Image.open(tmp_path / "copy" / copied[0]["images"][-1]) as img:
        assert img.size == tuple(family.working_size(SCREEN))
    _, referenced = _export(recorded, tmp_path / "ref", format="swift", images="reference")
    store_root = recorded.store.root.resolve()
    found = [(tmp_path / "ref" / p).resolve() for r in referenced for p in r["images"]]
    assert found and all(p.is_relative_to(store_root) and p.is_file() for p in found)
    assert not any(Path(p).is_absolute() for r in referenced for p in r["images"])
    assert not (tmp_path / "ref" / "images").exists()


def test_only_complete_without_verification_keeps_finished_episodes_and_says_so(
    store, tmp_path, unverified
) -> None:
    done = record_episode(store)
    result = export_episodes(
        store, [store.episode(done.episode_id)], tmp_path, ExportOptions(format="swift", only_complete=True)
    )
    assert result.episodes == 1
    assert any("finished or answered (unverified)" in note for note in result.notes)


def test_only_complete_and_only_correct_steps_follow_the_judgments(store, tmp_path, monkeypatch) -> None:
    good = record_episode(store)
    unjudged = record_episode(store)
    partial = record_episode(store)
    rows = {
        good.episode_id: [
            {"judge": "checks", "source": "check", "verdict": "complete"},
            {"judge": "j", "step_index": 1, "label": "correct"},
            {"judge": "j", "step_index": 4, "label": "correct"},
            {"judge": "j", "step_index": 5, "label": "wrong"},
        ],
        partial.episode_id: [{"judge": "checks", "source": "check", "verdict": "partial"}],
    }
    monkeypatch.setattr(verdicts, "_reader", lambda s: lambda episode_id: rows.get(episode_id, []))
    episodes = [store.episode(r.episode_id) for r in (good, unjudged, partial)]
    options = ExportOptions(format="sharegpt", only_complete=True, only_correct_steps=True)
    result = export_episodes(store, episodes, tmp_path, options)
    assert result.episodes == 1 and result.records == 2  # steps 1 and 4 of the complete episode
    assert result.skipped_episodes == {
        unjudged.episode_id: "not verified (run mobile-agent verify)",
        partial.episode_id: "verdict partial",
    }
    assert result.skipped_steps["not labelled correct"] == len(MODEL_STEPS) - 2
    records = read_records(result.data_file)
    assert (
        "Click(" in records[0]["messages"][-1]["content"] and "Type(" in records[1]["messages"][-1]["content"]
    )


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError):
        ExportFormat("alpaca")
