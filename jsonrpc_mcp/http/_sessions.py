"""Streamable HTTP sessions: :class:`HttpSession`, the session ids, and reaping idle sessions.

Sessions are minted by a successful ``initialize`` (``Mcp-Session-Id``), end on DELETE, on idle
expiry (never while a request is in flight) and on shutdown. In stateless mode there are no sessions:
each POST is served by a fresh session put directly in the ready state for the revision named by
``MCP-Protocol-Version``.

Every time reading of this package is here (``time.monotonic``), so that a test can move the clock.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from ..jsonrpc.endpoint import Endpoint
from ..server._session import MCP_CANCEL, ServerSession
from ._auth import PRINCIPAL
from ._events import EventStore, EventStream

if TYPE_CHECKING:
    from ..server._server import Server
    from ._redis import RedisBackend

__all__ = ["HttpSession", "SessionTable"]

logger = logging.getLogger("jsonrpc_mcp.http")

# the context of what a session sends outside any request (list_changed): no request's variables
_NO_REQUEST = contextvars.Context()


class SessionTable:
    """The Streamable HTTP sessions an app holds, and the reaping of idle ones: one part of
    :class:`~jsonrpc_mcp.http.app.McpHttpApp`, holding the options it reads.

    ``session_idle_timeout`` (seconds without a request or an open stream), ``max_sessions`` (None:
    no limit), ``event_store_factory`` (one store per session) or ``redis`` (the sessions' events
    kept in Redis, and sessions another instance opened adopted from their records). Looks for idle
    sessions at most every few seconds, when a request comes or on the lifespan's timer.
    """

    def __init__(
        self,
        server: Server,
        *,
        session_idle_timeout: float,
        max_sessions: int | None,
        event_store_factory: Callable[[], EventStore],
        redis: RedisBackend | None,
    ) -> None:
        if max_sessions is not None and max_sessions < 1:
            raise ValueError("max_sessions must be at least 1 (or None: no limit)")
        self.server = server
        self.session_idle_timeout = session_idle_timeout
        self.max_sessions = max_sessions
        self.event_store_factory = event_store_factory
        self.redis = redis
        self.sessions: dict[str, HttpSession] = {}
        self._last_reap = time.monotonic()
        self._closing: set[asyncio.Task[None]] = set()  # sessions being closed after expiry

    def new_event_store(self, session_id: str) -> EventStore:
        """The event store of a new session: in Redis when the app has one, else the factory's."""
        if self.redis is not None:
            return self.redis.event_store(session_id)
        return self.event_store_factory()

    def has_room(self) -> bool:
        """Whether a new session may open (``max_sessions``; the idle ones past the timeout are
        ended first to make room)."""
        limit = self.max_sessions
        if limit is None or len(self.sessions) < limit:
            return True
        self.reap_idle(now_or_never=True)
        return len(self.sessions) < limit

    async def held(self, session_id: str, scope: Any) -> HttpSession | None:
        """The session ``session_id`` names, if the request may use it (another principal's is as
        if unknown): held here, or (with Redis) adopted from the record another instance left;
        :class:`~._redis.RedisUnavailable` when Redis cannot say."""
        session = self.sessions.get(session_id)
        if session is None and self.redis is not None:
            session = await self.redis.adopt(self, session_id)
        return session if session is not None and session.belongs_to(scope) else None

    async def reap_periodically(self) -> None:
        while True:
            await anyio.sleep(max(1.0, min(60.0, self.session_idle_timeout / 2)))
            self.reap_idle()

    def reap_idle(self, *, now_or_never: bool = False) -> None:
        """End the sessions idle for longer than the timeout (looked at every few seconds at most,
        or at once with ``now_or_never``: a new session needs room)."""
        if not self.sessions:  # (2026-07-28 traffic opens none: its POSTs never read the clock here)
            return
        now = time.monotonic()
        if not now_or_never and now - self._last_reap < min(5.0, self.session_idle_timeout / 4):
            return
        self._last_reap = now
        for session_id, session in list(self.sessions.items()):
            if session.in_flight == 0 and now - session.last_active > self.session_idle_timeout:
                logger.info("session %s expired after %.0f s idle", session_id, now - session.last_active)
                del self.sessions[session_id]
                # keep a reference: the loop holds only a weak one to a task and may lose it midway
                task = asyncio.get_running_loop().create_task(session.close())
                self._closing.add(task)
                task.add_done_callback(self._closing.discard)

    def end_standalone(self, retry_ms: int) -> None:
        """Ask every session's standalone (GET) stream to end (see ``McpHttpApp.begin_shutdown``)."""
        for session in self.sessions.values():
            session.end_standalone(retry_ms)

    async def aclose(self) -> None:
        """Free every session."""
        for session in list(self.sessions.values()):
            await session.close()
        self.sessions.clear()


