"""A run of many episodes: an index page that links every episode once, pages of a bounded size, pictures that
open at full size, "n/a" where nothing was verified, model text escaped on every page, and bad outputs refused."""

from __future__ import annotations

import io
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from PIL import Image

from mobile_agent.actions import Action, Outcome, Size
from mobile_agent.errors import UserError
from mobile_agent.report import verdicts
from mobile_agent.report.html import write_report_files
from mobile_agent.report.layout import ReportLayout, report_layout, safe_name
from mobile_agent.store.records import ActionSource, StepRecord, StepTimings
from mobile_agent.store.store import TrajectoryStore

EPISODES = 47
PER_PAGE = 10
APPS = ("com.tencent.mm", "com.eg.android.AlipayGphone", "com.android.settings")
HOSTILE = "<script>alert('x')</script>"


class Page(HTMLParser):
    """The links, images, element ids and sections of one written page."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.links: list[tuple[str, str]] = []  # (class, href)
        self.images: list[str] = []
        self.ids: set[str] = set()
        self.sections = 0
        self.scripts = 0
        self.feed(path.read_text(encoding="utf-8"))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if "id" in values:
            self.ids.add(values["id"])
        if tag == "a" and "href" in values:
            self.links.append((values.get("class", ""), values["href"]))
        if tag == "img":
            self.images.append(values["src"])
        if tag == "section" and values.get("class") == "episode":
            self.sections += 1
        if tag == "script":
            self.scripts += 1

    def target(self, href: str) -> tuple[Path, str]:
        parts = urlsplit(href)
        assert not parts.scheme and not parts.netloc, href  # nothing leaves the report folder
        file = (self.path.parent / unquote(parts.path)).resolve() if parts.path else self.path
        return file, parts.fragment


def _shot(index: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (216, 480), (200, 40 * index % 255, 90)).save(out, "JPEG", quality=70)
    return out.getvalue()


def _record(store: TrajectoryStore, run_id: str, number: int) -> str:
    app = APPS[number % len(APPS)]
    episode = store.start_episode(
        f"task {number} {HOSTILE}", device="sim-1", family="ui-venus-2", model="m", run_id=run_id, app=app
    )
    for index, action in enumerate((Action.tap(540, 380), Action.finish("done"))):
        store.record_step(
            episode.id,
            StepRecord(
                index=index,
                action=action,
                action_source=ActionSource.MODEL,
                screen=Size(1080, 2400),
                foreground_app=app,
                raw_reply=f"<think>{HOSTILE}</think>",
                thought=f"thinking {HOSTILE}",
                timings=StepTimings(total_ms=900 + number),
            ),
            screenshot=_shot(index),
        )
    store.finish_episode(episode.id, Outcome.FINISHED if number % 4 else Outcome.MAX_STEPS)
    return episode.id


@pytest.fixture
def big_run(store: TrajectoryStore, monkeypatch) -> tuple[TrajectoryStore, str, list[str]]:
    """47 episodes over three apps. WeChat's are judged (complete, partial, failed in turn), the others not."""
    run = store.create_run("big")
    ids = [_record(store, run.id, number) for number in range(EPISODES)]
    judged = {
        episode_id: [{"judge": "j", "source": "judge", "verdict": ("complete", "partial", "failed")[i % 3]}]
        for i, episode_id in enumerate(ids[:: len(APPS)])
    }
    monkeypatch.setattr(verdicts, "_reader", lambda store: lambda episode_id: judged.get(episode_id, []))
    return store, run.id, ids


