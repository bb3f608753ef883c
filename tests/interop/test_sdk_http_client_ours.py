"""The official MCP Python SDK's Streamable HTTP client drives a jsonrpc_mcp server on real uvicorn.

``mcp.Client(url)`` in both connect modes: ``legacy`` (initialize straight away) and ``auto`` (probe
``server/discover`` first: our dual-era server answers it, so the SDK speaks 2026-07-28, statelessly).
A handshake-only server refuses the probe and the SDK falls back to initialize. The server is the
HTTP tests' toolbox (tests/http/servers/toolbox.py) served in process, so the tests can steer it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp_types as types
import orjson
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from jsonrpc_mcp.http import McpHttpApp
from jsonrpc_mcp.revisions import HANDSHAKE_REVISIONS

from ..http.servers.toolbox import build_server
from ..http.support import serving
from .interop_support import CALL_TIMEOUT, CONNECT_TIMEOUT, held_open, text_blocks

pytestmark = pytest.mark.anyio

LATEST = "2025-11-25"
MODERN = "2026-07-28"
MODES = ["legacy", "auto"]


@pytest.fixture(scope="module")
async def served() -> AsyncIterator[tuple[str, McpHttpApp]]:
    app = McpHttpApp(build_server(name="http-interop"))
    async with serving(app) as base:
        yield base + "/mcp", app


@pytest.fixture(scope="module", params=MODES)
async def client(request: pytest.FixtureRequest, served: tuple[str, McpHttpApp]) -> AsyncIterator[Client]:
    """One SDK client per connect mode, shared by the module's read-only tests."""
    url, _ = served
    async with held_open(Client(url, mode=request.param, read_timeout_seconds=CALL_TIMEOUT)) as sdk:
        yield sdk


async def wait_for_the_get_stream(app: McpHttpApp) -> None:
    """The SDK opens its GET stream in the background after ``initialized``: wait until it is there
    (a list_changed sent before would have nowhere to go)."""
    with anyio.fail_after(CALL_TIMEOUT):
        while not app.sessions or not all(s.standalone.attached for s in app.sessions.values()):
            await anyio.lowlevel.checkpoint()


# -- connecting -----------------------------------------------------------------------------------
async def test_the_sdk_speaks_the_latest_revision_of_its_mode(client: Client) -> None:
    assert client.server_info is not None and client.server_info.name == "http-interop"
    if client.mode == "legacy":
        assert client.protocol_version == LATEST
        assert client.session.initialize_result is not None
    else:  # auto: the discover probe succeeds against a dual-era server
        assert client.protocol_version == MODERN
        assert client.session.discover_result is not None


async def test_only_the_handshake_client_holds_a_session(
    client: Client, served: tuple[str, McpHttpApp]
) -> None:
    _, app = served
    assert len(app.sessions) == (1 if client.mode == "legacy" else 0)  # one client per mode at a time


