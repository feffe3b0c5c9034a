"""Attacks on `mobile-agent report` as a hostile or careless user would make them: output names the system refuses,
links planted where the report writes (its files folder, a picture, a page, the write probe, the page itself), a
store edited with raw SQL (ids with path characters and escape sequences, screenshots that are FIFOs, huge or no
images), model text full of HTML, a full disk and two reports at once. Every file the report writes stays inside
the output folder, nothing outside is read, followed or overwritten, and a bad output is one line and exit 2."""

from __future__ import annotations

import io
import logging
import os
import re
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import typer
from PIL import Image
from typer.testing import CliRunner

from mobile_agent.cli.report import report_command
from mobile_agent.errors import UserError
from mobile_agent.report.html import write_report_files
from mobile_agent.report.layout import MAX_SCREENSHOT_BYTES
from mobile_agent.store.store import TrajectoryStore

from .conftest import Recorded, record_episode

SECRET = "the user's own file, which no report may touch"


def _secret(path: Path) -> Path:
    path.write_text(SECRET, encoding="utf-8")
    return path


def _untouched(path: Path) -> bool:
    return path.read_text(encoding="utf-8") == SECRET


def _sql(database: Path, statement: str, *args: object) -> None:
    """An edit of the store's SQLite file behind the store's back."""
    with sqlite3.connect(database) as connection:
        connection.execute(statement, args)


@pytest.fixture
def db(tmp_path: Path) -> tuple[str, str, str]:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with TrajectoryStore.open(url) as store:  # the store's files beside the database, where the CLI looks
        run = store.create_run("attacks")
        episode = record_episode(store, run_id=run.id).episode_id
    return url, run.id, episode


def _cli(url: str, *argv: str, limit_bytes: int | None = None) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it, through the real main(); ``limit_bytes`` caps the size of any file it
    writes (RLIMIT_FSIZE: a write past it fails as on a full disk)."""
    prefix = []
    if limit_bytes is not None:
        prefix = [
            "-c",
            f"import resource, runpy; resource.setrlimit(resource.RLIMIT_FSIZE, ({limit_bytes},) * 2); "
            "runpy.run_module('mobile_agent.cli.app', run_name='__main__')",
        ]
    return subprocess.run(
        [sys.executable, *(prefix or ["-m", "mobile_agent.cli.app"]), "report", *argv, "--db", url],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "300"},
    )


def _one_line_error(done: subprocess.CompletedProcess[str], message: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("error:") and message in lines[0], lines
    assert len(lines) == 2 and lines[1].startswith("hint:"), lines
    assert "Traceback" not in done.stderr


# ----- output names ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a" * 300 + ".html", "b" * 251 + ".html"])  # the page fits, its _files not
def test_a_name_too_long_is_one_line_and_exit_2(db, tmp_path: Path, name: str) -> None:
    url, _, episode = db
    _one_line_error(_cli(url, episode, "-o", str(tmp_path / name)), "cannot write the report")


def test_a_nul_byte_in_the_output_is_a_user_error(recorded: Recorded, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="NUL byte") as caught:
        write_report_files(recorded.store, episode=recorded.episode_id, output=f"{tmp_path}/a\0b.html")
    assert caught.value.hint


def test_a_folder_named_like_a_page_gets_the_page_inside_it(recorded: Recorded, tmp_path: Path) -> None:
    folder = tmp_path / "looks-like.html"
    folder.mkdir()
    written = write_report_files(recorded.store, episode=recorded.episode_id, output=folder)
    assert written.index.parent == folder and written.index.is_file()


# ----- links planted where the report writes ------------------------------------------------------------------


def test_a_files_folder_that_links_elsewhere_is_refused_and_nothing_there_is_touched(
    recorded: Recorded, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    precious = _secret(elsewhere / "page-001.html")  # named like an old page: a re-write would remove it
    out = tmp_path / "out"
    out.mkdir()
    (out / "r_files").symlink_to(elsewhere)
    with pytest.raises(UserError, match="symbolic link") as caught:
        write_report_files(recorded.store, episode=recorded.episode_id, output=out / "r.html")
    assert caught.value.hint
    assert _untouched(precious) and sorted(p.name for p in elsewhere.iterdir()) == ["page-001.html"]


def test_a_page_that_is_a_link_is_refused_not_written_through(recorded: Recorded, tmp_path: Path) -> None:
    target = _secret(tmp_path / "notes.txt")
    out = tmp_path / "out"
    out.mkdir()
    (out / "r.html").symlink_to(target)
    with pytest.raises(UserError, match="symbolic link"):
        write_report_files(recorded.store, episode=recorded.episode_id, output=out / "r.html")
    assert _untouched(target)


def test_a_link_planted_as_the_write_probe_is_not_followed(recorded: Recorded, tmp_path: Path) -> None:
    target = _secret(tmp_path / "notes.txt")
    files = tmp_path / "out" / "r_files"
    files.mkdir(parents=True)
    (files / ".write-test").symlink_to(target)  # a fixed probe name was opened for writing, truncating this
    write_report_files(recorded.store, episode=recorded.episode_id, output=tmp_path / "out" / "r.html")
    assert _untouched(target)


def test_a_leftover_probe_name_does_not_make_the_folder_unwritable(
    recorded: Recorded, tmp_path: Path
) -> None:
    """What two reports written into one folder at once did to each other: one removed the other's probe."""
    files = tmp_path / "out" / "r_files"
    (files / ".write-test").mkdir(parents=True)
    written = write_report_files(
        recorded.store, episode=recorded.episode_id, output=tmp_path / "out" / "r.html"
    )
    assert written.pictures == 8


