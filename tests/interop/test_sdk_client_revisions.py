"""The official SDK client and our server agree on the negotiated revision, for every revision we speak.

``mcp.Client`` cannot be pinned to an older revision: its ``initialize`` always asks for the SDK's
newest handshake revision (``mcp_types.version.LATEST_HANDSHAKE_VERSION``) and ``mode=`` accepts
only "legacy", "auto" or a 2026-era version. Two ways round that, both on the SDK's public API:

* the SDK's lower-level ``ClientSession`` sends an ``initialize`` we build with an older
  ``protocolVersion``, then ``adopt``s the result, exactly as ``ClientSession.initialize`` does
  for its own version; the SDK then validates every result against that revision's schema;
* our server is restricted to one revision (``ours.py --revision V``), so it answers the SDK's
  2025-11-25 request with the counter-offer V, which ``mcp.Client`` must accept.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from jsonrpc_mcp.revisions import HANDSHAKE_REVISIONS

from .interop_support import CALL_TIMEOUT, CONNECT_TIMEOUT, held_open, sdk_params, text_blocks

pytestmark = pytest.mark.anyio

VERSIONS = [revision.version for revision in HANDSHAKE_REVISIONS]


@contextlib.asynccontextmanager
async def pinned_session(
    params: StdioServerParameters, version: str
) -> AsyncIterator[tuple[ClientSession, types.InitializeResult]]:
    """An SDK ``ClientSession`` whose handshake asks for ``version`` (not the SDK's newest)."""
    async with (
        stdio_client(params) as (read_stream, write_stream),
        ClientSession(read_stream, write_stream, read_timeout_seconds=CALL_TIMEOUT) as session,
    ):
        request = types.InitializeRequest(
            params=types.InitializeRequestParams(
                protocol_version=version,
                capabilities=types.ClientCapabilities(),
                client_info=types.Implementation(name="interop-pinned", version="0.0.1"),
            )
        )
        result = await session.send_request(request, types.InitializeResult)
        session.adopt(result)
        await session.send_notification(types.InitializedNotification())
        yield session, result


@pytest.fixture(scope="module", params=VERSIONS)
async def pinned(
    request: pytest.FixtureRequest, ours_command: Callable[..., list[str]]
) -> AsyncIterator[tuple[str, ClientSession, types.InitializeResult]]:
    """(asked version, session, initialize result), one connection per revision."""
    version: str = request.param
    async with held_open(pinned_session(sdk_params(ours_command()), version)) as (session, result):
        yield version, session, result


async def test_sdk_session_asking_for_a_revision_gets_it(
    pinned: tuple[str, ClientSession, types.InitializeResult],
) -> None:
    version, session, result = pinned
    assert result.protocol_version == version
    assert session.protocol_version == version


async def test_sdk_session_validates_our_tool_list_under_the_revision(
    pinned: tuple[str, ClientSession, types.InitializeResult],
) -> None:
    _, session, _ = pinned
    with anyio.fail_after(CALL_TIMEOUT):
        result = await session.list_tools()
    assert [tool.name for tool in result.tools] == ["add", "repeat", "fail"]


async def test_sdk_session_validates_our_tool_result_under_the_revision(
    pinned: tuple[str, ClientSession, types.InitializeResult],
) -> None:
    _, session, _ = pinned
    with anyio.fail_after(CALL_TIMEOUT):
        result = await session.call_tool("add", {"a": 1, "b": 2})
    assert text_blocks(result.content) == ["3"]


async def test_schema_violation_is_reported_as_the_revision_requires(
    pinned: tuple[str, ClientSession, types.InitializeResult],
) -> None:
    # 2025-11-25 (SEP-1303): input validation errors are tool execution errors (isError: true);
    # earlier revisions list invalid arguments as a protocol error (-32602).
    version, session, _ = pinned
    message = "Invalid arguments for tool 'repeat': times: 0 is less than the minimum of 1"
    with anyio.fail_after(CALL_TIMEOUT):
        if version >= "2025-11-25":
            result = await session.call_tool("repeat", {"text": "x", "times": 0})
            assert result.is_error is True
            assert text_blocks(result.content) == [message]
        else:
            with pytest.raises(MCPError) as caught:
                await session.call_tool("repeat", {"text": "x", "times": 0})
            assert caught.value.error.code == -32602
            assert caught.value.error.message == message


@pytest.mark.parametrize("version", VERSIONS)
async def test_sdk_client_accepts_our_counter_offer(
    version: str, ours_command: Callable[..., list[str]]
) -> None:
    params = sdk_params(ours_command("--revision", version))
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(params, mode="legacy", read_timeout_seconds=CALL_TIMEOUT) as sdk:
            assert sdk.protocol_version == version
            tools = await sdk.list_tools()
            assert {tool.name for tool in tools.tools} == {"add", "repeat", "fail"}
