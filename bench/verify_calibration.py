"""Calibration of judge models against ground truth, printed as JSON.

Episodes are made on simulated phones from the shipped model scripts (mobile_agent/sim/scripts): each script in
full, and cut after every turn with a premature "finish" — the agent claiming success halfway, which is what coarse
verification lets through. The truth of each episode comes from the phone's state (task checks with completion
points, see POINTS; else the scenario's own check lines). Every judge then judges every episode, and the bench
prints each judge's confusion matrix (truth -> judged), the majority vote's, and how many partial episodes each
counted as complete.

    python bench/verify_calibration.py                          # three scripted judges (see below)
    python bench/verify_calibration.py --judge http://gpu1:8000/v1 --judge-model qwen3-vl-8b [--judge ...]

The scripted judges only exercise the pipeline and show the failure it guards against: "oracle" is told the truth,
"trusting" says complete whenever the agent said it finished, "lenient" is told the truth but calls partial
complete. Real calibration needs real judges (--judge).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from mobile_agent.actions import Action, ActionKind, Outcome
from mobile_agent.model.client import ModelClient
from mobile_agent.sim.phone.phone import Phone
from mobile_agent.sim.scenario import load_scenario, phone_state
from mobile_agent.sim.servers.judge_server import JudgeScript, ScriptedJudgeServer
from mobile_agent.sim.servers.model_server import SHIPPED_SCRIPTS, Script, load_scripts
from mobile_agent.store.records import StepRecord
from mobile_agent.store.store import TrajectoryStore
from mobile_agent.verify.checks import TaskCheck, run_checks
from mobile_agent.verify.judges import Judge
from mobile_agent.verify.service import judge_episode
from mobile_agent.verify.verdict import Verdict, vote

# Completion points for tasks whose scenario checks only look at the end result.
POINTS = {
    "wechat_send": [
        {"name": "chat with 张三 opened", "state": ["typed contains {screen: chat}"]},
        {"name": "text 晚上好 typed", "state": ["typed contains {text: ~晚上好}"]},
        {"name": "message sent", "state": ["messages_sent contains {contact: 张三, text: 晚上好}"]},
    ],
    "meituan_order": [
        {"name": "searched 黄焖鸡米饭", "state": ["typed contains {text: ~黄焖鸡}"]},
        {"name": "order submitted", "state": ["orders contains {shop: ~黄焖鸡}"]},
        {"name": "order paid", "state": ["orders contains {shop: ~黄焖鸡, paid: true}"]},
    ],
}


@dataclass(frozen=True)
class Case:
    episode_id: str
    scenario: str
    turns_done: int
    truth: Verdict


def perform(phone: Phone, action: Action) -> None:
    width, height = phone.window_size()

    def px(point):
        return round(point.x * width / 1000), round(point.y * height / 1000)

    kind = action.kind
    if kind is ActionKind.LAUNCH:
        phone.launch(phone.package_for_name(action.app) or action.app)
    elif kind in (ActionKind.TAP, ActionKind.DOUBLE_TAP):
        phone.tap(*px(action.point))
    elif kind is ActionKind.LONG_PRESS:
        phone.long_press(*px(action.point), action.duration_ms or 800)
    elif kind in (ActionKind.SWIPE, ActionKind.DRAG):
        phone.swipe(*px(action.point), *px(action.end), action.duration_ms or 300)
    elif kind is ActionKind.TYPE:
        phone.input_text(action.text or "")
    elif kind is ActionKind.KEY:
        phone.key(action.key.value)


def make_case(store: TrajectoryStore, script: Script, cut: int) -> Case:
    """Play the first ``cut`` turns of a script on a fresh phone, then claim success; record every step."""
    scenario = load_scenario(script.scenario)
    phone = Phone(scenario=scenario)
    actions = [t.action for t in script.turns if t.action is not None and not t.action.is_terminal][:cut]
    episode = store.start_episode(script.task, device="sim", family="scripted", model="script")
    for index, action in enumerate([*actions, Action.finish("done")]):
        shot = phone.screenshot("jpeg")
        store.record_step(episode.id, StepRecord(index=index, action=action), screenshot=shot)
        perform(phone, action)
    store.finish_episode(episode.id, Outcome.FINISHED, answer="done")
    check = TaskCheck.parse({"points": POINTS[scenario.name]}) if scenario.name in POINTS else None
    check = check or TaskCheck.from_scenario(scenario)
    package, activity = phone.current()
    truth = run_checks(
        check,
        final_hierarchy=phone.hierarchy_xml(),
        final_package=package,
        final_activity=activity,
        phone_state=phone_state(phone),
    ).verdict
    return Case(episode.id, scenario.name, len(actions), truth or Verdict.FAILED)


def confusion(pairs: list[tuple[Verdict, Verdict | None]]) -> dict:
    matrix: dict[str, Counter] = defaultdict(Counter)
    for truth, judged in pairs:
        matrix[truth.value][judged.value if judged else "no_answer"] += 1
    right = sum(1 for truth, judged in pairs if truth is judged)
    partial_as_complete = sum(1 for t, j in pairs if t is Verdict.PARTIAL and j is Verdict.COMPLETE)
    claimed = sum(1 for _, j in pairs if j is Verdict.COMPLETE)
    return {
        "confusion": {truth: dict(row) for truth, row in sorted(matrix.items())},
        "accuracy": round(right / len(pairs), 3) if pairs else None,
        "partial_counted_complete": partial_as_complete,
        "success_rate_claimed": round(claimed / len(pairs), 3) if pairs else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--judge", action="append", default=[], help="OpenAI-compatible judge base URL (repeat)"
    )
    parser.add_argument(
        "--judge-model", action="append", default=[], help="model per --judge (or one for all)"
    )
    parser.add_argument("--max-cases", type=int, default=0, help="stop after this many episodes (0: all)")
    args = parser.parse_args(argv)

    started = time.monotonic()
    scripts = [
        s for s in load_scripts(SHIPPED_SCRIPTS) if s.scenario and not load_scenario(s.scenario).popups
    ]
    servers: list[ScriptedJudgeServer] = []
    with (
        tempfile.TemporaryDirectory(prefix="verify-calibration-") as tmp,
        TrajectoryStore.open(f"sqlite:///{tmp}/store.db", root=Path(tmp)) as store,
    ):
        cases: list[Case] = []
        for script in scripts:
            steps = len([t for t in script.turns if t.action is not None and not t.action.is_terminal])
            for cut in range(1, steps + 1):
                if args.max_cases and len(cases) >= args.max_cases:
                    break
                cases.append(make_case(store, script, cut))
        made_s = time.monotonic() - started
        truth_of = {c.episode_id: c.truth.value for c in cases}
        if args.judge:
            models = args.judge_model or ["default"]
            clients = [
                ModelClient([url], models[i] if len(models) == len(args.judge) else models[0], max_retries=2)
                for i, url in enumerate(args.judge)
            ]
            kinds = {client.endpoints[0]: "real" for client in clients}
        else:
            lenient = {k: ("complete" if v == "partial" else v) for k, v in truth_of.items()}
            scripts_by_name = {
                "oracle": JudgeScript(verdicts=dict(truth_of)),
                "trusting": JudgeScript(trust_agent=True),
                "lenient": JudgeScript(verdicts=lenient),
            }
            servers = [ScriptedJudgeServer(s, model=name).start() for name, s in scripts_by_name.items()]
            clients = [ModelClient([s.base_url], s.model, max_retries=0) for s in servers]
            kinds = {c.endpoints[0]: f"scripted-{c.model}" for c in clients}
        try:
            judges = [Judge(client, name=f"{client.model}@{client.endpoints[0]}") for client in clients]
            per_judge: dict[str, list[tuple[Verdict, Verdict | None]]] = defaultdict(list)
            voted: list[tuple[Verdict, Verdict | None]] = []
            for case in cases:
                votes = {v.judge: v for v in judge_episode(store, case.episode_id, judges)}
                for judge in judges:
                    answer = votes.get(judge.name)
                    per_judge[judge.name].append((case.truth, answer.verdict if answer else None))
                voted.append((case.truth, vote(list(votes.values())).verdict if votes else None))
        finally:
            for client in clients:
                client.close()
            for server in servers:
                server.close()
    truth_counts = Counter(c.truth.value for c in cases)
    report = {
        "cases": len(cases),
        "scenarios": sorted({c.scenario for c in cases}),
        "truth": dict(truth_counts),
        "true_success_rate": round(truth_counts.get("complete", 0) / len(cases), 3) if cases else None,
        "agent_claimed_success_rate": 1.0,
        "judges": {
            judge.name: {"kind": kinds[judge.client.endpoints[0]], **confusion(per_judge[judge.name])}
            for judge in judges
        },
        "majority_vote": confusion(voted),
        "seconds": {"make_episodes": round(made_s, 2), "total": round(time.monotonic() - started, 2)},
    }
    json.dump(report, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
