"""SSE streams that survive a dropped connection: event ids, an event store, replay.

Every message the server sends on a Streamable HTTP session goes on exactly one logical *stream*:
the event stream of the POST whose request it relates to, or the session's standalone (GET)
stream. A stream stores each event before writing it to whatever connection is attached, so when a
connection drops, the client reconnects with ``GET`` + ``Last-Event-ID`` and the stream replays
what came after that id and carries on. Event ids are ``<stream id>:<n>``, unique in the session,
so an id names its stream and a replay never crosses streams.
"""

from __future__ import annotations

import contextlib
import itertools
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol

import anyio

from ..transports.sse import encode_event

__all__ = ["EventStore", "EventStream", "InMemoryEventStore"]

Writer = Callable[[bytes], Awaitable[None]]


class EventStore(Protocol):
    """Where a session's events are kept for replay. Implement it to keep them elsewhere (Redis)."""

    async def store_event(self, stream_id: str, message: bytes) -> str:
        """Keep ``message`` as the next event of ``stream_id``; return its event id."""
        ...

    async def events_after(self, last_event_id: str) -> tuple[str, list[tuple[str, bytes]]] | None:
        """(stream id, [(event id, message), ...] after it), or None if the id is unknown/expired."""
        ...

    async def close(self) -> None:
        """Forget everything (the session ended)."""
        ...


class InMemoryEventStore:
    """The last ``max_events`` events of one session, in memory."""

    def __init__(self, max_events: int = 1000) -> None:
        self._max_events = max_events
        # made on the first event: most sessions never store one, and an empty deque is ~600 bytes
        self._events: deque[tuple[str, str, bytes]] | None = None
        self._counter = itertools.count(1)

    async def store_event(self, stream_id: str, message: bytes) -> str:
        """Keep ``message`` as the next event of ``stream_id``; return its event id (``stream:n``)."""
        event_id = f"{stream_id}:{next(self._counter)}"
        if self._events is None:
            self._events = deque(maxlen=self._max_events)
        self._events.append((event_id, stream_id, message))
        return event_id

    async def events_after(self, last_event_id: str) -> tuple[str, list[tuple[str, bytes]]] | None:
        """(stream id, [(event id, message), ...] after it), or None if the id is unknown or
        was pushed out."""
        stream_id, _, _ = last_event_id.rpartition(":")
        found = False
        replay: list[tuple[str, bytes]] = []
        for event_id, owner, message in self._events or ():
            if found and owner == stream_id:
                replay.append((event_id, message))
            elif event_id == last_event_id:
                found = True
        return (stream_id, replay) if found else None

    async def close(self) -> None:
        """Forget every event (the session ended)."""
        self._events = None


class EventStream:
    """One logical SSE stream of a session; at most one connection is attached at a time."""

    def __init__(self, stream_id: str, store: EventStore | None) -> None:
        self.id = stream_id
        self._store = store
        self._writer: Writer | None = None
        # made on first use: a stateless request's session has a stream it never touches
        self._closed: anyio.Event | None = None
        self._is_closed = False
        self._mutex: anyio.Lock | None = None

    @property
    def closed(self) -> anyio.Event:
        """Set once the stream has no more events."""
        if self._closed is None:
            self._closed = anyio.Event()
            if self._is_closed:
                self._closed.set()
        return self._closed

    @property
    def _lock(self) -> anyio.Lock:
        if self._mutex is None:
            self._mutex = anyio.Lock()
        return self._mutex

    @property
    def attached(self) -> bool:
        """Whether a response is writing this stream's events now."""
        return self._writer is not None

    async def emit(self, message: bytes) -> None:
        """Send one JSON-RPC message as an event (stored first, when there is a store)."""
        async with self._lock:
            event_id = await self._store.store_event(self.id, message) if self._store is not None else None
            await self._write(encode_event(message, id=event_id))

    async def write_raw(self, data: bytes) -> None:
        """Write bytes that are not stored (the priming event, keep-alive comments)."""
        async with self._lock:
            await self._write(data)

    async def _write(self, data: bytes) -> None:
        writer = self._writer
        if writer is None:
            return
        try:
            await writer(data)
        except Exception:  # the connection went away: the event stays in the store for a replay
            self._writer = None

    async def attach(self, writer: Writer, last_event_id: str | None = None) -> None:
        """Attach a (new) connection, first writing the events of this stream after ``last_event_id``.

        The store is read under the stream's lock: every event is either replayed here or written
        to the new connection by a later :meth:`emit`, never lost between the two.
        """
        async with self._lock:
            self._writer = writer
            if last_event_id is None or self._store is None:
                return
            found = await self._store.events_after(last_event_id)
            if found is None or found[0] != self.id:
                return
            for event_id, message in found[1]:
                await self._write(encode_event(message, id=event_id))

    async def end(self, retry_ms: int) -> None:
        """End the stream with a final event: an id to resume from (stored, when there is a store)
        and the retry hint, so that its client reconnects (to another instance, when this one goes)."""
        with contextlib.suppress(Exception):  # a store that fails: the stream ends all the same
            async with self._lock:
                event_id = await self._store.store_event(self.id, b"") if self._store is not None else None
                await self._write(encode_event(b"", id=event_id, retry=retry_ms))
        self.close()

    def detach(self, writer: Writer | None = None) -> None:
        """Stop writing to the attached response (only if it is ``writer``, when given); events are
        still stored for a later resumption."""
        if writer is None or self._writer is writer:
            self._writer = None

    def close(self) -> None:
        """No more events: whatever connection serves the stream may end."""
        self._writer = None
        self._is_closed = True
        if self._closed is not None:
            self._closed.set()
