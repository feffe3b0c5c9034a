"""HTML reports from a store built with record_step: every step, self-contained, honest about success."""

from __future__ import annotations

import re

import pytest

from mobile_agent.errors import UserError
from mobile_agent.report import verdicts
from mobile_agent.report.html import build_run_view, render_episode_report, render_run_report, write_report

from .conftest import STEPS, Recorded, record_episode


@pytest.fixture
def unverified(monkeypatch):
    """A store without verification, whatever modules are installed."""
    monkeypatch.setattr(verdicts, "_reader", lambda store: None)


def _judged(monkeypatch, rows_by_episode):
    monkeypatch.setattr(
        verdicts, "_reader", lambda store: lambda episode_id: rows_by_episode.get(episode_id, [])
    )


def test_episode_report_shows_every_step_with_an_inlined_picture(recorded: Recorded, unverified) -> None:
    html = render_episode_report(recorded.store, recorded.episode_id)
    assert html.count('class="step"') == len(STEPS)
    assert html.count('src="data:image/jpeg;base64,') == len(STEPS)
    assert "<script" not in html
    assert not re.search(r'(src|href)="(?!data:|#)', html)  # no external asset of any kind
    assert "launch(微信)" in html and "swipe(540,1800 -&gt; 540,600)" in html
    assert "unknown action &#39;Clack&#39;" in html  # the unparsed step shows its error
    assert "明天见 &lt;b&gt;" in html  # model text is escaped, never markup
    assert html.count("<details>") >= 5  # raw replies are collapsible
    assert "verification not available" in html
    assert "finished (unverified)" in html


def test_run_report_never_counts_unverified_finishes_as_success(store, unverified) -> None:
    run = store.create_run("nightly")
    for _ in range(2):
        record_episode(store, run_id=run.id)
    html = render_run_report(store, run.id)
    assert "<strong>0</strong> of 2 episodes verified complete" in html
    assert "2 finished (unverified)" in html
    assert html.count("<svg") == 3
    assert html.count('class="step"') == 2 * len(STEPS)
    assert re.search(r'<td class="num">n/a</td>', html) and '<td class="num">0%</td>' not in html  # no checks
    assert html.count('<label class="zoom"') == 2 * len(STEPS)  # click a screenshot to zoom it (no script)


def test_an_app_with_a_verdict_gets_a_rate(store, monkeypatch) -> None:
    run = store.create_run("judged")
    first = record_episode(store, run_id=run.id)
    _judged(monkeypatch, {first.episode_id: [{"judge": "j1", "source": "judge", "verdict": "failed"}]})
    html = render_run_report(store, run.id)
    assert '<td class="num">0%</td>' in html and "n/a" not in html.split("<h2>Outcomes")[0]


def test_judgments_give_verdicts_labels_and_success(store, monkeypatch) -> None:
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
    view = build_run_view(store, store.list_episodes(run_id=run.id, limit=None), store.run(run.id))
    statuses = {v.info.id: v.status for v in view.episodes}
    assert statuses == {first.episode_id: "complete", second.episode_id: "partial"}
    assert view.success_count == 1
    html = render_run_report(store, run.id)
    assert "<strong>1</strong> of 2 episodes verified complete" in html
    assert '<span class="badge correct">correct</span>' in html
    assert "right chat" in html and "exploratory" in html


def test_write_report_names_the_file_and_refuses_ambiguous_requests(recorded: Recorded, tmp_path) -> None:
    path = write_report(recorded.store, episode=recorded.episode_id[:5], output=tmp_path)
    assert path == tmp_path / f"report-episode-{recorded.episode_id}.html"
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    with pytest.raises(UserError):
        write_report(recorded.store, output=tmp_path)
    with pytest.raises(UserError):
        write_report(recorded.store, episode=recorded.episode_id, run="abc", output=tmp_path)
    empty = recorded.store.create_run("empty")
    with pytest.raises(UserError, match="no episodes"):
        write_report(recorded.store, run=empty.id, output=tmp_path)
