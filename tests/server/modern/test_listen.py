"""subscriptions/listen (2026-07-28), the protocol logic, over an in-memory connection: the
acknowledgement first, only the types asked for, every message tagged with the subscription id,
ended by the client (notifications/cancelled) or gracefully by the server (the final result)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Server
from jsonrpc_mcp.revisions import HANDSHAKE_REVISIONS
from jsonrpc_mcp.server._subscriptions import MAX_PENDING
from jsonrpc_mcp.testing import RawConnection, connect_raw
from tests import timeouts

from ..features.support import check_schema

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
TOOLS_CHANGED = "notifications/tools/list_changed"
PROMPTS_CHANGED = "notifications/prompts/list_changed"
RESOURCES_CHANGED = "notifications/resources/list_changed"
UPDATED = "notifications/resources/updated"
SCHEMA_NAMES = {
    ACKNOWLEDGED: "SubscriptionsAcknowledgedNotification",
    TOOLS_CHANGED: "ToolListChangedNotification",
    PROMPTS_CHANGED: "PromptListChangedNotification",
    RESOURCES_CHANGED: "ResourceListChangedNotification",
    UPDATED: "ResourceUpdatedNotification",
}


def envelope() -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }


def build() -> Server:
    server = Server("listen-test")

    @server.tool()
    def grow(name: str) -> str:
        """Register a tool (a sync tool: from a worker thread)."""
        server.add_tool(name, lambda: name, replace=True)
        return "grown"

    @server.tool()
    async def touch(uri: str) -> str:
        return f"told {await server.notify_resource_updated(uri)}"

    @server.resource("res://doc")
    def doc() -> str:
        return "doc"

    @server.prompt("greet")
    def greet(who: str) -> str:
        return f"Hello {who}"

    return server


def checked(frame: dict[str, Any]) -> dict[str, Any]:
    """A frame the server sent in a modern exchange, checked against the 2026-07-28 schema."""
    check_schema(MODERN, "JSONRPCMessage", frame)
    if "method" in frame:
        check_schema(MODERN, SCHEMA_NAMES[frame["method"]], frame)
    elif "result" in frame and SUBSCRIPTION_ID in frame["result"].get("_meta", {}):
        check_schema(MODERN, "SubscriptionsListenResultResponse", frame)
    return frame


async def listen(raw: RawConnection, rid: Any, **notifications: Any) -> dict[str, Any]:
    """Send subscriptions/listen; the acknowledgement (the first frame tagged with ``rid``)."""
    await raw.send(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "subscriptions/listen",
            "params": {"_meta": envelope(), "notifications": notifications},
        }
    )
    return await nth_tagged(raw, rid, 0)


def tagged(frame: dict[str, Any], rid: Any) -> bool:
    params = frame.get("params")
    return isinstance(params, dict) and params.get("_meta", {}).get(SUBSCRIPTION_ID) == rid


async def call(raw: RawConnection, tool: str, **arguments: Any) -> str:
    response = await raw.request("tools/call", {"name": tool, "arguments": arguments, "_meta": envelope()})
    text: str = response["result"]["content"][0]["text"]
    return text


async def nth_tagged(raw: RawConnection, rid: Any, n: int) -> dict[str, Any]:
    """The ``n``-th frame (0: the acknowledgement) of subscription ``rid``, received or to come
    (a request made meanwhile may have received it while waiting for its own answer)."""

    def ours() -> list[dict[str, Any]]:
        return [f for f in raw.frames if tagged(f, rid) or (f.get("id") == rid and "method" not in f)]

    with anyio.fail_after(raw.timeout):
        while len(ours()) <= n:
            await raw.receive()
    return checked(ours()[n])


# -- opening -----------------------------------------------------------------------------------------
async def test_the_first_message_of_a_subscription_is_its_acknowledgement() -> None:  # D25
    async with connect_raw(build()) as raw:
        ack = await listen(raw, 7, toolsListChanged=True)
    assert ack == {
        "jsonrpc": "2.0",
        "method": ACKNOWLEDGED,
        "params": {"_meta": {SUBSCRIPTION_ID: 7}, "notifications": {"toolsListChanged": True}},
    }


async def test_the_acknowledgement_leaves_out_what_the_server_lacks() -> None:  # D26
    server = Server("tools-only")
    server.add_tool("only", lambda: "x")
    async with connect_raw(server) as raw:
        ack = await listen(
            raw,
            1,
            toolsListChanged=True,
            promptsListChanged=True,
            resourcesListChanged=True,
            resourceSubscriptions=["res://x"],
        )
    assert ack["params"]["notifications"] == {"toolsListChanged": True}


async def test_the_acknowledgement_leaves_out_what_was_not_asked_for() -> None:  # D26
    async with connect_raw(build()) as raw:
        ack = await listen(raw, 1, toolsListChanged=False, promptsListChanged=True, taskIds=["t"])
    assert ack["params"]["notifications"] == {"promptsListChanged": True}


async def test_a_request_without_a_filter_is_32602() -> None:
    async with connect_raw(build()) as raw:
        response = await raw.request("subscriptions/listen", {"_meta": envelope()})
    assert response["error"]["code"] == -32602


@pytest.mark.parametrize(
    "notifications",
    [{"toolsListChanged": 1}, {"resourceSubscriptions": "res://doc"}, {"resourceSubscriptions": [1]}],
)
async def test_a_malformed_filter_is_32602(notifications: dict[str, Any]) -> None:
    async with connect_raw(build()) as raw:
        response = await raw.request(
            "subscriptions/listen", {"_meta": envelope(), "notifications": notifications}
        )
    assert response["error"]["code"] == -32602


async def test_a_server_without_the_stateless_revisions_has_no_listen() -> None:
    async with connect_raw(Server("old", revisions=HANDSHAKE_REVISIONS)) as raw:
        await raw.initialize("2025-11-25")
        response = await raw.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    assert response["error"]["code"] == -32601


# -- delivering --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("asked", "change", "method"),
    [
        ("toolsListChanged", lambda s: s.add_tool("t2", lambda: ""), TOOLS_CHANGED),
        ("promptsListChanged", lambda s: s.add_prompt("p2", lambda: ""), PROMPTS_CHANGED),
        ("resourcesListChanged", lambda s: s.add_resource("res://r2", lambda: ""), RESOURCES_CHANGED),
        ("resourcesListChanged", lambda s: s.add_resource("res://t/{x}", lambda x: ""), RESOURCES_CHANGED),
    ],
)
async def test_a_list_change_arrives_tagged(asked: str, change: Any, method: str) -> None:  # D27
    server = build()
    async with connect_raw(server) as raw:
        await listen(raw, "s", **{asked: True})
        change(server)
        notification = await nth_tagged(raw, "s", 1)
    assert notification == {"jsonrpc": "2.0", "method": method, "params": {"_meta": {SUBSCRIPTION_ID: "s"}}}


async def test_a_change_made_from_a_worker_thread_arrives() -> None:
    async with connect_raw(build()) as raw:
        await listen(raw, 2, toolsListChanged=True)
        assert await call(raw, "grow", name="g") == "grown"
        assert (await nth_tagged(raw, 2, 1))["method"] == TOOLS_CHANGED


async def test_a_resource_update_arrives_for_a_subscribed_uri_and_below_it() -> None:
    async with connect_raw(build()) as raw:
        await listen(raw, 3, resourceSubscriptions=["res://doc"])
        assert await call(raw, "touch", uri="res://doc2") == "told 0"
        assert await call(raw, "touch", uri="res://doc/part") == "told 1"
        update = await nth_tagged(raw, 3, 1)
    assert update["params"] == {"_meta": {SUBSCRIPTION_ID: 3}, "uri": "res://doc/part"}


async def test_a_subscription_gets_only_the_types_it_asked_for() -> None:  # D28
    server = build()
    async with connect_raw(server) as raw:
        await listen(raw, 4, resourceSubscriptions=["res://doc"])
        server.add_tool("t3", lambda: "")  # were it sent, it would come before the update
        await server.notify_resource_updated("res://doc")
        first = await nth_tagged(raw, 4, 1)
    assert first["method"] == UPDATED


async def test_changes_made_before_the_acknowledgement_is_read_come_after_it() -> None:
    server = build()
    async with connect_raw(server) as raw:
        await raw.send(
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "subscriptions/listen",
                "params": {"_meta": envelope(), "notifications": {"toolsListChanged": True}},
            }
        )
        with anyio.fail_after(timeouts.STEP):
            while not len(server.subscriptions):
                await anyio.lowlevel.checkpoint()
        server.add_tool("early", lambda: "")
        methods = [(await nth_tagged(raw, 5, 0))["method"], (await nth_tagged(raw, 5, 1))["method"]]
    assert methods == [ACKNOWLEDGED, TOOLS_CHANGED]


async def test_a_burst_of_changes_is_coalesced() -> None:
    server = build()
    async with connect_raw(server) as raw:
        await raw.send(
            {
                "jsonrpc": "2.0",
                "id": 6,
                "method": "subscriptions/listen",
                "params": {"_meta": envelope(), "notifications": {"toolsListChanged": True}},
            }
        )
        with anyio.fail_after(timeouts.STEP):
            while not len(server.subscriptions):
                await anyio.lowlevel.checkpoint()
        for n in range(5):  # all before the listener gets to run
            server.add_tool(f"burst{n}", lambda: "")
        await raw.receive_until(lambda f: f.get("method") == TOOLS_CHANGED)
        server.subscriptions.end_all()
        await raw.receive_until(lambda f: f.get("id") == 6)
    assert [f.get("method") for f in raw.frames if tagged(f, 6)] == [ACKNOWLEDGED, TOOLS_CHANGED]


async def test_two_subscriptions_on_one_connection_are_told_apart() -> None:
    server = build()
    async with connect_raw(server) as raw:
        await listen(raw, "a", toolsListChanged=True)
        await listen(raw, "b", promptsListChanged=True)
        server.add_prompt("p3", lambda: "")
        notification = await raw.receive_until(lambda f: f.get("method") == PROMPTS_CHANGED)
        server.add_tool("t4", lambda: "")
        tool_change = await raw.receive_until(lambda f: f.get("method") == TOOLS_CHANGED)
    assert notification["params"]["_meta"] == {SUBSCRIPTION_ID: "b"}
    assert tool_change["params"]["_meta"] == {SUBSCRIPTION_ID: "a"}


async def test_a_handshake_session_still_gets_its_own_untagged_notifications() -> None:
    server = build()
    async with connect_raw(server) as legacy, connect_raw(server) as modern:
        await legacy.initialize("2025-11-25")
        await legacy.request("resources/subscribe", {"uri": "res://doc"})
        await listen(modern, 8, resourceSubscriptions=["res://doc"], toolsListChanged=True)
        assert await server.notify_resource_updated("res://doc") == 2
        server.add_tool("t5", lambda: "")
        old = await legacy.receive_until(lambda f: f.get("method") == UPDATED)
        changed = await legacy.receive_until(lambda f: f.get("method") == TOOLS_CHANGED)
        new = await nth_tagged(modern, 8, 1)
    assert old == {"jsonrpc": "2.0", "method": UPDATED, "params": {"uri": "res://doc"}}
    assert "params" not in changed or SUBSCRIPTION_ID not in changed["params"].get("_meta", {})
    assert new["params"] == {"_meta": {SUBSCRIPTION_ID: 8}, "uri": "res://doc"}


# -- ending ------------------------------------------------------------------------------------------
async def test_a_graceful_end_answers_the_listen_request() -> None:
    server = build()
    async with connect_raw(server) as raw:
        await listen(raw, 9, toolsListChanged=True)
        assert server.subscriptions.end_all() == 1
        final = await nth_tagged(raw, 9, 1)
    assert final["id"] == 9
    assert final["result"]["resultType"] == "complete"
    assert final["result"]["_meta"][SUBSCRIPTION_ID] == 9
    assert len(server.subscriptions) == 0


async def test_a_graceful_end_delivers_what_is_pending_first() -> None:
    server = build()
    async with connect_raw(server) as raw:
        await listen(raw, 10, toolsListChanged=True)
        server.add_tool("t6", lambda: "")
        server.subscriptions.end_all()
        frames = [await nth_tagged(raw, 10, 1), await nth_tagged(raw, 10, 2)]
    assert [f.get("method") for f in frames] == [TOOLS_CHANGED, None]


async def test_a_cancelled_subscription_ends_and_sends_nothing_more() -> None:  # D30
    server = build()
    async with connect_raw(server) as raw:
        await listen(raw, 11, toolsListChanged=True)
        await raw.notify("notifications/cancelled", {"requestId": 11})
        with anyio.fail_after(timeouts.STEP):
            while len(server.subscriptions):
                await anyio.lowlevel.checkpoint()
        await listen(raw, 12, toolsListChanged=True)
        server.add_tool("t7", lambda: "")
        await nth_tagged(raw, 12, 1)
    assert [f for f in raw.frames if tagged(f, 11) or f.get("id") == 11][1:] == []


async def test_a_subscription_that_falls_too_far_behind_is_ended() -> None:
    server = build()
    async with connect_raw(server) as raw:
        await listen(raw, 13, resourceSubscriptions=["res://doc"])
        for n in range(MAX_PENDING + 10):  # all queued before the subscription gets to send one
            server.subscriptions.resource_updated(f"res://doc/{n}")
        final = await raw.receive_until(lambda f: f.get("id") == 13)
    updates = [f for f in raw.frames if tagged(f, 13) and f.get("method") == UPDATED]
    assert len(updates) == MAX_PENDING
    assert checked(final)["result"]["_meta"][SUBSCRIPTION_ID] == 13