# -- tools ----------------------------------------------------------------------------------------
async def test_list_tools(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.list_tools()
    assert {"add", "progress", "gated", "block", "ask_roots", "say"} <= {tool.name for tool in result.tools}


async def test_call_tool_answered_with_json(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.call_tool("add", {"a": 2, "b": 40})
    assert result.is_error is False
    assert text_blocks(result.content) == ["42"]


async def test_call_tool_with_invalid_arguments_is_a_tool_error(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.call_tool("add", {"a": "two", "b": 40})
    assert result.is_error is True
    assert text_blocks(result.content)[0].startswith("Invalid arguments for tool 'add'")


async def test_call_unknown_tool_raises_invalid_params(client: Client) -> None:
    with anyio.fail_after(CALL_TIMEOUT), pytest.raises(MCPError) as caught:
        await client.call_tool("no_such_tool", {})
    assert caught.value.error.code == -32602


async def test_progress_notifications_arrive_before_the_result(client: Client) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with anyio.fail_after(CALL_TIMEOUT):
        result = await client.call_tool("progress", {"steps": 3}, progress_callback=on_progress)
    assert text_blocks(result.content) == ["done after 3 steps"]
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_a_log_message_streamed_before_the_result_reaches_the_sdk(
    served: tuple[str, McpHttpApp],
) -> None:
    url, _ = served
    logged: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params.data)

    with anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(
            url, mode="legacy", read_timeout_seconds=CALL_TIMEOUT, logging_callback=on_log
        ) as sdk:
            result = await sdk.call_tool("say", {"text": "hello over SSE"})
    assert text_blocks(result.content) == ["hello over SSE"]
    assert logged == ["hello over SSE"]


async def test_a_request_to_the_client_is_answered_by_the_sdk(served: tuple[str, McpHttpApp]) -> None:
    url, _ = served

    async def list_roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(
            roots=[types.Root.model_validate({"uri": "file:///work", "name": "work"})]
        )

    with anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(
            url, mode="legacy", read_timeout_seconds=CALL_TIMEOUT, list_roots_callback=list_roots
        ) as sdk:
            result = await sdk.call_tool("ask_roots", {})
    assert result.is_error is False
    assert '"file:///work"' in text_blocks(result.content)[0]


# -- server-initiated messages, concurrency, session end ------------------------------------------
@pytest.mark.parametrize("mode", ["legacy"])  # a modern client listens instead (tests/http/modern)
async def test_list_changed_arrives_on_the_get_stream(mode: str) -> None:
    server = build_server()
    app = McpHttpApp(server)
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with serving(app) as base:
        with anyio.fail_after(CONNECT_TIMEOUT):
            async with Client(
                base + "/mcp", mode=mode, read_timeout_seconds=CALL_TIMEOUT, message_handler=on_message
            ) as sdk:
                await wait_for_the_get_stream(app)
                server.add_tool("late", lambda: "late", description="Added at runtime.")
                await changed.wait()
                listed = await sdk.list_tools()
    assert "late" in {tool.name for tool in listed.tools}


async def test_two_sdk_clients_run_concurrently_against_one_server() -> None:
    app = McpHttpApp(build_server())
    results: dict[str, list[str]] = {}
    async with serving(app) as base:

        async def run(mode: str) -> None:
            async with Client(base + "/mcp", mode=mode, read_timeout_seconds=CALL_TIMEOUT) as sdk:
                answers: list[str] = []
                for i in range(5):
                    result = await sdk.call_tool("progress", {"steps": i})
                    answers.extend(text_blocks(result.content))
                results[mode] = answers
                assert len(app.sessions) <= 1  # the handshake client's; the modern one holds none

        with anyio.fail_after(CONNECT_TIMEOUT):
            async with anyio.create_task_group() as tg:
                for mode in MODES:
                    tg.start_soon(run, mode)
        assert app.sessions == {}  # both closed their session with DELETE on the way out
    expected = [f"done after {i} steps" for i in range(5)]
    assert results == {"legacy": expected, "auto": expected}


async def test_the_same_client_twice_at_once_keeps_the_sessions_apart() -> None:
    app = McpHttpApp(build_server())
    seen_sessions: list[set[str]] = []
    async with serving(app) as base:
        both_open = anyio.Event()
        opened = 0

        async def run() -> None:
            nonlocal opened
            async with Client(base + "/mcp", mode="legacy", read_timeout_seconds=CALL_TIMEOUT) as sdk:
                opened += 1
                if opened == 2:
                    both_open.set()
                await both_open.wait()
                seen_sessions.append(set(app.sessions))
                result = await sdk.call_tool("add", {"a": 1, "b": 1})
                assert text_blocks(result.content) == ["2"]

        with anyio.fail_after(CONNECT_TIMEOUT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(run)
                tg.start_soon(run)
        assert app.sessions == {}
    assert all(len(ids) == 2 for ids in seen_sessions)


async def test_json_response_mode_serves_the_sdk() -> None:
    app = McpHttpApp(build_server(), json_response=True)
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async with serving(app) as base:
        with anyio.fail_after(CONNECT_TIMEOUT):
            async with Client(base + "/mcp", mode="legacy", read_timeout_seconds=CALL_TIMEOUT) as sdk:
                result = await sdk.call_tool("progress", {"steps": 2}, progress_callback=on_progress)
    assert text_blocks(result.content) == ["done after 2 steps"]
    assert seen == []  # JSON-only: nothing goes back before the result


async def test_stateless_mode_serves_the_sdk() -> None:
    app = McpHttpApp(build_server(), stateless=True)
    async with serving(app) as base:
        with anyio.fail_after(CONNECT_TIMEOUT):
            async with Client(base + "/mcp", mode="legacy", read_timeout_seconds=CALL_TIMEOUT) as sdk:
                first = await sdk.call_tool("add", {"a": 3, "b": 4})
                second = await sdk.call_tool("add", {"a": 5, "b": 6})
        assert app.sessions == {}
    assert text_blocks(first.content) == ["7"]
    assert text_blocks(second.content) == ["11"]


async def test_against_a_handshake_only_server_auto_mode_falls_back_to_initialize() -> None:
    app = McpHttpApp(build_server(revisions=HANDSHAKE_REVISIONS))
    exchanges: list[tuple[str, str | None, int]] = []

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        """Record (HTTP method, JSON-RPC method of the body, status) of every exchange."""
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        chunks: list[bytes] = []

        async def tapped_receive() -> Any:
            message = await receive()
            chunks.append(message.get("body", b""))
            return message

        async def tapped_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                body = b"".join(chunks)
                rpc = orjson.loads(body).get("method") if body.startswith(b"{") else None
                exchanges.append((scope["method"], rpc, message["status"]))
            await send(message)

        await app(scope, tapped_receive, tapped_send)

    async with serving(recording, mcp_app=app) as base:
        with anyio.fail_after(CONNECT_TIMEOUT):
            async with Client(base + "/mcp", mode="auto", read_timeout_seconds=CALL_TIMEOUT) as sdk:
                assert sdk.protocol_version == LATEST
                assert sdk.session.discover_result is None
    posts = [(rpc, status) for method, rpc, status in exchanges if method == "POST"]
    assert posts[0][0] == "server/discover" and 400 <= posts[0][1] < 500
    assert posts[1] == ("initialize", 200)
    assert posts[2] == ("notifications/initialized", 202)
