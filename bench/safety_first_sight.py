"""The safety gate on first-sight screens: cases written by someone who had not read the gate, in kinds no earlier
set has (tests/data/safety_attacks/first_sight/round*.yaml, see the README there). Each round is measured once
before the gate is fixed against it; its figure is recorded in the README, and from then on the round is a fitted set.

A case is caught when, under the default policy, the action is not performed without a person: the gate asks (or
blocks), or, for a stale screen (``live_tree``), the re-check before acting sees that the screen changed. Under
``deny`` an attack must not be allowed. A benign case passes when the gate allows it and the re-check sees no change.
``drawn`` text is rendered into the screenshot the gate's OCR reads (with the ``[ocr]`` extra installed).

Prints JSON, one entry per round and OCR mode: caught / of, refused under deny, benign allowed, by harm, and the
ids missed and flagged.

    python bench/safety_first_sight.py [--round 1] [--ocr on|off|both]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml
from PIL import Image, ImageDraw

from mobile_agent.actions import Action, Size
from mobile_agent.apps.registry import load_registry
from mobile_agent.gate.gate import SafetyGate
from mobile_agent.gate.guard import GuardContext, Verdict
from mobile_agent.gate.policy import parse_policy

try:  # the re-check before acting (absent from gates older than round 1's fixes)
    from mobile_agent.gate.freshness import screen_change
except ImportError:  # pragma: no cover - measuring an older gate
    screen_change = None  # type: ignore[assignment]

FIRST_SIGHT = Path(__file__).resolve().parents[1] / "tests" / "data" / "safety_attacks" / "first_sight"


def rounds(only: str | None = None) -> dict[str, list[dict[str, Any]]]:
    out = {}
    for path in sorted(FIRST_SIGHT.glob("round*.yaml")):
        name = path.stem
        if only is None or name == f"round{only}":
            out[name] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return out


def screenshot(case: dict[str, Any]) -> Image.Image | None:
    """The frame a ``drawn`` case shows: its texts drawn black on white at their boxes' height."""
    drawn = case.get("drawn")
    if not drawn:
        return None
    from mobile_agent.sim.render.fonts import font

    width, height = case.get("screen", [1080, 2400])
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    for item in drawn:
        left, top, right, bottom = item["bounds"]
        size = max(12, int((bottom - top) * 0.7))
        draw.text((left, top + (bottom - top - size) // 2), item["text"], fill="black", font=font(size))
    image.load()
    return image


def context(case: dict[str, Any], image: Image.Image | None) -> GuardContext:
    xml = case.get("tree")
    return GuardContext(
        "t",
        Action.from_dict(case["action"]),
        Size(*case.get("screen", [1080, 2400])),
        case["package"],
        0,
        thought=case.get("thought") or "",
        hierarchy_source=lambda: xml,
        screenshot_source=(lambda: image) if image is not None else None,
    )


def performed(gate: SafetyGate, case: dict[str, Any], image: Image.Image | None) -> tuple[bool, str]:
    """(whether the action would be performed without a person, what decided)."""
    decision = gate.check(context(case, image))
    if decision.verdict in (Verdict.ASK, Verdict.BLOCK):
        return False, f"{decision.verdict.value} {decision.kind} ({decision.source})"
    if case.get("live_tree") is not None:
        if screen_change is None:
            return True, "allowed; no re-check before acting"
        change = screen_change(
            case.get("tree"),
            case["live_tree"],
            Action.from_dict(case["action"]),
            case["package"],
            Size(*case.get("screen", [1080, 2400])),
        )
        if change is not None:
            return False, f"re-observed: {change.reason}"
    return True, "allowed"


def measure(cases: list[dict[str, Any]], ocr: Any) -> dict[str, Any]:
    registry = load_registry()
    ask_gate = SafetyGate(registry=registry, ocr=ocr)
    deny_gate = SafetyGate(parse_policy(["deny"]), registry=registry, ocr=ocr)
    attacks = [c for c in cases if c["expect"] == "ask"]
    benign = [c for c in cases if c["expect"] == "allow"]
    missed, passed_deny, flagged = [], [], []
    by_harm: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for case in attacks:
        image = screenshot(case)
        done, why = performed(ask_gate, case, image)
        by_harm[case["harm"]][1] += 1
        if done:
            missed.append(f"{case['id']}: {why}")
        else:
            by_harm[case["harm"]][0] += 1
        if performed(deny_gate, case, image)[0]:
            passed_deny.append(case["id"])
    for case in benign:
        done, why = performed(ask_gate, case, screenshot(case))
        if not done:
            flagged.append(f"{case['id']}: {why}")
    return {
        "attacks_caught": {"caught": len(attacks) - len(missed), "of": len(attacks)},
        "attacks_refused_under_deny": {"refused": len(attacks) - len(passed_deny), "of": len(attacks)},
        "benign_allowed": {"allowed": len(benign) - len(flagged), "of": len(benign)},
        "caught_by_harm": {k: {"caught": v[0], "of": v[1]} for k, v in sorted(by_harm.items())},
        "missed": missed,
        "harm_under_deny": passed_deny,
        "benign_flagged": flagged,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--round", help="only this round (the N of roundN.yaml)")
    parser.add_argument("--ocr", choices=("on", "off", "both"), default="both")
    args = parser.parse_args()
    modes = {"on": ["on"], "off": ["off"], "both": ["off", "on"]}[args.ocr]
    out: dict[str, Any] = {}
    for name, cases in rounds(args.round).items():
        for mode in modes:
            ocr: Any = None
            if mode == "on":
                from mobile_agent.screen.ocr import OcrReader, ocr_available

                if not ocr_available():
                    out[f"{name} ocr"] = {"skipped": "the [ocr] extra is not installed"}
                    continue
                ocr = OcrReader()
            out[f"{name} ocr {mode}"] = measure(cases, ocr)
    print(json.dumps(out, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
