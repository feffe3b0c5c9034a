"""Popup coverage on real material, fitted and held out: how many popup screens the rules dismiss without a model call,
and how many ordinary screens they touch.

Two corpora, reported apart:
- fitted: tests/data/real_popups/screens.yaml. Most of its popup trees were rebuilt from the same public rules the
  shipped manifests were written from, so its share says how faithfully the rules were transcribed, not how they do
  on screens nobody wrote a rule from.
- held out: tests/data/real_popups/held_out/sources.yaml. Real view trees (DroidBot states and uiautomator dumps from
  other repositories) that no shipped manifest rule and no rule of the subscriptions measured here was written from,
  labelled by hand. This is the figure to quote for unseen screens. Entries a fix was later written from (they carry
  `fixed_by`) are held out no more: they are reported apart, as `held_out_then_fixed`.

Each corpus is run with the shipped manifests alone and with each subscription added (its categories switched on
with --popup-categories, default splash,update). A popup is dismissed when the rule's tap lands in the labelled box
(`tap_in`) or on the expected point (`tap`), or it presses back where back is expected; a popup with no labelled
dismissal (held-out permission, privacy and other notices) is listed with what acted on it, not scored. Single screens carry no
episode, so matchTime / actionMaximum are not applied (in a run they only take taps away). Prints JSON.

    python bench/popups_real.py [--subscription FILE ...] [--popup-categories splash,update] [--out FILE]
    python bench/popups_real.py --speed FILE [--starts 5]

--speed FILE measures what a subscription costs `run`: in --starts new processes, the start-up work --popup-rules
adds (reading and checking the file, the registry taking it, converting the first app's rules) as the median
difference against the same work without it; and in this process, the time of one popup match per step over every
fitted and held-out screen, with and without it (median and p95). Goals: <= 0.2 s at start-up, < 1 ms per step.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import yaml

from mobile_agent.actions import ActionKind
from mobile_agent.apps.gkd_import import load_subscription
from mobile_agent.apps.registry import AppRegistry, load_registry
from mobile_agent.screen.viewtree import ViewTree

DATA = Path(__file__).parents[1] / "tests" / "data" / "real_popups"
FITTED = DATA / "screens.yaml"
HELD_OUT = DATA / "held_out" / "sources.yaml"
SUBSCRIPTIONS = sorted((DATA / "subscriptions").glob("*.json5"))
GOALS = {"splash": 0.8, "update": 0.8}
NEUTRAL = {"ordinary", "intro"}  # screens where no rule should act


def judge(expect: object, match, xml: bytes) -> str:
    """'ok', 'missed' (nothing fired where something should), 'wrong' (fired, other action) or 'fired' (on none)."""
    if expect == "none":
        return "ok" if match is None else "fired"
    if match is None:
        return "missed"
    if expect == "back":
        return "ok" if match.action.kind is ActionKind.KEY else "wrong"
    if match.action.kind not in (ActionKind.TAP, ActionKind.LONG_PRESS):
        return "wrong"
    p = match.action.point
    if "tap_in" in expect:  # type: ignore[operator]
        left, top, right, bottom = expect["tap_in"]  # type: ignore[index]
        return "ok" if left <= p.x < right and top <= p.y < bottom else "wrong"
    x, y = expect["tap"]  # type: ignore[index]
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


def measure(registry: AppRegistry, corpus: Path, *, fixed: bool | None = None) -> dict:
    """``fixed``: held-out entries a fix was written from (``fixed_by``) only (True), all but those (False)."""
    screens = yaml.safe_load(corpus.read_text(encoding="utf-8"))
    if fixed is not None:
        screens = [e for e in screens if bool(e.get("fixed_by")) is fixed]
    per_kind: dict[str, dict] = defaultdict(lambda: {"screens": 0, "dismissed": 0, "missed": [], "wrong": []})
    touched: list[dict] = []
    rules_used: dict[str, int] = defaultdict(int)
    for entry in screens:
        xml = (corpus.parent / entry["file"]).read_bytes()
        match = registry.match_popup(entry["package"], xml, activity=entry.get("activity"))
        row = per_kind[entry["kind"]]
        row["screens"] += 1
        if match is not None:
            rules_used[f"{match.app_id or 'shared'}:{match.rule.id}"] += 1
        if entry["kind"] in NEUTRAL:
            if match is not None:
                touched.append({"file": entry["file"], "kind": entry["kind"], "rule": match.rule.id})
            continue
        if (
            entry["expect"] == "unlabelled"
        ):  # a popup with no labelled dismissal: what acted is listed, not scored
            row.setdefault("acted", [])
            if match is not None:
                row["acted"].append(
                    {"file": entry["file"], "rule": match.rule.id, "action": match.action.describe()}
                )
            continue
        row["scored"] = row.get("scored", 0) + 1
        verdict = judge(entry["expect"], match, xml)
        if verdict == "ok":
            row["dismissed"] += 1
            continue
        note = {"file": entry["file"], "package": entry["package"]}
        if match is not None:
            note |= {"rule": match.rule.id, "action": match.action.describe()}
        row["missed" if verdict == "missed" else "wrong"].append(note)
    kinds = {}
    for kind, row in sorted(per_kind.items()):
        if kind in NEUTRAL:
            continue
        scored = row.pop("scored", 0)
        if not scored:
            kinds[kind] = {"screens": row["screens"], "acted": row.get("acted", [])}
            continue
        share = row["dismissed"] / scored
        kinds[kind] = {**row, "scored": scored, "share": round(share, 3)}
        if kind in GOALS:
            kinds[kind] |= {"goal": GOALS[kind], "meets_goal": share >= GOALS[kind]}
    for kind in GOALS:
        kinds.setdefault(kind, {"screens": 0, "note": "no real screen of this kind in the corpus"})
    neutral = {k: per_kind[k]["screens"] for k in NEUTRAL if k in per_kind}
    return {
        "kinds": kinds,
        "no_action_expected": {"screens": neutral, "touched": len(touched), "which": touched, "goal": 0},
        "rules_used": dict(sorted(rules_used.items(), key=lambda kv: -kv[1])),
    }


_STARTUP = """
import json, sys, time
t0 = time.perf_counter()
from mobile_agent.cli.popup_rules import use_popup_rules
from mobile_agent.apps.registry import load_registry
paths = sys.argv[1:]
use_popup_rules(paths, "splash,update", quiet=True)
registry = load_registry(None)
xml = open({screen!r}, "rb").read()
registry.match_popup({package!r}, xml)
print(json.dumps(time.perf_counter() - t0))
"""


def startup_cost(path: Path, starts: int) -> dict:
    """Median seconds of the start-up popup work with the file minus without it, each in a new process."""
    screen = FITTED.parent / "screens/update/04_eleme.xml"
    code = _STARTUP.format(screen=str(screen), package="me.ele")
    env = {"MOBILE_AGENT_CACHE": ""}  # no disk cache of the registry either way: the same work in both

    def once(*paths: str) -> float:
        out = subprocess.run(
            [sys.executable, "-c", code, *paths],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, **env},
        )
        return float(out.stdout.strip().splitlines()[-1])

    with_file, without = [], []
    for _ in range(starts):  # interleaved, so drift in the machine's load hits both
        without.append(once())
        with_file.append(once(str(path)))
    return {
        "file": str(path),
        "starts": starts,
        "without_s": [round(v, 4) for v in without],
        "with_s": [round(v, 4) for v in with_file],
        "added_s_median": round(statistics.median(with_file) - statistics.median(without), 4),
        "goal_s": 0.2,
    }


def step_cost(path: Path) -> dict:
    """Milliseconds per popup match on every screen of both corpora, with and without the file: the tree already
    parsed, as in a step; its selector index is built on the first rule tried, as in a step."""
    screens = []
    for corpus in (FITTED, HELD_OUT):
        for entry in yaml.safe_load(corpus.read_text(encoding="utf-8")):
            screens.append(
                (entry["package"], (corpus.parent / entry["file"]).read_bytes(), entry.get("activity"))
            )
    base = load_registry(None)
    with_file = base.with_subscription(load_subscription(path, ["splash", "update"]))
    result = {}
    for name, registry in (("without", base), ("with", with_file)):
        for (
            package,
            xml,
            activity,
        ) in screens:  # warm-up: trees parsed, packages converted, selectors compiled
            registry.match_popup(package, xml, activity=activity)
        times = []
        for package, xml, activity in screens:
            ViewTree.parse(xml)  # the step has parsed its dump already (the parse is shared with the gate)
            t0 = time.perf_counter()
            registry.match_popup(package, xml, activity=activity)
            times.append(time.perf_counter() - t0)
        times.sort()
        result[name] = {
            "median_ms": round(statistics.median(times) * 1000, 3),
            "p95_ms": round(times[int(len(times) * 0.95)] * 1000, 3),
        }
    result |= {"screens": len(screens), "goal_ms": 1.0}
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--subscription", type=Path, action="append", help="default: tests/data/.../subscriptions"
    )
    ap.add_argument("--popup-categories", default="splash,update")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument(
        "--speed", type=Path, default=None, help="measure start-up and per-step cost of this file"
    )
    ap.add_argument("--starts", type=int, default=5)
    args = ap.parse_args(argv)
    if args.speed is not None:
        speed = {"startup": startup_cost(args.speed, args.starts), "per_step": step_cost(args.speed)}
        print(json.dumps(speed, ensure_ascii=False, indent=2))
        return 0
    categories = [c.strip() for c in args.popup_categories.split(",") if c.strip()]
    base = load_registry(None)
    configs: list[tuple[str, AppRegistry, dict]] = [("manifests", base, {})]
    for path in args.subscription or SUBSCRIPTIONS:
        started = time.perf_counter()
        imported = load_subscription(path, categories)
        load_s = time.perf_counter() - started
        info = {
            "file": str(path),
            "version": imported.version,
            "load_s": round(load_s, 4),
            "brief": imported.brief(),
        }
        configs.append((f"manifests+{path.name}", base.with_subscription(imported), info))
    result: dict = {"categories": categories, "fitted": str(FITTED), "held_out": str(HELD_OUT), "configs": {}}
    for name, registry, info in configs:
        result["configs"][name] = {
            **info,
            "fitted": measure(registry, FITTED),
            "held_out": measure(registry, HELD_OUT, fixed=False),
            "held_out_then_fixed": measure(registry, HELD_OUT, fixed=True),
        }
    text = json.dumps(result, ensure_ascii=False, indent=2)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
