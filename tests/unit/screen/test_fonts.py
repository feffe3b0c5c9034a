"""One CJK font lookup for the simulated screens and the reports' action labels (screen/fonts.py), on a machine
whose CJK font fontconfig knows but no usual path holds (fc-match names DejaVuSans there, fc-list the real one), and
the missing-font warning said once per process, the demo's included."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

import mobile_agent.screen.fonts as fonts
from mobile_agent.actions import Action
from mobile_agent.report.draw import draw_action
from mobile_agent.sim.render import fonts as sim_fonts

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def _installed_cjk_font() -> str | None:
    if not shutil.which("fc-list"):
        return None
    out = subprocess.run(["fc-list", ":lang=zh", "file"], capture_output=True, text=True).stdout
    found = [line.split(":")[0].strip() for line in out.splitlines() if line.strip()]
    return found[0] if found else None


def _fake_fontconfig(folder: Path, listed: str | None) -> str:
    """A PATH whose fc-list lists ``listed`` as the one font covering Chinese, and whose fc-match answers DejaVuSans
    for ``:lang=zh`` (what it does when nothing better is configured)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fc-list").write_text(f"#!/bin/sh\n{'echo ' + repr(listed + ': ') if listed else 'true'}\n")
    (folder / "fc-match").write_text(f"#!/bin/sh\nprintf '%s' '{DEJAVU}'\n")
    for name in ("fc-list", "fc-match"):
        (folder / name).chmod(0o755)
    return f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"


@pytest.fixture
def fresh_lookup(monkeypatch):
    """The lookup as a new process makes it, with no usual path holding a font."""
    monkeypatch.setattr(fonts, "FONT_CANDIDATES", ())
    monkeypatch.setattr(fonts, "_notice_given", False)
    for cached in (fonts.cjk_font_path, fonts.cjk_font, sim_fonts.font):
        cached.cache_clear()
    yield
    for cached in (fonts.cjk_font_path, fonts.cjk_font, sim_fonts.font):
        cached.cache_clear()


def _label(text: str) -> bytes:
    return draw_action(
        Image.new("RGB", (1080, 2400), (240, 240, 240)), Action.launch(text), scale=1.0
    ).tobytes()


def test_the_report_labels_and_the_simulator_use_the_font_fontconfig_says_covers_chinese(
    tmp_path, monkeypatch, fresh_lookup
) -> None:
    installed = _installed_cjk_font()
    if installed is None:
        pytest.skip("no CJK font installed (fc-list :lang=zh lists none)")
    elsewhere = (
        tmp_path / "fonts" / Path(installed).name
    )  # a folder no usual path names, as in ~/.local/share/fonts
    elsewhere.parent.mkdir()
    shutil.copy(installed, elsewhere)
    monkeypatch.setenv("PATH", _fake_fontconfig(tmp_path / "bin", str(elsewhere)))
    assert fonts.cjk_font_path() == str(elsewhere)
    assert sim_fonts.font(30).path == fonts.cjk_font(30).path == str(elsewhere)
    # Drawn, not boxes: every glyph missing from a font is the same box, so two different names would look alike.
    assert _label("微信") != _label("设置")


def test_without_a_cjk_font_the_notice_is_given_once(tmp_path, monkeypatch, fresh_lookup, caplog) -> None:
    monkeypatch.setenv("PATH", _fake_fontconfig(tmp_path / "bin", None))
    assert fonts.cjk_font_path() is None
    caplog.set_level("WARNING")
    for size in (20, 30, 40):
        sim_fonts.font(size)
    warned = [r for r in caplog.records if "no CJK font" in r.getMessage()]
    assert len(warned) == 1 and "fonts-wqy-microhei" in warned[0].getMessage()
    assert fonts.missing_font_notice() is None  # already said


def test_the_demo_says_once_that_there_is_no_cjk_font(tmp_path) -> None:
    script = (
        "import sys; import mobile_agent.screen.fonts as f; f.FONT_CANDIDATES = (); "
        "sys.argv[0] = 'mobile-agent'; from mobile_agent.cli.app import main; main(['demo'])"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOBILE_AGENT_")}
    env.update(PATH=_fake_fontconfig(tmp_path / "bin", None), HOME=str(tmp_path), COLUMNS="200")
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (done.stdout + done.stderr).count("no CJK font") == 1, done.stdout + done.stderr
