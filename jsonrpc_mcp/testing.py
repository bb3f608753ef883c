"""Test helpers: an in-memory client/server pair whose every wait is bounded, and a wire recorder.

async with connect(server) as client:
    result = await client.call_tool("echo", {"message": "hi"})

async with connect_raw(server) as raw:          # speak frames yourself (batches, broken JSON, ...)
    await raw.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert (await raw.receive()) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    response = await raw.modern_request("tools/list")   # 2026-07-28: the envelope in params._meta

async with connect(server, mode="2026-07-28") as client:   # or mode="auto"
    ...
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import anyio
import orjson

from .client import Client
from .server import Server
from .transports.base import MessageStream
from .transports.memory import memory_pair

__all__ = ["MODERN_VERSION", "RawConnection", "WireRecorder", "connect", "connect_raw", "envelope"]

MODERN_VERSION = "2026-07-28"


def envelope(
    version: str = MODERN_VERSION,
    *,
    capabilities: dict[str, Any] | None = None,
    client_info: dict[str, Any] | None = None,
    log_level: str | None = None,
) -> dict[str, Any]:
    """The ``params._meta`` entries of a stateless-revision request."""
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": capabilities if capabilities is not None else {},
        "io.modelcontextprotocol/clientInfo": client_info or {"name": "raw", "version": "0"},
    }
    if log_level is not None:
        meta["io.modelcontextprotocol/logLevel"] = log_level
    return meta


class WireRecorder:
    """Wraps a message stream and keeps every frame that passed, in order, with its direction."""

    def __init__(self, stream: MessageStream) -> None:
        self._stream = stream
        self.frames: list[tuple[str, bytes]] = []

    @property
    def sent(self) -> list[bytes]:
        """The frames sent, in order."""
        return [frame for direction, frame in self.frames if direction == "sent"]

    @property
    def received(self) -> list[bytes]:
        """The frames received, in order."""
        return [frame for direction, frame in self.frames if direction == "received"]

    async def receive(self) -> bytes:
        """Receive a frame from the wrapped stream, recording it."""
        frame = await self._stream.receive()
        self.frames.append(("received", frame))
        return frame

    async def send(self, message: bytes) -> None:
        """Record the frame, then send it on the wrapped stream."""
        self.frames.append(("sent", message))
        await self._stream.send(message)

    async def aclose(self) -> None:
        """Close the wrapped stream."""
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

    ``client_options`` go to :class:`Client`; ``mode=`` says how it connects (``"legacy"``: the
    handshake; ``"2026-07-28"``: ``server/discover``, then every request carries its envelope;
    ``"auto"``: the probe and its fallback); ``initialize=False`` skips connecting. Every client
    request times out after ``timeout`` seconds, and so does connecting. With ``recorder=True`` the
    client's stream is a :class:`WireRecorder`, reachable as ``client.wire``.
    """
    client_end, server_end = memory_pair()
    stream: MessageStream = WireRecorder(client_end) if recorder else client_end
    error: Exception | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(server.serve, server_end, transport="memory"))
        try:
            async with Client(stream, request_timeout=timeout, **client_options) as client:
                client.wire = stream  # type: ignore[attr-defined]
                if initialize:
                    with anyio.fail_after(timeout):
                        await client.connect()
                yield client
        except Exception as exc:  # re-raised below as itself, not wrapped in an ExceptionGroup
            error = exc
        finally:
            with anyio.move_on_after(timeout):
                await server_end.aclose()
            tg.cancel_scope.cancel()
    if error is not None:
        raise error


class RawConnection:
    """The client end of an in-memory connection that speaks raw frames; every wait is bounded.

    :meth:`send` takes bytes (sent as they are) or a JSON value (encoded); :meth:`receive` returns the
    next frame decoded. Every frame received is also kept, in order, in :attr:`frames`.
    """

    def __init__(self, stream: MessageStream, timeout: float) -> None:
        self._stream = stream
        self.timeout = timeout
        self.frames: list[Any] = []
        self._next_id = 0

    async def send(self, message: Any) -> None:
        """Send bytes as they are, or any other value encoded as JSON."""
        data = message if isinstance(message, bytes) else orjson.dumps(message)
        await self._stream.send(data)

    async def receive(self) -> Any:
        """The next frame from the server, decoded; TimeoutError if none comes in time."""
        with anyio.fail_after(self.timeout):
            frame = orjson.loads(await self._stream.receive())
        self.frames.append(frame)
        return frame

    async def receive_until(self, predicate: Any) -> Any:
        """Receive frames until one satisfies ``predicate``; return it (the others stay in frames)."""
        with anyio.fail_after(self.timeout):
            while True:
                frame = await self.receive()
                if predicate(frame):
                    return frame

    def new_id(self) -> int:
        """A fresh request id (1, 2, ...)."""
        self._next_id += 1
        return self._next_id

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a request with a fresh id and return the whole response frame (result or error)."""
        rid = self.new_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return await self.receive_until(
            lambda f: isinstance(f, dict) and f.get("id") == rid and "method" not in f
        )

    async def modern_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        version: str = MODERN_VERSION,
        capabilities: dict[str, Any] | None = None,
        log_level: str | None = None,
    ) -> Any:
        """:meth:`request` with the stateless revision's envelope merged into ``params._meta``
        (keys already there win); returns the whole response frame."""
        params = dict(params or {})
        meta = envelope(version, capabilities=capabilities, log_level=log_level)
        meta.update(params.get("_meta") or {})
        params["_meta"] = meta
        return await self.request(method, params)

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (``params`` left out when None)."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def initialize(self, protocol_version: str, *, initialized: bool = True) -> Any:
        """The handshake; returns the ``initialize`` response frame."""
        response = await self.request(
            "initialize",
            {
                "protocolVersion": protocol_version,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        )
        if initialized:
            await self.notify("notifications/initialized")
        return response

    async def aclose(self) -> None:
        """Close the connection (the server sees the end of its input)."""
        await self._stream.aclose()


@contextlib.asynccontextmanager
async def connect_raw(server: Server, *, timeout: float = 10.0) -> AsyncIterator[RawConnection]:
    """Serve ``server`` in-process and yield a :class:`RawConnection` to it (no handshake done)."""
    client_end, server_end = memory_pair()
    error: Exception | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(server.serve, server_end, transport="memory"))
        try:
            yield RawConnection(client_end, timeout)
        except Exception as exc:  # re-raised below as itself, not wrapped in an ExceptionGroup
            error = exc
        finally:
            with anyio.move_on_after(timeout):
                await client_end.aclose()
            tg.cancel_scope.cancel()
    if error is not None:
        raise error
