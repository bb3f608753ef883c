"""The official MCP Python SDK client (``mcp.Client``) against our HTTP app on real uvicorn: in its
default auto mode it reaches 2026-07-28 (its ``server/discover`` probe is answered), sends the
metadata headers our app checks, listens with ``Client.listen``; a legacy-mode SDK client is served
by the same running app at the same time."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.subscriptions import ResourceUpdated, ToolsListChanged

from jsonrpc_mcp.http import McpHttpApp
from tests import timeouts

from ..support import serving
from .support import MODERN, UNICODE_URI, build_modern_server, wait_until

pytestmark = pytest.mark.anyio

CONNECT_TIMEOUT = timeouts.STARTUP
CALL_TIMEOUT = timeouts.STEP
LEGACY = "2025-11-25"


class Recorded:
    """The app, wrapped to record every exchange: (HTTP method, request headers, status)."""

    def __init__(self, app: McpHttpApp) -> None:
        self.app = app
        self.exchanges: list[tuple[str, dict[str, str], int]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}

        async def tapped_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                self.exchanges.append((scope["method"], headers, message["status"]))
            await send(message)

        await self.app(scope, receive, tapped_send)

    def posts(self, method: str) -> list[tuple[dict[str, str], int]]:
        return [
            (h, status) for m, h, status in self.exchanges if m == "POST" and h.get("mcp-method") == method
        ]


@pytest.fixture
async def served() -> AsyncIterator[tuple[str, Recorded]]:
    recorded = Recorded(McpHttpApp(build_modern_server(name="sdk-interop")))
    async with serving(recorded, mcp_app=recorded.app) as base:
        yield base + "/mcp", recorded


def text(result: Any) -> str:
    return "".join(block.text for block in result.content if block.type == "text")


async def test_the_sdk_in_auto_mode_reaches_the_modern_revision(served: tuple[str, Recorded]) -> None:
    url, recorded = served
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(url, read_timeout_seconds=CALL_TIMEOUT) as sdk:
            assert sdk.protocol_version == MODERN
            assert sdk.session.discover_result is not None
            assert sdk.server_info is not None and sdk.server_info.name == "sdk-interop"
    assert recorded.app.sessions == {}
    assert [status for _, status in recorded.posts("server/discover")] == [200]
    assert not recorded.posts("initialize")


async def test_the_sdk_lists_calls_reads_and_gets_prompts(served: tuple[str, Recorded]) -> None:
    url, recorded = served
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(url, read_timeout_seconds=CALL_TIMEOUT) as sdk:
            tools = await sdk.list_tools()
            added = await sdk.call_tool("add", {"a": 2, "b": 40})
            forecast = await sdk.call_tool("forecast", {"region": "eu-west", "count": 3})
            doc = await sdk.read_resource("res://doc")
            cafe = await sdk.read_resource(UNICODE_URI)
            prompt = await sdk.get_prompt("greet", {"who": "Ada"})
    assert {"add", "forecast", "grow"} <= {tool.name for tool in tools.tools}
    assert text(added) == "42"
    assert forecast.is_error is False and '"eu-west"' in text(forecast)
    assert doc.contents[0].text == "the document"  # type: ignore[union-attr]
    assert cafe.contents[0].text == "coffee"  # type: ignore[union-attr]
    assert prompt.messages[0].content.text == "Hello Ada"  # type: ignore[union-attr]
    [(headers, status)] = [(h, s) for h, s in recorded.posts("tools/call") if h.get("mcp-name") == "forecast"]
    assert status == 200
    assert headers["mcp-param-region"] == "eu-west" and headers["mcp-param-count"] == "3"
    assert all(status == 200 for _, _, status in recorded.exchanges)


async def test_a_legacy_sdk_client_is_served_at_the_same_time(served: tuple[str, Recorded]) -> None:
    url, recorded = served
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with (
            Client(url, read_timeout_seconds=CALL_TIMEOUT) as modern,
            Client(url, mode="legacy", read_timeout_seconds=CALL_TIMEOUT) as legacy,
        ):
            assert modern.protocol_version == MODERN
            assert legacy.protocol_version == LEGACY
            assert len(recorded.app.sessions) == 1  # the legacy client's; the modern one has none
            results: dict[str, str] = {}

            async def use(name: str, client: Client, a: int) -> None:
                for _ in range(5):
                    results[name] = text(await client.call_tool("add", {"a": a, "b": 1}))

            async with anyio.create_task_group() as tg:
                tg.start_soon(use, "modern", modern, 1)
                tg.start_soon(use, "legacy", legacy, 10)
    assert results == {"modern": "2", "legacy": "11"}


async def test_the_sdk_listens_for_tool_list_changes(served: tuple[str, Recorded]) -> None:
    url, _ = served
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(url, read_timeout_seconds=CALL_TIMEOUT) as sdk:
            async with sdk.listen(tools_list_changed=True, prompts_list_changed=True) as subscription:
                assert subscription.honored.tools_list_changed is True
                await sdk.call_tool("grow", {"name": "grown"})
                event = await subscription.__anext__()
            tools = await sdk.list_tools()
    assert event == ToolsListChanged()
    assert "grown" in {tool.name for tool in tools.tools}


async def test_the_sdk_listens_for_resource_updates(served: tuple[str, Recorded]) -> None:
    url, _ = served
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with (
            Client(url, read_timeout_seconds=CALL_TIMEOUT) as sdk,
            sdk.listen(resource_subscriptions=["res://doc"]) as subscription,
        ):
            assert subscription.honored.resource_subscriptions == ["res://doc"]
            await sdk.call_tool("touch", {"uri": "res://doc"})
            event = await subscription.__anext__()
    assert event == ResourceUpdated(uri="res://doc")


async def test_leaving_the_sdk_listen_ends_the_subscription(served: tuple[str, Recorded]) -> None:
    url, recorded = served
    hub = recorded.app.server.subscriptions
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(url, read_timeout_seconds=CALL_TIMEOUT) as sdk:
            async with sdk.listen(tools_list_changed=True):
                assert len(hub) == 1
            await wait_until(lambda: len(hub) == 0)


async def test_a_server_shutdown_ends_the_sdk_subscription_gracefully(served: tuple[str, Recorded]) -> None:
    url, recorded = served
    events: list[Any] = []
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with (
            Client(url, read_timeout_seconds=CALL_TIMEOUT) as sdk,
            sdk.listen(tools_list_changed=True) as subscription,
        ):
            recorded.app.begin_shutdown()
            async for event in subscription:  # ends (no SubscriptionLost) on the final result
                events.append(event)
    assert events == []
