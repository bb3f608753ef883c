"""The official MCP Python SDK's client drives a jsonrpc_mcp server (servers/ours.py) over stdio.

The server is launched the way users launch it, ``python -m jsonrpc_mcp serve servers/ours.py``,
and spoken to by ``mcp.Client`` in both of its connect modes: ``auto`` (probe ``server/discover``
first, fall back to ``initialize``) and ``legacy`` (``initialize`` straight away).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from types import TracebackType
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from .interop_support import CALL_TIMEOUT, CONNECT_TIMEOUT, held_open, sdk_params, text_blocks

pytestmark = pytest.mark.anyio

LATEST = "2025-11-25"


@pytest.fixture(scope="module")
def ours(ours_command: Callable[..., list[str]]) -> StdioServerParameters:
    return sdk_params(ours_command())


@pytest.fixture(scope="module", params=["auto", "legacy"])
async def client(request: pytest.FixtureRequest, ours: StdioServerParameters) -> AsyncIterator[Client]:
    """One SDK client per connect mode, shared by the module's read-only tests."""
    async with held_open(Client(ours, mode=request.param, read_timeout_seconds=CALL_TIMEOUT)) as sdk:
        yield sdk


# -- connecting -----------------------------------------------------------------------------------
class _Tap:
    """Wraps the SDK transport's streams and records every message as a JSON dict."""

    def __init__(self, inner: Any, direction: str, log: list[tuple[str, dict[str, Any]]]) -> None:
        self._inner = inner
        self._direction = direction
        self._log = log

    def _record(self, item: Any) -> None:
        if isinstance(item, SessionMessage):
            dumped = item.message.model_dump(by_alias=True, mode="json", exclude_none=True)
            self._log.append((self._direction, dumped))

    async def receive(self) -> Any:
        item = await self._inner.receive()
        self._record(item)
        return item

    async def send(self, item: Any) -> None:
        self._record(item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _Tap:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _Tap:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


@contextlib.asynccontextmanager
async def _recording_stdio(
    params: StdioServerParameters, log: list[tuple[str, dict[str, Any]]]
) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's own stdio transport, with every message in either direction recorded in ``log``."""
    async with stdio_client(params) as (read_stream, write_stream):
        yield _Tap(read_stream, "received", log), _Tap(write_stream, "sent", log)


async def test_auto_mode_falls_back_to_initialize_and_negotiates_latest(ours: StdioServerParameters) -> None:
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(ours, mode="auto", read_timeout_seconds=CALL_TIMEOUT) as sdk:
            assert sdk.protocol_version == LATEST
            assert sdk.session.discover_result is None
            initialize_result = sdk.session.initialize_result
            assert initialize_result is not None
            assert initialize_result.protocol_version == LATEST
            assert sdk.server_info is not None
            assert (sdk.server_info.name, sdk.server_info.version) == ("interop-ours", "1.2.3")


async def test_auto_mode_discover_probe_is_answered_with_an_error(ours: StdioServerParameters) -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(_recording_stdio(ours, log), mode="auto", read_timeout_seconds=CALL_TIMEOUT) as sdk:
            assert sdk.protocol_version == LATEST
    sent = [message for direction, message in log if direction == "sent"]
    assert [m.get("method") for m in sent[:3]] == [
        "server/discover",
        "initialize",
        "notifications/initialized",
    ]
    probe_id = sent[0]["id"]
    answers = [m for direction, m in log if direction == "received" and m.get("id") == probe_id]
    assert len(answers) == 1
    assert "result" not in answers[0]
    # Any error but the ones a 2026-07-28 server would answer with (2026-07-28 basic/versioning:
    # those are modern evidence); we do not speak that revision, so the SDK must fall back.
    assert answers[0]["error"]["code"] not in (-32020, -32021, -32022)


async def test_legacy_mode_negotiates_latest(ours: StdioServerParameters) -> None:
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(ours, mode="legacy", read_timeout_seconds=CALL_TIMEOUT) as sdk:
            assert sdk.protocol_version == LATEST
            assert sdk.session.initialize_result is not None
            assert sdk.instructions == "A test server for the official SDK client."


async def test_server_capabilities_are_read_by_the_sdk(client: Client) -> None:
    capabilities = client.server_capabilities
    assert capabilities.tools is not None and capabilities.tools.list_changed is True
    assert capabilities.resources is not None and capabilities.resources.list_changed is True
    assert capabilities.prompts is not None and capabilities.prompts.list_changed is True


# -- tools ----------------------------------------------------------------------------------------
async def test_list_tools_gives_names_descriptions_and_schemas(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.list_tools()
    tools = {tool.name: tool for tool in result.tools}
    assert set(tools) == {"add", "repeat", "fail"}
    assert tools["add"].description == "Add two integers."
    assert tools["add"].annotations is not None and tools["add"].annotations.read_only_hint is True
    times = tools["repeat"].input_schema["properties"]["times"]
    assert (times["type"], times["minimum"], times["maximum"]) == ("integer", 1, 5)
    assert tools["repeat"].input_schema["required"] == ["text"]


async def test_call_tool_returns_the_text_result(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.call_tool("add", {"a": 2, "b": 40})
    assert result.is_error is False
    assert text_blocks(result.content) == ["42"]


async def test_call_tool_schema_violation_is_a_readable_tool_error(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.call_tool("repeat", {"text": "hi", "times": 9})
    assert result.is_error is True
    assert text_blocks(result.content) == [
        "Invalid arguments for tool 'repeat': times: 9 is greater than the maximum of 5"
    ]


async def test_call_tool_raising_tool_error_is_a_tool_error(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.call_tool("fail", {"reason": "testing"})
    assert result.is_error is True
    assert text_blocks(result.content) == ["failed on purpose: testing"]


async def test_call_unknown_tool_raises_invalid_params(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT), pytest.raises(MCPError) as caught:
        await client.call_tool("no_such_tool", {})
    assert caught.value.error.code == -32602
    assert "no_such_tool" in caught.value.error.message


# -- resources ------------------------------------------------------------------------------------
async def test_list_resources_gives_the_static_resource(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.list_resources()
    assert [(str(r.uri), r.name, r.mime_type, r.description) for r in result.resources] == [
        ("interop://greeting", "greeting", "text/plain", "A greeting")
    ]


async def test_list_resource_templates_gives_the_template(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.list_resource_templates()
    assert [(t.uri_template, t.name, t.mime_type) for t in result.resource_templates] == [
        ("interop://items/{item_id}", "item", "application/json")
    ]


async def test_read_resource_gives_its_text(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.read_resource("interop://greeting")
    assert len(result.contents) == 1
    content = result.contents[0]
    assert isinstance(content, types.TextResourceContents)
    assert (str(content.uri), content.mime_type, content.text) == (
        "interop://greeting",
        "text/plain",
        "hello from jsonrpc_mcp",
    )


async def test_read_templated_resource_fills_the_variable(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.read_resource("interop://items/7")
    content = result.contents[0]
    assert isinstance(content, types.TextResourceContents)
    assert str(content.uri) == "interop://items/7"
    assert content.text == '{"id":"7","label":"item 7"}'


async def test_read_unknown_resource_raises_resource_not_found(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT), pytest.raises(MCPError) as caught:
        await client.read_resource("interop://nothing-here")
    assert caught.value.error.code == -32002
    assert caught.value.error.data == {"uri": "interop://nothing-here"}


# -- prompts --------------------------------------------------------------------------------------
async def test_list_prompts_marks_the_required_argument(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.list_prompts()
    [prompt] = result.prompts
    assert (prompt.name, prompt.description) == ("summarize", "Summarize a topic")
    assert prompt.arguments is not None
    assert [(a.name, a.required) for a in prompt.arguments] == [("topic", True), ("style", False)]


async def test_get_prompt_renders_one_user_message(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.get_prompt("summarize", {"topic": "stdio"})
    [message] = result.messages
    assert message.role == "user"
    assert isinstance(message.content, types.TextContent)
    assert message.content.text == "Summarize stdio in a brief style."


async def test_get_prompt_without_required_argument_raises_invalid_params(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT), pytest.raises(MCPError) as caught:
        await client.get_prompt("summarize", {"style": "long"})
    assert caught.value.error.code == -32602
    assert "topic" in caught.value.error.message


# -- utilities ------------------------------------------------------------------------------------
async def test_ping_is_answered_with_an_empty_result(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.session.send_ping()
    assert isinstance(result, types.EmptyResult)
