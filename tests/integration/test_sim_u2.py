"""uiautomator2 3.7.1 driving a simulated phone through the real adb server, unchanged."""

from __future__ import annotations

import hashlib
import os
import re
import xml.etree.ElementTree as ET

import adbutils
import pytest
import uiautomator2
from uiautomator2.exceptions import AccessibilityServiceAlreadyRegisteredError

from mobile_agent.sim.farm import SimFarm

U2_JAR = os.path.join(os.path.dirname(uiautomator2.__file__), "assets", "u2.jar")
U2_APK = os.path.join(os.path.dirname(uiautomator2.__file__), "assets", "app-uiautomator.apk")


@pytest.fixture(scope="module")
def farm(adb_server):
    with SimFarm(1, adb_port=adb_server.port) as farm:
        yield farm


@pytest.fixture(scope="module")
def serial(farm) -> str:
    return farm.serials[0]


@pytest.fixture(scope="module")
def phone(farm, serial):
    return farm.phones[serial]


@pytest.fixture(scope="module")
def d(farm, serial):
    client = adbutils.AdbClient(host="127.0.0.1", port=farm.adb_port)
    device = uiautomator2.connect(client.device(serial))
    yield device
    device.stop_uiautomator()


def node_center(xml: str, **match: str) -> tuple[int, int]:
    for node in ET.fromstring(xml).iter("node"):
        if all(node.get(key) == value for key, value in match.items()):
            x1, y1, x2, y2 = map(int, re.findall(r"\d+", node.get("bounds")))
            return (x1 + x2) // 2, (y1 + y2) // 2
    raise AssertionError(f"no node with {match}")


def test_connect_pushes_the_jar_and_starts_the_server(d, phone):
    with open(U2_JAR, "rb") as f:
        expected = hashlib.md5(f.read()).hexdigest()
    assert hashlib.md5(phone.fs.read("/data/local/tmp/u2.jar")).hexdigest() == expected
    assert phone.u2_running
    assert any("com.wetest.uia2.Main" in line for line in phone.shell_log)


def test_info_window_size_and_screenshot(d):
    info = d.info
    assert info["displayWidth"] == 1080 and info["sdkInt"] == 33
    assert d.window_size() == (1080, 2400)
    assert d.screenshot().size == (1080, 2400)


def test_app_start_current_and_back(d, phone):
    d.app_start("com.tencent.mm")
    assert d.app_current()["package"] == "com.tencent.mm"
    before = len(phone.events)
    d.press("back")
    assert any(e.kind == "key" and e.detail.get("key") == "back" for e in phone.events[before:])
    d.press("home")
    assert d.app_current()["package"] != "com.tencent.mm"


def test_click_swipe_hierarchy(d, phone):
    d.app_start("com.tencent.mm")
    xml = d.dump_hierarchy()
    assert xml.startswith("<?xml") and "com.tencent.mm" in xml
    before = len(phone.events)
    d.click(540, 1200)
    d.swipe(540, 1800, 540, 600, 0.05)
    kinds = [event.kind for event in phone.events[before:]]
    assert "tap" in kinds or "click" in kinds or len(kinds) >= 2, kinds


def open_first_chat(d) -> None:
    d.app_stop("com.tencent.mm")
    d.app_start("com.tencent.mm")
    d.click(*node_center(d.dump_hierarchy(), **{"resource-id": "com.tencent.mm:id/cj1"}))
    d.click(*node_center(d.dump_hierarchy(), **{"resource-id": "com.tencent.mm:id/b4a"}))


def test_send_a_chat_message_by_clicks_and_send_keys(d, phone):
    open_first_chat(d)
    d.send_keys("晚上好")  # no AdbKeyboard yet: u2 goes through setClipboard + pasteClipboard
    d.click(*node_center(d.dump_hierarchy(), text="发送"))
    assert phone.state.messages_sent[-1]["text"] == "晚上好"


HOSTILE = 'it\'s "quoted" $(touch /sdcard/pwned) `id`; rm -rf / && echo x || y\nline2 😀 中文 %s $HOME \\'


def test_hostile_text_arrives_verbatim_and_nothing_runs(d, phone, farm, serial):
    open_first_chat(d)
    d.send_keys(HOSTILE)  # clipboard path
    assert phone.state.typed[-1]["text"] == HOSTILE

    # Install the AdbKeyboard apk the way u2 does (push + `pm install`); then send_keys broadcasts base64.
    d.adb_device.install(U2_APK, nolaunch=True, silent=True)
    log_start = len(phone.shell_log)
    open_first_chat(d)
    d.send_keys(HOSTILE)
    assert phone.ime_current() == "com.github.uiautomator/.AdbKeyboard"
    assert phone.state.typed[-1]["text"] == HOSTILE
    broadcasts = [line for line in phone.shell_log[log_start:] if "ADB_KEYBOARD_INPUT_TEXT" in line]
    assert broadcasts and all("pwned" not in line for line in broadcasts)  # only base64 travels

    ascii_text = "a'b\"c $(touch /sdcard/pwned2) `id` ; d && e"
    farm.device(serial).shell(["input", "text", ascii_text])
    assert phone.state.typed[-1]["text"] == ascii_text
    assert any(line.startswith("input text ") and "pwned2" in line for line in phone.shell_log)
    assert not phone.fs.exists("/sdcard/pwned") and not phone.fs.exists("/sdcard/pwned2")


def test_closing_the_launch_stream_stops_the_server_and_u2_recovers(d, phone):
    d.stop_uiautomator()
    assert not phone.u2_running  # pitfall 10: the server lives as long as its shell stream
    assert d.info["sdkInt"] == 33  # u2 relaunches it
    assert phone.u2_running


def test_already_registered_is_reported_by_u2(farm, serial, phone, d):
    d.stop_uiautomator()
    phone.faults.u2_already_registered = True
    try:
        with pytest.raises(AccessibilityServiceAlreadyRegisteredError):
            d.start_uiautomator()
    finally:
        phone.faults.u2_already_registered = False
    d.start_uiautomator()
    assert phone.u2_running
