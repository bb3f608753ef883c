"""Requests start inline in the reading task (asyncio): what a handler can tell, and what it cannot.

A handler that finishes without waiting is answered before the next message is read; one that waits
keeps its task (its cancel scopes work across the wait) while another task reads on. Either way it
runs in a context of its own, can be cancelled, and a flood of quick requests does not starve the
rest of the event loop.
"""

from __future__ import annotations

import contextvars
import os
from typing import Any

import anyio
import anyio.lowlevel
import orjson
import pytest

from jsonrpc_mcp.jsonrpc import Endpoint, Request, RequestContext
from jsonrpc_mcp.jsonrpc._fastpath import INLINE_BURST
from jsonrpc_mcp.jsonrpc.endpoint import CancelSpec
from jsonrpc_mcp.transports.stdio import FdStream

from .test_endpoint import Handlers
from .wire import TIMEOUT, serve, stop

pytestmark = pytest.mark.anyio

CANCEL = CancelSpec("notifications/cancelled", "requestId")
_seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")


class Waiting:
    """Handlers ``waits`` (waits until cancelled, noting it in ``outcome``) and ``ping``."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.outcome: list[str] = []

    async def waits(self, request: Request, context: RequestContext) -> Any:
        self.started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            self.outcome.append("cancelled")
            raise

    async def ping(self, request: Request, context: RequestContext) -> Any:
        return "pong"


async def test_each_request_runs_in_a_context_of_its_own() -> None:
    async def mark(request: Request, context: RequestContext) -> Any:
        before = _seen.get()
        _seen.set(f"set by {request.id}")
        return before

    async with serve(Handlers(mark=mark)) as (_, wire):
        assert (await wire.call(1, "mark"))["result"] == "unset"
        assert (await wire.call(2, "mark"))["result"] == "unset"  # 1's value stayed in 1's context


async def test_a_handler_that_waits_keeps_its_cancel_scopes_while_later_requests_are_served() -> None:
    release = anyio.Event()

    async def waits(request: Request, context: RequestContext) -> Any:
        _seen.set("waiter")
        with anyio.fail_after(TIMEOUT):  # a scope entered before the wait, exited after it
            await release.wait()
        return _seen.get()

    async def opens(request: Request, context: RequestContext) -> Any:
        release.set()
        return _seen.get()

    async with serve(Handlers(waits=waits, opens=opens)) as (endpoint, wire):
        await wire.send({"jsonrpc": "2.0", "id": 1, "method": "waits"})
        assert await wire.call(2, "opens") == {"jsonrpc": "2.0", "id": 2, "result": "unset"}
        assert await wire.receive() == {"jsonrpc": "2.0", "id": 1, "result": "waiter"}
        assert await stop(endpoint, wire) == []


async def test_a_waiting_handler_is_cancelled_by_the_peer_and_serving_goes_on() -> None:
    waiting = Waiting()
    started, outcome, waits, ping = waiting.started, waiting.outcome, waiting.waits, waiting.ping

    async with serve(Handlers(waits=waits, ping=ping), cancel=CANCEL) as (endpoint, wire):
        await wire.send({"jsonrpc": "2.0", "id": 1, "method": "waits"})
        with anyio.fail_after(TIMEOUT):
            await started.wait()
        await wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
        assert await wire.call(2, "ping") == {"jsonrpc": "2.0", "id": 2, "result": "pong"}
        frames = await stop(endpoint, wire)
    assert frames == []  # the cancelled request is never answered
    assert outcome == ["cancelled"]


async def test_a_flood_of_requests_answered_inline_lets_the_rest_of_the_loop_run() -> None:
    # Over a pipe every buffered line is available without waiting; the reader must still yield.
    total = INLINE_BURST * 8
    served = 0
    seen_by_watcher: list[int] = []

    async def quick(request: Request, context: RequestContext) -> Any:
        nonlocal served
        served += 1
        return served

    async def watch(request: Request, context: RequestContext) -> Any:
        await anyio.lowlevel.checkpoint()  # suspends: this request leaves the reading task
        seen_by_watcher.append(served)
        return "watched"

    requests = [{"jsonrpc": "2.0", "id": 0, "method": "watch"}]
    requests += [{"jsonrpc": "2.0", "id": i, "method": "quick"} for i in range(1, total + 1)]
    payload = b"".join(orjson.dumps(r) + b"\n" for r in requests)
    to_server_r, to_server_w = os.pipe()
    from_server_r, from_server_w = os.pipe()
    assert len(payload) < 60_000  # fits the pipe: written at once, read in one go
    endpoint = Endpoint(FdStream(to_server_r, from_server_w), Handlers(watch=watch, quick=quick))
    client = FdStream(from_server_r, to_server_w)
    answers: dict[Any, Any] = {}
    try:
        with anyio.fail_after(TIMEOUT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(endpoint.run)
                os.write(to_server_w, payload)
                while len(answers) < total + 1:
                    answer = orjson.loads(await client.receive())
                    answers[answer["id"]] = answer["result"]
                await endpoint.aclose()
                tg.cancel_scope.cancel()
    finally:
        for fd in (to_server_r, to_server_w, from_server_r, from_server_w):
            os.close(fd)
    assert answers[0] == "watched"
    assert sorted(answers[i] for i in range(1, total + 1)) == list(range(1, total + 1))
    assert seen_by_watcher and seen_by_watcher[0] < total  # woke before the flood was through
