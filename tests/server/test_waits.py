"""Which handlers can never wait (an ``async def`` with no ``await`` in it), and which requests the
router says cannot wait: those the HTTP transport serves without a cancel scope."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel

from jsonrpc_mcp import Call, Server
from jsonrpc_mcp.server import CallNext
from jsonrpc_mcp.server._registry import Tool
from jsonrpc_mcp.server._waits import never_waits


async def plain(message: str) -> str:
    return message.upper()  # calls, but never awaits


async def awaits(message: str) -> str:
    await anyio.lowlevel.checkpoint()
    return message


async def async_with(message: str) -> str:
    async with anyio.Lock():
        return message


async def _items() -> AsyncIterator[str]:
    yield "x"


async def async_for(message: str) -> str:
    async for item in _items():
        return item
    return message


async def async_comprehension(message: str) -> list[str]:
    return [item async for item in _items()]


def sync(message: str) -> str:
    return message


class Holder:
    async def method(self, message: str) -> str:
        return message


class AsyncCallable:
    async def __call__(self, message: str) -> str:
        return message


def returns_awaitable(message: str) -> Any:
    """A plain function handing on some other awaitable (it may wait, whatever its own code)."""
    return awaits(message)


def tool(fn: Any) -> Tool:
    return Tool("t", fn, input_schema={"type": "object"})


def test_an_async_def_without_await_never_waits() -> None:
    assert never_waits(tool(plain).handler)
    assert never_waits(tool(Holder().method).handler)


def test_every_suspension_point_counts() -> None:
    for fn in (awaits, async_with, async_for, async_comprehension):
        assert not never_waits(tool(fn).handler), fn.__name__


def test_what_is_not_plainly_an_async_def_may_wait() -> None:
    for fn in (sync, AsyncCallable(), functools.partial(plain), returns_awaitable):
        assert not never_waits(tool(fn).handler), fn


def test_the_answer_is_worked_out_once_and_kept_on_the_handler() -> None:
    handler = tool(plain).handler
    assert handler.never_waits is None
    assert never_waits(handler)
    assert handler.never_waits is True


def test_the_router_says_which_tools_calls_cannot_wait() -> None:
    server = Server("waits")
    server.add_tool("plain", plain)
    server.add_tool("awaits", awaits)
    server.add_tool("sync", sync)
    router = server.router
    assert router.cannot_wait(server.tools.get("plain"))
    assert not router.cannot_wait(server.tools.get("awaits"))
    assert not router.cannot_wait(server.tools.get("sync"))  # (a worker thread)
    assert not router.cannot_wait(None)  # not a tools/call of a tool found

    async def passing(call: Call, call_next: CallNext) -> Any:  # middleware may wait for anything
        return await call_next(call)

    server.add_middleware(passing)
    assert not router.cannot_wait(server.tools.get("plain"))
