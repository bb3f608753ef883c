"""jsonrpc_mcp's client drives a server written with the official MCP Python SDK over stdio.

The server (servers/sdk_server.py, an ``MCPServer``) is slow to start, so each revision's
connection is shared by the module's tests, which only read.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Client, JsonRpcError

from .interop_support import CALL_TIMEOUT, CONNECT_TIMEOUT, REPO, held_open

pytestmark = pytest.mark.anyio

REVISIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]


def _connect(command: list[str], revision: str) -> Any:
    # the first exchange waits for the SDK server to start (slow to import): bounded as a startup
    return Client.stdio(command, cwd=REPO, protocol_version=revision, request_timeout=CONNECT_TIMEOUT)


@pytest.fixture(scope="module", params=REVISIONS)
async def client(request: pytest.FixtureRequest, sdk_server_command: list[str]) -> AsyncIterator[Client]:
    """Our client, connected to the SDK server asking for one revision (shared per revision)."""
    async with held_open(_connect(sdk_server_command, request.param)) as connected:
        yield connected


def _texts(result: dict[str, Any]) -> list[str]:
    return [block["text"] for block in result["content"] if block.get("type") == "text"]


# -- lifecycle ------------------------------------------------------------------------------------
async def test_initialize_negotiates_the_requested_revision(
    client: Client, request: pytest.FixtureRequest
) -> None:
    requested = request.node.callspec.params["client"]
    assert client.protocol_version == requested
    assert client.initialize_result["protocolVersion"] == requested
    assert client.server_info["name"] == "interop-sdk"
    assert client.server_info["version"] == "9.8.7"
    assert client.instructions == "A test server written with the official SDK."


async def test_server_capabilities_include_tools_resources_and_prompts(client: Client) -> None:
    assert {"tools", "resources", "prompts"} <= set(client.server_capabilities)


async def test_ping_is_answered_with_an_empty_result(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        assert await client.request("ping") == {}


# -- tools ----------------------------------------------------------------------------------------
async def test_list_tools_gives_the_sdk_tools(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        tools = {tool["name"]: tool for tool in await client.list_tools()}
    assert set(tools) == {"multiply", "explode"}
    assert tools["multiply"]["description"] == "Multiply two integers."
    schema = tools["multiply"]["inputSchema"]
    assert schema["type"] == "object"
    assert sorted(schema["required"]) == ["a", "b"]
    assert schema["properties"]["a"]["type"] == "integer"


async def test_call_tool_returns_the_text_result(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.call_tool("multiply", {"a": 6, "b": 7})
    assert result.get("isError", False) is False
    assert _texts(result) == ["42"]


async def test_call_tool_that_raises_is_a_tool_error(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.call_tool("explode", {"reason": "testing"})
    assert result["isError"] is True
    [text] = _texts(result)
    assert "exploded: testing" in text


# -- resources ------------------------------------------------------------------------------------
async def test_list_resources_gives_the_sdk_resource(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        resources = await client.list_resources()
    assert [(r["uri"], r["name"], r.get("mimeType")) for r in resources] == [
        ("sdk://motd", "motd", "text/plain")
    ]


async def test_read_resource_gives_its_text(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.read_resource("sdk://motd")
    assert result["contents"] == [
        {"uri": "sdk://motd", "mimeType": "text/plain", "text": "served by the official SDK"}
    ]


async def test_read_unknown_resource_raises_json_rpc_error(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT), pytest.raises(JsonRpcError) as caught:
        await client.read_resource("sdk://nothing-here")
    assert "sdk://nothing-here" in caught.value.message


# -- prompts --------------------------------------------------------------------------------------
async def test_list_prompts_gives_the_sdk_prompt(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        prompts = await client.list_prompts()
    assert [(p["name"], p.get("description")) for p in prompts] == [("greet", "Greet someone by name")]
    assert prompts[0]["arguments"] == [{"name": "name", "required": True}]


async def test_get_prompt_renders_the_message(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.get_prompt("greet", {"name": "Ada"})
    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Please greet Ada warmly."}}
    ]


async def test_sdk_error_with_code_zero_raises_json_rpc_error(sdk_server_command: list[str]) -> None:
    # MCPServer answers a prompts/get missing a required argument with {"code": 0, ...}: an
    # application-defined code (JSON-RPC 2.0 section 5.1 reserves only -32768..-32000). The
    # caller must get a JsonRpcError, and the connection must stay usable. Own connection: if
    # this breaks the connection it must not take the shared one down with it.
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with _connect(sdk_server_command, "2025-11-25") as connected:
            with pytest.raises(JsonRpcError) as caught:
                await connected.get_prompt("greet", {})
            assert "Missing required arguments" in caught.value.message
            assert await connected.request("ping") == {}
