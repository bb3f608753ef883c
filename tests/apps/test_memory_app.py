"""examples/memory's app on the wire: the project's client over real HTTP (both eras) and the
official Python SDK's client over stdio see ``recall``'s link, read the view and use its tools."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Client
from jsonrpc_mcp.apps import CLIENT_SETTINGS, EXTENSION_ID, MIME_TYPE

from .memory_server import MEMORY_SERVER, START_TIMEOUT, memory_over_http

pytestmark = pytest.mark.anyio

TIMEOUT = 15.0
VIEW = "ui://memory/browser"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_python_host_reads_recalls_view_and_calls_the_views_tools_over_http(
    tmp_path: Path, mode: str
) -> None:
    async with memory_over_http(tmp_path / "data") as url:
        with anyio.fail_after(START_TIMEOUT):
            async with Client.http(
                url,
                mode=mode,
                timeout=TIMEOUT,
                request_timeout=TIMEOUT,
                extensions={EXTENSION_ID: CLIENT_SETTINGS},
            ) as client:
                assert client.server_extensions[EXTENSION_ID] == {"mimeTypes": [MIME_TYPE]}
                tools = {t["name"]: t for t in await client.list_tools()}
                assert tools["recall"]["_meta"] == {"ui": {"resourceUri": VIEW}}
                assert tools["browse"]["_meta"]["ui"]["visibility"] == ["app"]
                assert "browse" not in [t["name"] for t in await client.model_tools()]
                view = await client.read_app("recall")
                assert view.uri == VIEW and view.prefers_border is True and view.csp == {}
                assert view.html.startswith("<!DOCTYPE html>") and "ui/initialize" in view.html
                assert "connect-src 'none'" in view.content_security_policy
                await client.call_tool("remember", {"text": "Buy oat milk", "tags": ["shopping"]})
                await client.call_tool("remember", {"text": "Call the plumber", "tags": ["home", "shopping"]})
                recalled = await client.call_tool("recall", {"keyword": "milk"})
                assert [m["text"] for m in recalled["structuredContent"]["memories"]] == ["Buy oat milk"]
                browsed = (await client.call_tool("browse", {"tag": "shopping"}))["structuredContent"]
                assert browsed["tags"] == [{"tag": "shopping", "count": 2}, {"tag": "home", "count": 1}]
                assert browsed["total"] == 2 and len(browsed["memories"]) == 2


async def test_a_client_without_the_extension_is_never_offered_the_views_own_tool(tmp_path: Path) -> None:
    async with memory_over_http(tmp_path / "data") as url:
        with anyio.fail_after(START_TIMEOUT):
            async with Client.http(url, timeout=TIMEOUT, request_timeout=TIMEOUT) as client:
                names = [t["name"] for t in await client.list_tools()]
    assert names == ["remember", "recall", "forget", "forget_tag"]


async def test_the_official_sdk_client_sees_the_app_link_and_reads_the_view(tmp_path: Path) -> None:
    from mcp import Client as SdkClient
    from mcp.client.extension import ClientExtension

    from ..interop.interop_support import CALL_TIMEOUT, CONNECT_TIMEOUT, sdk_params

    class AppsHost(ClientExtension):
        identifier = EXTENSION_ID

        def settings(self) -> dict[str, Any]:
            return dict(CLIENT_SETTINGS)

    data_dir = tmp_path / "data"
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(MEMORY_SERVER)]
    params = sdk_params(command, env={"JSONRPC_MCP_MEMORY_DIR": str(data_dir)})
    for extensions in ([AppsHost()], None):
        with anyio.fail_after(CONNECT_TIMEOUT):
            async with SdkClient(params, read_timeout_seconds=CALL_TIMEOUT, extensions=extensions) as sdk:
                tools = {tool.name: tool for tool in (await sdk.list_tools()).tools}
                read = await sdk.read_resource(VIEW)
        assert tools["recall"].meta == {"ui": {"resourceUri": VIEW}}
        assert ("browse" in tools) is (extensions is not None)  # the view's own tool: for Apps hosts only
        (content,) = read.contents
        assert content.mime_type == MIME_TYPE and str(content.uri) == VIEW
        assert content.meta == {"ui": {"prefersBorder": True}}
        assert "ui/initialize" in getattr(content, "text", "")
