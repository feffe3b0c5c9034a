"""The ``--popup-rules FILE`` option of `run` and `apps popups`: GKD subscriptions whose rules join the manifests'.

Light on purpose: `run --help` reads the help line, and the app registry is imported only when a file is given.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from mobile_agent.apps.gkd_import import GkdImport

POPUP_RULES_HELP = "A GKD subscription file (JSON5) whose rules join the manifests' popup rules (repeatable)."


def use_popup_rules(paths: list[str], *, quiet: bool = False) -> list[GkdImport]:
    """Import the subscriptions now (a bad file is a one-line error before anything runs) and hand them on to
    every registry this process loads (through $MOBILE_AGENT_POPUP_RULES)."""
    if not paths:
        return []
    from mobile_agent.apps.gkd_import import load_subscription
    from mobile_agent.apps.registry import POPUP_RULES_ENV

    imports = [load_subscription(p) for p in paths]
    os.environ[POPUP_RULES_ENV] = os.pathsep.join(str(Path(p).expanduser().resolve()) for p in paths)
    if not quiet:
        for imported in imports:
            typer.echo(import_report(imported), err=True)
    return imports


def import_report(imported: GkdImport, limit: int = 20) -> str:
    lines = [imported.summary()]
    lines += [f"  skipped {s.key}: {s.reason}" for s in imported.skipped[:limit]]
    if len(imported.skipped) > limit:
        lines.append(f"  ... and {len(imported.skipped) - limit} more (--json lists them all)")
    return "\n".join(lines)


__all__ = ["POPUP_RULES_HELP", "import_report", "use_popup_rules"]
