"""Episodes that end partially, run through the real stack (adb server + simulated phone + u2 + simulated model),
get ``partial`` from their task checks and are not counted as successes.
"""

from __future__ import annotations

import pytest

from mobile_agent.actions import Action
from mobile_agent.agent.runtime import run_task
from mobile_agent.device.android import AndroidDevice
from mobile_agent.sim.farm import SimFarm
from mobile_agent.sim.scenario import load_scenario, phone_state
from mobile_agent.sim.servers.model_server import Script, SimModelServer, Turn
from mobile_agent.store.store import TrajectoryStore
from mobile_agent.verify.checks import TaskCheck
from mobile_agent.verify.service import episode_verdict, run_and_record_checks
from mobile_agent.verify.verdict import Verdict, summarize

WECHAT_TASK = "给张三发微信说晚上好"
MEITUAN_TASK = "在美团点一份黄焖鸡米饭"
PARTIAL_TASK = "给张三和李四分别发微信说明天开会"

WECHAT_TURNS = [
    Action.launch("微信"),
    Action.tap(481, 122),  # the chat with 张三
    Action.tap(454, 949),  # the input field
    Action.type("晚上好"),
]
SEND = Action.tap(894, 949)
MEITUAN_TO_CHECKOUT = [
    Action.launch("美团"),
    Action.tap(500, 113),
    Action.type("黄焖鸡米饭"),
    Action.tap(903, 69),
    Action.tap(500, 171),
    Action.tap(926, 380),  # 黄焖鸡米饭(大份) into the cart
    Action.tap(861, 949),  # 去结算: the order page, never submitted
]

WECHAT_CHECK = TaskCheck.parse(
    {
        "points": [
            {"name": "chat with 张三 opened", "screen_text": ["张三"], "state": ["screen == chat"]},
            {"name": "text 晚上好 typed", "state": ["typed contains {text: ~晚上好}"]},
            {"name": "message sent", "state": ["messages_sent contains {contact: 张三, text: 晚上好}"]},
        ]
    }
)
MEITUAN_CHECK = TaskCheck.parse(
    {
        "points": [
            {"name": "a 黄焖鸡 shop opened", "screen_text": ["杨铭宇黄焖鸡米饭"]},
            {"name": "黄焖鸡米饭 in the cart", "screen_text": ["黄焖鸡米饭(大份)"]},
            {"name": "order placed and paid", "state": ["orders contains {shop: ~黄焖鸡, paid: true}"]},
        ]
    }
)


def _script(task: str, actions: list[Action]) -> Script:
    turns = tuple(Turn(action=a, think=f"step {i}") for i, a in enumerate(actions))
    return Script(task=task, turns=turns + (Turn(action=Action.finish("done")),))


class Yes:
    def ask(self, question: str) -> str:
        return "yes"  # a single key declines: a person types the word


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    scripts = [
        _script(WECHAT_TASK, WECHAT_TURNS),
        _script("给张三发微信说晚上好，一定要发出去", [*WECHAT_TURNS, SEND]),
        _script(MEITUAN_TASK, MEITUAN_TO_CHECKOUT),
    ]
    shipped_partial = SimModelServer().scripts
    scripts += [s for s in shipped_partial if s.task == PARTIAL_TASK]
    root = tmp_path_factory.mktemp("verify-store")
    with (
        SimFarm(1, scenario="wechat_send") as farm,
        SimModelServer(family="ui-venus-2", scripts=scripts, model_name="sim") as model,
        TrajectoryStore.open(f"sqlite:///{root}/store.db", root=root) as store,
    ):
        yield farm, model, store


def _run(stack, scenario: str, task: str, check: TaskCheck, user=None):
    farm, model, store = stack
    serial = farm.serials[0]
    phone = farm.phones[serial]
    phone.apply_scenario(load_scenario(scenario))
    adb = f"127.0.0.1:{farm.adb_port}"
    result = run_task(
        task, device=serial, adb=adb, base_url=model.base_url, model="sim", store=store, user=user
    )
    device = AndroidDevice(serial, adb=adb)
    package, activity = device.foreground()
    checked = run_and_record_checks(
        store,
        result.episode_id,
        check,
        final_hierarchy=device.hierarchy(),
        final_package=package,
        final_activity=activity,
        phone_state=phone_state(phone),
    )
    return result, checked, episode_verdict(store, result.episode_id)


def test_message_typed_not_sent_is_partial(stack):
    result, checked, final = _run(stack, "wechat_send", WECHAT_TASK, WECHAT_CHECK)
    assert result.outcome == "finished"  # the agent claims it is done ...
    assert [(p.description, p.met) for p in checked.points] == [
        ("chat with 张三 opened", True),
        ("text 晚上好 typed", True),
        ("message sent", False),
    ]
    assert final.verdict is Verdict.PARTIAL and not final.is_success  # ... verification says otherwise
    assert final.source == "check"


def test_item_in_cart_order_not_placed_is_partial(stack):
    result, checked, final = _run(stack, "meituan_order", MEITUAN_TASK, MEITUAN_CHECK)
    assert result.outcome == "finished"
    assert [p.met for p in checked.points] == [True, True, False]
    assert final.verdict is Verdict.PARTIAL


def test_shipped_partial_scenario_is_partial_from_its_own_check_lines(stack):
    scenario = load_scenario("wechat_partial")
    result, checked, final = _run(
        stack, "wechat_partial", PARTIAL_TASK, TaskCheck.from_scenario(scenario), user=Yes()
    )
    assert [p.met for p in checked.points] == [True, False]
    assert final.verdict is Verdict.PARTIAL


def test_sent_message_is_complete_and_the_batch_counts_complete_only(stack):
    result, checked, final = _run(
        stack, "wechat_send", "给张三发微信说晚上好，一定要发出去", WECHAT_CHECK, user=Yes()
    )
    assert final.verdict is Verdict.COMPLETE, checked.reasons
    _, _, store = stack
    verdicts = [episode_verdict(store, e.id) for e in store.list_episodes(limit=None)]
    summary = summarize(verdicts)
    assert summary.successes == 1 and summary.counts.get("partial", 0) == 3
