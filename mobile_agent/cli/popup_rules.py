"""The ``--popup-rules FILE`` and ``--popup-categories NAMES`` options of `run` and `apps popups`: GKD subscriptions
whose rules join the manifests', and the categories of them switched on; and the ``apps popups --report`` text.

Light on purpose: `run --help` reads the help lines, and the app registry is imported only when a file is given.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from mobile_agent.apps.gkd_intent import CATEGORIES_ENV
from mobile_agent.errors import UserError

if TYPE_CHECKING:
    from mobile_agent.apps.gkd_import import GkdImport

POPUP_RULES_HELP = "A GKD subscription file (JSON5) whose rules join the manifests' popup rules (repeatable)."
POPUP_CATEGORIES_HELP = (
    "GKD categories or group names whose rules act, whatever the file says, comma-separated "
    "(开屏广告,更新提示; also splash, update, teen, ...). Functional groups (功能类) act only when named."
)


def use_popup_rules(
    paths: list[str], categories: str | None = None, *, quiet: bool = False
) -> list[GkdImport]:
    """Read the subscriptions now (a bad file or an unknown category is a one-line error before anything runs) and
    hand them on to every registry this process loads (through $MOBILE_AGENT_POPUP_RULES and the
    popup_categories setting)."""
    if categories is not None:
        os.environ[CATEGORIES_ENV] = categories
    if not paths:
        return []
    from mobile_agent.apps.gkd_import import load_subscription
    from mobile_agent.apps.registry import POPUP_RULES_ENV

    imports = [load_subscription(p) for p in paths]
    from mobile_agent.apps.gkd_intent import named_kind

    unknown = [  # a typo, not a kind this file happens to lack (开屏广告 in a file without splash groups)
        name
        for name in imports[0].named
        if all(name in i.unknown_names() for i in imports) and named_kind(name) is None
    ]
    if unknown:
        known = sorted({c["name"] for i in imports for c in i.subscription.categories})
        raise UserError(
            f"--popup-categories: {', '.join(unknown)} names no category or group of {', '.join(paths)}",
            f"the files' categories: {', '.join(known) or '(none)'}; or a kind: splash, update, teen, rating, "
            "notification, permission, ad, functional",
        )
    os.environ[POPUP_RULES_ENV] = os.pathsep.join(str(Path(p).expanduser().resolve()) for p in paths)
    if not quiet:
        for imported in imports:
            typer.echo(imported.brief(), err=True)
    return imports


def import_report(imported: GkdImport, examples: int = 3) -> str:
    """The whole file: counts, the kinds of group and whether they act, and every refusal grouped by reason."""
    data = report_data(imported, examples)
    lines = [
        f"{data['source']}: {data['name']}" + (f" v{data['version']}" if data["version"] is not None else ""),
        f"  {data['apps']} apps, {data['groups']} groups, {data['rules']} rules: "
        f"imported {data['imported']}, refused {data['refused']}; {data['acting']} rules act",
    ]
    if data["named"]:
        lines.append(f"  named by --popup-categories: {', '.join(data['named'])}")
    for kind, row in data["kinds"].items():
        lines.append(f"  {kind:<12} {row['rules']:>5} rules, {row['acting']:>5} act")
    if not data["refusals"]:
        lines.append("  no rule refused")
    for row in data["refusals"]:
        lines.append(f"  refused {row['count']:>4}: {row['reason']}")
        lines += [f"      {r['rule']}" + (f": {r['detail']}" if r["detail"] else "") for r in row["rules"]]
        if row["count"] > len(row["rules"]):
            lines.append(f"      ... and {row['count'] - len(row['rules'])} more (--json lists them all)")
    return "\n".join(lines)


def report_data(imported: GkdImport, examples: int | None = None) -> dict:
    """What :func:`import_report` prints, as data (``examples``: how many rules per refusal reason; None: all)."""
    rules, skipped = imported.imported, imported.skipped
    kinds: dict[str, Counter] = defaultdict(Counter)
    for r in rules:
        kinds[r.rule.kind]["rules"] += 1
        kinds[r.rule.kind]["acting"] += r.enabled
    by_reason: dict[str, list] = defaultdict(list)
    for s in skipped:
        by_reason[s.reason].append(s)
    sub = imported.subscription
    return {
        "source": imported.source,
        "name": imported.name,
        "version": imported.version,
        "apps": len(sub.apps),
        "groups": sum(1 for _ in sub.groups()),
        "rules": len(rules) + len(skipped),
        "imported": len(rules),
        "refused": len(skipped),
        "acting": sum(r.enabled for r in rules),
        "named": list(imported.named),
        "kinds": {k: dict(v) for k, v in sorted(kinds.items(), key=lambda kv: -kv[1]["rules"])},
        "refusals": [
            {
                "reason": reason,
                "count": len(group),
                "rules": [{"rule": s.key, "detail": s.detail} for s in group[:examples]],
            }
            for reason, group in sorted(by_reason.items(), key=lambda kv: -len(kv[1]))
        ],
    }
