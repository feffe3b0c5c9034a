import io
import threading

import pytest
from PIL import Image

from mobile_agent.errors import InputSecurityError
from mobile_agent.sim.phone.display import ScreenshotFailed
from mobile_agent.sim.phone.phone import Phone, PhoneConfig
from mobile_agent.sim.phone.settings import ADB_KEYBOARD, LATIN_IME

from .helpers import find, tap


def open_chat(phone: Phone, contact: str) -> None:
    assert phone.launch("com.tencent.mm")
    tap(phone, contact)
    tap(phone, rid="com.tencent.mm:id/bkk")


def test_identity_and_props():
    phone = Phone(PhoneConfig(name="a", width=720, height=1600))
    assert phone.window_size() == (720, 1600)
    assert phone.props["ro.build.version.sdk"] == "33" and phone.props["ro.product.model"] == "SimPhone"
    assert phone.props["ro.serialno"] == phone.config.serial
    assert phone.current() == ("com.android.launcher3", "com.android.launcher3.uioverrides.QuickstepLauncher")


def test_packages_names_and_activities():
    phone = Phone()
    pkgs = phone.installed_packages()
    for pkg in ("com.tencent.mm", "com.android.settings", "com.android.systemui"):
        assert pkg in pkgs
    assert phone.display_name("com.tencent.mm") == "微信"
    assert phone.launcher_activity("com.tencent.mm") == "com.tencent.mm.ui.LauncherUI"
    assert phone.launcher_activity("com.android.systemui") is None
    assert phone.launcher_activity("com.not.installed") is None
    assert phone.package_path("com.tencent.mm") == "/data/app/com.tencent.mm-1/base.apk"
    assert not phone.launch("com.not.installed")
    assert phone.package_for_name("微信") == "com.tencent.mm"


def test_launcher_icon_launches_and_home_returns():
    phone = Phone()
    tap(phone, "微信")
    assert phone.current() == ("com.tencent.mm", "com.tencent.mm.ui.LauncherUI")
    phone.key("home")
    assert phone.current()[0] == "com.android.launcher3"
    assert [e.detail["package"] for e in phone.events_of("launch")] == ["com.tencent.mm"]


def test_sending_a_wechat_message_records_state_and_shows_the_bubble():
    phone = Phone()
    open_chat(phone, "张三")
    assert phone.keyboard_shown
    with pytest.raises(AssertionError):
        find(phone, "发送")  # the send button appears only once there is text
    phone.input_text("晚上好")
    tap(phone, "发送")
    assert phone.state.messages_sent == [{"app": "com.tencent.mm", "contact": "张三", "text": "晚上好"}]
    assert find(phone, "晚上好", rid="com.tencent.mm:id/bkl")
    assert find(phone, "", rid="com.tencent.mm:id/bkk")["text"] == ""


def test_back_hides_the_keyboard_first_then_pops_then_goes_home():
    phone = Phone()
    open_chat(phone, "李四")
    phone.key("back")
    assert phone.screen() == ("com.tencent.mm", "chat") and not phone.keyboard_shown
    phone.key(4)
    assert phone.screen() == ("com.tencent.mm", "home")
    phone.key("KEYCODE_BACK")
    assert phone.current()[0] == "com.android.launcher3"
    assert "com.tencent.mm" in phone.tasks.recents


def test_text_without_focus_is_ignored():
    phone = Phone()
    phone.input_text("lost")
    assert phone.state.typed == [] and phone.events_of("text")[0].detail["ignored"]


def test_delete_and_clear_text():
    phone = Phone()
    open_chat(phone, "张三")
    phone.input_text("abc")
    phone.key("del")
    assert find(phone, rid="com.tencent.mm:id/bkk")["text"] == "ab"
    phone.clear_text()
    assert find(phone, rid="com.tencent.mm:id/bkk")["text"] == ""


def test_hierarchy_has_the_real_dump_format():
    xml = Phone().hierarchy_xml()
    assert xml.startswith(
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node index=\"0\" "
        'text="" resource-id="" class="android.widget.FrameLayout" package="com.android.launcher3" content-desc="" '
        'checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" '
        'scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][1080,2400]">'
    )
    assert xml.endswith("</hierarchy>")


# Phones of one process share a renderer per screen size (sim/render/renderer.py): a size no other test uses keeps
# other phones' drawing out of the counts these tests read.
OWN_SIZE = {"width": 1079, "height": 2399}


