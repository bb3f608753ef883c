"""Servers written with the official MCP Python SDK, served over HTTP for jsonrpc_mcp's HTTP client.

``build(kind)`` makes a fresh ASGI app (a new ``MCPServer`` each time):

* ``sse``: Streamable HTTP, answers as event streams (the SDK's default);
* ``json``: Streamable HTTP in JSON-response mode;
* ``resumable``: Streamable HTTP with an in-memory event store (priming events, ``retry``, replay);
* ``stateless``: Streamable HTTP without sessions (JSON responses);
* ``legacy``: the 2024-11-05 HTTP+SSE transport (GET /sse, POST /messages/).

Run as ``python sdk_http_server.py KIND FD`` to serve on the listening socket inherited as FD.
"""

from __future__ import annotations

import itertools
import socket
import sys
from typing import Any

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore
from mcp.types import (
    JSONRPCMessage,
    ListRootsRequest,
    ListRootsResult,
    LoggingMessageNotification,
    LoggingMessageNotificationParams,
)

KINDS = ("sse", "json", "resumable", "stateless", "legacy")


class InMemoryEventStore(EventStore):
    """Every event kept in order; replay sends what followed an id on that id's stream."""

    def __init__(self) -> None:
        self._events: list[tuple[str, str, JSONRPCMessage | None]] = []
        self._ids = itertools.count(1)

    async def store_event(self, stream_id: str, message: JSONRPCMessage | None) -> str:
        event_id = f"ev-{next(self._ids)}"
        self._events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id: str, send_callback: EventCallback) -> str | None:
        position = next((i for i, event in enumerate(self._events) if event[0] == last_event_id), None)
        if position is None:
            return None
        stream_id = self._events[position][1]
        for event_id, stream, message in self._events[position + 1 :]:
            if stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id


def make_server() -> MCPServer:
    server = MCPServer("interop-sdk-http", version="4.5.6", instructions="The SDK, over HTTP.")

    @server.tool()
    def multiply(a: int, b: int) -> str:
        """Multiply two integers."""
        return str(a * b)

    @server.tool()
    def explode(reason: str) -> str:
        """Always fails with the given reason."""
        raise ToolError(f"exploded: {reason}")

    @server.tool()
    async def chatty(steps: int, ctx: Context) -> str:
        """Reports progress and logs a message per step before answering."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
            # (ctx.info and session.list_roots warn that logging/roots are deprecated in 2026-07-28)
            log = LoggingMessageNotificationParams(level="info", data=f"log {step}")
            await ctx.session.send_notification(LoggingMessageNotification(params=log), ctx.request_id)
        return f"done after {steps} steps"

    @server.tool()
    async def announce(ctx: Context) -> str:
        """Sends notifications/tools/list_changed, which travels on the standalone GET stream."""
        await ctx.session.send_tool_list_changed()
        return "announced"

    @server.tool()
    async def ask_roots(ctx: Context) -> str:
        """Asks the client for its roots (a server-to-client request) and names them."""
        result = await ctx.session.send_request(ListRootsRequest(), ListRootsResult)
        return ",".join(str(root.uri) for root in result.roots)

    @server.tool()
    async def reconnect_me(ctx: Context) -> str:
        """Closes its own event stream (the client must resume it) and answers afterwards."""
        await ctx.report_progress(1, 2, "before the drop")
        await ctx.close_sse_stream()
        await anyio.sleep(0.3)  # the server's side of the scenario: answer while the client is away
        await ctx.report_progress(2, 2, "after the drop")
        return "answered after a reconnection"

    @server.tool()
    async def nap(seconds: float) -> str:
        """Sleeps, then answers."""
        await anyio.sleep(seconds)
        return "rested"

    return server


def build(kind: str, **options: Any) -> Any:
    server = make_server()
    if kind == "sse":
        return server.streamable_http_app(**options)
    if kind == "json":
        return server.streamable_http_app(json_response=True, **options)
    if kind == "resumable":
        return server.streamable_http_app(event_store=InMemoryEventStore(), retry_interval=50, **options)
    if kind == "stateless":
        return server.streamable_http_app(stateless_http=True, json_response=True, **options)
    if kind == "legacy":
        return server.sse_app(**options)
    raise ValueError(f"unknown kind {kind!r}; one of {KINDS}")


def main() -> None:
    kind, fd = sys.argv[1], int(sys.argv[2])
    sock = socket.socket(fileno=fd)
    config = uvicorn.Config(build(kind), log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