def test_the_index_links_every_episode_exactly_once_to_a_page_that_holds_it(big_run, tmp_path: Path) -> None:
    store, run_id, ids = big_run
    seen: list[tuple[int, int]] = []
    written = write_report_files(
        store,
        run=run_id,
        output=tmp_path / "out",
        per_page=PER_PAGE,
        progress=lambda d, t: seen.append((d, t)),
    )
    assert written.index == tmp_path / "out" / f"report-run-{run_id}.html"
    assert len(written.pages) == -(-EPISODES // PER_PAGE) and written.episodes == EPISODES
    assert seen == [(n, EPISODES) for n in range(1, EPISODES + 1)]  # progress after every episode
    index = Page(written.index)
    assert index.sections == 0  # a big run's index holds no steps
    listed = [href for _, href in index.links if "#episode-" in href]
    assert sorted(href.split("#episode-")[1] for href in listed) == sorted(ids)  # each exactly once
    pages: dict[Path, Page] = {}
    for href in listed:
        file, fragment = index.target(href)
        assert file.is_file(), href
        page = pages.setdefault(file, Page(file))
        assert fragment in page.ids, href
    assert set(pages) == {p.resolve() for p in written.pages}
    for file, page in pages.items():
        assert page.sections <= PER_PAGE and page.scripts == 0
        for _, href in page.links:  # index, previous, next, table of contents, pictures
            target, fragment = page.target(href)
            assert target.is_file(), (file.name, href)
            if fragment:
                assert fragment in Page(target).ids, (file.name, href)
    assert {page.target(h)[0] for page in pages.values() for c, h in page.links if h.endswith(".html")} >= {
        written.index.resolve()
    }


def test_pages_stay_small_whatever_the_size_of_the_run(big_run, tmp_path: Path) -> None:
    store, run_id, _ = big_run
    written = write_report_files(store, run=run_id, output=tmp_path / "r.html", per_page=PER_PAGE)
    sizes = {path.name: path.stat().st_size for path in (written.index, *written.pages)}
    assert max(size for name, size in sizes.items() if name.startswith("page-")) < 60_000, sizes
    assert sizes["r.html"] < 1_000 * EPISODES + 20_000, sizes  # the index grows by a table row per episode
    assert not list(tmp_path.glob("*.jpg")) and (tmp_path / "r_files" / "shots").is_dir()


def test_every_screenshot_links_to_its_full_size_picture(big_run, tmp_path: Path) -> None:
    store, run_id, _ = big_run
    written = write_report_files(store, run=run_id, output=tmp_path, per_page=PER_PAGE)
    zooms = 0
    for path in written.pages:
        page = Page(path)
        full = [href for cls, href in page.links if cls == "zoom"]
        assert len(full) == len(page.images) == 2 * page.sections
        for href in full + page.images:
            file, _ = page.target(href)
            assert file.is_relative_to(written.files.resolve())
            with Image.open(file) as picture:
                assert picture.format == "JPEG"
        zooms += len(full)
    assert zooms == 2 * EPISODES == written.pictures


def test_rates_are_over_verified_episodes_and_na_where_nothing_was_verified(big_run, tmp_path: Path) -> None:
    store, run_id, _ = big_run
    html = write_report_files(store, run=run_id, output=tmp_path).index.read_text(encoding="utf-8")
    results = html.split('<table class="results">')[1].split("</table>")[0]
    rows = dict(re.findall(r"<tr><td>([\w.]+)</td>.*?<td class=\"num rate\">([^<]*)</td>", results, re.S))
    assert rows == {
        "com.android.settings": "n/a",
        "com.eg.android.AlipayGphone": "n/a",
        "com.tencent.mm": "38%",
    }
    # WeChat: 16 episodes verified, 6 complete, 5 partial, 5 failed: partial is no success
    assert 'Success rate: <strong class="rate">38%</strong> of 16 verified' in html
    assert re.search(r"<td>partial</td><td class=\"num\">5</td>", html)
    assert re.search(r"<td>not verified</td><td class=\"num\">31</td>", html)


def test_model_text_is_escaped_on_every_page(big_run, tmp_path: Path) -> None:
    store, run_id, _ = big_run
    written = write_report_files(store, run=run_id, output=tmp_path, per_page=PER_PAGE)
    for path in (written.index, *written.pages):
        html = path.read_text(encoding="utf-8")
        assert "<script" not in html.lower(), path.name
        assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html, path.name


def test_a_rewrite_with_fewer_pages_leaves_no_stale_page(big_run, tmp_path: Path) -> None:
    store, run_id, _ = big_run
    first = write_report_files(store, run=run_id, output=tmp_path, per_page=5)
    mine = first.files / "notes.txt"
    mine.write_text("keep me")
    second = write_report_files(store, run=run_id, output=tmp_path, per_page=25)
    assert sorted(p.name for p in second.files.glob("page-*.html")) == ["page-001.html", "page-002.html"]
    assert mine.read_text() == "keep me"
    one = write_report_files(store, run=run_id, output=tmp_path, per_page=100)
    assert one.pages == [] and Page(one.index).sections == EPISODES and not list(one.files.glob("page-*"))


@pytest.mark.parametrize(
    ("in_the_way", "output"),
    [
        ("plain", "plain"),  # a file where a folder is meant
        ("f", "f/r.html"),  # a file as the parent folder
        ("r_files", "r.html"),  # a file where the pictures go
    ],
)
def test_a_file_in_the_way_is_a_user_error_with_a_hint(in_the_way: str, output: str, tmp_path: Path) -> None:
    (tmp_path / in_the_way).write_text("mine")
    with pytest.raises(UserError) as caught:
        report_layout(tmp_path / output, "report-run-x")
    assert "is a file" in caught.value.message and "-o" in caught.value.hint
    assert (tmp_path / in_the_way).read_text() == "mine"


def test_an_unwritable_folder_is_a_user_error(big_run, tmp_path: Path, monkeypatch) -> None:
    store, run_id, _ = big_run

    def refuse(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "write_bytes", refuse)
    with pytest.raises(UserError, match="cannot write the report .*Permission denied") as caught:
        write_report_files(store, run=run_id, output=tmp_path / "locked")
    assert caught.value.hint


def test_unknown_runs_and_episodes_are_user_errors(big_run, tmp_path: Path) -> None:
    store, run_id, _ = big_run
    out = tmp_path / "out"
    with pytest.raises(UserError, match="no run"):
        write_report_files(store, run="abcdef123456", output=out)
    with pytest.raises(UserError, match="no episode"):
        write_report_files(store, episode="abcdef123456", output=out)
    with pytest.raises(UserError, match="per-page"):
        write_report_files(store, run=run_id, output=out, per_page=0)
    assert not out.exists()  # nothing written for a refused request


@pytest.mark.parametrize("key", ["../../etc/x", "/abs", "a/b", "..", "", "名字", "x" * 80])
def test_names_made_from_store_ids_stay_one_plain_component(key: str, tmp_path: Path) -> None:
    name = safe_name(key)
    assert re.fullmatch(r"[0-9A-Za-z_-]{1,64}", name)
    layout = ReportLayout(index=tmp_path / "r.html", files=tmp_path / "r_files")
    assert layout.inside(layout.files / "shots" / name).is_relative_to(layout.files)
    with pytest.raises(UserError, match="outside the report folder"):
        layout.inside(layout.files / ".." / ".." / "elsewhere")


def test_an_output_name_with_spaces_and_hashes_still_links_its_pictures(big_run, tmp_path: Path) -> None:
    store, run_id, _ = big_run
    written = write_report_files(
        store, run=run_id, output=tmp_path / "night run #1 100%.html", per_page=PER_PAGE
    )
    index = Page(written.index)
    for _, href in index.links:
        if not href.startswith("#"):
            assert index.target(href)[0].is_file(), href
    page = Page(written.pages[0])
    assert all(page.target(src)[0].is_file() for src in page.images)
    assert page.target(next(h for c, h in page.links if h.startswith("../")))[0] == written.index.resolve()
