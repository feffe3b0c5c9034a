"""The console's live phone page in headless Chromium, against a simulated phone through the real adb server and
the uiautomator2 server: frames arrive on the page; a tap made on the page (after taking control) opens the app
under it on the phone (the phone's own state proves it) and the page shows the new screen; Chinese text typed on
the page reaches the focused field; a second viewer watches but its input and its take-over are refused; a request
without the token is refused; every action is in the store as a ``human`` step with who held control; and with
every page closed the console takes no more frames from the phone.

Skips (with the reason) when Debian's chromium or the playwright package is missing; no browser is downloaded.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from mobile_agent.console.app import BackgroundConsole
from mobile_agent.store import phones as phone_db
from mobile_agent.store.records import ActionSource
from mobile_agent.store.store import TrajectoryStore
from tests.integration.chromium import CHROMIUM, CHROMIUM_ARGS, sync_api, wait_until

pytestmark = pytest.mark.slow

SETTINGS = "com.android.settings"
GREETING = "你好，晚上好"


def bounds_of(phone, text: str) -> tuple[int, int, int, int]:
    found = re.search(
        rf'text="{re.escape(text)}"[^>]*bounds="\[(\d+),(\d+)\]\[(\d+),(\d+)\]"', phone.hierarchy_xml()
    )
    assert found, f"no {text!r} on the screen"
    x1, y1, x2, y2 = map(int, found.groups())
    return x1, y1, x2, y2


def tap_on_page(page, phone, x: int, y: int) -> None:
    box = page.locator("#screen").bounding_box()
    width, height = phone.window_size()
    page.mouse.click(box["x"] + box["width"] * x / width, box["y"] + box["height"] * y / height)


def post(page, path: str, data: dict) -> dict:
    """A request from the page's own script context (its cookie, its CSRF token, its viewer id)."""
    return page.evaluate(
        """async ([path, data]) => {
            const root = document.getElementById('live-phone');
            const r = await fetch(path, {method: 'POST', credentials: 'same-origin',
                headers: {'Content-Type': 'application/json', 'X-CSRF-Token': root.dataset.csrf},
                body: JSON.stringify({...data, phone: root.dataset.phone, viewer: root.dataset.viewer})});
            return {status: r.status, body: await r.text()};
        }""",
        [path, data],
    )


def frame_count(page) -> int:
    return page.evaluate("() => window.__liveFrames.length")


