"""Which serials are network phones (asked back with `adb connect` while they are gone), and a wait for a phone
behind an adb server that is not there ends at once instead of after the bound."""

from __future__ import annotations

import time

import pytest

from mobile_agent.device.adb_server import AdbServerClient
from mobile_agent.device.reconnect import is_network_serial, wait_for_phone
from mobile_agent.errors import AdbServerUnreachable
from mobile_agent.sim.farm import free_port


@pytest.mark.parametrize(
    "serial", ["192.168.1.7:5555", "127.0.0.1:16400", "phone.lan:5555", "[fe80::1]:5555"]
)
def test_network_serials(serial: str) -> None:
    assert is_network_serial(serial)


@pytest.mark.parametrize(
    "serial", ["emulator-5554", "R58M12ABCDE", "0123456789ABCDEF", "adb-R58M-xyz._adb-tls-connect._tcp"]
)
def test_usb_and_mdns_serials_are_not_connected_by_address(serial: str) -> None:
    assert not is_network_serial(serial)


def test_no_adb_server_ends_the_wait_at_once() -> None:
    client = AdbServerClient("127.0.0.1", free_port())  # no server there (built without the check)
    started = time.monotonic()
    with pytest.raises(AdbServerUnreachable):
        wait_for_phone(client, "127.0.0.1:5555", 30)
    assert time.monotonic() - started < 5
