"""Test helpers: an in-memory client/server pair whose every wait is bounded, and a wire recorder.

async with connect(server) as client:
    result = await client.call_tool("echo", {"message": "hi"})
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio

from .client import Client
from .server import Server
from .transports.base import MessageStream
from .transports.memory import memory_pair

__all__ = ["WireRecorder", "connect"]


class WireRecorder:
    """Wraps a message stream and keeps every frame that passed, in order, with its direction."""

    def __init__(self, stream: MessageStream) -> None:
        self._stream = stream
        self.frames: list[tuple[str, bytes]] = []

    @property
    def sent(self) -> list[bytes]:
        return [frame for direction, frame in self.frames if direction == "sent"]

    @property
    def received(self) -> list[bytes]:
        return [frame for direction, frame in self.frames if direction == "received"]

    async def receive(self) -> bytes:
        frame = await self._stream.receive()
        self.frames.append(("received", frame))
        return frame

    async def send(self, message: bytes) -> None:
        self.frames.append(("sent", message))
        await self._stream.send(message)

    async def aclose(self) -> None:
        await self._stream.aclose()


@contextlib.asynccontextmanager
async def connect(
    server: Server,
    *,
    timeout: float = 10.0,
    initialize: bool = True,
    recorder: bool = False,
    **client_options: Any,
) -> AsyncIterator[Client]:
    """Serve ``server`` in-process and yield a connected client.

    Every client request times out after ``timeout`` seconds, and so does the handshake. With
    ``recorder=True`` the client's stream is a :class:`WireRecorder`, reachable as ``client.wire``.
    """
    client_end, server_end = memory_pair()
    stream: MessageStream = WireRecorder(client_end) if recorder else client_end
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, server_end)
        async with Client(stream, request_timeout=timeout, **client_options) as client:
            client.wire = stream  # type: ignore[attr-defined]
            if initialize:
                with anyio.fail_after(timeout):
                    await client.initialize()
            yield client
        with anyio.move_on_after(timeout):
            await server_end.aclose()
        tg.cancel_scope.cancel()
