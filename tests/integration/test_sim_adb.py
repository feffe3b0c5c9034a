"""Simulated phones through the real adb server: the adb binary and adbutils, with faults and malformed input."""

from __future__ import annotations

import io
import os
import socket
import struct
import subprocess
import threading
import time

import adbutils
import pytest
import uiautomator2
from PIL import Image

from mobile_agent.sim.wire.packets import VERSION_CHECKSUMMED


@pytest.fixture
def farm(sim_farm):
    return sim_farm(2)


def test_devices_lists_every_phone_as_device(farm, adb):
    out = adb("devices", "-l").stdout.decode()
    for serial in farm.serials:
        line = next(line for line in out.splitlines() if line.startswith(serial))
        assert line.split()[1] == "device" and "model:SimPhone" in line


def test_shell_through_the_adb_binary(farm, adb):
    serial = farm.serials[0]
    assert adb("-s", serial, "shell", "getprop", "ro.product.model").stdout == b"SimPhone\n"
    failing = adb("-s", serial, "shell", "echo out; echo err >&2; exit 3", check=False)
    assert (failing.returncode, failing.stdout, failing.stderr) == (3, b"out\n", b"err\n")  # shell v2
    assert farm.phones[serial].shell_log[-1] == "echo out; echo err >&2; exit 3"


def test_exec_out_screencap_is_a_png(farm, adb):
    png = adb("-s", farm.serials[0], "exec-out", "screencap", "-p").stdout
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG" and image.size == (1080, 2400)


def test_push_pull_5mb_with_the_adb_binary_and_adbutils(farm, adb, tmp_path):
    serial = farm.serials[1]
    data = os.urandom(5 * 1024 * 1024)
    src, back = tmp_path / "src.bin", tmp_path / "back.bin"
    src.write_bytes(data)
    adb("-s", serial, "push", str(src), "/sdcard/Download/big.bin")
    adb("-s", serial, "pull", "/sdcard/Download/big.bin", str(back))
    assert back.read_bytes() == data
    device = farm.device(serial)
    device.sync.push(data[::-1], "/data/local/tmp/rev.bin")
    assert device.sync.read_bytes("/data/local/tmp/rev.bin") == data[::-1]
    assert "big.bin" in device.shell("ls /sdcard/Download")


def test_unknown_services_are_refused_and_the_phone_survives(farm):
    device = farm.device(farm.serials[0])
    for service in ("frobnicate:", "tcp:9008", "localabstract:nothing", "reverse:list-forward"):
        conn = device.open_transport()
        conn.send_command(service)
        with pytest.raises(adbutils.AdbError):
            conn.check_okay()
        conn.close()
    assert device.shell("echo alive") == "alive"


def test_malformed_packets_at_the_phone_port_do_not_disturb_the_adb_server(farm):
    serial = farm.serials[0]
    port = farm.sims[serial].port
    for garbage in (
        b"\xff" * 24,
        b"GET / HTTP/1.0\r\n\r\n",
        struct.pack("<6I", 0x4E584E43, 1, 1, 1 << 31, 0, 0),
    ):
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(garbage)
            sock.shutdown(socket.SHUT_WR)
            assert sock.recv(100) == b""
    assert farm.states()[serial] == "device"
    assert farm.device(serial).shell("echo fine") == "fine"


def test_auth_deny_leaves_the_phone_unauthorized(sim_farm, adb):
    farm = sim_farm(1, auth="deny")
    serial = farm.serials[0]
    assert farm.states()[serial] == "unauthorized"
    result = adb("-s", serial, "shell", "id", check=False)
    assert result.returncode != 0 and b"unauthorized" in result.stderr
    assert farm.phones[serial].shell_log == []


def test_an_old_checksummed_protocol_phone_works(sim_farm):
    farm = sim_farm(1, protocol_version=VERSION_CHECKSUMMED)
    device = farm.device(farm.serials[0])
    data = os.urandom(300_000)
    device.sync.push(data, "/sdcard/old.bin")
    assert device.sync.read_bytes("/sdcard/old.bin") == data
    assert device.shell("getprop ro.build.version.sdk") == "33"


def test_dropping_a_phone_mid_operation(sim_farm, adb):
    farm = sim_farm(1)
    serial = farm.serials[0]
    device = farm.device(serial)
    errors: list[BaseException] = []

    def long_operation() -> None:
        try:
            # shell2 appends `; echo X4EXIT:$?`: a cut stream has no marker and raises (plain shell() just
            # returns the truncated output).
            device.shell2("sleep 8; echo finished", timeout=20)
        except BaseException as exc:  # what adbutils raises is the point of the test
            errors.append(exc)

    worker = threading.Thread(target=long_operation)
    worker.start()
    time.sleep(0.5)
    farm.drop(serial, 3.0)
    worker.join(20)
    assert errors and isinstance(errors[0], (adbutils.AdbError, OSError)), errors
    assert wait_for(lambda: farm.states().get(serial) == "offline", 5), farm.states()
    with pytest.raises((adbutils.AdbError, OSError)):
        device.shell("echo nope", timeout=5)
    assert wait_for(lambda: farm.states().get(serial) == "device", 30), farm.states()
    assert device.shell("echo back") == "back"


def wait_for(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def test_adb_install_and_interactive_shell(farm, adb, adb_server):
    serial = farm.serials[0]
    apk = os.path.join(os.path.dirname(uiautomator2.__file__), "assets", "app-uiautomator.apk")
    result = adb("-s", serial, "install", "-r", apk)
    assert b"Success" in result.stdout and b"sh:" not in result.stderr
    assert "com.github.uiautomator/.AdbKeyboard" in farm.phones[serial].ime_list()
    assert farm.device(serial).shell("ls /data/local/tmp") == ""  # the pushed apk was removed
    cmd = [adb_server.adb_path, "-P", str(adb_server.port), "-s", serial, "shell"]
    typed = subprocess.run(
        cmd, input=b"echo hi\ngetprop ro.product.model\nexit\n", capture_output=True, timeout=30
    )
    assert typed.stdout == b"hi\nSimPhone\n"
