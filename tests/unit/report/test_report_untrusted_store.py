"""A store someone edited, or whose files broke: a screenshot path that climbs out of the store, a truncated JPEG,
a file that is no image. Report, export and eval-offline skip such a step with a warning and go on; an export's
dataset name cannot climb out of its output folder."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import update

from mobile_agent.errors import UserError
from mobile_agent.evaluate.offline import EvalOptions, evaluate_offline
from mobile_agent.report.export import ExportOptions, checked_dataset_name, export_episodes
from mobile_agent.report.html import write_report_files
from mobile_agent.store.schema import StepRow

from .conftest import Recorded


def _point_step_at(recorded: Recorded, index: int, path: str) -> None:
    with recorded.store.write_session() as session:
        session.execute(
            update(StepRow)
            .where(StepRow.episode_id == recorded.episode_id, StepRow.index == index)
            .values(screenshot_path=path)
        )


def _break_files(recorded: Recorded, tmp_path) -> None:
    secret = tmp_path / "outside.jpg"
    secret.write_bytes((recorded.store.root / recorded.episode_id / "000.jpg").read_bytes())
    _point_step_at(recorded, 0, "../outside.jpg")  # a real JPEG, but outside the store
    _point_step_at(recorded, 4, str(secret))  # an absolute path
    shot = recorded.store.root / recorded.episode_id / "001.jpg"
    shot.write_bytes(shot.read_bytes()[:2000])  # truncated
    (recorded.store.root / recorded.episode_id / "005.jpg").write_bytes(b"not an image at all")


def test_report_skips_outside_and_corrupt_screenshots(recorded, tmp_path, caplog):
    _break_files(recorded, tmp_path)
    with caplog.at_level(logging.WARNING):
        written = write_report_files(recorded.store, episode=recorded.episode_id, output=tmp_path / "r.html")
    html = written.index.read_text(encoding="utf-8")
    assert "outside.jpg" not in html
    warnings = " ".join(r.getMessage() for r in caplog.records)
    assert "points outside the store" in warnings and "not a readable image" in warnings
    shots = written.files / "shots" / recorded.episode_id
    assert sorted(p.name for p in shots.iterdir() if "thumb" not in p.name) == [
        "002.jpg",
        "003.jpg",
        "006.jpg",
        "007.jpg",
    ]  # the good steps still have their pictures; nothing of the outside file was copied
    assert (written.pictures, written.skipped_pictures) == (4, 4)
    assert html.count('<a class="zoom"') == 4 and html.count("no screenshot") == 4


@pytest.mark.parametrize("images", ["copy", "reference"])
def test_export_skips_outside_and_corrupt_screenshots(recorded, tmp_path, caplog, images):
    _break_files(recorded, tmp_path)
    with caplog.at_level(logging.WARNING):
        result = export_episodes(
            recorded.store,
            [recorded.store.episode(recorded.episode_id)],
            tmp_path / "ds",
            ExportOptions(images=images),
        )
    data = result.data_file.read_text(encoding="utf-8")
    assert "outside.jpg" not in data and str(tmp_path / "outside.jpg") not in data
    assert result.skipped_steps.get("no readable screenshot", 0) >= 3, result.skipped_steps
    assert "not a readable image" in " ".join(r.getMessage() for r in caplog.records)


def test_eval_offline_skips_corrupt_screenshots_without_asking_the_model(recorded, tmp_path, caplog):
    for index in range(8):
        shot = recorded.store.root / recorded.episode_id / f"{index:03d}.jpg"
        shot.write_bytes(shot.read_bytes()[:1500])
    with caplog.at_level(logging.WARNING):
        report = evaluate_offline(
            recorded.store,
            [recorded.store.episode(recorded.episode_id)],
            EvalOptions("ui-venus-2", "http://127.0.0.1:1/v1", model="m"),  # nothing listens: never asked
        )
    assert report.scores == []
    assert "not a readable image" in " ".join(r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("name", ["../../x", "/abs/x", "a/b", "..", ".", "", "x\\..\\y", "a\0b", "名字/x"])
def test_dataset_names_that_leave_the_folder_are_refused(recorded, tmp_path, name):
    with pytest.raises(UserError, match="plain name"):
        export_episodes(recorded.store, [], tmp_path / "ds", ExportOptions(dataset_name=name))
    assert not (tmp_path / "x.jsonl").exists()


@given(st.text(max_size=40))
def test_an_accepted_dataset_name_is_one_component_inside_the_folder(name):
    try:
        checked_dataset_name(name)
    except UserError:
        return
    assert "/" not in name and "\\" not in name and ".." not in name and name not in ("", ".")
    assert "\0" not in name
