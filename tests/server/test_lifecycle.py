"""The handshake: version negotiation, capabilities, and what is allowed in which state."""

from __future__ import annotations

from typing import Any

import anyio
import orjson
import pytest

from jsonrpc_mcp import Context, Server
from jsonrpc_mcp.jsonrpc import JsonRpcError
from jsonrpc_mcp.revisions import HANDSHAKE_REVISIONS, LATEST_HANDSHAKE
from jsonrpc_mcp.server._session import State
from jsonrpc_mcp.testing import connect, connect_raw
from tests import timeouts

VERSIONS = [r.version for r in HANDSHAKE_REVISIONS]

pytestmark = pytest.mark.anyio


def _tool_only_server() -> Server:
    server = Server("t", "1.0")

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


@pytest.mark.parametrize("version", VERSIONS)
async def test_initialize_answers_with_the_requested_revision_when_supported(
    full_server: Server, version: str
) -> None:
    async with connect(full_server, protocol_version=version) as client:
        assert client.initialize_result["protocolVersion"] == version
        assert client.protocol_version == version


@pytest.mark.parametrize("requested", ["1999-01-01", "2026-07-28", "draft", ""])
async def test_initialize_answers_an_unsupported_revision_with_our_latest_not_an_error(
    requested: str,
) -> None:
    async with connect_raw(_tool_only_server()) as raw:
        response = await raw.initialize(requested)
    assert "error" not in response
    assert response["result"]["protocolVersion"] == LATEST_HANDSHAKE.version


async def test_initialize_without_a_protocol_version_is_invalid_params() -> None:
    async with connect_raw(_tool_only_server()) as raw:
        response = await raw.request("initialize", {"capabilities": {}, "clientInfo": {"name": "x"}})
    assert response["error"]["code"] == -32602


async def test_initialize_result_carries_server_info_and_instructions(full_server: Server) -> None:
    async with connect(full_server) as client:
        result = client.initialize_result
    assert result["serverInfo"] == {"name": "full", "version": "1.2.3"}
    assert result["instructions"] == "Use the tools."


async def test_capabilities_are_derived_from_what_is_registered(full_server: Server) -> None:
    async with connect(full_server) as client:
        caps = client.server_capabilities
    assert caps == {
        "logging": {},  # ping_client takes a Context
        "tools": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "prompts": {"listChanged": True},
    }


async def test_a_server_with_only_a_template_advertises_resources() -> None:
    server = Server("t")
    server.add_resource("x://{id}", lambda id: id)
    async with connect(server) as client:
        assert client.server_capabilities == {"resources": {"subscribe": True, "listChanged": True}}


async def test_a_server_with_nothing_registered_advertises_no_capabilities() -> None:
    async with connect(Server("empty")) as client:
        assert client.server_capabilities == {}


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/list", None),
        ("tools/call", {"name": "echo", "arguments": {"text": "x"}}),
        ("resources/list", None),
        ("resources/templates/list", None),
        ("resources/read", {"uri": "x://1"}),
        ("prompts/list", None),
        ("prompts/get", {"name": "p"}),
    ],
)
async def test_methods_of_an_absent_capability_are_method_not_found(
    method: str, params: dict[str, Any] | None
) -> None:
    async with connect(Server("empty")) as client:
        with pytest.raises(JsonRpcError) as info:
            await client.request(method, params)
    assert info.value.code == -32601


async def test_tools_list_without_tools_is_method_not_found_even_with_resources() -> None:
    server = Server("t")
    server.add_resource("x://a", lambda: "a")
    async with connect(server) as client:
        assert "tools" not in client.server_capabilities
        with pytest.raises(JsonRpcError) as info:
            await client.request("tools/list")
    assert info.value.code == -32601


@pytest.mark.parametrize(
    "method", ["tools/list", "tools/call", "resources/list", "prompts/get", "no/such/method"]
)
async def test_requests_before_initialize_are_invalid_request(method: str) -> None:
    async with connect_raw(_tool_only_server()) as raw:
        response = await raw.request(method, {"name": "echo", "arguments": {"text": "x"}})
        assert response["error"]["code"] == -32600
        # the session survived: the handshake still works afterwards
        init = await raw.initialize("2025-06-18")
    assert init["result"]["protocolVersion"] == "2025-06-18"


