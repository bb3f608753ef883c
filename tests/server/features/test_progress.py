"""Progress: notifications/progress only for a progressToken, increasing, nothing after the result."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Client, Context, Server
from jsonrpc_mcp.revisions import REVISIONS
from jsonrpc_mcp.testing import connect

from .feature_server import build_server
from .support import SERVE, TIMEOUT, VERSIONS, Inbox, check_schema, frames

pytestmark = pytest.mark.anyio


def _count_up(steps: int, token: Any = "tok") -> dict[str, Any]:
    params: dict[str, Any] = {"name": "count_up", "arguments": {"steps": steps}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return params


async def test_progress_is_sent_for_a_request_with_a_progress_token() -> None:
    inbox = Inbox()
    async with connect(build_server(), on_notification=inbox) as client:
        await client.request("tools/call", _count_up(3))
    assert inbox.of("notifications/progress") == [
        {"progressToken": "tok", "progress": n, "total": 3, "message": f"step {n}"} for n in (1, 2, 3)
    ]


async def test_progress_keeps_an_integer_token_as_an_integer() -> None:
    inbox = Inbox()
    async with connect(build_server(), on_notification=inbox) as client:
        await client.request("tools/call", _count_up(1, token=42))
    assert [p["progressToken"] for p in inbox.of("notifications/progress")] == [42]


async def test_no_progress_is_sent_without_a_progress_token() -> None:
    inbox = Inbox()
    async with connect(build_server(), on_notification=inbox) as client:
        result = await client.request("tools/call", _count_up(3, token=None))
        await client.ping()
    assert result["content"][0]["text"] == "counted to 3"
    assert inbox.of("notifications/progress") == []


async def test_the_message_is_left_out_where_the_revision_has_none() -> None:
    inbox = Inbox()
    async with connect(build_server(), on_notification=inbox, protocol_version="2024-11-05") as client:
        assert not REVISIONS[client.protocol_version or ""].has_progress_message
        await client.request("tools/call", _count_up(2))
    assert inbox.of("notifications/progress") == [
        {"progressToken": "tok", "progress": 1, "total": 2},
        {"progressToken": "tok", "progress": 2, "total": 2},
    ]


@pytest.mark.parametrize("second", [1.0, 0.5])
async def test_progress_that_does_not_increase_is_a_developer_error(second: float) -> None:
    server = Server("t", mask_errors=False)

    @server.tool()
    async def stuck(ctx: Context) -> str:
        await ctx.report_progress(1.0)
        await ctx.report_progress(second)
        return "unreachable"

    inbox = Inbox()
    async with connect(server, on_notification=inbox) as client:
        result = await client.request("tools/call", {"name": "stuck", "_meta": {"progressToken": "p"}})
    assert result["isError"] is True
    assert "progress must increase" in result["content"][0]["text"]
    assert [p["progress"] for p in inbox.of("notifications/progress")] == [1.0]


async def test_progress_comes_before_the_result_and_never_after() -> None:
    async with connect(build_server(), recorder=True) as client:
        await client.request("tools/call", _count_up(5))
        await client.ping()
        _, received = frames(client)
    methods = [f.get("method", "answer") for f in received]
    # initialize's answer, 5 progress notifications, the tool's answer, the ping's answer
    assert methods == ["answer", *["notifications/progress"] * 5, "answer", "answer"]


async def test_progress_reported_after_the_result_is_dropped() -> None:
    server = Server("late")
    kept: list[Context] = []

    @server.tool()
    async def keep(ctx: Context) -> str:
        kept.append(ctx)
        return "kept"

    inbox = Inbox()
    async with connect(server, on_notification=inbox) as client:
        await client.request("tools/call", {"name": "keep", "_meta": {"progressToken": "late"}})
        await kept[0].report_progress(1, 1)
        await client.ping()
    assert inbox.items == []


@pytest.mark.parametrize("version", VERSIONS)
async def test_progress_notifications_validate_against_the_official_schema(version: str) -> None:
    async with connect(build_server(), protocol_version=version, recorder=True) as client:
        await client.request("tools/call", _count_up(2))
        _, received = frames(client)
    progress = [f for f in received if f.get("method") == "notifications/progress"]
    assert len(progress) == 2
    for frame in progress:
        check_schema(version, "ProgressNotification", frame)


async def test_progress_over_stdio_with_a_subprocess() -> None:
    inbox = Inbox()
    with anyio.fail_after(TIMEOUT * 2):
        async with Client.stdio(SERVE, on_notification=inbox) as client:
            result = await client.request("tools/call", _count_up(4, token="stdio"))
    assert result["content"][0]["text"] == "counted to 4"
    assert [(p["progressToken"], p["progress"]) for p in inbox.of("notifications/progress")] == [
        ("stdio", n) for n in (1, 2, 3, 4)
    ]
