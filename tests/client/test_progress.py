"""``Client.call_tool(progress=...)``: the call carries a progress token and the callback hears the
tool's ``notifications/progress``, in both eras, in memory and over real HTTP."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Client, Context, Server
from jsonrpc_mcp.http import McpHttpApp
from jsonrpc_mcp.testing import connect
from tests import timeouts
from tests.http.support import serving

pytestmark = pytest.mark.anyio

TIMEOUT = timeouts.STEP


def make_server() -> Server:
    server = Server("progress")

    @server.tool
    async def steps(count: int, ctx: Context) -> str:
        for done in range(1, count + 1):
            await ctx.report_progress(done, count, f"step {done}")
        return "done"

    return server


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_callback_hears_each_step_in_order(mode: str) -> None:
    heard: list[tuple[float, Any, Any]] = []
    async with connect(make_server(), mode=mode) as client:
        with anyio.fail_after(TIMEOUT):
            result = await client.call_tool("steps", {"count": 3}, progress=lambda *a: heard.append(a))
    assert result["content"][0]["text"] == "done"
    assert heard == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@pytest.fixture
def anyio_backend() -> str:
    """asyncio: the HTTP test serves with uvicorn (the client itself runs on trio too: tests/client)."""
    return "asyncio"


async def test_an_async_callback_over_http_and_a_failing_one_loses_nothing() -> None:
    heard: list[float] = []

    async def note(progress: float, total: float | None, message: str | None) -> None:
        heard.append(progress)

    def broken(progress: float, total: float | None, message: str | None) -> None:
        raise RuntimeError("the application's bug")

    app = McpHttpApp(make_server())
    async with serving(app) as base:
        with anyio.fail_after(TIMEOUT):
            async with Client.http(f"{base}/mcp") as client:
                assert (await client.call_tool("steps", {"count": 2}, progress=note))["content"][0][
                    "text"
                ] == "done"
                result = await client.call_tool("steps", {"count": 2}, progress=broken)
                assert result["content"][0]["text"] == "done"  # the call still ends as it should
                assert (await client.call_tool("steps", {"count": 1}))["content"][0]["text"] == "done"
    assert heard == [1, 2]
