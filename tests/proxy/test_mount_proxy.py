"""A remote server mounted into a local one: ``main.mount(Proxy.http(url), namespace="up")``.

The upstream is the proxy tests' server, served over real HTTP (uvicorn on 127.0.0.1, port 0); the
client reaches the composed server in memory. Every test runs the four crossings (the client's era
x the upstream's era: ``legacy`` is the handshake, ``2026-07-28`` the stateless revision).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Client, Server
from jsonrpc_mcp.proxy import Proxy
from jsonrpc_mcp.testing import connect

from ..http.support import serving
from .servers.upstream import build_server
from .test_proxy import CAPABILITIES, Downstream

pytestmark = [pytest.mark.anyio, pytest.mark.asyncio_only]  # uvicorn runs on asyncio only

MODERN = "2026-07-28"
ERAS = ["legacy", MODERN]
TIMEOUT = 15.0
crossings = pytest.mark.parametrize(("downstream", "upstream"), [(d, u) for d in ERAS for u in ERAS])


@contextlib.asynccontextmanager
async def composed(downstream: str, upstream: str, seen: Downstream) -> AsyncIterator[Client]:
    """A client (mode ``downstream``) of a server that mounts, under "up", a proxy whose client (mode
    ``upstream``) reaches the upstream over HTTP."""
    app = build_server().http_app()
    main = Server("main")
    main.add_tool("local", lambda: "local answer")
    with anyio.fail_after(TIMEOUT):
        async with serving(app) as base:
            main.mount(Proxy.http(f"{base}/mcp", mode=upstream), namespace="up")
            handlers = {
                "elicitation/create": seen.elicit,
                "sampling/createMessage": seen.sample,
                "roots/list": seen.roots,
            }
            async with connect(
                main, mode=downstream, timeout=TIMEOUT, capabilities=CAPABILITIES,
                request_handlers=handlers, on_notification=seen.on_notification,
            ) as client:  # fmt: skip
                yield client


@crossings
async def test_the_remote_servers_offers_are_served_under_the_namespace(
    downstream: str, upstream: str
) -> None:
    async with composed(downstream, upstream, Downstream()) as client:
        assert client.server_info["name"] == "main"
        caps = client.server_capabilities
        assert "tools" in caps and "prompts" in caps and "completions" in caps and "logging" in caps
        names = [t["name"] for t in await client.list_tools()]
        assert names[0] == "local" and "up_echo" in names and "up_greet" in names and len(names) == 12
        assert (await client.call_tool("up_echo", {"text": "through"}))["content"][0]["text"] == "through"
        assert (await client.call_tool("local"))["content"][0]["text"] == "local answer"
        assert [r["uri"] for r in await client.list_resources()] == ["test://up/static"]
        assert [t["uriTemplate"] for t in await client.list_resource_templates()] == ["test://up/items/{id}"]
        read = await client.read_resource("test://up/items/7")
        assert read["contents"][0]["uri"] == "test://up/items/7" and read["contents"][0]["text"] == "item 7"
        assert [p["name"] for p in await client.list_prompts()] == ["up_hello"]
        prompt = await client.get_prompt("up_hello", {"name": "Ada"})
        assert prompt["messages"][0]["content"]["text"] == "Say hello to Ada."
        done = await client.complete(
            {"type": "ref/prompt", "name": "up_hello"}, {"name": "name", "value": "a"}
        )
        assert done["completion"]["values"] == ["ada", "alan"]


@crossings
async def test_the_remote_server_asks_the_client(downstream: str, upstream: str) -> None:
    seen = Downstream()
    async with composed(downstream, upstream, seen) as client:
        assert (await client.call_tool("up_greet"))["content"] == [{"type": "text", "text": "Hello, Ada!"}]
        result = await client.call_tool("up_think", {"question": "six times seven?"})
        assert result["content"][0]["text"] == "model says: forty-two"
    assert [method for method, _ in seen.asked] == ["elicitation/create", "sampling/createMessage"]


@crossings
async def test_a_remote_list_change_reaches_the_client(downstream: str, upstream: str) -> None:
    seen = Downstream()
    async with composed(downstream, upstream, seen) as client:
        if downstream == MODERN:
            async with client.listen({"toolsListChanged": True}) as subscription:
                await client.call_tool("up_grow", {"tool": "grown"})
                with anyio.fail_after(TIMEOUT):
                    method, _ = await subscription.receive()
                assert method == "notifications/tools/list_changed"
        else:
            await client.call_tool("up_grow", {"tool": "grown"})
            await seen.wait_for("notifications/tools/list_changed")
        assert "up_grown" in [t["name"] for t in await client.list_tools()]


@crossings
async def test_a_remote_resource_update_reaches_a_subscribed_client(downstream: str, upstream: str) -> None:
    seen = Downstream()
    async with composed(downstream, upstream, seen) as client:
        if downstream == MODERN:
            async with client.listen({"resourceSubscriptions": ["test://up/static"]}) as subscription:
                told = await client.call_tool("up_touch", {"uri": "test://static"})
                assert told["content"][0]["text"] == "told 1"  # the proxy, listening upstream
                with anyio.fail_after(TIMEOUT):
                    method, params = await subscription.receive()
                assert (method, params["uri"]) == ("notifications/resources/updated", "test://up/static")
        else:
            await client.subscribe_resource("test://up/static")
            told = await client.call_tool("up_touch", {"uri": "test://static"})
            assert told["content"][0]["text"] == "told 1"  # the proxy, subscribed upstream
            updated = await seen.wait_for("notifications/resources/updated")
            assert [u["uri"] for u in updated] == ["test://up/static"]
            await client.unsubscribe_resource("test://up/static")
            told = await client.call_tool("up_touch", {"uri": "test://static"})
            assert told["content"][0]["text"] == "told 0"


@crossings
async def test_remote_log_messages_reach_the_client_at_its_level(downstream: str, upstream: str) -> None:
    seen = Downstream()
    async with composed(downstream, upstream, seen) as client:
        await client.set_logging_level("info")
        await client.call_tool("up_chatty")
    assert [p["data"] for p in seen.of("notifications/message")] == ["info message", "error message"]


async def test_a_proxy_cannot_be_imported() -> None:
    from jsonrpc_mcp.errors import RegistrationError

    proxy: Any = Proxy.http("http://127.0.0.1:9/mcp")
    with pytest.raises(RegistrationError):
        Server("main").import_server(proxy)
