"""The 2026-07-28 hot path: a stateless POST is served without an HTTP session or an endpoint, and
what it made is freed by reference counting alone (no reference cycle left for the cyclic GC).

In process, driving the ASGI app directly (the wire behaviour is covered by test_traffic.py): the
request objects a POST makes must not show up among the cyclic garbage, JSON or SSE, answered or
refused by its handler.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import orjson
import pytest

from jsonrpc_mcp import Context
from jsonrpc_mcp.http import McpHttpApp
from jsonrpc_mcp.http.app import HttpSession
from jsonrpc_mcp.server._session import ServerSession

from ..support import TIMEOUT
from .support import build_modern_server, headers_for, modern_request

pytestmark = pytest.mark.anyio

POSTS = 50


async def asgi_post(app: McpHttpApp, body: dict[str, Any]) -> tuple[int, bytes]:
    """POST ``body`` to ``app`` as uvicorn would: its status and whole response body."""
    data = orjson.dumps(body)
    headers = [(k.encode(), v.encode()) for k, v in headers_for(body).items()]
    headers += [(b"host", b"127.0.0.1:8000"), (b"content-length", str(len(data)).encode())]
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": headers,
        "server": ("127.0.0.1", 8000),
        "query_string": b"",
        "root_path": "",
    }
    incoming = [{"type": "http.request", "body": data, "more_body": False}]
    status = 0
    out: list[bytes] = []

    async def receive() -> dict[str, Any]:
        if incoming:
            return incoming.pop()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: Any) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        else:
            out.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, b"".join(out)


@contextmanager
def cyclic_garbage() -> Iterator[list[Any]]:
    """The objects the cyclic GC finds unreachable while the block runs (kept, not freed)."""
    gc.collect()
    flags = gc.get_debug()
    gc.set_debug(gc.DEBUG_SAVEALL)
    found: list[Any] = []
    try:
        yield found
        gc.collect()
        found.extend(gc.garbage)
    finally:
        gc.set_debug(flags)
        gc.garbage.clear()


def request_objects(objects: list[Any]) -> list[str]:
    """The names of the types among ``objects`` that a modern POST makes."""
    from jsonrpc_mcp.http import app as app_module

    made = (app_module._PostChannel, app_module._ModernCall, ServerSession, HttpSession, Context)
    return sorted({type(obj).__name__ for obj in objects if isinstance(obj, made)})


@pytest.mark.parametrize("json_response", [True, False])
async def test_modern_posts_leave_no_cyclic_garbage(json_response: bool) -> None:
    app = McpHttpApp(build_modern_server(), json_response=json_response)
    calls = [
        modern_request(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}),
        modern_request(2, "tools/call", {"name": "forecast", "arguments": {}}),
        modern_request(3, "tools/list"),
        modern_request(4, "tools/call", {"name": "no-such-tool", "arguments": {}}),
        modern_request(5, "resources/read", {"uri": "res://doc"}),
        modern_request(6, "ping"),  # removed in this revision: 404
    ]
    with anyio.fail_after(TIMEOUT):
        for body in calls:  # warm up: caches, lazily imported modules
            await asgi_post(app, body)
        with cyclic_garbage() as garbage:
            statuses = set()
            for index in range(POSTS):
                status, answer = await asgi_post(app, calls[index % len(calls)])
                statuses.add(status)
                assert answer
    assert statuses == {200, 404}
    assert request_objects(garbage) == []
    assert app.sessions == {}
