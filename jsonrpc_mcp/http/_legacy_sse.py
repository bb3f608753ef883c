"""The legacy HTTP+SSE transport (2024-11-05), served beside Streamable HTTP.

The legacy HTTP+SSE transport (2024-11-05) is a stream transport: GET on the SSE path runs
:meth:`Server.serve` over an in-memory pair whose other end writes SSE events, and POSTs to the message
path push their bodies into it.
"""

from __future__ import annotations

import contextlib
import math
from functools import partial
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

import anyio
import anyio.abc

from ..jsonrpc.errors import INVALID_REQUEST
from ..transports.memory import memory_pair
from ..transports.sse import encode_event
from ..wire import SESSION_NOT_FOUND
from ._asgi import EVENT_STREAM, Receive, Scope, Send, _error, _is_json_content, _read_body, _respond
from ._health import DRAINING, Lifecycle
from ._sessions import _new_session_id

if TYPE_CHECKING:
    from ..server._server import Server

__all__ = ["LegacySse"]


class LegacySse:
    """The HTTP+SSE part of :class:`~jsonrpc_mcp.http.app.McpHttpApp`: GET on the SSE path opens a
    connection (and its session), POSTs to the message path carry the client's messages.

    It holds only what it reads: the server, the app's lifecycle (no connection opens while
    draining; every one ends on shutdown), ``message_path``, ``max_body`` and ``body_timeout``;
    and its open connections (``sessions``: session id -> the stream its POSTs feed).
    """

    def __init__(
        self, server: Server, life: Lifecycle, *, message_path: str, max_body: int, body_timeout: float | None
    ) -> None:
        self.server = server
        self.life = life
        self.message_path = message_path
        self.max_body = max_body
        self.body_timeout = body_timeout
        self.sessions: dict[str, anyio.abc.ObjectSendStream[bytes]] = {}

    async def aclose(self) -> None:
        """End every connection's input."""
        for sink in list(self.sessions.values()):
            await sink.aclose()
        self.sessions.clear()

    async def get(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.life.phase == DRAINING:  # shutting down: no new session
            await _error(
                send,
                503,
                -32000,
                "Service Unavailable: the server is shutting down",
                [(b"retry-after", b"5")],
            )
            return
        session_id = _new_session_id()
        client_end, server_end = memory_pair()
        to_server, from_posts = anyio.create_memory_object_stream[bytes](math.inf)
        self.sessions[session_id] = to_server
        root = scope.get("root_path", "")
        headers = [
            (b"content-type", EVENT_STREAM),
            (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no"),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})

        async def write(data: bytes) -> None:
            await send({"type": "http.response.body", "body": data, "more_body": True})

        endpoint_uri = f"{root}{self.message_path}?session_id={session_id}"
        try:
            await write(encode_event(endpoint_uri.encode(), event="endpoint"))
            async with anyio.create_task_group() as tg:

                async def pump_in() -> None:
                    async with from_posts:
                        async for body in from_posts:
                            await client_end.send(body)
                    tg.cancel_scope.cancel()

                async def pump_out() -> None:
                    with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError):
                        while True:
                            await write(encode_event(await client_end.receive(), event="message"))

                async def until_disconnect() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    tg.cancel_scope.cancel()

                async def until_shutdown() -> None:
                    await self.life.shutting_down.wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(partial(self.server.serve, server_end, transport="sse"))
                tg.start_soon(pump_in)
                tg.start_soon(pump_out)
                tg.start_soon(until_disconnect)
                tg.start_soon(until_shutdown)
        finally:
            self.sessions.pop(session_id, None)
            await to_server.aclose()
        with contextlib.suppress(Exception):
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def post(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        session_id = (query.get("session_id") or [""])[0]
        if not session_id:
            await _error(send, 400, INVALID_REQUEST, "Bad Request: missing session_id")
            return
        sink = self.sessions.get(session_id)
        if sink is None:
            await _error(send, 404, SESSION_NOT_FOUND, "Session not found")
            return
        if not _is_json_content(scope):
            await _error(
                send, 415, INVALID_REQUEST, "Unsupported Media Type: the body must be application/json"
            )
            return
        body = await _read_body(scope, receive, self.max_body, self.body_timeout)
        if body is None:
            await _error(send, 413, INVALID_REQUEST, f"Payload Too Large: the limit is {self.max_body} bytes")
            return
        try:
            await sink.send(body)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            await _error(send, 404, SESSION_NOT_FOUND, "Session not found")
            return
        await _respond(send, 202, b"Accepted", json=False)