def test_links_planted_where_pictures_go_are_replaced_not_followed(
    recorded: Recorded, tmp_path: Path
) -> None:
    target = _secret(tmp_path / "notes.txt")
    shots = tmp_path / "out" / "r_files" / "shots" / recorded.episode_id
    shots.mkdir(parents=True)
    (shots / "000.jpg").symlink_to(target)
    (shots / "000-thumb.jpg").symlink_to(tmp_path / "not-there-yet.jpg")
    written = write_report_files(
        recorded.store, episode=recorded.episode_id, output=tmp_path / "out" / "r.html"
    )
    assert _untouched(target) and not (tmp_path / "not-there-yet.jpg").exists()
    assert written.pictures == 8
    for picture in ("000.jpg", "000-thumb.jpg"):
        assert not (shots / picture).is_symlink()
        assert Image.open(shots / picture).format == "JPEG"
    assert not [p for p in shots.parent.parent.rglob(".*")]  # no temporary file left behind


def test_a_shots_folder_that_links_elsewhere_is_refused(recorded: Recorded, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    files = tmp_path / "out" / "r_files"
    files.mkdir(parents=True)
    (files / "shots").symlink_to(elsewhere)
    with pytest.raises(UserError, match="outside the report folder"):
        write_report_files(recorded.store, episode=recorded.episode_id, output=tmp_path / "out" / "r.html")
    assert list(elsewhere.iterdir()) == []


def test_a_rewrite_removes_its_old_pages_but_no_file_a_link_points_at(store: TrajectoryStore, tmp_path: Path):
    run = store.create_run("pages")
    for _ in range(3):
        record_episode(store, run_id=run.id)
    target = _secret(tmp_path / "notes.txt")
    files = tmp_path / "out" / "r_files"
    files.mkdir(parents=True)
    (files / "page-009.html").symlink_to(target)
    (files / "page-notes.html").write_text("mine")
    (files / "page-001.txt").write_text("mine")
    written = write_report_files(store, run=run.id, output=tmp_path / "out" / "r.html", per_page=1)
    assert _untouched(target) and len(written.pages) == 3
    assert sorted(p.name for p in files.iterdir() if p.is_file()) == [
        "page-001.html",
        "page-001.txt",
        "page-002.html",
        "page-003.html",
        "page-notes.html",
    ]


# ----- a store edited behind the report's back -----------------------------------------------------------------


def test_a_run_id_with_path_characters_cannot_move_the_report_out_of_its_folder(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with TrajectoryStore.open(url, root=tmp_path / "data") as store:
        run = store.create_run("crafted")
        record_episode(store, run_id=run.id)
    crafted = run.id + "/../../../../evil"  # still found by its prefix: `report --run <prefix>`
    with sqlite3.connect(tmp_path / "store.db") as connection:
        connection.execute("update runs set id = ? where id = ?", (crafted, run.id))
        connection.execute("update episodes set run_id = ? where run_id = ?", (crafted, run.id))
    out = tmp_path / "a" / "b" / "out"
    with TrajectoryStore.open(url, root=tmp_path / "data") as store:
        written = write_report_files(store, run=run.id, output=out)
    assert written.index.resolve().parent == out.resolve()
    assert written.files.resolve().parent == out.resolve()
    assert not list(tmp_path.rglob("evil*"))


def test_an_episode_id_with_path_characters_creates_nothing_outside_the_folder(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with TrajectoryStore.open(url, root=tmp_path / "data") as store:
        episode = record_episode(store).episode_id
    crafted = episode + "/../../../../evil"
    with sqlite3.connect(tmp_path / "store.db") as connection:
        for table in ("episodes",):
            connection.execute(f"update {table} set id = ? where id = ?", (crafted, episode))
        connection.execute("update steps set episode_id = ? where episode_id = ?", (crafted, episode))
    out = tmp_path / "a" / "b" / "out"
    with TrajectoryStore.open(url, root=tmp_path / "data") as store:
        try:
            write_report_files(store, episode=episode, output=out)
        except UserError:
            pass  # the store refuses to read steps of an id that is not hex: that is fine, escaping is not
    assert not list(tmp_path.rglob("evil*"))


def test_an_id_with_escape_sequences_never_reaches_the_terminal(tmp_path: Path, monkeypatch) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with TrajectoryStore.open(url, root=tmp_path / "data") as store:
        run = store.create_run("crafted")
        record_episode(store, run_id=run.id)
    crafted = run.id + "\x1b]0;owned\x07\x1b[2J"
    with sqlite3.connect(tmp_path / "store.db") as connection:
        connection.execute("update runs set id = ? where id = ?", (crafted, run.id))
        connection.execute("update episodes set run_id = ? where run_id = ?", (crafted, run.id))
    app = typer.Typer()
    app.command("report")(report_command)
    app.command("unused")(lambda: None)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["report", "--run", run.id, "--db", url])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output


def test_a_screenshot_named_with_escape_sequences_is_logged_harmlessly(recorded: Recorded, tmp_path, caplog):
    bad = recorded.store.root / recorded.episode_id / "\x1b[2Jbad.jpg"
    bad.write_bytes(b"no image")
    _point(recorded, 0, str(bad.relative_to(recorded.store.root)))
    with caplog.at_level(logging.WARNING):
        written = write_report_files(recorded.store, episode=recorded.episode_id, output=tmp_path / "r.html")
    assert written.skipped_pictures == 1
    messages = [r.getMessage() for r in caplog.records]
    assert any("not a readable image" in m for m in messages) and not any("\x1b" in m for m in messages)


def _point(recorded: Recorded, index: int, path: str) -> None:
    from sqlalchemy import update

    from mobile_agent.store.schema import StepRow

    with recorded.store.write_session() as session:
        session.execute(
            update(StepRow)
            .where(StepRow.episode_id == recorded.episode_id, StepRow.index == index)
            .values(screenshot_path=path)
        )


def test_a_screenshot_linking_outside_the_store_is_not_copied(recorded: Recorded, tmp_path: Path) -> None:
    outside = tmp_path / "outside.jpg"
    outside.write_bytes((recorded.store.root / recorded.episode_id / "000.jpg").read_bytes())
    link = recorded.store.root / recorded.episode_id / "001.jpg"
    link.unlink()
    link.symlink_to(outside)
    written = write_report_files(recorded.store, episode=recorded.episode_id, output=tmp_path / "r.html")
    assert written.skipped_pictures == 1
    assert not (written.files / "shots" / recorded.episode_id / "001.jpg").exists()


def test_a_screenshot_that_is_a_fifo_does_not_hang_the_report(recorded: Recorded, tmp_path: Path) -> None:
    fifo = recorded.store.root / recorded.episode_id / "000.jpg"
    fifo.unlink()
    os.mkfifo(fifo)
    finished: list[object] = []
    worker = threading.Thread(
        target=lambda: finished.append(
            write_report_files(recorded.store, episode=recorded.episode_id, output=tmp_path / "r.html")
        ),
        daemon=True,
    )
    worker.start()
    worker.join(60)
    if worker.is_alive():  # unblock the reader so the thread ends, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(10)
        pytest.fail("the report waited forever on a FIFO in the store")
    (written,) = finished
    assert written.skipped_pictures == 1 and written.pictures == 7


def test_huge_screenshots_are_skipped_not_decoded(recorded: Recorded, tmp_path: Path, caplog) -> None:
    folder = recorded.store.root / recorded.episode_id
    huge = io.BytesIO()
    Image.new("1", (8000, 6000)).save(huge, "PNG")  # 48 M pixels: ~150 MB once decoded as RGB; tiny as a file
    (folder / "000.jpg").write_bytes(huge.getvalue())
    with open(
        folder / "001.jpg", "wb"
    ) as sparse:  # a file too big to be any screenshot (sparse: costs nothing)
        sparse.truncate(MAX_SCREENSHOT_BYTES + 1)
    with caplog.at_level(logging.WARNING):
        written = write_report_files(recorded.store, episode=recorded.episode_id, output=tmp_path / "r.html")
    assert (written.pictures, written.skipped_pictures) == (6, 2)
    warnings = " ".join(r.getMessage() for r in caplog.records)
    assert "too big a screenshot" in warnings and "too big for a screenshot" in warnings


def test_a_png_screenshot_of_a_normal_size_is_drawn(recorded: Recorded, tmp_path: Path) -> None:
    shot = recorded.store.root / recorded.episode_id / "000.jpg"
    png = io.BytesIO()
    Image.open(shot).save(png, "PNG")
    shot.write_bytes(png.getvalue())
    written = write_report_files(recorded.store, episode=recorded.episode_id, output=tmp_path / "r.html")
    assert written.pictures == 8


XSS = "</script><script>alert(1)</script><img src=x onerror=alert(2)> javascript:alert(3) \"'><b>x</b>"


def test_model_and_store_text_is_escaped_and_no_link_has_a_script_scheme(
    store: TrajectoryStore, tmp_path: Path
):
    run = store.create_run(XSS)
    for _ in range(3):
        record_episode(store, task=XSS, run_id=run.id)
    database = tmp_path / "db.sqlite"  # the store fixture's file
    _sql(
        database,
        "update steps set thought = ?, raw_reply = ?, foreground_app = ?, error_text = ?",
        *[XSS] * 4,
    )
    _sql(database, "update episodes set app = ?, device = ?, answer = ?", *[XSS] * 3)
    written = write_report_files(store, run=run.id, output=tmp_path / "javascript:alert(1).html", per_page=1)
    for page in [written.index, *written.pages]:
        html = page.read_text(encoding="utf-8")
        assert "<script" not in html.lower() and "<img src=x" not in html and "<b>x</b>" not in html
        links = re.findall(r'(?:href|src)="([^"]*)"', html)
        assert links and not [link for link in links if re.match(r"\s*[a-z][a-z0-9+.-]*:", link, re.I)]


# ----- the disk, the folder, two at once -----------------------------------------------------------------------


def test_a_full_disk_is_one_line_and_exit_2_with_no_half_files(db, tmp_path: Path) -> None:
    url, _, episode = db
    noise = Image.frombytes("RGB", (1080, 2400), os.urandom(1080 * 2400 * 3))
    noise.save(tmp_path / episode / "003.jpg", "JPEG", quality=95)  # a picture of ~2 MB: it does not fit
    out = tmp_path / "out"
    done = _cli(url, episode, "-o", str(out / "r.html"), limit_bytes=400_000)  # above the database's size
    _one_line_error(done, "cannot write the report")
    assert not [p for p in out.rglob(".*") if p.is_file()]


def test_a_full_tmpfs_is_one_line_and_exit_2(db, tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(small)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        url, _, episode = db
        _one_line_error(_cli(url, episode, "-o", str(small / "r.html")), "No space left on device")
        assert not [p for p in small.rglob(".*") if p.is_file()]
    finally:
        subprocess.run(["umount", str(small)], check=True)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root may write anywhere")
def test_an_unwritable_folder_is_one_line_and_exit_2(db, tmp_path: Path) -> None:
    url, _, episode = db
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        _one_line_error(_cli(url, episode, "-o", str(locked / "r.html")), "cannot write the report")
    finally:
        locked.chmod(0o700)


def test_two_reports_into_one_folder_at_once_both_come_out_whole(db, tmp_path: Path) -> None:
    url, run_id, episode = db
    out = tmp_path / "out"
    out.mkdir()
    commands = [
        ["-m", "mobile_agent.cli.app", "report", episode, "-o", str(out / "one.html"), "--db", url],
        ["-m", "mobile_agent.cli.app", "report", "--run", run_id, "-o", str(out / "two.html"), "--db", url],
        ["-m", "mobile_agent.cli.app", "report", episode, "-o", str(out / "one.html"), "--db", url],
    ]
    running = [
        subprocess.Popen([sys.executable, *argv], stderr=subprocess.PIPE, text=True) for argv in commands
    ]
    errors = [process.communicate(timeout=120)[1] for process in running]
    assert [process.returncode for process in running] == [0, 0, 0], errors
    for name in ("one", "two"):
        shots = list((out / f"{name}_files" / "shots").rglob("*.jpg"))
        assert len(shots) == 16 and all(Image.open(shot).format == "JPEG" for shot in shots)
        assert (out / f"{name}.html").read_text(encoding="utf-8").rstrip().endswith("</html>")
    assert not [p for p in out.rglob(".*") if p.is_file()]
