"""What every transport provides: a stream of framed messages (bytes), one message per item."""

from __future__ import annotations

from typing import Protocol


class FrameTooLarge(Exception):
    """A frame exceeded the transport's size limit; it was discarded and the stream goes on."""


class MessageStream(Protocol):
    """A bidirectional stream of whole messages.

    ``receive`` returns one framed message and raises ``anyio.EndOfStream`` when the peer is done,
    or :class:`FrameTooLarge` for a discarded oversized frame (the stream stays usable).
    ``send`` writes one message; concurrent sends never interleave.
    """

    async def receive(self) -> bytes: ...

    async def send(self, message: bytes) -> None: ...

    async def aclose(self) -> None: ...
