"""An in-memory pair of message streams, for tests and for embedding a server in-process.

Messages still travel as encoded bytes, so everything above the transport runs exactly as it would
over a pipe.
"""

from __future__ import annotations

import math

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream


class MemoryStream:
    """One end of an in-memory connection."""

    def __init__(
        self, send: MemoryObjectSendStream[bytes], receive: MemoryObjectReceiveStream[bytes]
    ) -> None:
        self._send = send
        self._receive = receive

    async def receive(self) -> bytes:
        """The next message the other end sent; raises ``anyio.EndOfStream`` once it closed."""
        return await self._receive.receive()

    async def send(self, message: bytes) -> None:
        """Hand one message to the other end."""
        await self._send.send(message)

    async def aclose(self) -> None:
        """Close this end: the other end's ``receive`` then raises ``EndOfStream``."""
        await self._send.aclose()
        await self._receive.aclose()


def memory_pair() -> tuple[MemoryStream, MemoryStream]:
    """Two connected ends: what one sends, the other receives."""
    a_send, b_receive = anyio.create_memory_object_stream[bytes](math.inf)
    b_send, a_receive = anyio.create_memory_object_stream[bytes](math.inf)
    return MemoryStream(a_send, a_receive), MemoryStream(b_send, b_receive)