class HttpSession:
    """One Streamable HTTP session: the MCP session, its endpoint, its streams and event store."""

    def __init__(self, table: SessionTable, session_id: str | None) -> None:
        self.id = session_id
        self.id_header = session_id.encode() if session_id is not None else None  # Mcp-Session-Id value
        self.table = table
        self.mcp = ServerSession(table.server, transport="http")
        self.mcp.session_id = session_id
        self.store: EventStore | None = table.new_event_store(session_id) if session_id is not None else None
        self.standalone = EventStream("_", self.store)
        self.endpoint = Endpoint(
            None, self.mcp, channel=self, request_timeout=table.server.request_timeout, cancel=MCP_CANCEL
        )
        self.mcp.outbound = self.endpoint
        self.streams: dict[str, EventStream] = {"_": self.standalone}
        self._stream_ids = 0
        self.stream_prefix = ""  # a session adopted from Redis: this instance's, so ids never collide
        self.in_flight = 0
        self.last_active = time.monotonic()
        self.closed = False
        self._ending: asyncio.Task[None] | None = None  # the standalone stream's final event
        # who opened it (a protected server: the token's client and subject); only they may use it
        self.principal: Any = None
        self.shared: tuple[frozenset[str], int] | None = None  # the view last published (Redis)
        self.told: dict[str, int] | None = (
            None  # Redis: per notice key, the last change told (._redis_notices)
        )
        if table.redis is not None and session_id is not None:
            table.redis.bind(self)  # server-to-client requests answered through another instance

    def belongs_to(self, scope: Any) -> bool:
        """Whether the request (its authenticated principal, if any) may use this session."""
        return self.principal is None or scope.get(PRINCIPAL) == self.principal

    # the endpoint's default channel: messages not tied to a request go to the standalone stream
    async def send(self, message: bytes) -> None:
        redis = self.table.redis
        if redis is not None and await redis.told(self, message):
            return  # a notice every copy of the session hears of: stored once (or left to another)
        await self.standalone.emit(message)

    def shared_view(self) -> tuple[frozenset[str], int]:
        """What the instances serving this session share beyond its record: its resource
        subscriptions and log level (compared after each POST, published when changed)."""
        return frozenset(self.mcp.subscriptions), self.mcp.log_threshold

    def new_stream(self) -> EventStream:
        self._stream_ids += 1
        stream = EventStream(f"{self.stream_prefix}{self._stream_ids}", self.store)
        self.streams[stream.id] = stream
        return stream

    def start(self) -> None:
        """Start the list_changed notifier (asyncio servers; other loops get no list_changed)."""
        self.table.server.attach(self.mcp)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            logger.warning("not on asyncio: list_changed notifications are not sent over HTTP")
            return
        # no task for the session's whole life (memory per idle session), and not in the opening
        # request's context: a notification is no part of that request (nor of the one that changed
        # a list), and the session would keep that request's headers alive
        self.mcp.notify_on_demand(_NO_REQUEST)

    def end_standalone(self, retry_ms: int) -> None:
        """End the standalone (GET) stream, with a final event when a client is attached."""
        stream = self.standalone
        if not stream.attached:
            stream.close()
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            stream.close()
            return
        self._ending = loop.create_task(stream.end(retry_ms))

    async def close(self) -> None:
        """Free everything: cancel what is in flight, end every stream, drop the stored events."""
        if self.closed:
            return
        self.closed = True
        self.endpoint.cancel_all_incoming()
        self.mcp.stop_notifying()
        self.table.server.detach(self.mcp)
        for stream in self.streams.values():
            stream.close()
        self.streams.clear()
        if self.store is not None:
            await self.store.close()
        if self.table.redis is not None and self.id is not None:
            self.table.redis.release(self.id)  # another copy sends its notices now

    def done(self) -> None:
        """A request or stream of this session ended: one fewer in flight, and it counts as activity."""
        self.in_flight -= 1
        self.last_active = time.monotonic()


def _new_session_id() -> str:
    """128 random bits, URL-safe: visible ASCII only, as the specification requires."""
    return secrets.token_urlsafe(24)
