"""HTML reports from a store built with record_step: every step, pictures beside the page, honest about success."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PIL import Image

from mobile_agent.errors import UserError
from mobile_agent.report import verdicts
from mobile_agent.report.html import write_report, write_report_files

from .conftest import STEPS, Recorded, record_episode


@pytest.fixture
def unverified(monkeypatch):
    """A store without verification, whatever modules are installed."""
    monkeypatch.setattr(verdicts, "_reader", lambda store: None)


def _judged(monkeypatch, rows_by_episode):
    monkeypatch.setattr(
        verdicts, "_reader", lambda store: lambda episode_id: rows_by_episode.get(episode_id, [])
    )


def _links(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="([^"]*)"', html)


def test_episode_report_shows_every_step_with_its_picture_beside_the_page(
    recorded: Recorded, unverified, tmp_path: Path
) -> None:
    written = write_report_files(recorded.store, episode=recorded.episode_id, output=tmp_path / "e.html")
    html = written.index.read_text(encoding="utf-8")
    assert written.files == tmp_path / "e_files" and written.pages == [] and written.pictures == len(STEPS)
    assert html.count('class="step"') == len(STEPS)
    thumbs = re.findall(r'<img src="([^"]+)"', html)
    zooms = re.findall(r'<a class="zoom" href="([^"]+)"', html)
    assert len(thumbs) == len(zooms) == len(STEPS)
    for thumb, full in zip(thumbs, zooms, strict=True):
        assert thumb.startswith("e_files/shots/") and full.startswith("e_files/shots/")
        with Image.open(tmp_path / thumb) as small, Image.open(tmp_path / full) as big:
            assert small.width == 360 and big.width == 1080  # the zoom is the full recorded frame
    assert "<script" not in html
    assert all(not re.match(r"[a-z]+:|//", link) for link in _links(html) if not link.startswith("#"))
    assert "launch(微信)" in html and "swipe(540,1800 -&gt; 540,600)" in html
    assert "unknown action &#39;Clack&#39;" in html  # the unparsed step shows its error
    assert "明天见 &lt;b&gt;" in html  # model text is escaped, never markup
    assert html.count("<details>") >= 5  # raw replies are collapsible
    assert "verification not available" in html
    assert "finished (unverified)" in html


def test_the_action_is_drawn_on_both_the_thumbnail_and_the_full_size(
    recorded: Recorded, tmp_path: Path
) -> None:
    written = write_report_files(recorded.store, episode=recorded.episode_id, output=tmp_path / "e.html")
    stored = recorded.store.root / recorded.episode_id / "001.jpg"  # the tap at (540, 380)
    shots = written.files / "shots" / recorded.episode_id
    with Image.open(stored) as original, Image.open(shots / "001.jpg") as full:
        before, after = original.convert("RGB").getpixel((540, 380)), full.convert("RGB").getpixel((540, 380))
    with Image.open(shots / "001-thumb.jpg") as thumb:
        marked = thumb.convert("RGB").getpixel((180, 127))
    assert after[0] > 200 and after[1] < 120, (before, after)  # the red tap dot
    assert marked[0] > 200 and marked[1] < 120, marked


def test_run_report_never_counts_unverified_finishes_as_success(store, unverified, tmp_path: Path) -> None:
    run = store.create_run("nightly")
    for _ in range(2):
        record_episode(store, run_id=run.id)
    html = write_report(store, run=run.id, output=tmp_path).read_text(encoding="utf-8")
    assert "<strong>0</strong> of 2 episodes verified complete" in html
    assert 'Success rate: <strong class="rate">n/a</strong> (nothing verified)' in html
    assert "2 finished (unverified)" in html
    assert html.count("<svg") == 3
    assert html.count('class="step"') == 2 * len(STEPS)  # a small run stays one page
    assert re.findall(r'<td class="num rate">([^<]*)</td>', html) == ["n/a", "n/a"]  # the app and the run
    assert "0%" not in html
    assert html.count('<a class="zoom"') == 2 * len(STEPS)


def test_an_app_with_a_verdict_gets_a_rate(store, monkeypatch, tmp_path: Path) -> None:
    run = store.create_run("judged")
    first = record_episode(store, run_id=run.id)
    _judged(monkeypatch, {first.episode_id: [{"judge": "j1", "source": "judge", "verdict": "failed"}]})
    html = write_report(store, run=run.id, output=tmp_path).read_text(encoding="utf-8")
    assert re.findall(r'<td class="num rate">([^<]*)</td>', html) == ["0%", "0%"]
    assert 'Success rate: <strong class="rate">0%</strong> of 1 verified' in html


def test_judgments_give_verdicts_labels_and_success(store, monkeypatch, tmp_path: Path) -> None:
    run = store.create_run("judged")
    first = record_episode(store, run_id=run.id)
    second = record_episode(store, run_id=run.id)
    _judged(
        monkeypatch,
        {
            first.episode_id: [
                {"judge": "checks", "source": "check", "verdict": "complete", "rationale": "message sent"},
                {
                    "judge": "j1",
                    "source": "judge",
                    "step_index": 1,
                    "label": "correct",
                    "rationale": "right chat",
                },
                {"judge": "j1", "source": "judge", "step_index": 5, "label": "exploratory"},
            ],
            second.episode_id: [
                {"judge": "j1", "source": "judge", "verdict": "complete"},
                {
                    "judge": "j2",
                    "source": "judge",
                    "verdict": "partial",
                },  # a tie goes to the conservative verdict
            ],
        },
    )
    html = write_report(store, run=run.id, output=tmp_path).read_text(encoding="utf-8")
    assert "<strong>1</strong> of 2 episodes verified complete" in html
    assert 'Success rate: <strong class="rate">50%</strong> of 2 verified' in html  # partial is no success
    assert '<span class="badge correct">correct</span>' in html
    assert "right chat" in html and "exploratory" in html


def test_write_report_names_the_file_and_refuses_ambiguous_requests(recorded: Recorded, tmp_path) -> None:
    path = write_report(recorded.store, episode=recorded.episode_id[:5], output=tmp_path)
    assert path == tmp_path / f"report-episode-{recorded.episode_id}.html"
    assert (tmp_path / f"report-episode-{recorded.episode_id}_files" / "shots").is_dir()
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    with pytest.raises(UserError):
        write_report(recorded.store, output=tmp_path)
    with pytest.raises(UserError):
        write_report(recorded.store, episode=recorded.episode_id, run="abc", output=tmp_path)
    empty = recorded.store.create_run("empty")
    with pytest.raises(UserError, match="no episodes"):
        write_report(recorded.store, run=empty.id, output=tmp_path)
