"""The request pipeline: every request passes one middleware chain, in both eras, and what escapes
it becomes the wire error or tool result the revision prescribes."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Call, Context, JsonRpcError, Server, ToolError
from jsonrpc_mcp.server import CallNext
from jsonrpc_mcp.testing import connect, connect_raw
from tests import timeouts

pytestmark = pytest.mark.anyio

MODES = ["legacy", "2026-07-28"]


def _server() -> Server:
    server = Server("pipeline")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def fail() -> str:
        """Always fails."""
        raise ToolError("it failed")

    @server.resource("data://one")
    def one() -> str:
        return "one"

    return server


@pytest.mark.parametrize("mode", MODES)
async def test_a_middleware_sees_every_request_with_its_era_and_transport(mode: str) -> None:
    server = _server()
    seen: list[tuple[str, str, str, str | None]] = []

    @server.middleware
    async def record(call: Call, call_next: CallNext) -> Any:
        revision = call.revision.version if call.revision is not None else None
        seen.append((call.method, call.era, call.transport, revision))
        return await call_next(call)

    async with connect(server, mode=mode) as client:
        await client.list_tools()
        await client.call_tool("add", {"a": 1, "b": 2})
    methods = [m for m, *_ in seen]
    era = "handshake" if mode == "legacy" else "stateless"
    expected_first = "initialize" if mode == "legacy" else "server/discover"
    assert methods == [expected_first, "tools/list", "tools/call"]
    assert {e for _, e, _, _ in seen} == {era}
    assert {t for _, _, t, _ in seen} == {"memory"}
    # the revision in force: none before initialize, the negotiated or envelope one after it
    expected_revision = "2025-11-25" if mode == "legacy" else "2026-07-28"
    assert seen[-1][3] == expected_revision


@pytest.mark.parametrize("mode", MODES)
async def test_a_middleware_can_change_the_result(mode: str) -> None:
    server = _server()

    @server.middleware
    async def double(call: Call, call_next: CallNext) -> Any:
        result = await call_next(call)
        if call.method == "tools/call":
            result = {**result, "content": [{"type": "text", "text": "changed"}]}
        return result

    async with connect(server, mode=mode) as client:
        result = await client.call_tool("add", {"a": 1, "b": 2})
    assert result["content"] == [{"type": "text", "text": "changed"}]


@pytest.mark.parametrize("mode", MODES)
async def test_a_middleware_can_change_the_request(mode: str) -> None:
    server = _server()

    @server.middleware
    async def rewrite(call: Call, call_next: CallNext) -> Any:
        if call.method == "tools/call":
            call.params = {**call.params, "arguments": {"a": 40, "b": 2}}
        return await call_next(call)

    async with connect(server, mode=mode) as client:
        result = await client.call_tool("add", {"a": 1, "b": 2})
    assert result["content"][0]["text"] == '{"result":42}'  # the JSON of the structured content


async def test_middleware_runs_in_the_order_added_first_outermost() -> None:
    server = _server()
    order: list[str] = []

    def layer(name: str) -> Any:
        async def middleware(call: Call, call_next: CallNext) -> Any:
            order.append(f"{name} in")
            try:
                return await call_next(call)
            finally:
                order.append(f"{name} out")

        return middleware

    server.add_middleware(layer("outer"))
    server.add_middleware(layer("inner"))
    async with connect(server) as client:
        order.clear()
        await client.list_tools()
    assert order == ["outer in", "inner in", "inner out", "outer out"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_middleware_sees_errors_and_can_time_them(mode: str) -> None:
    server = _server()
    timings: list[tuple[str, float, str | None]] = []

    @server.middleware
    async def timed(call: Call, call_next: CallNext) -> Any:
        started = time.perf_counter()
        error: str | None = None
        try:
            return await call_next(call)
        except JsonRpcError as exc:
            error = str(exc.code)
            raise
        finally:
            timings.append((call.method, time.perf_counter() - started, error))

    async with connect(server, mode=mode) as client:
        with pytest.raises(JsonRpcError) as raised:
            await client.read_resource("data://missing")
    code = -32002 if mode == "legacy" else -32602  # the revision's code, decided at the boundary
    assert raised.value.code == code
    method, elapsed, error = timings[-1]
    assert method == "resources/read" and elapsed >= 0
    assert error is not None  # the middleware saw the error on its way out


@pytest.mark.parametrize("mode", MODES)
async def test_what_a_middleware_raises_becomes_a_wire_error(mode: str) -> None:
    server = _server()

    @server.middleware
    async def refuse(call: Call, call_next: CallNext) -> Any:
        if call.method == "tools/call":
            raise JsonRpcError("refused by policy", {"why": "test"}, code=-32003)
        if call.method == "tools/list":
            raise RuntimeError("a bug with /secret/path in it")
        return await call_next(call)

    async with connect(server, mode=mode) as client:
        with pytest.raises(JsonRpcError) as raised:
            await client.call_tool("add", {"a": 1, "b": 2})
        assert (raised.value.code, raised.value.message, raised.value.data) == (
            -32003,
            "refused by policy",
            {"why": "test"},
        )
        with pytest.raises(JsonRpcError) as raised:
            await client.list_tools()
    # an unexpected exception: -32603, and its text never reaches the client
    assert raised.value.code == -32603
    assert "secret" not in raised.value.message


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_error_stays_a_tool_result_under_middleware(mode: str) -> None:
    server = _server()
    results: list[Any] = []

    @server.middleware
    async def keep(call: Call, call_next: CallNext) -> Any:
        result = await call_next(call)
        results.append(result)
        return result

    async with connect(server, mode=mode) as client:
        result = await client.call_tool("fail", {})
    assert result["isError"] is True and result["content"][0]["text"] == "it failed"
    assert results[-1]["isError"] is True


async def test_requests_the_lifecycle_refuses_pass_the_middleware_too() -> None:
    server = _server()
    seen: list[str] = []

    @server.middleware
    async def record(call: Call, call_next: CallNext) -> Any:
        seen.append(call.method)
        return await call_next(call)

    async with connect_raw(server) as raw:
        with anyio.fail_after(timeouts.STEP):
            await raw.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            answer = await raw.receive()
    assert answer["error"]["code"] == -32600  # before initialize
    assert seen == ["tools/list"]


async def test_a_middleware_reaches_the_context_of_a_handler_through_the_request() -> None:
    server = Server("meta")

    @server.tool()
    def whoami(ctx: Context) -> str:
        """Report the middleware's mark."""
        return str(ctx.meta.get("test/mark"))

    @server.middleware
    async def mark(call: Call, call_next: CallNext) -> Any:
        if call.method == "tools/call":
            call.params = {**call.params, "_meta": {**call.params.get("_meta", {}), "test/mark": "set"}}
        return await call_next(call)

    async with connect(server) as client:
        result = await client.call_tool("whoami", {})
    assert result["content"][0]["text"] == "set"
