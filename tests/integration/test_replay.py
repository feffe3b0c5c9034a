"""Replay through the real stack: an episode recorded by the agent (SimFarm + SimModelServer + run_task) is
replayed on fresh simulated phones over a real adb server and uiautomator2.

Every replayed action passes the same safety gate as `run`: the recordings' consequential taps (send, order, pay)
need the same --allow (or a person's yes) as a run would, and the phone's state proves what was done. Before acting,
the replay compares what it is about to touch with what the recording touched (view trees, not only the hash)."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

import pytest
import typer
from replay_kit import SCENARIO, TASK, Recording, lisi_first, record, replay
from typer.testing import CliRunner

from mobile_agent.actions import ActionKind, Outcome, Size
from mobile_agent.cli.replay import replay_command
from mobile_agent.gate.policy import parse_policy
from mobile_agent.replay.replayer import replay_episode
from mobile_agent.replay.results import DivergencePolicy, ReplayOptions
from mobile_agent.sim.farm import SimFarm
from mobile_agent.sim.scenario import make_scenario
from mobile_agent.sim.state import WorldData
from mobile_agent.store.records import ActionSource, StepRecord
from mobile_agent.store.store import TrajectoryStore


@pytest.fixture(scope="module")
def recording(adb_server, tmp_path_factory) -> Recording:
    folder: Path = tmp_path_factory.mktemp("replay-store")
    recorded = record(adb_server, folder, SCENARIO, TASK, allow=["send@com.tencent.mm"])
    assert recorded.final_state["messages_sent"], "the recorded run itself must have sent the message"
    return recorded


def test_replay_on_a_fresh_phone_reproduces_the_final_state(adb_server, recording: Recording) -> None:
    with SimFarm(1, scenario=SCENARIO, adb_port=adb_server.port) as farm:
        result, episode, steps, source_steps = replay(recording, farm, on_divergence=DivergencePolicy.STOP)
        state = farm.phones[farm.serials[0]].state.as_dict()
    assert result.outcome == Outcome.FINISHED
    assert result.divergences == []
    assert state == recording.final_state
    assert episode.source_episode_id == recording.episode_id
    assert all(s.action_source == ActionSource.REPLAY for s in steps)
    assert [s.action for s in steps] == [s.action for s in source_steps if s.action is not None]
    assert all(s.screenshot_path for s in steps)
    # Each step was compared by its view tree (the recording kept them) and the send went through the gate.
    comparisons = [next(d for d in s.guard_decisions if d["guard"] == "replay") for s in steps]
    assert all(any(sig.startswith("view tree") for sig in d["signals"]) for d in comparisons)
    send = [s for s in steps if s.action and s.action.kind is ActionKind.TAP][-1]
    assert any(d["guard"] == "safety" and d.get("kind") == "send" for d in send.guard_decisions)
    assert all(s.hierarchy_path for s in steps)  # a replay of this replay can compare trees too


def test_replay_maps_coordinates_to_another_resolution(adb_server, recording: Recording) -> None:
    with SimFarm(1, scenario=SCENARIO, adb_port=adb_server.port, width=720, height=1600) as farm:
        result, _, steps, source_steps = replay(recording, farm, on_divergence=DivergencePolicy.STOP)
        state = farm.phones[farm.serials[0]].state.as_dict()
    assert result.outcome == Outcome.FINISHED, result.detail
    assert result.target_screen == Size(720, 1600)
    assert state == recording.final_state
    recorded_taps = [s for s in source_steps if s.action and s.action.kind is ActionKind.TAP]
    replayed_taps = [s for s in steps if s.action and s.action.kind is ActionKind.TAP]
    assert len(replayed_taps) == len(recorded_taps) >= 2
    for old, new in zip(recorded_taps, replayed_taps, strict=True):
        assert new.screen == Size(720, 1600)
        assert new.action.point.x == round(old.action.point.x * 720 / old.screen.width)
        assert new.action.point.y == round(old.action.point.y * 1600 / old.screen.height)


def test_a_splash_ad_the_recording_did_not_have_is_dismissed_and_the_replay_goes_on(
    adb_server, recording: Recording
) -> None:
    """The splash covers the chat list (its frame takes no touch, but a person sees the ad, not 张三's row): the
    step waits, WeChat's popup rule skips the ad, and the replay goes on to the same end."""
    with SimFarm(1, scenario="wechat_send_splash", adb_port=adb_server.port) as farm:
        result, episode, steps, _ = replay(recording, farm, on_divergence=DivergencePolicy.STOP)
        state = farm.phones[farm.serials[0]].state.as_dict()
    assert result.outcome == Outcome.FINISHED, result.detail
    assert result.divergences == []
    assert state["messages_sent"] == recording.final_state["messages_sent"]
    assert state["popups_dismissed"] and state["popups_dismissed"][0]["popup"] == "splash"
    rule_steps = [s for s in steps if s.action_source == ActionSource.RULE]
    assert len(rule_steps) == 1 and rule_steps[0].index == 1  # after the launch, before the tap on 张三
    assert next(d for d in rule_steps[0].guard_decisions if d["guard"] == "replay")["source"] == "rule"
    assert episode.outcome == Outcome.FINISHED


def test_replay_command_dry_run_and_divergence_policy(adb_server, recording: Recording) -> None:
    app = typer.Typer()
    app.command()(replay_command)
    app.command("noop")(lambda: None)  # a second command keeps typer from flattening the app
    with SimFarm(1, scenario=SCENARIO, adb_port=adb_server.port, width=720, height=1600) as farm:
        args = [
            "replay-command",
            recording.episode_id[:8],
            "--device",
            farm.serials[0],
            "--adb",
            f"127.0.0.1:{farm.adb_port}",
            "--db",
            recording.db_url,
        ]
        dry = CliRunner().invoke(app, [*args, "--dry-run"])
        wrong = CliRunner().invoke(app, [*args, "--on-divergence", "panic"])
        state = farm.phones[farm.serials[0]].state.as_dict()
    assert dry.exit_code == 0, dry.output
    assert "720x1600" in dry.output and "nothing was done" in dry.output
    assert state["messages_sent"] == []  # a dry run never acts
    assert wrong.exit_code != 0
    assert "stop, warn or continue" in wrong.exception.hint


# ----- the gate on replayed actions ---------------------------------------------------------------------------
MEITUAN = "com.sankuai.meituan"
ORDER_TASK = "在美团点一份黄焖鸡米饭"
# The kinds a Meituan order takes (提交订单 orders, 确认支付 pays); allowing them is what `--allow` does in a run.
ORDER_AND_PAY = [f"order@{MEITUAN}", f"pay@{MEITUAN}"]


@pytest.fixture(scope="module")
def order_recording(adb_server, tmp_path_factory) -> Recording:
    """A paid Meituan order, recorded with the gate letting Meituan's order and pay through."""
    folder: Path = tmp_path_factory.mktemp("replay-order-store")
    recorded = record(adb_server, folder, "meituan_order", ORDER_TASK, allow=[f"*@{MEITUAN}"])
    assert [o["paid"] for o in recorded.final_state["orders"]] == [True], (
        "the recorded run itself must have paid"
    )
    return recorded


class ScriptedUser:
    """A person at the terminal who gives these answers in turn and remembers each question."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.questions: list[str] = []

    def ask(self, question: str) -> str | None:
        self.questions.append(question)
        return self.answers.pop(0) if self.answers else None


def _replay_order(recording: Recording, farm: SimFarm, **kwargs) -> tuple:
    with TrajectoryStore.open(recording.db_url) as store:
        result = replay_episode(
            store, recording.episode_id, device=farm.serials[0], adb=f"127.0.0.1:{farm.adb_port}", **kwargs
        )
        steps = store.steps(result.episode_id)
    return result, steps, farm.phones[farm.serials[0]].state.as_dict()


def _paid(state: dict) -> list[dict]:
    return [o for o in state["orders"] if o["paid"]]


def _safety(step) -> dict:
    return next(d for d in step.guard_decisions if d["guard"] == "safety")


def test_a_recorded_paid_order_does_not_pay_on_replay_without_a_yes(adb_server, order_recording) -> None:
    with SimFarm(1, scenario="meituan_order", adb_port=adb_server.port) as farm:
        result, steps, state = _replay_order(order_recording, farm)  # default policy ask, nobody to answer
    assert result.outcome == Outcome.NEEDS_USER, result.detail
    assert _paid(state) == [] and state["orders"] == []  # the phone proves it: nothing ordered, nothing paid
    held = steps[-1]
    assert held.action is not None and held.error_text and "not performed" in held.error_text
    assert _safety(held)["verdict"] == "ask" and _safety(held)["kind"] in ("order", "pay")
    assert f"--allow {_safety(held)['kind']}@{MEITUAN}" in result.detail


def test_a_person_answers_each_consequential_replayed_action(adb_server, order_recording) -> None:
    with SimFarm(1, scenario="meituan_order", adb_port=adb_server.port) as farm:
        no = ScriptedUser("no")
        declined, steps, state = _replay_order(order_recording, farm, user=no)
    assert declined.outcome == Outcome.BLOCKED and _paid(state) == [] and state["orders"] == []
    assert len(no.questions) == 1 and "Replaying a recorded action" in no.questions[0]
    assert steps[-1].guard_decisions[-1] == {"guard": "human", "verdict": "block", "reason": "no"}
    with SimFarm(1, scenario="meituan_order", adb_port=adb_server.port) as farm:
        yes = ScriptedUser("yes", "yes", "yes", "yes")
        approved, _, state = _replay_order(order_recording, farm, user=yes)
    assert approved.outcome == Outcome.FINISHED, approved.detail
    assert [o["total"] for o in _paid(state)] == [25.0]
    # One yes lets one action through: the order and the payment were each asked about.
    assert len(yes.questions) >= 2 and "PAY" in yes.questions[-1]


def _cli(*args: str):
    app = typer.Typer()
    app.command()(replay_command)
    app.command("noop")(lambda: None)  # a second command keeps typer from flattening the app
    return CliRunner().invoke(app, ["replay-command", *args])


def _cli_replay(recording: Recording, farm: SimFarm, *extra: str):
    serial = farm.serials[0]
    result = _cli(
        recording.episode_id,
        "-d",
        serial,
        "--adb",
        f"127.0.0.1:{farm.adb_port}",
        "--db",
        recording.db_url,
        *extra,
    )
    return result, farm.phones[serial].state.as_dict()


def test_replay_command_asks_denies_and_allows_like_run(adb_server, order_recording) -> None:
    with SimFarm(1, scenario="meituan_order", adb_port=adb_server.port) as farm:
        held, held_state = _cli_replay(order_recording, farm, "--non-interactive")
    with SimFarm(1, scenario="meituan_order", adb_port=adb_server.port) as farm:
        denied, denied_state = _cli_replay(order_recording, farm, "--deny", "order", "--deny", "pay")
    with SimFarm(1, scenario="meituan_order", adb_port=adb_server.port) as farm:
        allowed_args = [a for kind in ORDER_AND_PAY for a in ("--allow", kind)]
        allowed, allowed_state = _cli_replay(order_recording, farm, "--non-interactive", *allowed_args)
    assert held.exit_code == 1 and "needs_user" in held.output, held.output
    assert _paid(held_state) == [] and held_state["orders"] == []
    assert denied.exit_code == 1 and "blocked" in denied.output, denied.output
    assert _paid(denied_state) == [] and denied_state["orders"] == []
    assert allowed.exit_code == 0, allowed.output
    assert [o["total"] for o in _paid(allowed_state)] == [25.0]


def test_gate_off_control_the_replayed_order_pays(adb_server, order_recording) -> None:
    """The control: with the gate off (policy allow) the same replay does the harm the gate prevents above."""
    with SimFarm(1, scenario="meituan_order", adb_port=adb_server.port) as farm:
        result, _, state = _replay_order(order_recording, farm, safety=parse_policy(["allow"]))
    assert result.outcome == Outcome.FINISHED, result.detail
    assert [o["total"] for o in _paid(state)] == [25.0]


def test_recorded_popup_rule_taps_are_replayed_through_the_gate(adb_server, order_recording) -> None:
    """A recorded step whose source is a popup rule is no permission either: its pay tap asks like any other."""
    with TrajectoryStore.open(order_recording.db_url) as store:
        source = store.episode(order_recording.episode_id)
        copy_id = store.start_episode(
            source.task, device="rules", family=source.family, model=source.model
        ).id
        for step in store.steps(source.id):
            shot, tree = store.screenshot_path(step), store.hierarchy_path(step)
            store.record_step(
                copy_id,
                replace(_as_record(step), action_source=ActionSource.RULE),
                screenshot=shot.read_bytes() if shot else None,
                hierarchy=tree.read_text(encoding="utf-8") if tree else None,
            )
        store.finish_episode(copy_id, source.outcome)
    with SimFarm(1, scenario="meituan_order", adb_port=adb_server.port) as farm:
        rules = Recording(order_recording.db_url, copy_id, order_recording.final_state)
        result, steps, state = _replay_order(rules, farm, safety=parse_policy(allow=[f"order@{MEITUAN}"]))
    assert result.outcome == Outcome.NEEDS_USER, result.detail
    assert _safety(steps[-1])["kind"] == "pay" and _safety(steps[-1])["verdict"] == "ask"
    assert _paid(state) == [] and [o["paid"] for o in state["orders"]] == [False]


def _as_record(step) -> StepRecord:
    return StepRecord(**{f.name: getattr(step, f.name) for f in fields(StepRecord)})


# ----- what the replay is about to touch ----------------------------------------------------------------------
def _dearer_dish(price: float) -> object:
    """Meituan with 黄焖鸡米饭(大份) at ``price`` instead of ¥22, so the cashier asks ¥(price + 3 delivery)."""
    shops = [
        {
            "name": shop.name,
            "dishes": [
                {"name": d.name, "price": price if d.name == "黄焖鸡米饭(大份)" else d.price}
                for d in shop.dishes
            ],
            "rating": shop.rating,
            "monthly_sales": shop.monthly_sales,
            "keywords": shop.keywords,
            "delivery_fee": shop.delivery_fee,
        }
        for shop in WorldData().shops
    ]
    return make_scenario(name="meituan_dearer", task=ORDER_TASK, seed={"shops": shops})


def test_another_contact_under_the_finger_stops_before_touching_it(adb_server, recording: Recording) -> None:
    with SimFarm(1, scenario=SCENARIO, adb_port=adb_server.port) as farm:
        farm.phones[farm.serials[0]].apply_scenario(lisi_first())
        result, episode, steps, _ = replay(recording, farm)  # default: stop; send is allowed by the policy
        state = farm.phones[farm.serials[0]].state.as_dict()
    assert result.outcome == Outcome.error("divergence") and episode.outcome == Outcome.error("divergence")
    assert state["messages_sent"] == []
    stopped = result.divergences[0]
    assert stopped.index == 1 and stopped.performed is False
    assert stopped.screen_matches, "the screen hash alone does not see another name in the same row"
    assert any("张三" in d and "李四" in d for d in stopped.differences), stopped.differences
    recorded = steps[-1]
    assert recorded.action is None and recorded.error_kind == "divergence"
    decision = next(d for d in recorded.guard_decisions if d["guard"] == "replay")
    assert decision["verdict"] == "block" and "李四" in decision["reason"]


def test_warn_records_the_divergence_and_acts_anyway(adb_server, recording: Recording) -> None:
    """The control for the stop above: under warn the replay goes on and the message goes to 李四."""
    with SimFarm(1, scenario=SCENARIO, adb_port=adb_server.port) as farm:
        farm.phones[farm.serials[0]].apply_scenario(lisi_first())
        result, _, steps, _ = replay(recording, farm, on_divergence=DivergencePolicy.WARN)
        state = farm.phones[farm.serials[0]].state.as_dict()
    assert [m["contact"] for m in state["messages_sent"]] == ["李四"]
    assert [d.index for d in result.divergences][:1] == [1] and result.divergences[0].performed
    flagged = next(d for d in steps[1].guard_decisions if d["guard"] == "replay")
    assert flagged["verdict"] == "hint" and flagged["kind"] == "divergence"


def test_another_amount_stops_before_ordering_even_when_paying_is_allowed(
    adb_server, order_recording
) -> None:
    allowed = parse_policy(allow=ORDER_AND_PAY)
    with SimFarm(1, scenario="meituan_order", adb_port=adb_server.port) as farm:
        farm.phones[farm.serials[0]].apply_scenario(_dearer_dish(88.0))
        result, steps, state = _replay_order(order_recording, farm, safety=allowed)
    assert result.outcome == Outcome.error("divergence"), result.detail
    assert state["orders"] == []  # stopped before 提交订单: nothing ordered, nothing paid
    stopped = result.divergences[0]
    assert stopped.screen_matches, "the screen hash alone does not see another price"
    # The first place the price shows (the shop's row in the search results) already differs: stop there.
    assert any("¥22" in d and "¥88" in d for d in stopped.differences), stopped.differences
    assert "¥88" in steps[-1].guard_decisions[0]["reason"] and steps[-1].error_kind == "divergence"
    with SimFarm(1, scenario="meituan_order", adb_port=adb_server.port) as farm:
        farm.phones[farm.serials[0]].apply_scenario(_dearer_dish(88.0))
        control, _, state = _replay_order(
            order_recording,
            farm,
            safety=allowed,
            options=ReplayOptions(on_divergence=DivergencePolicy.CONTINUE),
        )
    assert [o["total"] for o in _paid(state)] == [91.0]  # the control: without the stop, ¥91 is paid
    # Where money moves (提交订单, 确认支付) every amount on the screen was compared, and the ¥91 was seen.
    seen = [d for step in control.divergences for d in step.differences]
    assert any("¥25.00" in d and "¥91.00" in d for d in seen), seen


def test_a_recording_without_view_trees_falls_back_to_hash_and_says_so(
    adb_server, recording: Recording
) -> None:
    with TrajectoryStore.open(recording.db_url) as store:
        source = store.episode(recording.episode_id)
        bare = store.start_episode(source.task, device="bare", family=source.family, model=source.model).id
        for step in store.steps(source.id):
            shot = store.screenshot_path(step)
            store.record_step(bare, _as_record(step), screenshot=shot.read_bytes() if shot else None)
        store.finish_episode(bare, source.outcome)
    with SimFarm(1, scenario=SCENARIO, adb_port=adb_server.port) as farm:
        result, _, steps, _ = replay(Recording(recording.db_url, bare, recording.final_state), farm)
        state = farm.phones[farm.serials[0]].state.as_dict()
    assert result.outcome == Outcome.FINISHED, result.detail
    assert state["messages_sent"] == recording.final_state["messages_sent"]
    signals = [
        sig for s in steps for d in s.guard_decisions if d["guard"] == "replay" for sig in d["signals"]
    ]
    assert signals and all("no view tree" in sig for sig in signals)
