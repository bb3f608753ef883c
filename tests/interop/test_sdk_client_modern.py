"""The 2026-07-28 era across implementations, over stdio.

* The official SDK's client in its default ``auto`` mode reaches 2026-07-28 with our reference
  server (``python -m jsonrpc_mcp serve examples/everything/server.py``) and lists, calls, reads and
  gets prompts; meanwhile a handshake-era (``legacy`` mode) SDK client works against another
  process of the same server, both connections open and busy at the same time.
* Our client in ``auto`` mode reaches 2026-07-28 with a server written with the SDK (which serves
  both eras), answers the SDK server's multi round-trip requests, and falls back to ``initialize``
  against an SDK server that serves only the handshake era.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import orjson
import pytest
from mcp import Client as SdkClient
from mcp import StdioServerParameters
from mcp.shared.exceptions import MCPError

from jsonrpc_mcp import Client
from jsonrpc_mcp.testing import WireRecorder
from jsonrpc_mcp.transports.stdio import spawn_stdio

from .interop_support import CALL_TIMEOUT, CONNECT_TIMEOUT, REPO, held_open, sdk_params, text_blocks

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
EVERYTHING = [sys.executable, "-m", "jsonrpc_mcp", "serve", "examples/everything/server.py"]
MODERN_SERVERS = Path(__file__).resolve().parents[1] / "modern" / "servers"
SDK_HANDSHAKE_ONLY = [sys.executable, str(MODERN_SERVERS / "sdk_handshake_only.py")]
SDK_MRTR = [sys.executable, str(MODERN_SERVERS / "sdk_mrtr_server.py")]


@pytest.fixture(scope="module")
def everything() -> StdioServerParameters:
    return sdk_params(EVERYTHING)


@pytest.fixture(scope="module")
async def sdk(everything: StdioServerParameters) -> AsyncIterator[SdkClient]:
    """The SDK's client in its default mode, connected to our server (shared by the read-only tests)."""
    async with held_open(SdkClient(everything, read_timeout_seconds=CALL_TIMEOUT)) as client:
        yield client


# -- the SDK's client, auto mode, against our server ----------------------------------------------
async def test_the_sdk_client_in_auto_mode_reaches_2026_07_28(sdk: SdkClient) -> None:
    assert sdk.protocol_version == MODERN
    assert sdk.session.discover_result is not None
    assert sdk.session.initialize_result is None
    assert sdk.server_info is not None
    assert sdk.server_info.name == "jsonrpc-mcp-everything"


async def test_the_sdk_client_lists_our_tools(sdk: SdkClient) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await sdk.list_tools()
    names = {tool.name for tool in result.tools}
    assert {"test_simple_text", "test_error_handling", "json_schema_2020_12_tool"} <= names


async def test_the_sdk_client_calls_our_tool(sdk: SdkClient) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await sdk.call_tool("test_simple_text", {})
    assert result.is_error is not True
    assert text_blocks(result.content) == ["This is a simple text response for testing."]


async def test_the_sdk_client_sees_our_tool_error(sdk: SdkClient) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await sdk.call_tool("test_error_handling", {})
    assert result.is_error is True
    assert text_blocks(result.content) == ["This tool intentionally returns an error for testing"]


async def test_the_sdk_client_lists_and_reads_our_resources(sdk: SdkClient) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        listed = await sdk.list_resources()
        templates = await sdk.list_resource_templates()
        read = await sdk.read_resource("test://template/7/data")
    assert "test://static-text" in {str(resource.uri) for resource in listed.resources}
    assert [t.uri_template for t in templates.resource_templates] == ["test://template/{id}/data"]
    [content] = read.contents
    assert isinstance(content, types.TextResourceContents)
    assert orjson.loads(content.text) == {"id": "7", "templateTest": True, "data": "Data for ID: 7"}


async def test_the_sdk_client_gets_32602_for_a_resource_we_do_not_have(sdk: SdkClient) -> None:
    with anyio.fail_after(CALL_TIMEOUT), pytest.raises(MCPError) as raised:
        await sdk.read_resource("test://nowhere")
    assert raised.value.error.code == -32602


async def test_the_sdk_client_lists_and_gets_our_prompts(sdk: SdkClient) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        listed = await sdk.list_prompts()
        prompt = await sdk.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
    assert "test_simple_prompt" in {p.name for p in listed.prompts}
    [message] = prompt.messages
    assert isinstance(message.content, types.TextContent)
    assert message.content.text == "Prompt with arguments: arg1='a', arg2='b'"


