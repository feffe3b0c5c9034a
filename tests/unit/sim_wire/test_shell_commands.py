"""Android commands of the simulated shell, parsed by adbutils' own ShellExtension code (no network)."""

from __future__ import annotations

import base64
import hashlib
import io
import os

import pytest
import uiautomator2
from adbutils._utils import list2cmdline
from adbutils.shell import ShellExtension
from PIL import Image
from sim_wire_fakes import LATIN, U2_IME, Runner

from mobile_agent.sim.shell.apk import apk_package_name


class ShellOnlyDevice(ShellExtension):
    """adbutils' parsing code on top of the simulated shell."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    def shell(self, cmdargs, encoding="utf-8", rstrip=True, **_):
        line = list2cmdline(cmdargs) if isinstance(cmdargs, (list, tuple)) else cmdargs
        raw = self.runner.raw(line)
        return raw.decode().rstrip() if encoding else raw

    @property
    def sync(self):
        raise NotImplementedError


@pytest.fixture
def dev(sh) -> ShellOnlyDevice:
    return ShellOnlyDevice(sh)


def test_getprop(dev, sh):
    assert dev.getprop("ro.product.model") == "FakeModel"
    assert dev.getprop("no.such.prop") == ""
    assert "[ro.build.version.sdk]: [33]" in sh("getprop").stdout


def test_window_size_and_rotation(dev, phone):
    assert tuple(dev.window_size()) == (1080, 2400)
    phone.orientation = 1
    assert dev.rotation() == 1
    assert tuple(dev.window_size()) == (2400, 1080)


def test_app_current_from_dumpsys_window(dev, phone):
    phone.foreground = ("com.tencent.mm", "com.tencent.mm.ui.LauncherUI")
    info = dev.app_current()
    assert (info.package, info.activity) == ("com.tencent.mm", "com.tencent.mm.ui.LauncherUI")


def test_app_current_falls_back_when_locked(dev, phone):
    phone.locked = True  # mCurrentFocus is the notification shade: adbutils uses dumpsys activity
    phone.foreground = ("com.tencent.mm", "com.tencent.mm.ui.LauncherUI")
    info = dev.app_current()
    assert info.package == "com.tencent.mm" and info.pid > 0


def test_battery_and_power(dev, phone):
    assert dev.battery().level == 77
    assert dev.is_screen_on() is True
    phone.screen_on = False
    assert dev.is_screen_on() is False


def test_packages(dev, sh):
    assert dev.list_packages() == ["android", "com.android.settings", "com.tencent.mm"]
    assert dev.list_packages(["-3"]) == ["com.tencent.mm"]
    assert sh("pm list packages tencent").stdout == "package:com.tencent.mm\n"
    assert dev.app_info("com.tencent.mm").path == "/data/app/com.tencent.mm-1/base.apk"
    assert dev.app_info("com.nope") is None
    assert sh("cmd package resolve-activity --brief com.tencent.mm").stdout.splitlines()[-1] == (
        "com.tencent.mm/com.tencent.mm.Main"
    )


def test_app_start_paths(dev, phone, sh):
    dev.app_start("com.tencent.mm")
    assert phone.calls[-1] == ("launch", "com.tencent.mm", None)
    dev.app_start("com.tencent.mm", ".ui.LauncherUI")
    assert phone.calls[-1] == ("launch", "com.tencent.mm", "com.tencent.mm.ui.LauncherUI")
    result = sh("monkey -p com.nope -c android.intent.category.LAUNCHER 1")
    assert result.code == 252 and "No activities found" in result.stderr
    waited = sh("am start -W -n com.tencent.mm/.A")
    assert "Status: ok" in waited.stdout and waited.code == 0
    missing = sh("am start -n com.nope/.A")
    assert missing.code == 1 and "does not exist" in missing.stderr
    dev.app_stop("com.tencent.mm")
    dev.app_clear("com.tencent.mm")
    assert phone.calls[-2:] == [("force_stop", "com.tencent.mm"), ("clear_data", "com.tencent.mm")]


def test_input_commands(dev, phone, sh):
    dev.click(10, 20)
    dev.swipe(1, 2, 3, 4, 0.5)
    dev.keyevent("KEYCODE_BACK")
    sh("input keyevent 3")
    assert phone.calls == [("tap", 10, 20), ("swipe", 1, 2, 3, 4, 500), ("key", "KEYCODE_BACK"), ("key", 3)]
    dev.send_keys("a%sb")
    assert phone.typed == ["a b"]


def test_input_text_cannot_type_chinese_like_a_real_phone(sh, phone):
    result = sh("input text 你好")
    assert result.code != 0 and phone.typed == []


def test_input_security_fault(sh, phone):
    phone.faults.input_security_exception = True
    result = sh("input tap 1 1")
    assert result.code == 1 and "INJECT_EVENTS" in result.stderr and phone.calls == []


def broadcast(sh, action, **extras):
    args = " ".join(f"--es {k} {v}" for k, v in extras.items())
    return sh(f"am broadcast -a {action} {args}").stdout


def test_adb_keyboard_broadcasts_need_the_ime(sh, phone):
    text = base64.b64encode("晚上好 'x' $(id)".encode()).decode()
    assert "result=0" in broadcast(sh, "ADB_KEYBOARD_INPUT_TEXT", text=text)
    assert phone.typed == []
    phone.ime = U2_IME
    out = broadcast(sh, "ADB_KEYBOARD_INPUT_TEXT", text=text)
    assert "result=-1" in out
    assert phone.typed == ["晚上好 'x' $(id)"]
    assert "result=-1" in broadcast(sh, "ADB_KEYBOARD_CLEAR_TEXT")
    assert "result=-1" in sh("am broadcast -a ADB_KEYBOARD_INPUT_KEYCODE --ei code 67").stdout
    assert ("key", 67) in phone.calls and ("clear_text",) in phone.calls


def test_ime_and_settings_as_u2_uses_them(sh, phone):
    assert sh("ime list -s -a").stdout.splitlines() == [LATIN, U2_IME]
    assert sh("ime set com.nope/.X").code == 1
    assert sh(f"ime enable {U2_IME}").code == 0
    sh(f"ime set {U2_IME}")
    assert sh("settings get secure default_input_method").stdout == U2_IME + "\n"
    sh(f"settings put secure default_input_method {LATIN}")
    assert phone.ime == LATIN
    sh("settings put system screen_brightness 100")
    assert sh("settings get system screen_brightness").stdout == "100\n"
    assert sh("settings get system nothing").stdout == "null\n"


def test_screencap_png_and_raw(sh, phone):
    png = sh.raw("screencap -p")
    assert Image.open(io.BytesIO(png)).size == (108, 240)
    raw = sh.raw("screencap")
    assert int.from_bytes(raw[:4], "little") == 108 and len(raw) == 16 + 108 * 240 * 4
    sh("screencap -p /sdcard/s.png")
    assert phone.fs.read("/sdcard/s.png") == png
    phone.faults.screenshot_fail = True
    assert sh("screencap -p").code == 1


def test_uiautomator_dump_as_adbutils_reads_it(sh, phone):
    out = sh(
        "rm -f /data/local/tmp/uidump.xml; uiautomator dump /data/local/tmp/uidump.xml && echo success"
    ).stdout
    assert "success" in out
    assert phone.fs.read("/data/local/tmp/uidump.xml").startswith(b"<?xml")


def test_files_and_md5(sh, phone):
    phone.fs.write("/data/local/tmp/u2.jar", b"jar")
    assert sh("toybox md5sum /data/local/tmp/u2.jar").stdout == (
        hashlib.md5(b"jar").hexdigest() + "  /data/local/tmp/u2.jar\n"
    )
    assert sh("md5sum /none").stderr == "md5sum: /none: No such file or directory\n"
    sh("mkdir -p /sdcard/a/b && echo x > /sdcard/a/b/f")
    assert sh("ls /sdcard/a/b").stdout == "f\n"
    assert sh("rm /sdcard/a").code == 1
    assert sh("rm -r /sdcard/a; ls /sdcard/a").code == 1
    assert sh("id").stdout.startswith("uid=2000(shell)")
    assert sh("whoami").stdout == "shell\n"


def test_u2_server_lifetime_follows_the_shell_stream(sh, phone):
    import threading

    from mobile_agent.sim.shell.android import AndroidShell
    from mobile_agent.sim.shell.sh import ShellIO

    phone.fs.write("/data/local/tmp/u2.jar", b"jar")
    hangup = threading.Event()
    out = bytearray()
    line = "CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main -p 9008"
    worker = threading.Thread(
        target=AndroidShell(phone).run, args=(line, ShellIO(out.extend, out.extend, hangup))
    )
    worker.start()
    for _ in range(100):
        if phone.u2_running:
            break
        threading.Event().wait(0.01)
    assert phone.u2_running and worker.is_alive()
    hangup.set()
    worker.join(2)
    assert not worker.is_alive() and not phone.u2_running


def test_u2_already_registered_is_printed(sh, phone):
    phone.fs.write("/data/local/tmp/u2.jar", b"jar")
    phone.u2_error = "java.lang.IllegalStateException: UiAutomationService x already registered!"
    result = sh("CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main -p 9008")
    assert "already registered" in result.stdout and result.code == 1
    assert sh("app_process / com.wetest.uia2.Main").code == 1  # no CLASSPATH: class not found


def test_pm_install_reads_the_package_from_the_apk(sh, phone):
    apk = os.path.join(os.path.dirname(uiautomator2.__file__), "assets", "app-uiautomator.apk")
    with open(apk, "rb") as f:
        data = f.read()
    assert apk_package_name(data) == "com.github.uiautomator"
    assert apk_package_name(b"not a zip") is None
    phone.fs.write("/data/local/tmp/unknown.apk", data)
    phone.packages.remove("com.tencent.mm")
    assert sh("pm install -r -t /data/local/tmp/unknown.apk").stdout == "Success\n"
    assert "com.github.uiautomator" in phone.packages
    assert sh("pm uninstall com.github.uiautomator").stdout == "Success\n"


def test_sleep_is_bounded_and_interruptible(phone):
    import threading
    import time

    from mobile_agent.sim.shell.android import AndroidShell
    from mobile_agent.sim.shell.sh import ShellIO

    hangup = threading.Event()
    threading.Timer(0.1, hangup.set).start()
    started = time.monotonic()
    AndroidShell(phone).run("sleep 100", ShellIO(lambda b: None, lambda b: None, hangup))
    assert time.monotonic() - started < 2