def test_live_page_control_and_refusals(sim_farm, tmp_path: Path) -> None:
    farm = sim_farm(1)
    serial = farm.serials[0]
    phone = farm.phones[serial]
    adb = f"127.0.0.1:{farm.adb_port}"
    key = f"{adb}/{serial}"
    with (
        TrajectoryStore.open(f"sqlite:///{tmp_path / 'live.db'}") as store,
        BackgroundConsole(store, user="tester") as console,
        sync_api.sync_playwright() as playwright,
    ):
        phone_db.record_device_result(store, key, serial, adb, ok=True)  # the farm knows the phone
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            anonymous = browser.new_context()
            assert anonymous.request.get(f"{console.base}/live?phone={key}").status == 401
            assert anonymous.request.get(f"{console.base}/live/stream?phone={key}&viewer=x").status == 401
            refused = anonymous.request.post(
                f"{console.base}/live/input", data={"phone": key, "viewer": "x", "kind": "key", "key": "home"}
            )
            assert refused.status == 401
            anonymous.close()

            first = browser.new_context(viewport={"width": 1200, "height": 1000}).new_page()
            first.goto(console.url)
            first.goto(f"{console.base}/phones")
            first.locator("a.live-link").first.click()
            first.wait_for_function("() => window.__liveFrames && window.__liveFrames.length >= 2")
            assert first.locator("#control-state").get_attribute("data-control") == "none"
            # watching gives no input: refused before control is taken
            assert post(first, "/live/input", {"kind": "key", "key": "home"})["status"] == 403

            first.locator("#take").click()
            first.wait_for_function(
                "() => document.querySelector('#control-state').dataset.control === 'you'"
            )

            second = browser.new_context(viewport={"width": 1200, "height": 1000}).new_page()
            second.goto(console.url)
            second.goto(f"{console.base}/live?phone={key}")
            second.wait_for_function(
                "() => document.querySelector('#control-state').dataset.control === 'other'"
            )
            assert "tester" in second.locator("#control-state").inner_text()
            assert second.locator("button[data-key=home]").is_disabled()

            # a tap on the page opens the app under it, and the page shows the new screen
            assert phone.current()[0] != SETTINGS
            seen = first.evaluate("() => window.__liveFrames[window.__liveFrames.length - 1][2]")
            x1, y1, x2, y2 = bounds_of(phone, "设置")
            tap_on_page(first, phone, (x1 + x2) // 2, (y1 + y2) // 2)
            wait_until(lambda: phone.current()[0] == SETTINGS, what="the settings app to open on the phone")
            first.wait_for_function(
                "(seen) => window.__liveFrames.some(f => f[2] !== seen)", arg=seen, timeout=10_000
            )

            # the second viewer cannot act, nor take control while the first holds it
            events = len(phone.events)
            assert post(second, "/live/input", {"kind": "key", "key": "home"})["status"] == 403
            taken = post(second, "/live/control", {"op": "take"})
            assert taken["status"] == 409 and "tester" in taken["body"]
            assert phone.current()[0] == SETTINGS and len(phone.events) == events

            # a request with the cookie but without the CSRF token is refused too
            no_csrf = second.evaluate(
                """async (key) => (await fetch('/live/control', {method: 'POST', headers: {'Content-Type':
                'application/json'}, body: JSON.stringify({phone: key, viewer: 'x', op: 'take'})})).status""",
                key,
            )
            assert no_csrf == 403

            # Chinese text through the device layer's typing (AdbKeyboard), into the chat field tapped on the page
            first.locator("button[data-key=home]").click()
            wait_until(lambda: phone.current()[0] != SETTINGS, what="home")
            for text, screen in (("微信", ("com.tencent.mm", "home")), ("张三", ("com.tencent.mm", "chat"))):
                x1, y1, x2, y2 = bounds_of(phone, text)
                tap_on_page(first, phone, (x1 + x2) // 2, (y1 + y2) // 2)
                wait_until(lambda s=screen: phone.screen() == s, what=f"{screen} after tapping {text}")
            tap_on_page(first, phone, 490, 2277)  # the message field
            wait_until(lambda: 'focused="true"' in phone.hierarchy_xml(), what="the field focused")
            first.locator("#type-text").fill(GREETING)
            first.locator("#type-send").click()
            wait_until(lambda: GREETING in phone.hierarchy_xml(), what="the typed text in the field")

            first.locator("#release").click()
            first.wait_for_function(
                "() => document.querySelector('#control-state').dataset.control === 'none'"
            )
            # now the second viewer may take it
            assert post(second, "/live/control", {"op": "take"})["status"] == 200
            assert post(second, "/live/control", {"op": "release"})["status"] == 200
            first.close()
            second.close()
        finally:
            browser.close()

        live = [e for e in store.list_episodes(device=serial, limit=None) if e.meta.get("live")]
        assert len(live) == 2
        mine = min(live, key=lambda e: e.started_at)  # the first page's session
        steps = store.steps(mine.id)
        ended = store.episode(mine.id)
        assert not ended.is_running and "released" in (ended.outcome_detail or "")
        kinds = [s.action.kind.value for s in steps if s.action]
        assert kinds[0] == "tap" and "key" in kinds and "type" in kinds
        assert all(s.action_source is ActionSource.HUMAN for s in steps)
        assert all("tester (console" in (s.thought or "") for s in steps)
        assert store.screenshot_path(steps[0]) is not None and store.screenshot_path(steps[0]).is_file()
        typed_step = next(s for s in steps if s.action and s.action.kind.value == "type")
        assert typed_step.action.text == GREETING
        assert (
            store.steps(max(live, key=lambda e: e.started_at).id) == []
        )  # the second page only took control

        # nobody watches: the phone is asked for no more frames
        def asked() -> int:
            return sum(phone.requests.values())

        time.sleep(1.0)
        before = asked()
        time.sleep(1.5)
        assert asked() == before


def test_secure_screen_shows_black_with_a_note(sim_farm, tmp_path: Path) -> None:
    """The simulated Alipay payment password is FLAG_SECURE: the live page shows the black frame with its note,
    and text typed there from the page is recorded as its length only."""
    farm = sim_farm(1)
    serial = farm.serials[0]
    phone = farm.phones[serial]
    adb = f"127.0.0.1:{farm.adb_port}"
    key = f"{adb}/{serial}"
    with (
        TrajectoryStore.open(f"sqlite:///{tmp_path / 'live.db'}") as store,
        BackgroundConsole(store, user="tester") as console,
        sync_api.sync_playwright() as playwright,
    ):
        phone_db.record_device_result(store, key, serial, adb, ok=True)
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(console.url)
            page.goto(f"{console.base}/live?phone={key}")
            page.wait_for_function("() => window.__liveFrames && window.__liveFrames.length >= 1")
            assert page.locator("#secure-note").is_hidden()  # the launcher: a picture
            phone.launch(phone.package_for_name("支付宝"))  # on the phone itself: up to the payment password
            for x, y in ((135, 766), (600, 782)):
                phone.tap(x, y)
            phone.input_text("100")
            phone.tap(540, 982)
            assert phone.screen()[1] == "password"
            page.wait_for_selector("#secure-note", state="visible", timeout=10_000)
            page.locator("#take").click()
            page.wait_for_function("() => document.querySelector('#control-state').dataset.control === 'you'")
            page.locator("#type-text").fill("123456")
            page.locator("#type-send").click()
            wait_until(
                lambda: any(e.meta.get("live") and e.step_count for e in store.list_episodes()), what="step"
            )
            page.locator("#release").click()
            page.wait_for_function(
                "() => document.querySelector('#control-state').dataset.control === 'none'"
            )
        finally:
            browser.close()
        live = next(e for e in store.list_episodes(device=serial, limit=None) if e.meta.get("live"))
        (step,) = store.steps(live.id)
        assert step.action.text == "******" and "secure screen" in step.thought