async def test_a_legacy_sdk_client_works_while_an_auto_one_is_busy(everything: StdioServerParameters) -> None:
    """Two processes of our server: one serving the modern era, one a handshake session, at once."""
    results: dict[str, Any] = {}

    async def use(mode: str, client: SdkClient) -> None:
        for _ in range(5):
            called = await client.call_tool("test_simple_text", {})
            assert text_blocks(called.content) == ["This is a simple text response for testing."]
        results[mode] = (client.protocol_version, (await client.list_tools()).tools[0].name)

    async with (
        held_open(SdkClient(everything, mode="auto", read_timeout_seconds=CALL_TIMEOUT)) as modern,
        held_open(SdkClient(everything, mode="legacy", read_timeout_seconds=CALL_TIMEOUT)) as legacy,
    ):
        with anyio.fail_after(CALL_TIMEOUT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(use, "auto", modern)
                tg.start_soon(use, "legacy", legacy)
    assert results["auto"][0] == MODERN
    assert results["legacy"][0] == "2025-11-25"
    assert results["auto"][1] == results["legacy"][1]


# -- our client against the SDK's servers ---------------------------------------------------------
async def _recorded(command: list[str], **options: Any) -> tuple[Client, list[dict[str, Any]], Any]:
    """Connect our client in auto mode over stdio, run ``options['then']``, and return the wire."""
    then = options.pop("then")
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with spawn_stdio(command, cwd=REPO) as stream:
            recorder = WireRecorder(stream)
            async with Client(recorder, mode="auto", request_timeout=CALL_TIMEOUT, **options) as client:
                await client.connect()
                outcome = await then(client)
    return client, [orjson.loads(frame) for frame in recorder.sent], outcome


async def test_our_auto_client_reaches_2026_07_28_with_the_sdk_server(sdk_server_command: list[str]) -> None:
    async def use(client: Client) -> Any:
        return await client.call_tool("multiply", {"a": 6, "b": 7})

    client, sent, called = await _recorded(sdk_server_command, then=use)
    assert client.protocol_version == MODERN
    assert client.server_info == {"name": "interop-sdk", "version": "9.8.7"}
    assert [frame["method"] for frame in sent] == ["server/discover", "tools/call"]
    assert called["resultType"] == "complete"
    assert [block["text"] for block in called["content"]] == ["42"]


async def test_our_modern_client_lists_reads_and_gets_prompts_from_the_sdk_server(
    sdk_server_command: list[str],
) -> None:
    async def use(client: Client) -> Any:
        return (
            await client.list_tools(),
            await client.read_resource("sdk://motd"),
            await client.get_prompt("greet", {"name": "Bo"}),
        )

    _, _, (tools, read, prompt) = await _recorded(sdk_server_command, then=use)
    assert {tool["name"] for tool in tools} == {"multiply", "explode"}
    assert read["contents"][0]["text"] == "served by the official SDK"
    assert read["resultType"] == "complete"
    assert prompt["messages"][0]["content"]["text"] == "Please greet Bo warmly."


async def test_our_modern_client_gets_the_sdk_servers_32602_for_an_unknown_resource(
    sdk_server_command: list[str],
) -> None:
    async def use(client: Client) -> Any:
        try:
            await client.read_resource("sdk://nowhere")
        except Exception as exc:
            return exc
        return None

    _, _, raised = await _recorded(sdk_server_command, then=use)
    assert getattr(raised, "code", None) == -32602


async def test_our_client_answers_the_sdk_servers_input_requests() -> None:
    asked: list[Any] = []

    async def elicit(params: Any) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    async def use(client: Client) -> Any:
        return await client.call_tool("book", {"city": "Oslo"})

    _, sent, called = await _recorded(
        SDK_MRTR,
        then=use,
        capabilities={"elicitation": {"form": {}}},
        request_handlers={"elicitation/create": elicit},
    )
    assert [block["text"] for block in called["content"]] == ["booked Oslo for Ada"]
    assert [params["message"] for params in asked] == ["Who travels to Oslo?"]
    calls = [frame for frame in sent if frame["method"] == "tools/call"]
    assert len(calls) == 2
    assert calls[1]["params"]["inputResponses"] == {
        "traveller": {"action": "accept", "content": {"name": "Ada"}}
    }


async def test_our_auto_client_falls_back_with_a_handshake_only_sdk_server() -> None:
    async def use(client: Client) -> Any:
        return await client.call_tool("echo", {"text": "old times"})

    client, sent, called = await _recorded(SDK_HANDSHAKE_ONLY, then=use)
    assert client.protocol_version == "2025-11-25"
    assert client.server_info["name"] == "sdk-handshake-only"
    assert [frame["method"] for frame in sent] == [
        "server/discover",
        "initialize",
        "notifications/initialized",
        "tools/call",
    ]
    assert [block["text"] for block in called["content"]] == ["old times"]
