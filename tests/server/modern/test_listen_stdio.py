"""subscriptions/listen over real stdio: a subprocess serving this module's ``server``. The listen
stream's notifications share stdout with everything else, tagged with the subscription id (F06);
notifications/cancelled ends it (nothing more is written for it); a graceful end writes the final
result; closing stdin still ends the server promptly with a subscription open."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from jsonrpc_mcp import Server
from jsonrpc_mcp.transports.stdio import ProcessStream, spawn_stdio
from tests import timeouts
from tests.server.features.support import check_schema

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
REPO = Path(__file__).resolve().parents[3]
COMMAND = [sys.executable, "-m", "jsonrpc_mcp", "serve", f"{Path(__file__).resolve()}:server"]
TIMEOUT = timeouts.STARTUP  # the subprocess starting, then one exchange

server = Server("stdio-listen")


@server.tool()
def grow(name: str) -> str:
    """Register a tool named ``name``."""
    server.add_tool(name, lambda: name, replace=True)
    return f"grew {name}"


@server.tool()
async def touch(uri: str) -> str:
    """Tell the subscribers that ``uri`` changed."""
    return f"told {await server.notify_resource_updated(uri)}"


@server.tool()
def end_listens() -> str:
    """End every subscription gracefully."""
    return f"ended {server.subscriptions.end_all()}"


@server.resource("res://doc")
def doc() -> str:
    return "doc"


class Wire:
    """The client side of the subprocess: raw frames out, every frame in kept in order."""

    def __init__(self, stream: ProcessStream) -> None:
        self.stream = stream
        self.frames: list[dict[str, Any]] = []
        self._ids = 0

    async def send(self, message: dict[str, Any]) -> None:
        await self.stream.send(orjson.dumps(message))

    async def request(self, method: str, params: dict[str, Any], rid: Any = None) -> Any:
        if rid is None:
            self._ids += 1
            rid = self._ids
        params = {
            **params,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        }
        await self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid

    async def until(self, predicate: Any) -> dict[str, Any]:
        with anyio.fail_after(TIMEOUT):
            for seen in self.frames:
                if predicate(seen):
                    return seen
            while True:
                frame: dict[str, Any] = orjson.loads(await self.stream.receive())
                self.frames.append(frame)
                if predicate(frame):
                    return frame

    async def answer(self, rid: Any) -> dict[str, Any]:
        return await self.until(lambda f: f.get("id") == rid and "method" not in f)

    def of(self, subscription: Any) -> list[dict[str, Any]]:
        """Every frame of a subscription so far: tagged notifications and its final result."""
        return [
            f
            for f in self.frames
            if (
                isinstance(f.get("params"), dict)
                and f["params"].get("_meta", {}).get(SUBSCRIPTION_ID) == subscription
            )
            or (f.get("id") == subscription and "method" not in f)
        ]


@pytest.fixture
async def wire() -> AsyncIterator[Wire]:
    with anyio.fail_after(TIMEOUT):
        async with spawn_stdio(COMMAND, cwd=REPO, stderr=subprocess.DEVNULL) as stream:
            yield Wire(stream)


async def test_listen_notifications_on_stdout_are_tagged(wire: Wire) -> None:  # F06, D27
    await wire.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, rid="L")
    await wire.until(lambda f: f.get("method") == "notifications/subscriptions/acknowledged")
    grown = await wire.request("tools/call", {"name": "grow", "arguments": {"name": "g1"}})
    assert (await wire.answer(grown))["result"]["content"][0]["text"] == "grew g1"
    changed = await wire.until(lambda f: f.get("method") == "notifications/tools/list_changed")
    assert changed["params"] == {"_meta": {SUBSCRIPTION_ID: "L"}}
    assert [f["method"] for f in wire.of("L")] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
    ]
    for frame in wire.frames:
        check_schema(MODERN, "JSONRPCMessage", frame)


async def test_a_resource_update_reaches_a_listener_over_stdio(wire: Wire) -> None:
    await wire.request(
        "subscriptions/listen", {"notifications": {"resourceSubscriptions": ["res://doc"]}}, rid=5
    )
    await wire.until(lambda f: f.get("method") == "notifications/subscriptions/acknowledged")
    touched = await wire.request("tools/call", {"name": "touch", "arguments": {"uri": "res://doc"}})
    assert (await wire.answer(touched))["result"]["content"][0]["text"] == "told 1"
    updated = await wire.until(lambda f: f.get("method") == "notifications/resources/updated")
    assert updated["params"] == {"_meta": {SUBSCRIPTION_ID: 5}, "uri": "res://doc"}


async def test_a_cancelled_subscription_gets_nothing_more(wire: Wire) -> None:  # D30
    await wire.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, rid="gone")
    await wire.until(lambda f: f.get("method") == "notifications/subscriptions/acknowledged")
    await wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "gone"}})
    await wire.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, rid="kept")
    await wire.until(
        lambda f: (
            f.get("method") == "notifications/subscriptions/acknowledged"
            and f["params"]["_meta"][SUBSCRIPTION_ID] == "kept"
        )
    )
    await wire.answer(await wire.request("tools/call", {"name": "grow", "arguments": {"name": "g2"}}))
    await wire.until(lambda f: f.get("method") == "notifications/tools/list_changed")
    assert [f.get("method") for f in wire.of("gone")] == ["notifications/subscriptions/acknowledged"]
    assert [f.get("method") for f in wire.of("kept")][-1] == "notifications/tools/list_changed"


async def test_a_graceful_end_writes_the_final_result(wire: Wire) -> None:
    await wire.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, rid=9)
    await wire.until(lambda f: f.get("method") == "notifications/subscriptions/acknowledged")
    ended = await wire.request("tools/call", {"name": "end_listens", "arguments": {}})
    final = await wire.answer(9)
    assert (await wire.answer(ended))["result"]["content"][0]["text"] == "ended 1"
    assert final["result"]["resultType"] == "complete"
    assert final["result"]["_meta"][SUBSCRIPTION_ID] == 9


async def test_closing_stdin_ends_the_server_with_a_subscription_open() -> None:  # F05
    with anyio.fail_after(TIMEOUT):
        async with spawn_stdio(
            COMMAND, cwd=REPO, stderr=subprocess.DEVNULL, grace=5.0, term_grace=0.5
        ) as stream:
            wire = Wire(stream)
            await wire.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, rid=1)
            await wire.until(lambda f: f.get("method") == "notifications/subscriptions/acknowledged")
            await stream.aclose()
            with anyio.fail_after(timeouts.STEP):
                returncode = await stream.process.wait()
    assert returncode == 0
