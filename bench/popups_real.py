"""Popup coverage on real material: how many real popup screens the shipped rules dismiss without a model call.

Runs the shipped manifests' popup rules (apps/*.yaml, apps/_common.yaml) over tests/data/real_popups (real dumps and
trees rebuilt from public rule sets' selectors; see its sources.md) and prints JSON: per kind the share dismissed
correctly (the rule's tap lands on the expected target, or it presses back where back is expected), the screens
missed or mis-tapped, and how many rules fire on the ordinary screens. Goals: >= 80% of splash and of update
screens, 0 rules firing on ordinary screens.

    python bench/popups_real.py [--corpus tests/data/real_popups] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import yaml

from mobile_agent.actions import ActionKind
from mobile_agent.apps.registry import load_registry
from mobile_agent.screen.viewtree import ViewTree

CORPUS = Path(__file__).parents[1] / "tests" / "data" / "real_popups"
GOALS = {"splash": 0.8, "update": 0.8}


def judge(expect: object, match, xml: bytes) -> str:
    """'ok', 'missed' (nothing fired where something should), 'wrong' (fired, other action) or 'fired' (on none)."""
    if expect == "none":
        return "ok" if match is None else "fired"
    if match is None:
        return "missed"
    if expect == "back":
        return "ok" if match.action.kind is ActionKind.KEY else "wrong"
    if match.action.kind is not ActionKind.TAP:
        return "wrong"
    x, y = expect["tap"]  # type: ignore[index]
    p = match.action.point
    if abs(p.x - x) <= 3 and abs(p.y - y) <= 3:
        return "ok"
    tree = ViewTree.parse(xml)
    # the expected tap is the centre of the rule's target: a tap inside that same element is as good
    targets = [
        e.bounds
        for e in (tree.elements if tree else [])
        if e.bounds is not None and abs(e.bounds.centre.x - x) <= 1 and abs(e.bounds.centre.y - y) <= 1
    ]
    inside = any(b.left <= p.x < b.right and b.top <= p.y < b.bottom for b in targets)
    return "ok" if inside else "wrong"


def measure(corpus: Path) -> dict:
    registry = load_registry(None)
    screens = yaml.safe_load((corpus / "screens.yaml").read_text(encoding="utf-8"))
    per_kind: dict[str, dict] = defaultdict(lambda: {"screens": 0, "dismissed": 0, "missed": [], "wrong": []})
    ordinary_firing: list[dict] = []
    rules_used: dict[str, int] = defaultdict(int)
    for entry in screens:
        xml = (corpus / entry["file"]).read_bytes()
        match = registry.match_popup(entry["package"], xml, activity=entry.get("activity"))
        verdict = judge(entry["expect"], match, xml)
        row = per_kind[entry["kind"]]
        row["screens"] += 1
        if match is not None:
            rules_used[f"{match.app_id or '_common'}:{match.rule.id}"] += 1
        if entry["kind"] == "ordinary":
            if match is not None:
                ordinary_firing.append({"file": entry["file"], "rule": match.rule.id})
            continue
        if verdict == "ok":
            row["dismissed"] += 1
        else:
            note = {"file": entry["file"], "package": entry["package"]}
            if match is not None:
                note["rule"] = match.rule.id
                note["action"] = match.action.describe()
            row["missed" if verdict == "missed" else "wrong"].append(note)
    kinds = {}
    for kind, row in sorted(per_kind.items()):
        if kind == "ordinary":
            continue
        share = row["dismissed"] / row["screens"] if row["screens"] else 0.0
        kinds[kind] = {**row, "share": round(share, 3)}
        if kind in GOALS:
            kinds[kind]["goal"] = GOALS[kind]
            kinds[kind]["meets_goal"] = share >= GOALS[kind]
    return {
        "corpus": str(corpus),
        "kinds": kinds,
        "ordinary": {
            "screens": per_kind["ordinary"]["screens"],
            "rules_firing": len(ordinary_firing),
            "firing": ordinary_firing,
            "goal": 0,
        },
        "rules_used": dict(sorted(rules_used.items(), key=lambda kv: -kv[1])),
        "manifests_with_popup_rules": sum(1 for m in registry if m.popups),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    result = measure(args.corpus)
    text = json.dumps(result, ensure_ascii=False, indent=2)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
