"""An ADB Keyboard apk installed with `pm install` is an input method of the simulated phone: listed, enabled
and set, and gone again with its package."""

from __future__ import annotations

import io
import struct
import zipfile

from mobile_agent.sim.phone.phone import Phone
from mobile_agent.sim.phone.settings import ADBKEYBOARD_IME, LATIN_IME
from mobile_agent.sim.shell.android import AndroidShell
from mobile_agent.sim.shell.apk import apk_package_name
from mobile_agent.sim.shell.sh import ShellIO


def _string_pool(strings: list[str]) -> bytes:
    body = b"".join(struct.pack("<H", len(s)) + s.encode("utf-16-le") + b"\0\0" for s in strings)
    offsets, at = [], 0
    for s in strings:
        offsets.append(at)
        at += 2 + 2 * len(s) + 2
    header = 28
    start = header + 4 * len(strings)
    size = start + len(body)
    return (
        struct.pack("<HHIIIIII", 0x0001, header, size, len(strings), 0, 0, start, 0)
        + b"".join(struct.pack("<I", o) for o in offsets)
        + body
    )


def apk_with_package(package: str) -> bytes:
    """A zip whose binary AndroidManifest.xml is a <manifest package=...> element: what `pm install` reads."""
    pool = _string_pool(["manifest", "package", package])
    attribute = struct.pack("<IIIHBBI", 0xFFFFFFFF, 1, 2, 8, 0, 0x03, 2)
    element_body = struct.pack("<IIHHHHHH", 0xFFFFFFFF, 0, 20, 20, 1, 0, 0, 0) + attribute
    element = struct.pack("<HHIII", 0x0102, 16, 16 + len(element_body), 1, 0xFFFFFFFF) + element_body
    manifest = struct.pack("<HHI", 0x0003, 8, 8 + len(pool) + len(element)) + pool + element
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("AndroidManifest.xml", manifest)
    return out.getvalue()


def shell(phone: Phone, line: str) -> str:
    out = bytearray()
    AndroidShell(phone).run(line, ShellIO(out.extend, out.extend))
    return out.decode("utf-8")


def test_installed_adb_keyboard_is_listed_enabled_set_and_types() -> None:
    phone = Phone()
    assert ADBKEYBOARD_IME not in shell(phone, "ime list -s -a")
    assert "Unknown input method" in shell(phone, f"ime enable {ADBKEYBOARD_IME}")

    apk = apk_with_package("com.android.adbkeyboard")
    assert apk_package_name(apk) == "com.android.adbkeyboard"
    phone.fs.write("/data/local/tmp/ADBKeyboard.apk", apk)
    assert shell(phone, "pm install -r /data/local/tmp/ADBKeyboard.apk") == "Success\n"

    assert shell(phone, "ime list -s -a").splitlines() == [LATIN_IME, ADBKEYBOARD_IME]
    assert "now enabled" in shell(phone, f"ime enable {ADBKEYBOARD_IME}")
    assert ADBKEYBOARD_IME in phone.settings[("secure", "enabled_input_methods")]
    assert "selected" in shell(phone, f"ime set {ADBKEYBOARD_IME}")
    assert phone.ime_current() == ADBKEYBOARD_IME
    assert shell(phone, "settings get secure default_input_method") == ADBKEYBOARD_IME + "\n"

    assert shell(phone, "pm uninstall com.android.adbkeyboard") == "Success\n"
    assert phone.ime_current() == LATIN_IME and phone.ime_list() == [LATIN_IME]
    assert ADBKEYBOARD_IME not in phone.settings.get(("secure", "enabled_input_methods"), "")
