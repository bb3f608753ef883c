"""Cancellation both ways: the client cancels the server's work, the server cancels its own requests."""

from __future__ import annotations

import threading
import time
from typing import Any

import anyio
import anyio.from_thread
import pytest

from jsonrpc_mcp import Context, Server
from jsonrpc_mcp.jsonrpc.errors import RequestTimeout
from jsonrpc_mcp.testing import connect

from .support import TIMEOUT, Inbox, frames, text_of

pytestmark = pytest.mark.anyio


class Probe:
    """Events a handler sets, for the test to wait on."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.cancelled = anyio.Event()
        self.saw_cancelled_flag = False


def _waiting_server(probe: Probe) -> Server:
    server = Server("cancel")

    @server.tool()
    async def wait_forever(ctx: Context) -> str:
        probe.started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            probe.saw_cancelled_flag = ctx.cancelled
            probe.cancelled.set()
            raise
        return "unreachable"

    return server


async def test_a_cancelled_request_cancels_its_handler_and_gets_no_answer() -> None:
    probe = Probe()
    async with connect(_waiting_server(probe), recorder=True) as client:
        with anyio.CancelScope() as scope:

            async def call() -> None:
                await client.call_tool("wait_forever")

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                with anyio.fail_after(TIMEOUT):
                    await probe.started.wait()
                scope.cancel()  # the client sends notifications/cancelled for its request
        with anyio.fail_after(TIMEOUT):
            await probe.cancelled.wait()
        await client.ping()
        sent, received = frames(client)
    call_id = next(f["id"] for f in sent if f.get("method") == "tools/call")
    cancel = next(f for f in sent if f.get("method") == "notifications/cancelled")
    assert cancel["params"]["requestId"] == call_id
    assert probe.saw_cancelled_flag is True
    assert not [f for f in received if f.get("id") == call_id]


async def test_the_client_cancels_a_request_that_times_out() -> None:
    probe = Probe()
    async with connect(_waiting_server(probe), recorder=True) as client:
        with pytest.raises(RequestTimeout):
            await client.call_tool("wait_forever", timeout=0.2)
        with anyio.fail_after(TIMEOUT):
            await probe.cancelled.wait()
        sent, _ = frames(client)
    cancel = next(f for f in sent if f.get("method") == "notifications/cancelled")
    assert cancel["params"]["requestId"] == next(f["id"] for f in sent if f.get("method") == "tools/call")


async def test_a_sync_handler_can_watch_ctx_cancelled_and_stop() -> None:
    server = Server("sync-cancel")
    started = anyio.Event()
    stopped = anyio.Event()
    outcome: list[str] = []

    @server.tool()
    def poll(ctx: Context) -> str:
        anyio.from_thread.run_sync(started.set)
        gate = threading.Event()
        deadline = time.monotonic() + TIMEOUT
        while not ctx.cancelled and time.monotonic() < deadline:
            gate.wait(0.01)  # the handler's own work loop, checking the flag between slices
        outcome.append("cancelled" if ctx.cancelled else "gave up")
        anyio.from_thread.run_sync(stopped.set)
        return "done"

    async with connect(server) as client:
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                await client.call_tool("poll")

            tg.start_soon(call)
            with anyio.fail_after(TIMEOUT):
                await started.wait()
            tg.cancel_scope.cancel()
        with anyio.fail_after(TIMEOUT):
            await stopped.wait()
    assert outcome == ["cancelled"]


async def test_the_server_cancels_its_request_to_the_client_on_timeout() -> None:
    server = Server("impatient", request_timeout=0.2)

    @server.tool()
    async def ask(ctx: Context) -> str:
        await ctx.sample(["hello?"])
        return "unreachable"

    client_handler_cancelled = anyio.Event()

    async def never_answer(params: Any) -> Any:
        try:
            await anyio.sleep_forever()
        finally:
            client_handler_cancelled.set()

    inbox = Inbox()
    async with connect(
        server,
        recorder=True,
        on_notification=inbox,
        capabilities={"sampling": {}},
        request_handlers={"sampling/createMessage": never_answer},
    ) as client:
        result = await client.call_tool("ask")
        with anyio.fail_after(TIMEOUT):
            await client_handler_cancelled.wait()
        _, received = frames(client)
    assert result["isError"] is True
    assert "RequestTimeout" in text_of(result)
    sampling_id = next(f["id"] for f in received if f.get("method") == "sampling/createMessage")
    assert inbox.of("notifications/cancelled") == [{"requestId": sampling_id, "reason": "timeout"}]


async def test_cancelling_a_tool_call_cancels_the_request_it_was_waiting_on() -> None:
    server = Server("chain")
    asked = anyio.Event()

    @server.tool()
    async def ask(ctx: Context) -> str:
        await ctx.sample(["hello?"])
        return "unreachable"

    async def slow_answer(params: Any) -> Any:
        asked.set()
        await anyio.sleep_forever()

    inbox = Inbox()
    async with connect(
        server,
        recorder=True,
        on_notification=inbox,
        capabilities={"sampling": {}},
        request_handlers={"sampling/createMessage": slow_answer},
    ) as client:
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                await client.call_tool("ask")

            tg.start_soon(call)
            with anyio.fail_after(TIMEOUT):
                await asked.wait()
            tg.cancel_scope.cancel()
        await inbox.wait_for(lambda items: any(m == "notifications/cancelled" for m, _ in items))
        _, received = frames(client)
    sampling_id = next(f["id"] for f in received if f.get("method") == "sampling/createMessage")
    assert [p["requestId"] for p in inbox.of("notifications/cancelled")] == [sampling_id]
