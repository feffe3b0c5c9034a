from mobile_agent.actions import Action, Size
from mobile_agent.gate.guard import GuardContext, ValidityGuard, Verdict, run_guards


def ctx(action):
    return GuardContext("task", action, Size(1080, 2400), "com.tencent.mm", 0)


def test_on_screen_tap_is_allowed():
    assert ValidityGuard().check(ctx(Action.tap(0, 2399))).verdict is Verdict.ALLOW


def test_off_screen_points_are_blocked():
    for action in (Action.tap(1080, 10), Action.tap(-1, 5), Action.swipe(10, 10, 10, 2400)):
        assert ValidityGuard().check(ctx(action)).verdict is Verdict.BLOCK


def test_a_swipe_that_does_not_move_is_blocked():
    assert ValidityGuard().check(ctx(Action.swipe(5, 5, 5, 5))).verdict is Verdict.BLOCK


def test_non_spatial_actions_pass():
    for action in (Action.type("x"), Action.press("back"), Action.launch("微信"), Action.finish()):
        assert ValidityGuard().check(ctx(action)).verdict is Verdict.ALLOW


class _Blocker:
    name = "blocker"

    def check(self, c):
        from mobile_agent.gate.guard import Decision

        return Decision(self.name, Verdict.BLOCK, "no")


class _Counter:
    name = "counter"
    calls = 0

    def check(self, c):
        from mobile_agent.gate.guard import Decision

        _Counter.calls += 1
        return Decision(self.name, Verdict.ALLOW)


def test_a_block_stops_the_chain():
    decisions = run_guards([_Blocker(), _Counter()], ctx(Action.tap(1, 1)))
    assert [d.guard for d in decisions] == ["blocker"]
    assert _Counter.calls == 0
