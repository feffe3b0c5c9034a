"""pyproject lists packages explicitly (apps/ ships as mobile_agent.app_manifests); no folder may be left out."""

from __future__ import annotations

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[3]
SHIPPED_SUFFIXES = {".py", ".yaml", ".html", ".j2", ".ttf"}


def test_every_package_folder_is_listed_in_pyproject():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {
        ".".join(folder.relative_to(ROOT).parts)
        for folder in [ROOT / "mobile_agent", *(ROOT / "mobile_agent").rglob("*")]
        if folder.is_dir()
        and folder.name != "__pycache__"
        and any(f.suffix in SHIPPED_SUFFIXES for f in folder.iterdir() if f.is_file())
    }
    missing = sorted(on_disk - listed)
    assert not missing, f"add these to [tool.setuptools] packages in pyproject.toml: {missing}"
    assert "mobile_agent.app_manifests" in listed
