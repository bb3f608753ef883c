"""The extension API (SEP-2133): declaration, negotiation, routing and gating, in both eras.

In-memory for the rules; a real stdio subprocess and a real uvicorn on 127.0.0.1 for the wire.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Client, Extension, JsonRpcError, Server
from jsonrpc_mcp.server._extensions import check_extension_id
from jsonrpc_mcp.testing import connect
from tests import timeouts

from ..http.support import serving
from . import ext_server
from .ext_server import EXT, STAMP

pytestmark = pytest.mark.anyio

SERVER_FILE = Path(ext_server.__file__).resolve()
TIMEOUT = timeouts.STARTUP
MODES = ["legacy", "2026-07-28"]


@pytest.mark.parametrize(
    "good", ["io.modelcontextprotocol/tasks", "com.example/feature", "a/b", "x-y.z9/n_1.v-2"]
)
def test_valid_identifiers_are_accepted(good: str) -> None:
    assert check_extension_id(good) == good


@pytest.mark.parametrize("bad", ["tasks", "/tasks", "com.example/", "9com/x", "com./x", "a b/c", "a/-b", 7])
def test_invalid_identifiers_are_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match="extension identifier"):
        check_extension_id(bad)


def test_an_extension_without_a_prefix_cannot_be_added() -> None:
    class NoPrefix(Extension):
        id = "tasks"

    with pytest.raises(ValueError):
        Server("x", extensions=[NoPrefix()])


def test_an_extension_cannot_be_added_twice_nor_take_a_core_method() -> None:
    server = Server("x", extensions=[ext_server.Echo()])
    with pytest.raises(Exception, match="already added"):
        server.add_extension(ext_server.Echo())

    class Steals(Extension):
        id = "com.example/steals"

        def methods(self) -> Any:
            return {"tools/list": ext_server.Echo().say}

    with pytest.raises(Exception, match="already defined"):
        server.add_extension(Steals())


@pytest.mark.parametrize("mode", MODES)
async def test_the_server_declares_its_extensions(mode: str) -> None:
    async with connect(ext_server.server, mode=mode) as client:
        assert client.server_extensions == {EXT: {"loud": True}}


async def test_a_stateless_only_extension_is_not_declared_in_the_handshake_era() -> None:
    class Modern(Extension):
        id = "com.example/modern"

    server = Server("x", extensions=[Modern()])
    async with connect(server, mode="legacy") as client:
        assert "extensions" not in client.server_capabilities
        with pytest.raises(JsonRpcError) as caught:
            await client.request("echo/say", {})
        assert caught.value.code == -32601
    async with connect(server, mode="2026-07-28") as client:
        assert client.server_extensions == {"com.example/modern": {}}


async def test_a_server_without_extensions_declares_none_and_routes_no_extension_method() -> None:
    server = Server("plain")
    async with connect(server, mode="2026-07-28") as client:
        assert "extensions" not in client.server_capabilities
        with pytest.raises(JsonRpcError) as caught:
            await client.request("echo/say", {})
        assert caught.value.code == -32601
    assert server.router.middleware == ()  # (no chain on the hot path)


@pytest.mark.parametrize("mode", MODES)
async def test_a_declaring_client_reaches_the_extension_method(mode: str) -> None:
    async with connect(ext_server.server, mode=mode, extensions={EXT: {}}) as client:
        assert client.extensions == {EXT: {}}
        result = await client.request("echo/say", {"text": "hi"})
        assert result["said"] == "hi" and result["clientSupports"] is True


@pytest.mark.parametrize("mode", MODES)
async def test_a_non_declaring_client_gets_32021_naming_the_extension(mode: str) -> None:
    async with connect(ext_server.server, mode=mode) as client:
        with pytest.raises(JsonRpcError) as caught:
            await client.request("echo/say", {"text": "hi"})
        assert caught.value.code == -32021
        assert caught.value.data == {"requiredCapabilities": {"extensions": {EXT: {}}}}


async def test_stateless_declaration_is_per_request() -> None:
    async with connect(ext_server.server, mode="2026-07-28") as client:  # declares nothing itself
        meta: dict[str, Any] = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {EXT: {}}}}
        result = await client.request("echo/say", {"text": "once", "_meta": meta})
        assert result["said"] == "once"
        with pytest.raises(JsonRpcError) as caught:  # the next request did not declare it
            await client.request("echo/say", {"text": "again"})
        assert caught.value.code == -32021


@pytest.mark.parametrize("mode", MODES)
async def test_the_middleware_sees_what_the_client_declared(mode: str) -> None:
    async with connect(ext_server.server, mode=mode, extensions={EXT: {}, "com.example/other": {}}) as client:
        result = await client.call_tool("ping_tool")
        assert result["_meta"][STAMP] == [EXT, "com.example/other"]
    async with connect(ext_server.server, mode=mode) as client:
        assert (await client.call_tool("ping_tool"))["_meta"][STAMP] == []


@pytest.mark.parametrize("mode", MODES)
async def test_over_stdio(mode: str) -> None:
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(SERVER_FILE)]
    with anyio.fail_after(TIMEOUT):
        async with Client.stdio(command, mode=mode, extensions={EXT: {}}) as client:
            assert client.server_extensions == {EXT: {"loud": True}}
            assert (await client.request("echo/say", {"text": "s"}))["said"] == "s"
        async with Client.stdio(command, mode=mode) as client:
            with pytest.raises(JsonRpcError) as caught:
                await client.request("echo/say", {"text": "s"})
            assert caught.value.code == -32021


@pytest.mark.asyncio_only  # uvicorn runs on asyncio only
@pytest.mark.parametrize("mode", MODES)
async def test_over_streamable_http(mode: str) -> None:
    app = ext_server.server.http_app()
    with anyio.fail_after(TIMEOUT):
        async with serving(app) as base:
            async with Client.http(f"{base}/mcp", mode=mode, extensions={EXT: {}}) as client:
                assert client.server_extensions == {EXT: {"loud": True}}
                assert (await client.request("echo/say", {"text": "h"}))["said"] == "h"
            async with Client.http(f"{base}/mcp", mode=mode) as client:
                with pytest.raises(JsonRpcError) as caught:
                    await client.request("echo/say", {"text": "h"})
                assert caught.value.code == -32021
