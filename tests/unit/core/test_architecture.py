"""The house rules of docs/architecture.md, checked: import contracts, module size, no mixins, no re-export modules."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "mobile_agent"
MAX_LINES = 600
# The public library API: a lazy table of names, documented as the one place that re-exports.
PUBLIC_API = PACKAGE / "__init__.py"


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _lint_imports() -> list[str]:
    exe = Path(sys.executable).with_name("lint-imports")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("lint-imports")
    if found is None:
        pytest.fail("lint-imports is not installed: pip install -e '.[test]' brings import-linter")
    return [found]


def test_import_contracts_hold() -> None:
    done = subprocess.run(
        [*_lint_imports(), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "BROKEN" not in done.stdout


def test_a_wrong_import_breaks_the_contracts(tmp_path: Path) -> None:
    """The contracts can fail: the store importing the agent loop is refused."""
    config = (ROOT / "pyproject.toml").read_text()
    bad = PACKAGE / "store" / "_contract_probe.py"
    bad.write_text("import mobile_agent.agent.loop  # noqa: F401\n")
    try:
        (tmp_path / "pyproject.toml").write_text(config)
        done = subprocess.run(
            [*_lint_imports(), "--config", str(tmp_path / "pyproject.toml"), "--no-cache"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        bad.unlink()
    assert done.returncode != 0
    assert "mobile_agent.store._contract_probe -> mobile_agent.agent.loop" in done.stdout


def test_no_module_is_longer_than_the_limit() -> None:
    long = {
        str(p.relative_to(ROOT)): n for p in _modules() if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"split these along their jobs (limit {MAX_LINES} lines): {long}"


def test_no_mixin_classes() -> None:
    mixins = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and "mixin" in node.name.lower():
                mixins.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert not mixins, mixins


def _only_reexports(tree: ast.Module) -> bool:
    body = [n for n in tree.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    imports = [n for n in body if isinstance(n, ast.ImportFrom | ast.Import)]
    others = [
        n
        for n in body
        if not isinstance(n, ast.ImportFrom | ast.Import)
        and not (isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets))
    ]
    names_imported = [
        a for n in imports if isinstance(n, ast.ImportFrom) and n.module != "__future__" for a in n.names
    ]
    return bool(names_imported) and not others


def test_no_module_only_reexports_another() -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for p in _modules()
        if p != PUBLIC_API and _only_reexports(ast.parse(p.read_text()))
    ]
    assert not offenders, f"import these names from the module that defines them: {offenders}"


def test_top_level_holds_the_api_records_errors_and_folders() -> None:
    files = sorted(p.name for p in PACKAGE.iterdir() if p.is_file() and p.suffix == ".py")
    assert files == ["__init__.py", "actions.py", "errors.py"], files


def test_the_public_api_names_resolve() -> None:
    import mobile_agent

    for name in mobile_agent.__all__:
        assert getattr(mobile_agent, name) is not None, name