def test_screenshots_are_cached_per_screen_state():
    phone = Phone(PhoneConfig(**OWN_SIZE))
    first = phone.screenshot("png")
    renders = phone.display.renderer.renders
    assert phone.screenshot("png") is first
    jpeg = phone.screenshot("jpeg", quality=60)
    assert Image.open(io.BytesIO(jpeg)).format == "JPEG"
    assert phone.display.renderer.renders == renders  # a new encoding of the same screen does not redraw it
    phone.launch("com.tencent.mm")
    assert phone.screenshot("png") != first


def test_phones_of_one_process_draw_a_screen_they_share_once():
    first, second = Phone(PhoneConfig(name="a", **OWN_SIZE)), Phone(PhoneConfig(name="b", **OWN_SIZE))
    assert first.display.renderer is second.display.renderer
    first.launch("com.tencent.mm")
    second.launch("com.tencent.mm")
    shot = first.screenshot("jpeg", quality=80)
    renders = first.display.renderer.renders
    assert second.screenshot("jpeg", quality=80) == shot and first.display.renderer.renders == renders
    open_chat(second, "张三")
    assert second.screenshot("jpeg", quality=80) != shot  # the other phone's own screen, drawn for it
    assert first.screenshot("jpeg", quality=80) == shot
    other_size = Phone(PhoneConfig(name="c", width=720, height=1600))
    assert other_size.display.renderer is not first.display.renderer
    assert Image.open(io.BytesIO(other_size.screenshot("jpeg"))).size == (720, 1600)


def test_double_tap_within_300ms_on_the_same_element():
    phone = Phone()
    phone.tap(900, 250)
    phone.tap(900, 250)
    assert len(phone.events_of("double_tap")) == 1


def test_scrolling_a_list_reveals_more_rows():
    phone = Phone()
    phone.launch("com.tencent.mm")
    tap(phone, "通讯录")
    last = sorted(phone.world.wechat_contacts)[-1]
    with pytest.raises(AssertionError):
        find(phone, last)
    phone.swipe(540, 1800, 540, 300, 300)
    phone.swipe(540, 1800, 540, 300, 300)
    assert find(phone, last)


def test_faults():
    phone = Phone()
    phone.faults.input_security_exception = True
    with pytest.raises(InputSecurityError):
        phone.tap(1, 1)
    phone.faults.input_security_exception = False
    phone.faults.screenshot_fail = True
    with pytest.raises(ScreenshotFailed):
        phone.screenshot("jpeg")
    phone.faults.u2_already_registered = True
    assert "already registered" in phone.u2_start()


def test_input_methods_and_the_u2_apk():
    phone = Phone()
    assert phone.ime_list() == [LATIN_IME] and phone.ime_current() == LATIN_IME
    assert not phone.ime_set(ADB_KEYBOARD)
    phone.install("com.github.uiautomator")
    assert ADB_KEYBOARD in phone.ime_list()
    assert phone.ime_set(ADB_KEYBOARD) and phone.ime_current() == ADB_KEYBOARD
    assert phone.settings[("secure", "default_input_method")] == ADB_KEYBOARD


def test_settings_changes_through_the_store_are_tracked():
    phone = Phone()
    phone.settings[("secure", "ui_night_mode")] = "2"
    assert phone.settings.dark_mode and phone.state.settings_changed == {"dark_mode": True}


def test_concurrent_taps_and_screenshots_are_safe():
    phone = Phone()
    phone.launch("com.tencent.mm")
    errors = []

    def worker():
        try:
            for _ in range(30):
                phone.tap(540, 1200)
                phone.key("back")
                phone.screenshot("jpeg")
        except Exception as exc:  # pragma: no cover - the assertion below shows it
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_events_log_screens_in_order():
    phone = Phone()
    phone.launch("com.tencent.mm")
    tap(phone, "张三")
    screens = [(e.detail["package"], e.detail["screen"]) for e in phone.events_of("screen")]
    assert screens[-2:] == [("com.tencent.mm", "home"), ("com.tencent.mm", "chat")]
    kinds = [e.kind for e in phone.events]
    assert kinds.index("launch") < kinds.index("tap")


def test_latency_profile_sleeps_on_cold_start_only():
    import time

    from mobile_agent.sim.profiles import LatencyProfile

    phone = Phone()
    phone.profile = LatencyProfile("slow-start", cold_start=0.2)
    start = time.monotonic()
    phone.launch("com.tencent.mm")
    assert time.monotonic() - start >= 0.2
    phone.key("home")
    start = time.monotonic()
    phone.launch("com.tencent.mm")  # warm: the task is still there
    assert time.monotonic() - start < 0.2
