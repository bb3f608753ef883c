"""A 2026-07-28 ``tools/call`` of a tool that cannot wait (an ``async def`` with no ``await``) is
served without a cancel scope (``Router.cannot_wait``), and is answered exactly as any other: its
result, its errors, the log records it sends through ``get_context()`` (which do make the request
wait for its own sends, on an SSE answer), and a waiting tool still gets its scope."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import orjson
import pytest

from jsonrpc_mcp import Server, ToolError, get_context
from jsonrpc_mcp.http import McpHttpApp

from ..support import TIMEOUT, SseReader, messages, serving
from .support import headers_for, modern_request, send, valid
from .test_hot_path import asgi_post

pytestmark = pytest.mark.anyio

LOG_LEVEL = "io.modelcontextprotocol/logLevel"
seen_scopes: dict[str, Any] = {}


def build() -> Server:
    server = Server("unscoped", logging_enabled=True)  # (no handler takes a Context)

    @server.tool()
    async def shout(message: str) -> str:
        """Never waits."""
        seen_scopes["shout"] = get_context()._rc.scope
        return message.upper()

    @server.tool()
    async def refuse(message: str) -> str:
        """Never waits, fails."""
        raise ToolError(f"no {message}")

    @server.tool()
    async def chatty(message: str) -> str:
        """Never waits itself, but logs: the request waits for its own sends."""
        get_context().logger.warning("about %s", message)
        return message

    @server.tool()
    async def patient(message: str) -> str:
        """Waits."""
        await anyio.lowlevel.checkpoint()
        seen_scopes["patient"] = get_context()._rc.scope
        return message

    return server


@pytest.fixture(scope="module")
async def url() -> AsyncIterator[str]:
    async with serving(McpHttpApp(build())) as base:
        yield base + "/mcp"


def tool_call(rid: int, name: str, **meta_extra: Any) -> dict[str, Any]:
    return modern_request(rid, "tools/call", {"name": name, "arguments": {"message": "hi"}}, **meta_extra)


async def test_only_the_waiting_tool_gets_a_cancel_scope() -> None:
    app = McpHttpApp(build(), json_response=True)
    seen_scopes.clear()
    for rid, name in enumerate(("shout", "patient")):
        status, body = await asgi_post(app, tool_call(rid, name))
        assert status == 200
        assert orjson.loads(body)["result"]["resultType"] == "complete"
    assert seen_scopes["shout"] is None
    assert isinstance(seen_scopes["patient"], anyio.CancelScope)


async def test_a_tool_that_cannot_wait_is_answered_as_any_other(http: httpx.AsyncClient, url: str) -> None:
    answer = valid((await send(http, url, tool_call(1, "shout"))).json(), "tools/call")
    assert answer["result"]["content"] == [{"type": "text", "text": "HI"}]
    failed = valid((await send(http, url, tool_call(2, "refuse"))).json(), "tools/call")
    assert failed["result"]["isError"] is True
    assert failed["result"]["content"][0]["text"] == "no hi"


async def test_its_log_records_come_before_its_result_on_an_sse_answer(
    http: httpx.AsyncClient, url: str
) -> None:
    body = tool_call(3, "chatty", **{LOG_LEVEL: "debug"})
    with anyio.fail_after(TIMEOUT):
        async with http.stream(
            "POST", url, content=orjson.dumps(body), headers=headers_for(body)
        ) as response:
            assert response.status_code == 200
            assert response.headers["content-type"] == "text/event-stream"
            received = messages(await SseReader(response).rest())
    for message in received:
        valid(message, "tools/call")
    assert [m.get("method") for m in received] == ["notifications/message", None]
    assert received[0]["params"]["level"] == "warning"
    assert received[0]["params"]["data"] == "about hi"
    assert received[1]["result"]["content"] == [{"type": "text", "text": "hi"}]
