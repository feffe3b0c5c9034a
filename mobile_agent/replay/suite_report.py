"""A replay suite's HTML report: one page with each episode's result, and for each one that stopped, the recorded
screen of the step it stopped before beside the live screen it met (the action drawn on both), with why.

The page is plain HTML that opens offline (no script, nothing fetched); its pictures go in ``NAME_files/`` beside
it, written the way every report's files are (report/layout.py: inside that folder, never through a link).
"""

from __future__ import annotations

from pathlib import Path

import jinja2

from mobile_agent.replay.suite import SuiteSummary, live_step, recorded_step
from mobile_agent.report.layout import Picture, PictureWriter, prepare, report_layout, write_text
from mobile_agent.store.records import StepInfo
from mobile_agent.store.store import TrajectoryStore

THUMB_WIDTH = 360

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>replay suite {{ s.run_id }}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: .3em .6em; text-align: left; }
.replayed { color: #176f2c; } .stopped, .failed { color: #b00020; } .needs_person { color: #9a6700; }
.pair { display: flex; gap: 1.5em; align-items: flex-start; } figure { margin: 0; }
figcaption { font-size: .9em; color: #555; max-width: {{ width }}px; } section { margin: 2em 0; }
</style></head><body>
<h1>Replay suite {{ s.run_id }}: <span class="{{ 'replayed' if s.passed else 'stopped' }}">
{{ 'passed' if s.passed else 'failed' }}</span></h1>
<p>{{ s.name }} — {% for status, n in s.counts.items() if n %}{{ n }} {{ status }}{{ ", " if not loop.last }}
{% endfor %}</p>
<table><tr><th>episode</th><th>task</th><th>result</th><th>step</th><th>why</th><th>replay</th><th>verdict</th></tr>
{% for e in s.entries %}<tr><td><a href="#{{ e.source_id }}">{{ e.source_id }}</a></td><td>{{ e.task }}</td>
<td class="{{ e.status }}">{{ e.status }}</td><td>{{ '' if e.step is none else e.step }}</td><td>{{ e.why or '' }}</td>
<td>{{ e.replay_id or '' }}</td><td>{{ e.verdict or '' }}{% if e.source_verdict %} (recorded {{ e.source_verdict }}){% endif %}</td>
</tr>{% endfor %}</table>
{% for e, recorded, live in stopped %}
<section id="{{ e.source_id }}"><h2>{{ e.source_id }}: <span class="{{ e.status }}">{{ e.status }}</span>
{% if e.step is not none %} before step {{ e.step }}{% endif %}</h2>
<p>{{ e.task }}</p><p>{{ e.why or '' }}</p>
<div class="pair">
<figure>{% if recorded %}<a href="{{ files }}{{ recorded.full }}"><img src="{{ files }}{{ recorded.thumb }}"
 width="{{ width }}" alt="recorded"></a>{% else %}(no recorded screenshot){% endif %}
<figcaption>recorded: episode {{ e.source_id }}, step {{ e.step }}</figcaption></figure>
<figure>{% if live %}<a href="{{ files }}{{ live.full }}"><img src="{{ files }}{{ live.thumb }}"
 width="{{ width }}" alt="live"></a>{% else %}(no live screenshot){% endif %}
<figcaption>live: replay {{ e.replay_id }} on {{ e.device }}, step {{ e.replay_step }}</figcaption></figure>
</div></section>
{% endfor %}
</body></html>
"""


def write_suite_report(store: TrajectoryStore, summary: SuiteSummary, output: str | Path | None) -> Path:
    """Write the report; returns the page's path."""
    layout = report_layout(output, f"replay-suite-{summary.run_id}")
    prepare(layout)
    stopped = []
    with PictureWriter(store, layout, THUMB_WIDTH) as pictures:
        for entry in summary.entries:
            if entry.status in ("replayed", "pending"):
                continue
            recorded = _picture(pictures, entry.source_id, recorded_step(store, entry))
            live = _picture(pictures, entry.replay_id, live_step(store, entry))
            stopped.append((entry, recorded, live))
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    page = env.from_string(_PAGE).render(
        s=summary, stopped=stopped, files=layout.files_href, width=THUMB_WIDTH
    )
    write_text(layout.index, page)
    return layout.index


def _picture(pictures: PictureWriter, episode_id: str | None, step: StepInfo | None) -> Picture | None:
    if episode_id is None or step is None:
        return None
    return pictures.episode(episode_id, [step]).get(step.index)


__all__ = ["write_suite_report"]
