"""The adbd wire protocol spoken by hand: handshake, auth, flow control, framing, faults, malformed input."""

from __future__ import annotations

import socket
import struct
import time

import pytest
from raw_adb_client import RawAdbClient, shell_v2_frames
from sim_wire_fakes import FakePhone

from mobile_agent.sim.wire.adbd import FEATURES, AdbdServer
from mobile_agent.sim.wire.packets import (
    A_AUTH,
    A_CLSE,
    A_CNXN,
    A_OKAY,
    A_OPEN,
    A_WRTE,
    VERSION_CHECKSUMMED,
    VERSION_SKIP_CHECKSUM,
)


@pytest.fixture
def server():
    servers = []

    def start(phone: FakePhone | None = None, **kwargs) -> AdbdServer:
        srv = AdbdServer(phone or FakePhone(), fault_poll_interval=0.02, **kwargs).start()
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        srv.stop()


@pytest.fixture
def client_for():
    clients = []

    def connect(srv: AdbdServer, **kwargs) -> RawAdbClient:
        client = RawAdbClient(srv.port, **kwargs)
        clients.append(client)
        return client

    yield connect
    for client in clients:
        client.close()


def test_modern_handshake_advertises_model_and_features(server, client_for):
    srv = server()
    reply = client_for(srv).connect()
    assert reply.arg0 == VERSION_SKIP_CHECKSUM and reply.arg1 == 1 << 20
    banner = reply.payload.decode()
    assert banner.startswith("device::") and "ro.product.model=FakeModel" in banner
    assert banner.endswith("features=" + ",".join(FEATURES))


def test_old_protocol_uses_checksums_and_4k_payloads(server, client_for):
    srv = server()
    client = client_for(srv)
    reply = client.connect(version=VERSION_CHECKSUMMED, max_payload=4096)
    assert reply.arg0 == VERSION_CHECKSUMMED and reply.arg1 == 4096
    srv.phone.fs.write("/sdcard/big", bytes(range(256)) * 40)  # 10 KiB
    local, ok = client.open("shell:cat /sdcard/big")
    sizes, data = [], bytearray()
    while True:
        packet = client.recv()  # RawAdbClient verifies every checksum here
        if packet.command == A_CLSE:
            break
        sizes.append(len(packet.payload))
        data += packet.payload
        client.send(A_OKAY, local, ok.arg0)
    assert bytes(data) == bytes(range(256)) * 40
    assert max(sizes) <= 4096 and len(sizes) >= 3


def test_device_server_can_be_an_old_phone(server, client_for):
    srv = server(protocol_version=VERSION_CHECKSUMMED)
    reply = client_for(srv).connect()
    assert reply.arg0 == VERSION_CHECKSUMMED and reply.arg1 == 4096


def test_bad_checksum_drops_the_connection_but_not_the_server(server, client_for):
    srv = server()
    client = client_for(srv)
    client.connect(version=VERSION_CHECKSUMMED)
    payload = b"shell:echo hi\0"
    header = struct.pack("<6I", A_OPEN, 1, 0, len(payload), 12345, A_OPEN ^ 0xFFFFFFFF)
    client.sock.sendall(header + payload)
    assert client.sock.recv(100) == b""
    assert client_for(srv).connect().command == A_CNXN


def test_one_write_in_flight_until_the_host_acknowledges(server, client_for):
    srv = server()
    srv.phone.fs.write("/sdcard/big", b"x" * 20000)
    client = client_for(srv, timeout=0.3)
    client.connect(version=VERSION_CHECKSUMMED, max_payload=4096)
    local, ok = client.open("shell:cat /sdcard/big")
    first = client.recv()
    assert first.command == A_WRTE
    with pytest.raises(socket.timeout):
        client.recv()  # no second WRTE before our OKAY
    client.send(A_OKAY, local, ok.arg0)
    assert client.recv().command == A_WRTE


def test_host_writes_are_acknowledged(server, client_for):
    from raw_adb_client import RawStream

    srv = server()
    client = client_for(srv)
    client.connect()
    stream = RawStream(client, "sync:")
    stream.write(b"STAT" + struct.pack("<I", 6) + b"/sdcard")  # returns only after the device's OKAY
    assert stream.read_exact(4) == b"STAT"


