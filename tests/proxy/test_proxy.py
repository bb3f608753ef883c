"""The proxy's logic, in memory: a client, the proxy, the upstream server, each era on each side.

Every test runs the four crossings (downstream era x upstream era): ``legacy`` is the handshake,
``2026-07-28`` the stateless revision.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Client
from jsonrpc_mcp.jsonrpc.errors import JsonRpcError
from jsonrpc_mcp.proxy import Proxy
from jsonrpc_mcp.revisions import HANDSHAKE_REVISIONS
from jsonrpc_mcp.testing import connect
from tests import timeouts

from .servers.upstream import Controls, build_server

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
ERAS = ["legacy", MODERN]
TIMEOUT = timeouts.STEP
CAPABILITIES: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}


class Downstream:
    """What the downstream client was sent (notifications) and asked (its handlers)."""

    def __init__(self) -> None:
        self.notifications: list[tuple[str, Any]] = []
        self.asked: list[tuple[str, Any]] = []
        self.arrived = anyio.Event()
        self.names = ["Ada", "Grace"]

    def on_notification(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))
        self.arrived.set()

    def of(self, method: str) -> list[Any]:
        return [params for m, params in self.notifications if m == method]

    async def wait_for(self, method: str, count: int = 1) -> list[Any]:
        with anyio.fail_after(TIMEOUT):
            while len(self.of(method)) < count:
                self.arrived = anyio.Event()
                await self.arrived.wait()
        return self.of(method)

    async def elicit(self, params: Any) -> Any:
        self.asked.append(("elicitation/create", params))
        return {"action": "accept", "content": {"name": self.names[len(self.asked) - 1]}}

    async def sample(self, params: Any) -> Any:
        self.asked.append(("sampling/createMessage", params))
        return {"role": "assistant", "content": {"type": "text", "text": "forty-two"}, "model": "m"}

    async def roots(self, params: Any) -> Any:
        self.asked.append(("roots/list", params))
        return {"roots": [{"uri": "file:///work", "name": "work"}]}


@contextlib.asynccontextmanager
async def proxied(
    downstream: str,
    upstream: str,
    *,
    controls: Controls | None = None,
    seen: Downstream | None = None,
    handshake_only: bool = False,
    **client_options: Any,
) -> AsyncIterator[Client]:
    """A client (mode ``downstream``) of a proxy whose client (mode ``upstream``) reaches the test
    server, all in memory."""
    server = (
        build_server(controls, revisions=HANDSHAKE_REVISIONS) if handshake_only else build_server(controls)
    )
    proxy = Proxy(lambda **options: connect(server, mode=upstream, timeout=TIMEOUT, **options))
    seen = seen if seen is not None else Downstream()
    handlers = {
        "elicitation/create": seen.elicit,
        "sampling/createMessage": seen.sample,
        "roots/list": seen.roots,
    }
    options: dict[str, Any] = {
        "capabilities": CAPABILITIES,
        "request_handlers": handlers,
        "on_notification": seen.on_notification,
        **client_options,
    }
    async with connect(proxy, mode=downstream, timeout=TIMEOUT, **options) as client:
        yield client


crossings = pytest.mark.parametrize(("downstream", "upstream"), [(d, u) for d in ERAS for u in ERAS])


@crossings
async def test_the_client_sees_the_upstream_server(downstream: str, upstream: str) -> None:
    async with proxied(downstream, upstream) as client:
        assert client.is_modern == (downstream == MODERN)
        assert client.server_info["name"] == "upstream" and client.server_info["version"] == "2.5.0"
        assert client.server_info["title"] == "The upstream"
        assert client.instructions == "Reached through a proxy."
        caps = client.server_capabilities
        assert caps["tools"] == {"listChanged": True} and caps["prompts"] == {"listChanged": True}
        assert caps["resources"] == {"subscribe": True, "listChanged": True}
        assert "logging" in caps and "completions" in caps


@crossings
async def test_lists_are_every_upstream_page(downstream: str, upstream: str) -> None:
    async with proxied(downstream, upstream) as client:
        tools = await client.list_tools()
        # the upstream pages by 2; the proxy serves them in one page
        names = [
            "echo",
            "progress",
            "greet",
            "twice",
            "visit",
            "think",
            "roots",
            "block",
            "chatty",
            "grow",
            "touch",
        ]
        assert [t["name"] for t in tools] == names
        assert [r["uri"] for r in await client.list_resources()] == ["test://static"]
        assert [t["uriTemplate"] for t in await client.list_resource_templates()] == ["test://items/{id}"]
        assert [p["name"] for p in await client.list_prompts()] == ["hello"]
        raw = await client.request("tools/list")
        assert "nextCursor" not in raw
        assert ("resultType" in raw) == (downstream == MODERN)


@crossings
async def test_a_tool_call_is_forwarded(downstream: str, upstream: str) -> None:
    async with proxied(downstream, upstream) as client:
        result = await client.call_tool("echo", {"text": "through"})
        assert result["content"] == [{"type": "text", "text": "through"}]
        assert ("resultType" in result) == (downstream == MODERN)
        refused = await client.call_tool("echo", {})  # the upstream checks the arguments
        assert refused["isError"] is True


@crossings
async def test_progress_reaches_the_client_with_its_own_token(downstream: str, upstream: str) -> None:
    seen = Downstream()
    async with proxied(downstream, upstream, seen=seen) as client:
        params = {"name": "progress", "arguments": {"steps": 3}, "_meta": {"progressToken": "mine"}}
        result = await client.request("tools/call", params)
        assert result["content"][0]["text"] == "done after 3 steps"
    progress = seen.of("notifications/progress")
    assert [(p["progressToken"], p["progress"], p["total"]) for p in progress] == [
        ("mine", 1, 3), ("mine", 2, 3), ("mine", 3, 3),
    ]  # fmt: skip
    assert progress[0]["message"] == "step 1"


@crossings
async def test_an_elicitation_is_answered_by_the_client(downstream: str, upstream: str) -> None:
    seen, controls = Downstream(), Controls()
    async with proxied(downstream, upstream, seen=seen, controls=controls) as client:
        result = await client.call_tool("greet")
        assert result["content"] == [{"type": "text", "text": "Hello, Ada!"}], result
    assert [method for method, _ in seen.asked] == ["elicitation/create"]
    assert seen.asked[0][1]["message"] == "What is your name?"
    # a handshake upstream ran the tool once (a parked call); a 2026-07-28 one once per round
    assert controls.calls["greet"] == (1 if upstream == "legacy" else 2)


@crossings
async def test_two_questions_in_a_row(downstream: str, upstream: str) -> None:
    seen = Downstream()
    async with proxied(downstream, upstream, seen=seen) as client:
        result = await client.call_tool("twice")
    assert result["content"][0]["text"] == "Ada and Grace"
    assert [params["message"] for _, params in seen.asked] == ["First name?", "Second name?"]


async def test_a_url_elicitation_and_its_completion_reach_the_client() -> None:
    seen = Downstream()
    capabilities: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
    async with proxied("legacy", "legacy", seen=seen, capabilities=capabilities) as client:
        result = await client.call_tool("visit")
        assert result["content"][0]["text"] == "visited (accept)"
        completed = await seen.wait_for("notifications/elicitation/complete")
    assert seen.asked[0][1]["mode"] == "url" and seen.asked[0][1]["elicitationId"] == "visit-1"
    assert completed == [{"elicitationId": "visit-1"}]


@crossings
async def test_sampling_and_roots_are_answered_by_the_client(downstream: str, upstream: str) -> None:
    async with proxied(downstream, upstream) as client:
        sampled = await client.call_tool("think", {"question": "why?"})
        assert sampled["content"][0]["text"] == "model says: forty-two"
        roots = await client.call_tool("roots")
        assert roots["content"][0]["text"] == "file:///work"


@crossings
async def test_a_client_without_the_capability_is_not_asked(downstream: str, upstream: str) -> None:
    seen = Downstream()
    async with proxied(downstream, upstream, seen=seen, capabilities={}) as client:
        if downstream == MODERN:
            with pytest.raises(JsonRpcError) as raised:
                await client.call_tool("greet")
            assert raised.value.code == -32021
        else:
            result = await client.call_tool("greet")
            assert result["isError"] is True
    assert seen.asked == []


@crossings
async def test_resources_prompts_and_completions(downstream: str, upstream: str) -> None:
    async with proxied(downstream, upstream) as client:
        read = await client.read_resource("test://static")
        assert read["contents"] == [{"uri": "test://static", "mimeType": "text/plain", "text": "static text"}]
        item = await client.read_resource("test://items/7")
        assert item["contents"][0]["text"] == "item 7"
        with pytest.raises(JsonRpcError) as missing:
            await client.read_resource("test://nothing")
        assert missing.value.code == (-32602 if downstream == MODERN else -32002)
        prompt = await client.get_prompt("hello", {"name": "Ada"})
        assert prompt["messages"][0]["content"]["text"] == "Say hello to Ada."
        hello = {"type": "ref/prompt", "name": "hello"}
        completed = await client.complete(hello, {"name": "name", "value": "a"})
        assert completed["completion"]["values"] == ["ada", "alan"]


@crossings
async def test_cancelling_the_request_cancels_the_upstream_call(downstream: str, upstream: str) -> None:
    controls = Controls()
    async with proxied(downstream, upstream, controls=controls) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "block", {"gate": "a"})
            with anyio.fail_after(TIMEOUT):
                await controls.started["a"].wait()
            tg.cancel_scope.cancel()  # the client sends notifications/cancelled
        with anyio.fail_after(TIMEOUT):
            await controls.cancelled["a"].wait()
        assert (await client.call_tool("echo", {"text": "still here"}))["content"][0]["text"] == "still here"


@crossings
async def test_a_list_change_upstream_reaches_the_client(downstream: str, upstream: str) -> None:
    seen = Downstream()
    async with proxied(downstream, upstream, seen=seen) as client:
        if downstream == MODERN:
            async with client.listen({"toolsListChanged": True}) as subscription:
                await client.call_tool("grow", {"tool": "grown"})
                with anyio.fail_after(TIMEOUT):
                    method, _ = await subscription.receive()
                assert method == "notifications/tools/list_changed"
        else:
            await client.call_tool("grow", {"tool": "grown"})
            await seen.wait_for("notifications/tools/list_changed")
        assert "grown" in [t["name"] for t in await client.list_tools()]


@crossings
async def test_a_resource_update_reaches_a_subscribed_client(downstream: str, upstream: str) -> None:
    seen = Downstream()
    async with proxied(downstream, upstream, seen=seen) as client:
        if downstream == MODERN:
            async with client.listen({"resourceSubscriptions": ["test://static"]}) as subscription:
                told = await client.call_tool("touch", {"uri": "test://static"})
                assert told["content"][0]["text"] == "told 1"  # the proxy, listening upstream
                with anyio.fail_after(TIMEOUT):
                    method, params = await subscription.receive()
                assert (method, params["uri"]) == ("notifications/resources/updated", "test://static")
        else:
            await client.subscribe_resource("test://static")
            told = await client.call_tool("touch", {"uri": "test://static"})
            assert told["content"][0]["text"] == "told 1"  # the proxy, subscribed upstream
            updated = await seen.wait_for("notifications/resources/updated")
            assert updated[0]["uri"] == "test://static"
            await client.unsubscribe_resource("test://static")
            told = await client.call_tool("touch", {"uri": "test://static"})
            assert told["content"][0]["text"] == "told 0"


@crossings
async def test_log_messages_reach_the_client_at_its_level(downstream: str, upstream: str) -> None:
    seen = Downstream()
    async with proxied(downstream, upstream, seen=seen) as client:
        await client.set_logging_level("info")
        await client.call_tool("chatty")
    assert [p["data"] for p in seen.of("notifications/message")] == ["info message", "error message"]


async def test_a_handshake_only_upstream_is_reached_in_auto_mode() -> None:
    async with proxied(MODERN, "auto", handshake_only=True) as client:
        assert client.is_modern
        assert (await client.call_tool("greet"))["content"][0]["text"] == "Hello, Ada!"


async def test_an_unknown_request_state_is_refused() -> None:
    async with proxied(MODERN, "legacy") as client:
        with pytest.raises(JsonRpcError) as refused:
            forged = {"name": "greet", "requestState": "forged", "inputResponses": {}}
            await client.request("tools/call", forged)
        assert refused.value.code == -32602
