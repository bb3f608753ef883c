"""Sync handlers run in worker threads and never block the loop; async handlers run on the loop."""

from __future__ import annotations

import threading

import anyio
import pytest

from jsonrpc_mcp import Server
from jsonrpc_mcp.testing import connect
from tests import timeouts

pytestmark = pytest.mark.anyio


async def test_a_blocked_sync_handler_does_not_block_an_async_call_on_the_same_connection() -> None:
    server = Server("threads")
    release = threading.Event()
    entered = threading.Event()

    @server.tool()
    def blocking() -> str:
        entered.set()
        if not release.wait(timeout=timeouts.STEP):
            return "never released"
        return "released"

    @server.tool()
    async def releaser() -> str:
        release.set()
        return "set"

    async with connect(server, timeout=5) as client:
        results: dict[str, str] = {}

        async def call_blocking() -> None:
            results["blocking"] = (await client.call_tool("blocking"))["content"][0]["text"]

        with anyio.fail_after(timeouts.STEP):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call_blocking)
                await anyio.to_thread.run_sync(entered.wait, 5)  # the sync handler is now blocked
                results["releaser"] = (await client.call_tool("releaser"))["content"][0]["text"]
    assert results == {"releaser": "set", "blocking": "released"}


async def test_sync_handlers_run_in_a_worker_thread_and_async_ones_on_the_loop() -> None:
    server = Server("threads")
    where: dict[str, threading.Thread] = {}

    @server.tool()
    def sync_tool() -> str:
        where["sync"] = threading.current_thread()
        return ""

    @server.tool()
    async def async_tool() -> str:
        where["async"] = threading.current_thread()
        return ""

    @server.resource("res://sync")
    def sync_resource() -> str:
        where["resource"] = threading.current_thread()
        return ""

    @server.prompt()
    def sync_prompt() -> str:
        where["prompt"] = threading.current_thread()
        return ""

    async with connect(server) as client:
        await client.call_tool("sync_tool")
        await client.call_tool("async_tool")
        await client.read_resource("res://sync")
        await client.get_prompt("sync_prompt")
    loop_thread = threading.current_thread()
    assert where["async"] is loop_thread
    assert where["sync"] is not loop_thread
    assert where["resource"] is not loop_thread
    assert where["prompt"] is not loop_thread


async def test_concurrent_calls_are_served_concurrently() -> None:
    server = Server("threads")
    arrived = 0
    all_in = anyio.Event()

    @server.tool()
    async def gather() -> str:
        nonlocal arrived
        arrived += 1
        if arrived == 3:
            all_in.set()
        await all_in.wait()  # only returns once all three calls are in flight together
        return "together"

    async with connect(server, timeout=5) as client:
        texts: list[str] = []

        async def one() -> None:
            texts.append((await client.call_tool("gather"))["content"][0]["text"])

        with anyio.fail_after(timeouts.STEP):
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(one)
    assert texts == ["together"] * 3