async def test_ping_before_initialize_is_answered() -> None:
    async with connect_raw(_tool_only_server()) as raw:
        response = await raw.request("ping")
    assert response == {"jsonrpc": "2.0", "id": 1, "result": {}}


async def test_a_second_initialize_is_an_error() -> None:
    async with connect(_tool_only_server()) as client:
        with pytest.raises(JsonRpcError) as info:
            await client.initialize()
        assert info.value.code == -32600
        # the first negotiation still holds
        assert (await client.call_tool("echo", {"text": "still"}))["content"][0]["text"] == "still"


async def test_requests_between_initialize_and_initialized_are_served() -> None:
    async with connect_raw(_tool_only_server()) as raw:
        await raw.initialize("2025-11-25", initialized=False)
        response = await raw.request("tools/list")
    assert response["result"]["tools"][0]["name"] == "echo"


async def test_initialized_notification_moves_the_session_to_ready() -> None:
    server = _tool_only_server()

    @server.tool()
    async def session_state(ctx: Context) -> str:
        return ctx.session.state.value

    async with connect_raw(server) as raw:
        await raw.initialize("2025-11-25", initialized=False)
        before = await raw.request("tools/call", {"name": "session_state"})
        await raw.notify("notifications/initialized")
        after = await raw.request("tools/call", {"name": "session_state"})
    assert before["result"]["content"][0]["text"] == State.INITIALIZING.value
    assert after["result"]["content"][0]["text"] == State.READY.value


async def test_client_sends_initialized_after_the_initialize_response(full_server: Server) -> None:
    async with connect(full_server, recorder=True) as client:
        await client.ping()  # a round trip after the handshake: the notification was sent before it
        sent = [orjson.loads(frame) for frame in client.wire.sent]  # type: ignore[attr-defined]
    assert sent[0]["method"] == "initialize"
    assert sent[1] == {"jsonrpc": "2.0", "method": "notifications/initialized"}


async def test_client_ping_gets_an_empty_result(full_server: Server) -> None:
    async with connect(full_server, recorder=True) as client:
        await client.ping()
        received = [orjson.loads(frame) for frame in client.wire.received]  # type: ignore[attr-defined]
    assert received[-1] == {"jsonrpc": "2.0", "id": 2, "result": {}}


async def test_server_pings_the_client_and_the_client_answers_empty(full_server: Server) -> None:
    async with connect(full_server, recorder=True) as client:
        result = await client.call_tool("ping_client")
        frames = [orjson.loads(f) for f in client.wire.received]  # type: ignore[attr-defined]
        sent = [orjson.loads(f) for f in client.wire.sent]  # type: ignore[attr-defined]
    assert result == {"content": [{"type": "text", "text": "pinged"}]}
    server_ping = next(f for f in frames if f.get("method") == "ping")
    assert set(server_ping) == {"jsonrpc", "id", "method"}
    answer = next(f for f in sent if f.get("id") == server_ping["id"] and "method" not in f)
    assert answer == {"jsonrpc": "2.0", "id": server_ping["id"], "result": {}}


async def test_garbage_before_initialize_does_not_crash_the_session() -> None:
    async with connect_raw(_tool_only_server()) as raw:
        await raw.send(b"{not json")
        error = await raw.receive()
        await raw.send(b'{"jsonrpc": "2.0", "id": 5, "method": 7}')
        invalid = await raw.receive()
        init = await raw.initialize("2025-11-25")
    assert error["error"]["code"] == -32700
    assert invalid["error"]["code"] == -32600
    assert init["result"]["protocolVersion"] == "2025-11-25"


async def test_the_session_ends_when_the_client_closes() -> None:
    server = _tool_only_server()
    from jsonrpc_mcp.transports.memory import memory_pair

    client_end, server_end = memory_pair()
    with anyio.fail_after(timeouts.STEP):
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, server_end)
            await client_end.aclose()
    assert len(server._sessions) == 0