def test_auth_accept_deny_and_none(server, client_for):
    accepting = client_for(server(auth="accept"))
    accepting.send(A_CNXN, VERSION_SKIP_CHECKSUM, 1 << 20, b"host::\0")
    token = accepting.recv()
    assert token.command == A_AUTH and token.arg0 == 1 and len(token.payload) == 20
    accepting.send(A_AUTH, 2, 0, b"sig")
    assert accepting.recv().command == A_CNXN

    denying = client_for(server(auth="deny"), timeout=0.3)
    denying.send(A_CNXN, VERSION_SKIP_CHECKSUM, 1 << 20, b"host::\0")
    assert denying.recv().command == A_AUTH
    denying.send(A_AUTH, 2, 0, b"sig")
    again = denying.recv()
    assert again.command == A_AUTH and again.arg0 == 1  # a new token: signature rejected
    denying.send(A_AUTH, 3, 0, b"public key\0")
    with pytest.raises(socket.timeout):
        denying.recv()  # nobody taps "allow"
    denying.send(A_OPEN, 1, 0, b"shell:id\0")
    with pytest.raises(socket.timeout):
        denying.recv()  # streams are not served before the handshake

    assert client_for(server(auth="none")).connect().command == A_CNXN


def test_unknown_services_and_unknown_streams_get_clse(server, client_for):
    srv = server()
    client = client_for(srv)
    client.connect()
    for service in ("frobnicate:", "tcp:1234", "tcp:9008", "localabstract:x", "nocolon", ""):
        local, reply = client.open(service)
        assert (reply.command, reply.arg0, reply.arg1) == (A_CLSE, 0, local)
    client.send(A_WRTE, 77, 999, b"data")
    assert client.recv().command == A_CLSE
    assert client.run("shell:echo still here") == b"still here\n"


@pytest.mark.parametrize(
    "garbage",
    [
        b"\x00" * 24,  # bad magic
        struct.pack("<6I", A_CNXN, 1, 1, 1 << 30, 0, A_CNXN ^ 0xFFFFFFFF),  # absurd length
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        struct.pack("<6I", A_CNXN, 1, 1, 100, 0, A_CNXN ^ 0xFFFFFFFF) + b"short",  # then EOF mid-payload
    ],
)
def test_malformed_input_closes_only_that_connection(server, client_for, garbage):
    srv = server()
    client = client_for(srv)
    client.sock.sendall(garbage)
    client.sock.shutdown(socket.SHUT_WR)
    assert client.sock.recv(100) == b""
    fresh = client_for(srv)
    fresh.connect()
    assert fresh.run("shell:echo ok") == b"ok\n"
    assert srv.connection_count == 1


def test_shell_v1_exec_and_v2(server, client_for):
    srv = server()
    client = client_for(srv)
    client.connect()
    assert client.run("shell:echo out; echo err >&2") == b"out\nerr\n"
    assert client.run("exec:echo raw") == b"raw\n"
    frames = shell_v2_frames(client.run("shell,v2,TERM=xterm,raw:echo out; echo err >&2; false"))
    assert frames == [(1, b"out\n"), (2, b"err\n"), (3, b"\x01")]
    assert srv.phone.shell_log[-1] == "echo out; echo err >&2; false"


def test_interactive_v1_shell_reads_lines(server, client_for):
    from raw_adb_client import RawStream

    srv = server()
    client = client_for(srv)
    client.connect()
    stream = RawStream(client, "shell:")
    stream.write(b"echo one\necho two\nexit\n")
    stream.wait_closed()
    assert bytes(stream.inbox) == b"one\ntwo\n"


def test_root_is_refused_politely(server, client_for):
    client = client_for(server())
    client.connect()
    assert client.run("root:") == b"adbd cannot run as root in production builds\n"


def test_offline_fault_drops_and_refuses_then_recovers(server, client_for):
    srv = server()
    client = client_for(srv)
    client.connect()
    srv.phone.faults.go_offline(0.6)
    assert client.sock.recv(100) == b""  # dropped by the fault watcher
    refused = client_for(srv)
    refused.sock.sendall(b"x" * 24)
    assert refused.sock.recv(100) == b""
    time.sleep(0.7)
    back = client_for(srv)
    back.connect()
    assert back.run("shell:echo back") == b"back\n"


def test_stop_closes_the_listener_and_connections(server, client_for):
    srv = server()
    client = client_for(srv)
    client.connect()
    srv.stop()
    assert client.sock.recv(100) == b""
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", srv.port), timeout=1).close()
