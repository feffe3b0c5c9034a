import base64
import http.client
import io
import json
import socket
import threading

import pytest
from PIL import Image

from mobile_agent.sim.phone.phone import Phone
from mobile_agent.sim.wire.u2server import U2Server


class SocketConnection(http.client.HTTPConnection):
    """http.client (what uiautomator2 uses) over one end of a socketpair whose other end the server answers."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__("localhost", 9008)
        self._given = sock

    def connect(self) -> None:
        self.sock = self._given


@pytest.fixture
def phone():
    p = Phone()
    assert p.u2_start() is None
    return p


def request(phone: Phone, method: str, path: str, body: dict | None = None, headers: dict | None = None):
    client, server = socket.socketpair()
    u2 = U2Server(phone)  # the wire side builds one per stream
    thread = threading.Thread(target=u2.serve, args=(server,), daemon=True)
    thread.start()
    conn = SocketConnection(client)
    try:
        conn.request(
            method,
            path,
            json.dumps(body) if body else None,
            headers={"Content-Type": "application/json", "Accept-Encoding": "", **(headers or {})},
        )
        response = conn.getresponse()
        data = response.read()
        return response.status, data
    finally:
        conn.close()
        thread.join(5)
        assert not thread.is_alive()


def rpc(phone: Phone, method: str, *params):
    status, data = request(
        phone, "POST", "/jsonrpc/0", {"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}
    )
    assert status == 200
    return json.loads(data)


def test_ping_answers_pong(phone):
    assert request(phone, "GET", "/ping") == (200, b"pong")


def test_keep_alive_serves_several_requests_on_one_stream(phone):
    client, server = socket.socketpair()
    thread = threading.Thread(target=U2Server(phone).serve, args=(server,), daemon=True)
    thread.start()
    conn = SocketConnection(client)
    for _ in range(3):
        conn.request("GET", "/ping")
        assert conn.getresponse().read() == b"pong"
    conn.close()
    thread.join(5)
    assert not thread.is_alive()


def test_connection_close_ends_the_stream(phone):
    status, data = request(phone, "GET", "/ping", headers={"Connection": "close"})
    assert data == b"pong"


def test_device_info_and_screenshot(phone):
    info = rpc(phone, "deviceInfo")["result"]
    assert info["displayWidth"] == 1080 and info["displayHeight"] == 2400 and info["sdkInt"] == 33
    assert info["currentPackageName"] == "com.android.launcher3"
    b64 = rpc(phone, "takeScreenshot", 1, 80)["result"]
    image = Image.open(io.BytesIO(base64.b64decode(b64)))
    assert image.format == "JPEG" and image.size == (1080, 2400)


def test_click_and_hierarchy_and_keys(phone):
    xml = rpc(phone, "dumpWindowHierarchy", False, 50)["result"]
    assert xml.startswith(
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    )
    info = rpc(
        phone, "objInfo", {"mask": 1, "childOrSibling": [], "childOrSiblingSelector": [], "text": "微信"}
    )
    bounds = info["result"]["bounds"]
    rpc(phone, "click", (bounds["left"] + bounds["right"]) // 2, (bounds["top"] + bounds["bottom"]) // 2)
    assert phone.current()[0] == "com.tencent.mm"
    assert rpc(phone, "pressKey", "home")["result"] is True
    assert phone.current()[0] == "com.android.launcher3"


def test_clipboard_paste_types_into_focused_field(phone):
    phone.launch("com.tencent.mm")
    assert rpc(phone, "exist", {"text": "张三"})["result"] is True
    node = rpc(phone, "objInfo", {"text": "张三"})["result"]["bounds"]
    phone.tap((node["left"] + node["right"]) // 2, (node["top"] + node["bottom"]) // 2)
    rpc(phone, "click", *_center(rpc(phone, "objInfo", {"resourceId": "com.tencent.mm:id/bkk"})["result"]))
    rpc(phone, "setClipboard", None, "晚上好")
    assert rpc(phone, "getClipboard")["result"] == "晚上好"
    rpc(phone, "pasteClipboard")
    assert rpc(phone, "exist", {"text": "发送"})["result"] is True
    rpc(phone, "clearInputText")
    assert rpc(phone, "exist", {"text": "发送"})["result"] is False


def _center(info):
    b = info["bounds"]
    return (b["left"] + b["right"]) // 2, (b["top"] + b["bottom"]) // 2


def test_errors_use_the_u2_format(phone):
    unknown = rpc(phone, "noSuchMethod")
    assert unknown["error"]["code"] == -32601
    missing = rpc(phone, "objInfo", {"text": "不存在"})
    assert "UiObjectNotFoundException" in missing["error"]["message"]


def test_crash_fault_answers_once_and_stops_the_server(phone):
    phone.faults.u2_crash_next = True
    reply = rpc(phone, "deviceInfo")
    assert "UiAutomation not connected" in reply["error"]["message"]
    assert not phone.u2_running and not phone.faults.u2_crash_next


def test_a_stopped_server_closes_streams_without_answering():
    phone = Phone()
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        request(phone, "GET", "/ping")


def test_injected_down_up_then_click_is_a_double_tap(phone):
    rpc(phone, "injectInputEvent", 0, 900, 250, 0)
    rpc(phone, "injectInputEvent", 1, 900, 250, 0)
    rpc(phone, "click", 900, 250)
    assert phone.events_of("double_tap")
