"""Several u2 JSON-RPC calls in one HTTP request: the phone answers them one after another, in order.

The u2.jar serves JSON-RPC through jsonrpc4j (openatx/android-uiautomator-server-jar, Main.java and
stub/AutomatorHttpServer.java), whose server takes a JSON array as a batch and answers its calls in order in one
array (briandilley/jsonrpc4j, JsonRpcBasicServer.handleArray). uiautomator2 itself sends one call per request, so
settling — wait for idle, then take the frame — would be two round-trips; as a batch it is one, and the frame is
taken the moment the phone is idle, with no trip back to the host in between.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import adbutils
from uiautomator2.core import AdbHTTPConnection

from mobile_agent.device.u2_server import PORT


@dataclass(frozen=True)
class Call:
    method: str
    params: tuple[Any, ...] = ()


class BatchUnsupported(Exception):
    """The server did not answer the batch as an array (a server without batches): send the calls one by one."""


class BatchCallFailed(Exception):
    """One call of the batch answered an error; ``error`` is the JSON-RPC error object."""

    def __init__(self, method: str, error: dict[str, Any]) -> None:
        super().__init__(f"{method}: {error.get('message', error)}")
        self.method = method
        self.error = error


def call_batch(adb: adbutils.AdbDevice, calls: list[Call], timeout: float) -> list[Any]:
    """The results of ``calls``, in order. Raises BatchUnsupported, BatchCallFailed, or the transport's errors
    (uiautomator2's HTTPError, OSError, TimeoutError) for the caller's guard to classify."""
    payload = [
        {"jsonrpc": "2.0", "id": i + 1, "method": call.method, "params": list(call.params)}
        for i, call in enumerate(calls)
    ]
    headers = {"Content-Type": "application/json", "Accept-Encoding": "", "User-Agent": "mobile-agent"}
    with AdbHTTPConnection(adb, port=PORT) as conn:
        conn.timeout = timeout
        conn.request("POST", "/jsonrpc/0", json.dumps(payload), headers=headers)
        response = conn.getresponse()
        body = response.read()
    if response.status != 200:
        raise BatchUnsupported(f"HTTP {response.status}")
    try:
        answers = json.loads(body)
    except ValueError:
        raise BatchUnsupported("not JSON") from None
    if not isinstance(answers, list) or len(answers) != len(calls):
        raise BatchUnsupported("not an array of answers")
    by_id = {a.get("id"): a for a in answers if isinstance(a, dict)}
    results = []
    for i, call in enumerate(calls):
        answer = by_id.get(i + 1)
        if answer is None:
            raise BatchUnsupported(f"no answer for {call.method}")
        if "error" in answer:
            raise BatchCallFailed(call.method, answer["error"] or {})
        results.append(answer.get("result"))
    return results


__all__ = ["BatchCallFailed", "BatchUnsupported", "Call", "call_batch"]
