"""What every transport provides: a stream of framed messages (bytes), one message per item."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable


class FrameTooLarge(Exception):
    """A frame exceeded the transport's size limit; it was discarded and the stream goes on."""


class MessageStream(Protocol):
    """A bidirectional stream of whole messages.

    ``receive`` returns one framed message and raises ``anyio.EndOfStream`` when the peer is done,
    or :class:`FrameTooLarge` for a discarded oversized frame (the stream stays usable).
    ``send`` writes one message; concurrent sends never interleave.
    """

    async def receive(self) -> bytes:
        """The next whole message; raises ``anyio.EndOfStream`` when the peer is done, or
        :class:`FrameTooLarge` for a discarded oversized frame."""
        ...

    async def send(self, message: bytes) -> None:
        """Write one whole message (concurrent sends never interleave)."""
        ...

    async def aclose(self) -> None:
        """Close the stream."""
        ...


@runtime_checkable
class InlineCapableStream(MessageStream, Protocol):
    """A stream that can offer each message from its read callback (asyncio; stdio's ``FdStream``).

    The endpoint checks for it with ``isinstance`` and uses it for its fast path
    (``jsonrpc_mcp.jsonrpc._fastpath``): requests start without waking the reading task.
    """

    def serve_inline(self, consumer: Callable[[bytes], bool] | None) -> bool:
        """Offer lines to ``consumer`` from the read callback while a ``receive()`` waits.

        ``consumer(line)`` runs as the task waiting in ``receive()`` and returns True when it took
        the line, False to leave it (and what follows) to ``receive()``; it must not wait. It may
        call :meth:`interrupt`. Returns False (and does nothing) where this is not possible. None
        stops the offers.
        """
        ...

    def interrupt(self, exc: BaseException) -> None:
        """Make the ``receive()`` that waits raise ``exc`` (from a consumer, see :meth:`serve_inline`)."""
        ...
