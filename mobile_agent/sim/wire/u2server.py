"""The on-device uiautomator2 server (what `app_process ... com.wetest.uia2.Main -p 9008` serves), simulated.

``U2Server(phone).serve(stream)`` answers one adb ``tcp:9008`` stream: HTTP/1.1 with keep-alive (u2 3.7 opens a
new stream per request and closes it after reading the Content-Length body; ``Connection: close`` is honoured).
``GET /ping`` -> ``pong``; ``POST /jsonrpc/0`` -> JSON-RPC 2.0 with the methods uiautomator2 3.7.1 calls for
info, window size, screenshots, gestures, keys, clipboard, text input, hierarchy and the common selector queries.
Errors use the server's format (code -32001 + Java exception class in ``message``; -32601 for unknown methods).
``GET /stop`` stops the server, as the real one's HTTP server does.

Idle, as the u2.jar uiautomator2 3.7 launches (openatx/android-uiautomator-server-jar @ d0449b9da4b32ad28bee0d3c3f561c49010acf35)
has it: ``waitForIdle(timeout)`` is ``void`` (it blocks until the UI is idle or the timeout passes and answers null
either way; AutomatorService.java); ``dumpWindowHierarchy`` waits for idle first (stub/AccessibilityNodeInfoDumper
``getWindowRoots`` begins with ``device.waitForIdle()``), but for the Configurator's waitForIdleTimeout only, which
AutomatorServiceImpl's constructor sets to 0 — and UiAutomation.waitForIdle with a global timeout of 0 gives up at
once (aosp-mirror/platform_frameworks_base core/java/android/app/UiAutomation.java @ 0172a23b). So a dump waits for
idle only after a client raised that timeout with ``setConfigurator`` (which a server restart resets).
"""

from __future__ import annotations

import base64
import json
import logging
import re
import shlex
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from mobile_agent.errors import InputSecurityError
from mobile_agent.sim.phone.display import ScreenshotFailed
from mobile_agent.sim.shell.android import AndroidShell
from mobile_agent.sim.shell.sh import ShellIO
from mobile_agent.sim.wire.selector import describe, index_in_parent, matches, obj_info
from mobile_agent.sim.world.node import Node

if TYPE_CHECKING:
    from mobile_agent.sim.phone.phone import Phone

log = logging.getLogger(__name__)

MAX_HEADER = 64 * 1024
MAX_BODY = 16 * 1024 * 1024
UIAUTOMATION_NOT_CONNECTED = (
    "java.lang.IllegalStateException: UiAutomation not connected, UiAutomation@1f3c2a8[id=-1, flags=0]"
)
OBJECT_NOT_FOUND = "androidx.test.uiautomator.UiObjectNotFoundException"
# What AutomatorServiceImpl's constructor sets (waitForIdleTimeout lives on the phone: it changes)
CONFIGURATOR_DEFAULTS = {
    "actionAcknowledgmentTimeout": 500,
    "keyInjectionDelay": 0,
    "scrollAcknowledgmentTimeout": 200,
    "waitForSelectorTimeout": 0,
    "uiAutomationFlags": 0,
}


class Stream(Protocol):
    def recv(self, n: int) -> bytes: ...

    def sendall(self, data: bytes) -> None: ...

    def close(self) -> None: ...


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class _Reader:
    def __init__(self, stream: Stream) -> None:
        self.stream = stream
        self.buffer = b""

    def _fill(self) -> bool:
        chunk = self.stream.recv(65536)
        if not chunk:
            return False
        self.buffer += chunk
        return True

    def read_until(self, marker: bytes, limit: int) -> bytes | None:
        while marker not in self.buffer:
            if len(self.buffer) > limit or not self._fill():
                return None
        head, _, self.buffer = self.buffer.partition(marker)
        return head

    def read_exactly(self, n: int) -> bytes | None:
        while len(self.buffer) < n:
            if not self._fill():
                return None
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data


