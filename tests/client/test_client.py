"""The client: handshake, listing with cursors, calls, reads, prompts, ping, server->client traffic."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from jsonrpc_mcp import Client, Context, NoCommonVersion, Server
from jsonrpc_mcp.jsonrpc import JsonRpcError, RequestTimeout
from jsonrpc_mcp.testing import connect
from jsonrpc_mcp.transports.memory import MemoryStream, memory_pair
from tests import timeouts

pytestmark = pytest.mark.anyio

Responder = Callable[[dict[str, Any]], Awaitable[Any]]


@contextlib.asynccontextmanager
async def fake_server(respond: Responder) -> AsyncIterator[tuple[MemoryStream, list[dict[str, Any]]]]:
    """A hand-written peer: ``respond(frame)`` returns the frame to answer with (or None)."""
    client_end, server_end = memory_pair()
    received: list[dict[str, Any]] = []

    async def run() -> None:
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError):
            while True:
                frame = orjson.loads(await server_end.receive())
                received.append(frame)
                answer = await respond(frame)
                if answer is not None:
                    await server_end.send(orjson.dumps(answer))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        try:
            yield client_end, received
        finally:
            await server_end.aclose()
            tg.cancel_scope.cancel()


def _init_result(version: str) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "fake", "version": "0"},
    }


def _server(page_size: int = 2) -> Server:
    server = Server("s", "1.0", page_size=page_size, instructions="Be nice.")
    for i in range(5):
        server.add_tool(f"t{i}", lambda i=i: f"tool {i}")
        server.add_resource(f"r://{i}", lambda i=i: f"res {i}")
        server.add_prompt(f"p{i}", lambda i=i: f"prompt {i}")
    server.add_resource("tpl://{x}", lambda x: x)
    return server


async def test_initialize_records_the_result() -> None:
    async with connect(_server(), protocol_version="2025-06-18") as client:
        assert client.protocol_version == "2025-06-18"
        assert client.server_info == {"name": "s", "version": "1.0"}
        assert client.instructions == "Be nice."
        assert set(client.server_capabilities) == {"tools", "resources", "prompts"}


async def test_initialize_sends_client_info_and_capabilities() -> None:
    caps = {"roots": {"listChanged": True}}
    async with connect(
        _server(), recorder=True, client_info={"name": "me", "version": "2"}, capabilities=caps
    ) as client:
        first = orjson.loads(client.wire.sent[0])  # type: ignore[attr-defined]
    assert first["params"] == {
        "protocolVersion": "2025-11-25",
        "capabilities": caps,
        "clientInfo": {"name": "me", "version": "2"},
    }


async def test_without_initialize_nothing_is_sent() -> None:
    async with connect(_server(), initialize=False, recorder=True) as client:
        assert client.protocol_version is None
        assert client.wire.sent == []  # type: ignore[attr-defined]


async def test_lists_follow_every_cursor() -> None:
    async with connect(_server(page_size=2), recorder=True) as client:
        tools = await client.list_tools()
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        prompts = await client.list_prompts()
        sent = [orjson.loads(f) for f in client.wire.sent]  # type: ignore[attr-defined]
    assert [t["name"] for t in tools] == [f"t{i}" for i in range(5)]
    assert [r["uri"] for r in resources] == [f"r://{i}" for i in range(5)]
    assert [t["uriTemplate"] for t in templates] == ["tpl://{x}"]
    assert [p["name"] for p in prompts] == [f"p{i}" for i in range(5)]
    tool_requests = [f for f in sent if f.get("method") == "tools/list"]
    assert len(tool_requests) == 3
    assert "params" not in tool_requests[0]
    assert all("cursor" in f["params"] for f in tool_requests[1:])


async def test_call_read_and_get_prompt_return_raw_results() -> None:
    async with connect(_server()) as client:
        assert await client.call_tool("t1") == {"content": [{"type": "text", "text": "tool 1"}]}
        assert await client.read_resource("r://2") == {"contents": [{"uri": "r://2", "text": "res 2"}]}
        assert await client.get_prompt("p3") == {
            "messages": [{"role": "user", "content": {"type": "text", "text": "prompt 3"}}]
        }


async def test_ping_round_trips() -> None:
    async with connect(_server(), recorder=True) as client:
        await client.ping()
        last = orjson.loads(client.wire.received[-1])  # type: ignore[attr-defined]
    assert last["result"] == {}


async def test_errors_raise_json_rpc_error_with_code_message_and_data() -> None:
    async with connect(_server()) as client:
        with pytest.raises(JsonRpcError) as info:
            await client.read_resource("r://missing")
    assert info.value.code == -32002
    assert info.value.data == {"uri": "r://missing"}


async def test_on_notification_sees_server_notifications() -> None:
    server = _server()
    seen: list[tuple[str, Any]] = []
    got = anyio.Event()

    def on_notification(method: str, params: Any) -> None:
        seen.append((method, params))
        got.set()

    async with connect(server, on_notification=on_notification):
        server.add_tool("late", lambda: "x")
        with anyio.fail_after(timeouts.STEP):
            await got.wait()
    assert seen == [("notifications/tools/list_changed", None)]


async def test_request_handlers_answer_server_requests() -> None:
    server = Server("s")

    @server.tool()
    async def ask_roots(ctx: Context) -> str:
        result = await ctx.send_request("roots/list", timeout=5)
        return ",".join(root["uri"] for root in result["roots"])

    async def roots(params: Any) -> dict[str, Any]:
        return {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}

    async with connect(server, request_handlers={"roots/list": roots}, capabilities={"roots": {}}) as client:
        result = await client.call_tool("ask_roots")
    assert result["content"][0]["text"] == "file:///a,file:///b"


async def test_an_unhandled_server_request_is_method_not_found() -> None:
    server = Server("s")

    @server.tool()
    async def ask(ctx: Context) -> str:
        try:
            await ctx.send_request("sampling/createMessage", {"messages": []}, timeout=5)
        except JsonRpcError as exc:
            return str(exc.code)
        return "answered"

    async with connect(server) as client:
        result = await client.call_tool("ask")
    assert result["content"][0]["text"] == "-32601"


async def test_the_client_answers_server_ping_with_an_empty_result() -> None:
    server = Server("s")

    @server.tool()
    async def ping_back(ctx: Context) -> str:
        await ctx.session.ping(timeout=5)
        return "ok"

    async with connect(server, recorder=True) as client:
        await client.call_tool("ping_back")
        received = [orjson.loads(f) for f in client.wire.received]  # type: ignore[attr-defined]
        sent = [orjson.loads(f) for f in client.wire.sent]  # type: ignore[attr-defined]
    ping = next(f for f in received if f.get("method") == "ping")
    assert {"jsonrpc": "2.0", "id": ping["id"], "result": {}} in sent


async def test_unsupported_protocol_version_from_the_server_is_refused() -> None:
    async def respond(frame: dict[str, Any]) -> Any:
        if frame.get("method") == "initialize":
            return {"jsonrpc": "2.0", "id": frame["id"], "result": _init_result("1999-12-31")}
        return None

    async with fake_server(respond) as (stream, received), Client(stream, request_timeout=5) as client:
        with pytest.raises(NoCommonVersion, match="1999-12-31"):
            await client.initialize()
        assert client.protocol_version is None
    assert [f.get("method") for f in received] == ["initialize"]  # no "initialized" was sent


async def test_a_missing_protocol_version_is_refused() -> None:
    async def respond(frame: dict[str, Any]) -> Any:
        return {"jsonrpc": "2.0", "id": frame["id"], "result": {"capabilities": {}}}

    async with fake_server(respond) as (stream, _), Client(stream, request_timeout=5) as client:
        with pytest.raises(NoCommonVersion):
            await client.initialize()


async def test_an_older_revision_chosen_by_the_server_is_accepted() -> None:
    async def respond(frame: dict[str, Any]) -> Any:
        if "id" in frame:
            return {"jsonrpc": "2.0", "id": frame["id"], "result": _init_result("2024-11-05")}
        return None

    async with fake_server(respond) as (stream, received), Client(stream, request_timeout=5) as client:
        await client.initialize()
        assert client.protocol_version == "2024-11-05"
        await client.ping()  # a round trip, so the initialized notification has arrived
    assert received[1] == {"jsonrpc": "2.0", "method": "notifications/initialized"}


async def test_a_server_repeating_a_cursor_is_detected() -> None:
    async def respond(frame: dict[str, Any]) -> Any:
        if frame.get("method") == "initialize":
            return {"jsonrpc": "2.0", "id": frame["id"], "result": _init_result("2025-11-25")}
        if frame.get("method") == "tools/list":
            return {"jsonrpc": "2.0", "id": frame["id"], "result": {"tools": [], "nextCursor": "again"}}
        return None

    async with fake_server(respond) as (stream, _), Client(stream, request_timeout=5) as client:
        await client.initialize()
        with pytest.raises(RuntimeError, match="repeated cursor"):
            await client.list_tools()


async def test_a_request_without_an_answer_times_out_and_is_cancelled() -> None:
    cancelled = anyio.Event()

    async def respond(frame: dict[str, Any]) -> Any:
        if frame.get("method") == "notifications/cancelled":
            cancelled.set()
        return None

    async with fake_server(respond) as (stream, received), Client(stream, request_timeout=5) as client:
        with pytest.raises(RequestTimeout):
            await client.request("tools/list", timeout=0.05)
        with anyio.fail_after(timeouts.STEP):
            await cancelled.wait()
    assert received[1]["params"]["requestId"] == received[0]["id"]


async def test_an_exception_in_the_body_propagates_unwrapped() -> None:
    stream, _other = memory_pair()
    with pytest.raises(KeyError):
        async with Client(stream):
            raise KeyError("mine")


async def test_an_exception_inside_connect_propagates_unwrapped() -> None:
    with pytest.raises(LookupError, match="inside"):
        async with connect(_server()):
            raise LookupError("inside")


async def test_an_outer_cancellation_while_waiting_exits_cleanly() -> None:
    server = Server("s")
    never = anyio.Event()

    @server.tool()
    async def hang() -> str:
        await never.wait()
        return "unreachable"

    with anyio.move_on_after(0.2) as scope:
        async with connect(server) as client:
            await client.call_tool("hang")
    assert scope.cancelled_caught
    async with connect(server) as client:  # the server is still usable from a new connection
        await client.ping()


HELPER_SERVER = Path(__file__).resolve().parent.parent / "helpers" / "mcp_stdio_server.py"


async def test_a_deadline_expiring_inside_client_stdio_exits_cleanly_and_stops_the_server() -> None:
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(HELPER_SERVER)]
    with anyio.fail_after(timeouts.STARTUP):
        with anyio.CancelScope() as deadline:
            async with Client.stdio(command) as client:
                process = client.endpoint._stream.process  # type: ignore[union-attr]
                await client.ping()
                # the deadline is set once the server answers (however long starting it took)
                deadline.deadline = anyio.current_time() + 0.2
                await anyio.sleep_forever()
    assert deadline.cancelled_caught
    assert process.returncode is not None
