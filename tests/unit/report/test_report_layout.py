"""The episode page's layout as a browser draws it (headless Chromium through playwright): steps are cards of
screenshot and text in a grid, not one 240-px picture beside a mostly empty column. Measured as the share of the
steps' region covered by neither a screenshot nor text: 0.76 at 1280 px and 0.63 at 800 px before."""

from __future__ import annotations

from pathlib import Path

import pytest

from mobile_agent.report.html import write_report

from .conftest import Recorded

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.is_file():
    pytest.skip("no Chromium at /usr/bin/chromium (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
)

BLANK = """
() => {
  const steps = [...document.querySelectorAll('article.step')];
  const area = r => Math.max(0, r.width) * Math.max(0, r.height);
  let used = 0;
  for (const step of steps) {
    for (const shot of step.querySelectorAll('img, .noshot')) used += area(shot.getBoundingClientRect());
    const text = document.createTreeWalker(step, NodeFilter.SHOW_TEXT);
    while (text.nextNode()) {
      const node = text.currentNode;
      if (!node.textContent.trim() || !node.parentElement.offsetParent) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      for (const r of range.getClientRects()) used += area(r);
    }
  }
  const rects = steps.map(s => s.getBoundingClientRect());
  const width = Math.max(...rects.map(r => r.right)) - Math.min(...rects.map(r => r.left));
  const height = Math.max(...rects.map(r => r.bottom)) - Math.min(...rects.map(r => r.top));
  const shown = [...document.querySelectorAll('article.step img')].map(i => i.getBoundingClientRect().width);
  return {blank: 1 - used / (width * height), narrowest: Math.min(...shown), steps: steps.length,
          overflow: document.documentElement.scrollWidth > window.innerWidth};
}
"""


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        launched = p.chromium.launch(
            executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        yield launched
        launched.close()


@pytest.mark.parametrize("width", [1280, 800])
def test_the_episode_page_is_mostly_screenshots_and_text(
    recorded: Recorded, tmp_path, browser, width
) -> None:
    page_file = write_report(recorded.store, episode=recorded.episode_id, output=tmp_path / "episode.html")
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(page_file.as_uri())
    measured = page.evaluate(BLANK)
    assert measured["steps"] == len(recorded.actions)
    assert measured["blank"] < 0.45, measured
    assert measured["narrowest"] >= 200, measured  # the screenshots stay readable
    assert not measured["overflow"], measured  # no text runs past the page (timings wrap)
    page.close()


def test_an_opened_raw_reply_takes_the_whole_row(recorded: Recorded, tmp_path, browser) -> None:
    page_file = write_report(recorded.store, episode=recorded.episode_id, output=tmp_path / "episode.html")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(page_file.as_uri())
    step = page.locator("article.step").first
    row = page.locator(".steps").first.bounding_box()
    closed = step.bounding_box()
    step.locator("details summary").first.click()
    opened = step.bounding_box()
    assert closed["width"] < row["width"] / 2 and opened["width"] > row["width"] * 0.95, (closed, opened, row)
    page.close()