class U2Server:
    def __init__(self, phone: Phone) -> None:
        self.phone = phone
        self._methods: dict[str, Callable[..., Any]] = {
            name[4:]: getattr(self, name) for name in dir(self) if name.startswith("rpc_")
        }

    # ------------------------------------------------------------------ HTTP
    def serve(self, stream: Stream) -> None:
        """Answer requests on one stream until the peer closes it (or asks to close). Never raises."""
        try:
            if not self.phone.u2_running:
                return  # nothing listens on 9008 while the server is down
            reader = _Reader(stream)
            while True:
                head = reader.read_until(b"\r\n\r\n", MAX_HEADER)
                if head is None:
                    return
                keep_alive = self._handle(reader, stream, head)
                if not keep_alive or not self.phone.u2_running:
                    return
        except (OSError, ConnectionError) as exc:
            log.debug("u2 stream ended: %s", exc)
        except Exception:  # a bug here must not kill the adbd stream thread silently
            log.exception("u2 server failed")
        finally:
            try:
                stream.close()
            except OSError:
                pass

    def _handle(self, reader: _Reader, stream: Stream, head: bytes) -> bool:
        lines = head.decode("latin-1").split("\r\n")
        try:
            method, path, version = lines[0].split(" ", 2)
        except ValueError:
            self._respond(stream, 400, b"bad request", "text/plain", close=True)
            return False
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        keep_alive = version.upper() == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        if headers.get("connection", "").lower() == "keep-alive":
            keep_alive = True
        body = b""
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = self._read_chunked(reader)
            if body is None:
                return False
        elif "content-length" in headers:
            length = int(headers["content-length"] or 0)
            if length > MAX_BODY:
                self._respond(stream, 413, b"too large", "text/plain", close=True)
                return False
            if length and not reader.buffer:
                # An interim 1xx is legal for any HTTP/1.1 client (http.client skips it). It matters because
                # http.client writes headers and body separately: with Nagle on the client and delayed ACKs in
                # the adb server, the body would otherwise wait ~40 ms for an ACK that nothing else triggers.
                stream.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            data = reader.read_exactly(length)
            if data is None:
                return False
            body = data
        path = path.split("?", 1)[0]
        counter = getattr(self.phone, "count_request", None)  # a stand-in phone in a unit test may not count
        if counter is not None:
            counter(_request_name(method, path, body))
        if method == "GET" and path == "/ping":
            self._respond(stream, 200, b"pong", "text/plain", close=not keep_alive)
        elif method == "GET" and path == "/stop":
            self._respond(stream, 200, b"Server stopped!!!", "text/plain", close=True)
            self.phone.u2_stop()
            return False
        elif method == "GET" and path == "/info":
            self._respond(
                stream,
                200,
                json.dumps(self.rpc_deviceInfo()).encode(),
                "application/json",
                close=not keep_alive,
            )
        elif method == "POST" and path.startswith("/jsonrpc/0"):
            reply = self.handle_jsonrpc(body)
            self._respond(stream, 200, reply, "application/json; charset=utf-8", close=not keep_alive)
        else:
            self._respond(stream, 404, b"Not Found", "text/plain", close=not keep_alive)
        return keep_alive

    def _read_chunked(self, reader: _Reader) -> bytes | None:
        body = b""
        while True:
            size_line = reader.read_until(b"\r\n", MAX_HEADER)
            if size_line is None:
                return None
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                reader.read_until(b"\r\n", MAX_HEADER)
                return body
            chunk = reader.read_exactly(size + 2)
            if chunk is None:
                return None
            body += chunk[:-2]

    @staticmethod
    def _respond(stream: Stream, status: int, body: bytes, content_type: str, close: bool) -> None:
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 413: "Payload Too Large"}.get(status, "OK")
        head = (
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
            f"Connection: {'close' if close else 'keep-alive'}\r\n\r\n"
        )
        stream.sendall(head.encode("latin-1") + body)

    # ------------------------------------------------------------------ JSON-RPC
    def handle_jsonrpc(self, body: bytes) -> bytes:
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            return _encode(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
            )
        if isinstance(request, list):
            # A batch: the server's jsonrpc4j (JsonRpcBasicServer.handleArray) answers its calls one after another,
            # in order, as one JSON array in one HTTP response.
            return b"[" + b",".join(self._handle_call(call) for call in request) + b"]"
        return self._handle_call(request)

    def _handle_call(self, request: Any) -> bytes:
        rid = request.get("id") if isinstance(request, dict) else None
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            return _encode(
                {"jsonrpc": "2.0", "id": rid, "error": {"code": -32600, "message": "Invalid Request"}}
            )
        method = request["method"]
        params = request.get("params")
        args = params if isinstance(params, list) else ([] if not params else [params])
        if self.phone.faults.u2_crash_next or not self.phone.u2_running:  # and the batch's later calls
            self.phone.faults.u2_crash_next = False
            self.phone.u2_stop()
            return _error(
                rid, -32001, UIAUTOMATION_NOT_CONNECTED, "android.app.UiAutomation.throwIfNotConnectedLocked"
            )
        handler = self._methods.get(method)
        if handler is None:
            return _error(rid, -32601, "Method not found", f"method {method} not found")
        try:
            result = handler(*args)
        except RpcError as exc:
            return _error(rid, exc.code, exc.message, exc.data)
        except InputSecurityError as exc:
            return _error(rid, -32001, "java.lang.SecurityException", exc.message)
        except ScreenshotFailed as exc:
            return _error(rid, -32001, "java.lang.NullPointerException", exc.message)
        except TypeError as exc:
            return _error(rid, -32602, "Invalid params", str(exc))
        return _encode({"jsonrpc": "2.0", "id": rid, "result": result})

    # ------------------------------------------------------------------ device
    def rpc_deviceInfo(self) -> dict[str, Any]:
        phone = self.phone
        w, h = phone.window_size()
        dp = phone.config.density / 160
        return {
            "currentPackageName": phone.current()[0],
            "displayHeight": h,
            "displayRotation": phone.orientation,
            "displaySizeDpX": round(w / dp),
            "displaySizeDpY": round(h / dp),
            "displayWidth": w,
            "productName": phone.props["ro.product.name"],
            "screenOn": phone.screen_on,
            "sdkInt": phone.config.sdk,
            "naturalOrientation": phone.orientation in (0, 2),
        }

    def rpc_windowSize(self) -> list[int]:
        return list(self.phone.window_size())

    def rpc_takeScreenshot(self, scale: float = 1.0, quality: int = 80) -> str:
        data = self.phone.screenshot("jpeg", quality=int(quality), scale=float(scale or 1.0))
        return base64.b64encode(data).decode("ascii")

    def rpc_waitForIdle(self, timeout_ms: int = 10000) -> None:
        self.phone.display.wait_for_idle(float(timeout_ms) / 1000)  # void on the real server: it never tells
        return None

    def rpc_dumpWindowHierarchy(
        self, compressed: bool = False, max_depth: int = 50, root_in_active: bool = False
    ) -> str:
        idle_ms = getattr(self.phone, "u2_idle_timeout_ms", 0)
        if idle_ms > 0:
            self.phone.display.wait_for_idle(idle_ms / 1000)
        return self.phone.hierarchy_xml(max_depth=int(max_depth or 50))

    def rpc_getConfigurator(self) -> dict[str, Any]:
        return {**CONFIGURATOR_DEFAULTS, "waitForIdleTimeout": getattr(self.phone, "u2_idle_timeout_ms", 0)}

    def rpc_setConfigurator(self, info: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(info, dict):
            raise TypeError("setConfigurator takes a ConfiguratorInfo object")
        if "waitForIdleTimeout" in info:
            self.phone.u2_idle_timeout_ms = max(0, int(info["waitForIdleTimeout"]))
        return self.rpc_getConfigurator()

    def rpc_executeShellCommand(self, command: str, timeout_ms: int = 10000) -> dict[str, Any]:
        """AutomatorServiceImpl.executeShellCommand (android-uiautomator-server-jar @ d0449b9): ``Runtime.exec``,
        the command split on whitespace and run without a shell; a ShellCommandResult."""
        out, err = bytearray(), bytearray()
        line = " ".join(shlex.quote(word) for word in str(command).split())
        code = AndroidShell(self.phone).run(line, ShellIO(out.extend, err.extend)) if line else -1
        return {
            "stdout": out.decode(errors="replace"),
            "stderr": err.decode(errors="replace"),
            "returnCode": code,
        }

    def rpc_wakeUp(self) -> bool:
        self.phone.key("wakeup")
        return True

    def rpc_sleep(self) -> bool:
        self.phone.key("sleep")
        return True

    def rpc_isScreenOn(self) -> bool:
        return self.phone.screen_on

    def rpc_setOrientation(self, value: str) -> bool:
        self.phone.orientation = {
            "n": 0,
            "natural": 0,
            "l": 1,
            "left": 1,
            "u": 2,
            "upsidedown": 2,
            "r": 3,
            "right": 3,
        }.get(str(value).lower(), 0)
        return True

    def rpc_freezeRotation(self, freeze: bool = True) -> bool:
        return True

    def rpc_getLastToast(self) -> str | None:
        toasts = self.phone.events_of("toast")
        return toasts[-1].detail["text"] if toasts else None

    def rpc_clearLastToast(self) -> bool:
        return True

    def rpc_makeToast(self, text: str, duration_ms: int = 1000) -> bool:
        self.phone.show_toast(str(text), duration_ms / 1000)
        return True

    def rpc_openNotification(self) -> bool:
        return True

    def rpc_openQuickSettings(self) -> bool:
        return True

    def rpc_getLastTraversedText(self) -> str | None:
        return None

    def rpc_clearLastTraversedText(self) -> bool:
        return True

    # ------------------------------------------------------------------ gestures
    def rpc_click(self, *args: Any) -> bool:
        if args and isinstance(args[0], dict):  # click(selector)
            node = self._find(args[0])
            self.phone.tap(*node.center)
            return True
        x, y = int(args[0]), int(args[1])
        if len(args) > 2 and args[2]:
            self.phone.long_press(x, y, int(args[2]))
        else:
            self.phone.tap(x, y)
        return True

    def rpc_longClick(self, *args: Any) -> bool:
        if args and isinstance(args[0], dict):
            x, y = self._find(args[0]).center
        else:
            x, y = int(args[0]), int(args[1])
        self.phone.long_press(x, y, 500)
        return True

    def rpc_swipe(self, fx: int, fy: int, tx: int, ty: int, steps: int = 10) -> bool:
        self.phone.swipe(int(fx), int(fy), int(tx), int(ty), int(steps) * 5)
        return True

    def rpc_swipePoints(self, points: list[int], steps: int = 10) -> bool:
        pairs = [(int(points[i]), int(points[i + 1])) for i in range(0, len(points) - 1, 2)]
        self.phone.swipe_points(pairs, int(steps) * 5)
        return True

    def rpc_drag(self, sx: int, sy: int, ex: int, ey: int, steps: int = 100) -> bool:
        self.phone.drag(int(sx), int(sy), int(ex), int(ey), int(steps) * 5)
        return True

    def rpc_injectInputEvent(self, action: int, x: float, y: float, meta: int = 0) -> bool:
        # u2 sends each event on its own connection, so the finger's state lives on the phone, not this server
        phone = self.phone
        if action == 0:  # ACTION_DOWN
            phone.touch_down = (int(x), int(y), time.monotonic())
        elif action == 1 and phone.touch_down is not None:  # ACTION_UP ends a tap or a swipe
            x0, y0, t0 = phone.touch_down
            phone.touch_down = None
            held_ms = int((time.monotonic() - t0) * 1000)
            if abs(int(x) - x0) < 10 and abs(int(y) - y0) < 10:
                if held_ms >= 500:
                    self.phone.long_press(x0, y0, 0)
                else:
                    self.phone.tap(x0, y0)
            else:
                self.phone.swipe(x0, y0, int(x), int(y), held_ms)
        return True

    # ------------------------------------------------------------------ keys and text
    def rpc_pressKey(self, name: str) -> bool:
        self.phone.key(str(name))
        return True

    def rpc_pressKeyCode(self, code: int, meta: int = 0) -> bool:
        self.phone.key(int(code))
        return True

    def rpc_setClipboard(self, label: str | None, text: str) -> None:
        self.phone.clipboard = text
        return None

    def rpc_getClipboard(self) -> str:
        return self.phone.clipboard

    def rpc_pasteClipboard(self) -> None:
        self.phone.paste()
        return None

    def rpc_clearInputText(self) -> None:
        self.phone.clear_text()
        return None

    # ------------------------------------------------------------------ selectors (d(text=...))
    def rpc_exist(self, selector: dict) -> bool:
        return bool(self._matches(selector))

    def rpc_waitForExists(self, selector: dict, timeout_ms: int = 0) -> bool:
        deadline = time.monotonic() + max(0, int(timeout_ms)) / 1000
        while True:
            if self._matches(selector):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)

    def rpc_waitUntilGone(self, selector: dict, timeout_ms: int = 0) -> bool:
        deadline = time.monotonic() + max(0, int(timeout_ms)) / 1000
        while True:
            if not self._matches(selector):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)

    def rpc_count(self, selector: dict) -> int:
        return len(self._matches(selector, ignore_instance=True))

    def rpc_objInfo(self, selector: dict) -> dict[str, Any]:
        return obj_info(self._find(selector))

    def rpc_objInfoOfAllInstances(self, selector: dict) -> list[dict[str, Any]]:
        return [obj_info(n) for n in self._matches(selector, ignore_instance=True)]

    def rpc_getText(self, selector: dict) -> str:
        node = self._find(selector)
        return node.text

    def rpc_setText(self, selector: dict, text: str) -> bool:
        node = self._find(selector)
        self.phone.tap(*node.center)
        self.phone.clear_text()
        if text:
            self.phone.input_text(str(text))
        return True

    def rpc_clearTextField(self, selector: dict) -> bool:
        node = self._find(selector)
        self.phone.tap(*node.center)
        self.phone.clear_text()
        return True

    def _find(self, selector: dict) -> Node:
        found = self._matches(selector)
        if not found:
            raise RpcError(-32002, f"{OBJECT_NOT_FOUND}: UiSelector{describe(selector)}", OBJECT_NOT_FOUND)
        return found[0]

    def _matches(self, selector: dict, ignore_instance: bool = False) -> list[Node]:
        with self.phone.lock:
            tree = self.phone.display.tree()
        nodes = [n for n in tree.walk() if matches(n, selector)]
        if "index" in selector:
            nodes = [n for n in nodes if index_in_parent(tree, n) == int(selector["index"])]
        if not ignore_instance and "instance" in selector:
            i = int(selector["instance"])
            return nodes[i : i + 1]
        return nodes


def _request_name(method: str, path: str, body: bytes) -> str:
    """``u2 <rpc method>`` for a JSON-RPC call, ``u2 GET /ping`` for the rest (the phone's request counts)."""
    if path.startswith("/jsonrpc/"):
        found = [m.decode() for m in re.findall(rb'"method"\s*:\s*"([A-Za-z0-9_]+)"', body[:4096])]
        if body.lstrip()[:1] == b"[":
            return f"u2 batch[{','.join(found)}]"
        return f"u2 {found[0] if found else '?'}"
    return f"u2 {method} {path}"


def _encode(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, ensure_ascii=False).encode("utf-8")


def _error(rid: Any, code: int, message: str, data: str | None = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return _encode({"jsonrpc": "2.0", "id": rid, "error": error})
