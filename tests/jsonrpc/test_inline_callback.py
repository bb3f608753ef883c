"""Requests started from the stdio read callback (FdStream.serve_inline), over real pipes.

While the reading task waits for input, each new line is offered from the event loop's read
callback, running as that task. What a handler sees must not differ from a request started in the
reading task itself: its own context, working cancel scopes (also across a wait, after the reading
task took it over), cancellation by the peer, order with messages that are not served there.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import anyio.lowlevel
import orjson
import pytest

from jsonrpc_mcp.jsonrpc import Endpoint, Request, RequestContext
from jsonrpc_mcp.jsonrpc.endpoint import CancelSpec
from jsonrpc_mcp.transports.stdio import FdStream

from .test_endpoint import Handlers
from .test_inline import Waiting
from .wire import TIMEOUT

pytestmark = pytest.mark.anyio

CANCEL = CancelSpec("notifications/cancelled", "requestId")
_seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the callback path exists on asyncio only


class CountingFdStream(FdStream):
    """An FdStream that counts the lines its consumer took from the read callback."""

    taken = 0

    def serve_inline(self, consumer: Callable[[bytes], bool] | None) -> bool:
        if consumer is None:
            return super().serve_inline(None)
        inner = consumer

        def counting(line: bytes) -> bool:
            took = inner(line)
            self.taken += took
            return took

        return super().serve_inline(counting)


class PipeWire:
    """The test's end: writes requests to the endpoint's input pipe, reads its answers."""

    def __init__(self, write_fd: int, answers: FdStream) -> None:
        self._fd = write_fd
        self._answers = answers

    def send(self, message: Any) -> None:
        os.write(self._fd, orjson.dumps(message) + b"\n")

    async def receive(self) -> Any:
        with anyio.fail_after(TIMEOUT):
            return orjson.loads(await self._answers.receive())

    async def call(self, rid: Any, method: str) -> Any:
        self.send({"jsonrpc": "2.0", "id": rid, "method": method})
        return await self.receive()


@contextlib.asynccontextmanager
async def serve_over_pipes(handlers: Handlers) -> AsyncIterator[tuple[CountingFdStream, PipeWire]]:
    to_server_r, to_server_w = os.pipe()
    from_server_r, from_server_w = os.pipe()
    stream = CountingFdStream(to_server_r, from_server_w)
    endpoint = Endpoint(stream, handlers, cancel=CANCEL)
    done = anyio.Event()

    async def run() -> None:
        try:
            await endpoint.run()
        finally:
            done.set()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            with anyio.fail_after(TIMEOUT):
                await endpoint.wait_started()
            yield stream, PipeWire(to_server_w, FdStream(from_server_r, to_server_w))
            os.close(to_server_w)  # end of input: the endpoint's run() returns
            to_server_w = -1
            with anyio.fail_after(TIMEOUT):
                await done.wait()
    finally:
        stream.restore()
        for fd in (to_server_r, to_server_w, from_server_r, from_server_w):
            if fd >= 0:
                os.close(fd)


async def test_sequential_requests_are_answered_from_the_read_callback_each_in_its_own_context() -> None:
    tasks: list[asyncio.Task[Any] | None] = []

    async def mark(request: Request, context: RequestContext) -> Any:
        tasks.append(asyncio.current_task())
        before = _seen.get()
        _seen.set(f"set by {request.id}")
        with anyio.move_on_after(TIMEOUT) as scope:  # noqa: ASYNC100 (entered and left without waiting)
            pass
        return [before, scope.cancelled_caught]

    async with serve_over_pipes(Handlers(mark=mark)) as (stream, wire):
        for rid in range(1, 6):
            assert await wire.call(rid, "mark") == {"jsonrpc": "2.0", "id": rid, "result": ["unset", False]}
        assert stream.taken >= 4  # the first may have been read by the task itself
    assert all(task is not None for task in tasks)


async def test_a_handler_that_cancels_its_own_scope_without_waiting_is_still_answered() -> None:
    async def gives_up(request: Request, context: RequestContext) -> Any:
        with anyio.CancelScope() as scope:  # noqa: ASYNC100
            scope.cancel()
        return scope.cancel_called

    async with serve_over_pipes(Handlers(gives_up=gives_up)) as (stream, wire):
        for rid in range(1, 4):
            assert await wire.call(rid, "gives_up") == {"jsonrpc": "2.0", "id": rid, "result": True}
        assert stream.taken >= 2


async def test_a_handler_that_waits_keeps_its_scopes_and_later_requests_are_served_meanwhile() -> None:
    release = anyio.Event()

    async def waits(request: Request, context: RequestContext) -> Any:
        _seen.set("waiter")
        with anyio.fail_after(TIMEOUT):  # entered in the callback, exited in the adopting task
            await release.wait()
        return _seen.get()

    async def opens(request: Request, context: RequestContext) -> Any:
        release.set()
        return _seen.get()

    async def ping(request: Request, context: RequestContext) -> Any:
        return "pong"

    async with serve_over_pipes(Handlers(waits=waits, opens=opens, ping=ping)) as (stream, wire):
        assert await wire.call(0, "ping") == {"jsonrpc": "2.0", "id": 0, "result": "pong"}
        taken = stream.taken
        wire.send({"jsonrpc": "2.0", "id": 1, "method": "waits"})
        assert await wire.call(2, "ping") == {"jsonrpc": "2.0", "id": 2, "result": "pong"}
        assert await wire.call(3, "opens") == {"jsonrpc": "2.0", "id": 3, "result": "unset"}
        assert await wire.receive() == {"jsonrpc": "2.0", "id": 1, "result": "waiter"}
        assert stream.taken > taken


async def test_a_waiting_handler_started_in_the_callback_is_cancelled_by_the_peer() -> None:
    waiting = Waiting()
    started, outcome, waits, ping = waiting.started, waiting.outcome, waiting.waits, waiting.ping

    async with serve_over_pipes(Handlers(waits=waits, ping=ping)) as (_, wire):
        assert await wire.call(0, "ping") == {"jsonrpc": "2.0", "id": 0, "result": "pong"}
        wire.send({"jsonrpc": "2.0", "id": 1, "method": "waits"})
        with anyio.fail_after(TIMEOUT):
            await started.wait()
        wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
        assert await wire.call(2, "ping") == {"jsonrpc": "2.0", "id": 2, "result": "pong"}
        assert await wire.call(3, "ping") == {"jsonrpc": "2.0", "id": 3, "result": "pong"}
    assert outcome == ["cancelled"]  # and 1 was never answered: 2 and 3 came next


async def test_lines_not_served_in_the_callback_keep_their_order() -> None:
    handlers = Handlers()

    async def count(request: Request, context: RequestContext) -> Any:
        return len(handlers.notifications)

    handlers.handlers["count"] = count
    async with serve_over_pipes(handlers) as (_, wire):
        assert await wire.call(1, "count") == {"jsonrpc": "2.0", "id": 1, "result": 0}
        # one write: a notification, a request, a parse error, a request, all in one callback
        os.write(
            wire._fd,
            b'{"jsonrpc":"2.0","method":"n"}\n{"jsonrpc":"2.0","id":2,"method":"count"}\n'
            b'{oops\n{"jsonrpc":"2.0","id":3,"method":"count"}\n',
        )
        answers = [await wire.receive() for _ in range(3)]
    assert answers[0] == {"jsonrpc": "2.0", "id": 2, "result": 1}
    assert answers[1]["id"] is None and answers[1]["error"]["code"] == -32700
    assert answers[2] == {"jsonrpc": "2.0", "id": 3, "result": 1}


async def test_the_end_of_input_cancels_a_waiting_handler_started_in_the_callback() -> None:
    waiting = Waiting()
    started, outcome, waits, ping = waiting.started, waiting.outcome, waiting.waits, waiting.ping

    async with serve_over_pipes(Handlers(waits=waits, ping=ping)) as (stream, wire):
        assert await wire.call(0, "ping") == {"jsonrpc": "2.0", "id": 0, "result": "pong"}
        taken = stream.taken
        wire.send({"jsonrpc": "2.0", "id": 1, "method": "waits"})
        with anyio.fail_after(TIMEOUT):
            await started.wait()
        assert stream.taken == taken + 1  # started from the callback
    assert outcome == ["cancelled"]  # the context manager's exit waited for run() to end


async def test_a_duplicate_id_offered_in_the_callback_is_refused_once_and_the_first_is_answered() -> None:
    release = anyio.Event()

    async def waits(request: Request, context: RequestContext) -> Any:
        with anyio.fail_after(TIMEOUT):
            await release.wait()
        return "first"

    async def opens(request: Request, context: RequestContext) -> Any:
        release.set()
        return "opened"

    async with serve_over_pipes(Handlers(waits=waits, opens=opens)) as (stream, wire):
        wire.send({"jsonrpc": "2.0", "id": 1, "method": "waits"})
        refused = await wire.call(1, "opens")  # the same id while the first waits
        assert refused["id"] == 1 and refused["error"]["code"] == -32600
        assert "duplicate" in refused["error"]["message"]
        assert await wire.call(2, "opens") == {"jsonrpc": "2.0", "id": 2, "result": "opened"}
        assert await wire.receive() == {"jsonrpc": "2.0", "id": 1, "result": "first"}
        assert stream.taken >= 1  # the callback path was used (the first line may go to the task)


class ThreadedHandlers(Handlers):
    """Handlers whose ``call`` requests naming one of ``threaded`` surely wait (as an MCP server's
    plain ``def`` tools do): the dispatcher says so through ``threaded_requests``."""

    def __init__(self, threaded: set[str], **handlers: Any) -> None:
        super().__init__(**handlers)
        self.threaded_requests = ("call", "name", threaded)


@pytest.mark.parametrize("from_callback", [True, False])
async def test_a_request_that_surely_waits_gets_a_task_of_its_own_and_is_never_adopted(
    monkeypatch: pytest.MonkeyPatch, from_callback: bool
) -> None:
    from jsonrpc_mcp.jsonrpc import _fastpath

    adopted: list[str] = []
    for name in ("carry_on", "adopted"):  # the two ways a request started inline is taken over
        original = getattr(_fastpath.Inline, name)

        async def counting(self: Any, adopt: Any, _name: str = name, _original: Any = original) -> None:
            adopted.append(_name)
            await _original(self, adopt)

        monkeypatch.setattr(_fastpath.Inline, name, counting)
    tasks: dict[str, asyncio.Task[Any] | None] = {}

    async def call(request: Request, context: RequestContext) -> Any:
        assert isinstance(request.params, dict)
        name = request.params["name"]
        tasks[name] = asyncio.current_task()
        await anyio.to_thread.run_sync(lambda: None)  # waits, as a plain def tool does
        return name

    handlers = ThreadedHandlers({"in_thread"}, call=call)
    async with serve_over_pipes(handlers) as (stream, wire):
        if not from_callback:  # read by the reading task, not offered from the read callback
            stream.serve_inline(None)
            monkeypatch.setattr(stream, "serve_inline", lambda consumer: False)
        for rid in range(3):
            wire.send({"jsonrpc": "2.0", "id": rid, "method": "call", "params": {"name": "in_thread"}})
            assert await wire.receive() == {"jsonrpc": "2.0", "id": rid, "result": "in_thread"}
        assert adopted == []  # a task of its own from the start: never started inline, never adopted
        wire.send({"jsonrpc": "2.0", "id": 9, "method": "call", "params": {"name": "on_loop"}})
        assert await wire.receive() == {"jsonrpc": "2.0", "id": 9, "result": "on_loop"}
        assert adopted  # (the check can fail: any other request that waits is started inline)
        assert stream.taken == (4 if from_callback else 0)
