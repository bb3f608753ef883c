"""A raw JSON-RPC peer for endpoint tests: the test writes and reads frames, a real Endpoint answers.

``serve(dispatcher)`` runs an :class:`Endpoint` over the in-memory transport and yields it with a
:class:`Wire`, the other end. Every wait in here is bounded.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator
from typing import Any

import anyio
import orjson
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from jsonrpc_mcp.jsonrpc import Dispatcher, Endpoint
from jsonrpc_mcp.transports.memory import MemoryStream
from tests import timeouts

TIMEOUT = timeouts.STEP


class Wire:
    """The test's end of the connection: raw frames in and out."""

    def __init__(
        self, send: MemoryObjectSendStream[bytes], receive: MemoryObjectReceiveStream[bytes]
    ) -> None:
        self._send = send
        self._receive = receive

    async def send(self, message: Any) -> None:
        """Send one frame: bytes/str as they are, anything else encoded as JSON."""
        if isinstance(message, str):
            message = message.encode()
        elif not isinstance(message, bytes):
            message = orjson.dumps(message)
        await self._send.send(message)

    async def receive_raw(self) -> bytes:
        with anyio.fail_after(TIMEOUT):
            return await self._receive.receive()

    async def receive(self) -> Any:
        return orjson.loads(await self.receive_raw())

    async def call(self, rid: Any, method: str, params: Any = None) -> Any:
        """Send a request and return the next frame (the test knows nothing else is pending)."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return await self.receive()

    async def close_input(self) -> None:
        """End of input for the endpoint (its reader sees EndOfStream)."""
        await self._send.aclose()

    async def drain(self) -> list[bytes]:
        """Every frame still to come, once the endpoint has closed its side."""
        frames: list[bytes] = []
        with anyio.fail_after(TIMEOUT):
            async for frame in self._receive:
                frames.append(frame)
        return frames


@contextlib.asynccontextmanager
async def serve(dispatcher: Dispatcher, **options: Any) -> AsyncIterator[tuple[Endpoint, Wire]]:
    """Run an Endpoint for ``dispatcher``; on exit close its input and wait (bounded) for it to end."""
    to_endpoint_send, to_endpoint_receive = anyio.create_memory_object_stream[bytes](math.inf)
    from_endpoint_send, from_endpoint_receive = anyio.create_memory_object_stream[bytes](math.inf)
    stream = MemoryStream(from_endpoint_send, to_endpoint_receive)
    endpoint = Endpoint(stream, dispatcher, **options)
    wire = Wire(to_endpoint_send, from_endpoint_receive)
    done = anyio.Event()

    async def run() -> None:
        try:
            await endpoint.run()
        finally:
            await from_endpoint_send.aclose()  # the wire's drain() ends here
            done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        with anyio.fail_after(TIMEOUT):
            await endpoint.wait_started()
        yield endpoint, wire
        await wire.close_input()
        with anyio.fail_after(TIMEOUT):
            await done.wait()


async def stop(endpoint: Endpoint, wire: Wire) -> list[bytes]:
    """End the connection from the wire's side and return every frame the endpoint still sent."""
    await wire.close_input()
    return await wire.drain()
