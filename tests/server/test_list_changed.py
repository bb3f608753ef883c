"""list_changed notifications: sent when a registry changes at runtime, and only when allowed."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Server
from jsonrpc_mcp.testing import connect, connect_raw
from tests import timeouts

pytestmark = pytest.mark.anyio

TOOLS = "notifications/tools/list_changed"
RESOURCES = "notifications/resources/list_changed"
PROMPTS = "notifications/prompts/list_changed"


class Inbox:
    """Collects notifications; ``wait_for`` blocks (bounded) until one with that method arrives."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []
        self._changed = anyio.Event()

    def __call__(self, method: str, params: Any) -> None:
        self.seen.append((method, params))
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(self, method: str, timeout: float = 5.0) -> None:
        with anyio.fail_after(timeout):
            while not any(m == method for m, _ in self.seen):
                await self._changed.wait()

    def methods(self) -> list[str]:
        return [m for m, _ in self.seen]


def _server() -> Server:
    server = Server("changing")
    server.add_tool("first", lambda: "1")
    server.add_resource("res://first", lambda: "1")
    server.add_prompt("first", lambda: "1")
    return server


async def test_adding_a_tool_sends_tools_list_changed() -> None:
    server = _server()
    inbox = Inbox()
    async with connect(server, on_notification=inbox) as client:
        server.add_tool("second", lambda: "2")
        await inbox.wait_for(TOOLS)
        assert [t["name"] for t in await client.list_tools()] == ["first", "second"]


async def test_removing_a_tool_sends_tools_list_changed() -> None:
    server = _server()
    inbox = Inbox()
    async with connect(server, on_notification=inbox) as client:
        assert server.remove_tool("first")
        await inbox.wait_for(TOOLS)
        assert await client.list_tools() == []


async def test_adding_a_resource_sends_resources_list_changed() -> None:
    server = _server()
    inbox = Inbox()
    async with connect(server, on_notification=inbox):
        server.add_resource("res://second", lambda: "2")
        await inbox.wait_for(RESOURCES)


async def test_adding_a_resource_template_sends_resources_list_changed() -> None:
    server = _server()
    inbox = Inbox()
    async with connect(server, on_notification=inbox):
        server.add_resource("tpl://{id}", lambda id: id)
        await inbox.wait_for(RESOURCES)


async def test_adding_a_prompt_sends_prompts_list_changed() -> None:
    server = _server()
    inbox = Inbox()
    async with connect(server, on_notification=inbox):
        server.add_prompt("second", lambda: "2")
        await inbox.wait_for(PROMPTS)


async def test_list_changed_is_advertised_for_every_registered_kind() -> None:
    async with connect(_server()) as client:
        caps = client.server_capabilities
    assert caps["tools"]["listChanged"] is True
    assert caps["resources"]["listChanged"] is True
    assert caps["prompts"]["listChanged"] is True


async def test_a_sync_tool_changing_the_registry_from_its_worker_thread_notifies() -> None:
    server = _server()
    threads: list[threading.Thread] = []

    @server.tool()
    def add_more() -> str:
        threads.append(threading.current_thread())
        server.add_tool("added_in_thread", lambda: "x")
        return "added"

    inbox = Inbox()
    async with connect(server, on_notification=inbox) as client:
        result = await client.call_tool("add_more")
        await inbox.wait_for(TOOLS)
    assert result["content"][0]["text"] == "added"
    assert threads[0] is not threading.main_thread()


async def test_a_burst_of_changes_is_announced() -> None:
    server = _server()
    inbox = Inbox()
    async with connect(server, on_notification=inbox) as client:
        for i in range(20):
            server.add_tool(f"burst{i}", lambda: "x")
        await inbox.wait_for(TOOLS)
        assert len(await client.list_tools()) == 21
    assert 1 <= inbox.methods().count(TOOLS) <= 20


async def test_no_list_changed_before_initialize() -> None:
    server = _server()
    async with connect_raw(server) as raw:
        server.add_tool("early", lambda: "x")
        pong = await raw.request("ping")
        init = await raw.initialize("2025-11-25")
        listed = await raw.request("tools/list")
    assert pong["result"] == {}
    assert all("method" not in frame for frame in raw.frames)
    assert init["result"]["capabilities"]["tools"] == {"listChanged": True}
    assert "early" in [t["name"] for t in listed["result"]["tools"]]


async def test_changes_during_the_handshake_are_announced_after_initialized() -> None:
    server = _server()
    async with connect_raw(server) as raw:
        await raw.initialize("2025-11-25", initialized=False)
        server.add_tool("during_handshake", lambda: "x")
        listed = await raw.request("tools/list")
        assert all("method" not in frame for frame in raw.frames)
        await raw.notify("notifications/initialized")
        note = await raw.receive_until(lambda f: "method" in f)
    assert "during_handshake" in [t["name"] for t in listed["result"]["tools"]]
    assert note == {"jsonrpc": "2.0", "method": TOOLS}


async def test_a_kind_absent_at_initialize_is_not_announced() -> None:
    server = Server("t")
    server.add_tool("only", lambda: "x")
    async with connect_raw(server) as raw:
        init = await raw.initialize("2025-11-25")
        server.add_prompt("late", lambda: "x")  # no prompts capability was promised
        server.add_tool("second", lambda: "x")
        note = await raw.receive_until(lambda f: "method" in f)
    assert "prompts" not in init["result"]["capabilities"]
    assert note["method"] == TOOLS
    assert not any(f.get("method") == PROMPTS for f in raw.frames)


async def test_every_connected_session_is_notified() -> None:
    server = _server()
    first, second = Inbox(), Inbox()
    async with connect(server, on_notification=first), connect(server, on_notification=second):
        server.add_tool("shared", lambda: "x")
        await first.wait_for(TOOLS)
        await second.wait_for(TOOLS)


async def test_a_closed_session_is_forgotten() -> None:
    server = _server()
    async with connect(server):
        assert len(server._sessions) == 1
    assert len(server._sessions) == 0
    server.add_tool("after_close", lambda: "x")  # must not raise


async def test_the_notification_frame_has_no_params_and_no_id() -> None:
    server = _server()
    async with connect_raw(server) as raw:
        await raw.initialize("2025-06-18")
        server.add_resource("res://x", lambda: "x")
        note = await raw.receive_until(lambda f: "method" in f)
    assert note == {"jsonrpc": "2.0", "method": RESOURCES}


async def test_client_on_notification_may_be_async() -> None:
    server = _server()
    got = anyio.Event()

    async def on_notification(method: str, params: Any) -> None:
        if method == TOOLS:
            got.set()

    async with connect(server, on_notification=on_notification):
        server.add_tool("x", lambda: "x")
        with anyio.fail_after(timeouts.STEP):
            await got.wait()
    assert got.is_set()
