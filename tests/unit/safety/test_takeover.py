from datetime import timedelta

import pytest

from mobile_agent.actions import Action, Outcome
from mobile_agent.agent.takeover import approval_from_reply, detect_wall, pause_kind_for_call
from mobile_agent.errors import UserError
from mobile_agent.store.convert import now_utc
from mobile_agent.store.pauses import (
    PauseRecord,
    create_pause,
    is_reserved,
    mark_resumed,
    open_pause,
    reopen_episode,
    reserved_devices,
    stage_screenshot,
)
from mobile_agent.store.records import StepRecord
from mobile_agent.store.store import TrajectoryStore


def xml(*labels, password=False):
    nodes = "".join(
        f'<node text="{t}" class="android.widget.TextView" content-desc="" resource-id="" package="p" '
        f'password="{str(password).lower()}" clickable="true" bounds="[0,{i * 100}][1080,{i * 100 + 90}]"/>'
        for i, t in enumerate(labels)
    )
    return f'<hierarchy rotation="0"><node text="" class="F" bounds="[0,0][1080,2400]">{nodes}</node></hierarchy>'


def test_walls():
    assert detect_wall(xml("请完成安全验证", "向右拖动滑块填充拼图"), "p").kind == "captcha"
    assert detect_wall(xml("登录美团", "一键登录", "其他手机号登录"), "p").kind == "login"
    assert detect_wall(xml("手机号", "登录"), "p", None) is None  # a bare 登录 button without a login context
    assert detect_wall(xml("手机号", "登录", password=True), "p").kind == "login"
    assert detect_wall(xml("张三", "李四"), "p") is None


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("yes", True),
        (" Y ", True),
        ("确认", True),
        ("no", False),
        ("拒绝", False),
        ("maybe", None),
        (None, None),
    ],
)
def test_approval_words(reply, value):
    assert approval_from_reply(reply) is value


def test_call_kinds():
    assert pause_kind_for_call("请帮我完成滑块验证") == "captcha"
    assert pause_kind_for_call("需要登录账号") == "login"
    assert pause_kind_for_call("要发给谁？") == "call_user"


@pytest.fixture
def store(tmp_path):
    with TrajectoryStore.open(root=tmp_path) as s:
        yield s


def test_pause_reserve_reopen_and_resume(store):
    ep = store.start_episode("t", device="sim-1", family="f", model="m")
    store.record_step(ep.id, StepRecord(index=0, action=Action.tap(1, 1)))
    pause = create_pause(
        store,
        PauseRecord(
            ep.id,
            0,
            "confirm",
            "pay?",
            "sim-1",
            60,
            adb_server="127.0.0.1:1",
            pending_action=Action.tap(1, 1),
            screen_hash=2**200 + 5,
        ),
    )
    assert open_pause(store, ep.id).pending_action == Action.tap(1, 1)
    assert open_pause(store, ep.id).screen_hash == 2**200 + 5
    assert is_reserved(store, "sim-1").id == pause.id and is_reserved(store, "sim-2") is None
    assert reserved_devices(store, now_utc() + timedelta(seconds=120)) == []  # the reservation lapses
    with pytest.raises(UserError):
        reopen_episode(store, ep.id)  # still running: not paused
    store.finish_episode(ep.id, Outcome.NEEDS_USER)
    reopen_episode(store, ep.id)
    assert store.episode(ep.id).is_running
    mark_resumed(store, pause.id, "yes")
    assert open_pause(store, ep.id) is None and reserved_devices(store) == []
    with pytest.raises(UserError):
        mark_resumed(store, pause.id, "again")


def test_staged_screenshot_is_the_steps_own_file(store):
    ep = store.start_episode("t", device="d", family="f", model="m")
    jpeg = b"\xff\xd8\xff" + b"0" * 100
    path = stage_screenshot(store, ep.id, 0, jpeg)
    info = store.record_step(ep.id, StepRecord(index=0), screenshot=jpeg)
    assert store.screenshot_path(info) == path and store.check_integrity() == []
