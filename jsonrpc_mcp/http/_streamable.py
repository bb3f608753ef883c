"""Streamable HTTP of the handshake era: session POSTs, the GET stream and resumption, DELETE.

Theory of operation
-------------------
Each POST body is decoded once and handed to the session's JSON-RPC :class:`Endpoint` with
:meth:`Endpoint.process`, which runs its requests in the POST's own task (each under its own cancel
scope, registered with the peer, so ``notifications/cancelled`` on another POST still cancels it).

How a request is answered is decided lazily by its :class:`_PostChannel`: if the handler only
returns, the result goes back as ``application/json``; the first notification or server-to-client
request the handler sends before its result turns the response into a ``text/event-stream`` scoped
to that request, and the result becomes its last event. Messages not tied to a request (list_changed,
a ping from the server) go to the session's standalone stream, opened by GET.

Every SSE stream of a session is an :class:`EventStream` backed by the session's event store, so a
dropped connection can be resumed with GET + ``Last-Event-ID`` on the same stream only.

This module is one part of the app (:class:`HandshakeHttp`), holding only the options it reads;
the app decodes a POST and asks the router which era it speaks before handing it here. (The POST
path of the stateless revisions, 2026-07-28 on, is :mod:`._stateless`; it reuses
:class:`_PostChannel` without a session.)
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import anyio

from ..jsonrpc.errors import INVALID_REQUEST
from ..jsonrpc.messages import Incoming, Notification, Request
from ..revisions import Revision
from ..server._session import State
from ..transports.sse import KEEPALIVE, encode_event
from ..wire import INITIALIZE, INITIALIZED, SESSION_NOT_FOUND
from ._asgi import (
    EVENT_STREAM,
    LAST_EVENT_ID,
    SESSION_HEADER,
    VERSION_HEADER,
    Receive,
    Scope,
    Send,
    _accepts,
    _error,
    _header,
    _respond,
)
from ._auth import PRINCIPAL
from ._events import EventStream
from ._health import DRAINING, Lifecycle
from ._redis import RedisUnavailable
from ._sessions import HttpSession, SessionTable, _new_session_id

if TYPE_CHECKING:
    from ..server._server import Server
    from ._redis import RedisBackend

SERVER_BUSY = -32000  # the JSON-RPC "server error" range: no session could be opened now
_RETRY = [(b"retry-after", b"5")]
_STORE_DOWN = "Service Unavailable: this instance does not hold the session and cannot look it up ({})"
_UNRECORDED = "Service Unavailable: the session store (Redis) cannot be reached, so no session is opened ({})"

__all__ = ["HandshakeHttp"]

logger = logging.getLogger("jsonrpc_mcp.http")


class _PostChannel:
    """Where a POST's request sends what comes before its answer; starts SSE on first use.

    ``session`` is None for a modern request: its stream has no store and no session to live in."""

    __slots__ = (
        "_ended",
        "_send",
        "extra_headers",
        "force_sse",
        "json_only",
        "on_open",
        "retry_ms",
        "session",
        "stream",
    )

    def __init__(
        self,
        json_only: bool,
        retry_ms: int,
        session: HttpSession | None,
        send: Send,
        extra_headers: list[tuple[bytes, bytes]],
    ) -> None:
        self.json_only = json_only  # the app's json_response: never answer with SSE
        self.retry_ms = retry_ms  # the SSE retry hint of a priming event
        self.session = session
        self._send = send
        self.extra_headers = extra_headers
        self.stream: EventStream | None = None
        self._ended = False  # the HTTP response ended early (close_connection); the stream lives on
        self.force_sse = False  # SSE even in JSON-only mode (subscriptions/listen)
        self.on_open: Callable[[], None] | None = None  # called once the response became SSE

    async def send(self, message: bytes) -> None:
        if self.json_only and not self.force_sse:
            if b'"id"' in message and b'"method"' in message and self.session is not None:
                await self.session.standalone.emit(message)  # a request to the client: use the GET stream
            else:
                logger.debug("JSON-only mode: a message before the result was dropped")
            return
        if self.stream is None:
            await self.open()
        assert self.stream is not None
        await self.stream.emit(message)

    async def open(self, *, prime: bool = False) -> None:
        session = self.session
        stream = self.stream = session.new_stream() if session is not None else EventStream("0", None)
        headers = [
            (b"content-type", EVENT_STREAM),
            (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no"),
            *self.extra_headers,
        ]
        await self._send({"type": "http.response.start", "status": 200, "headers": headers})

        async def write(data: bytes) -> None:
            await self._send({"type": "http.response.body", "body": data, "more_body": True})

        await stream.attach(write)
        if self.on_open is not None:
            self.on_open()
        if session is None or session.store is None:
            return
        revision = session.mcp.revision
        if prime or (revision is not None and revision.has_sse_priming):
            event_id = await session.store.store_event(stream.id, b"")
            await stream.write_raw(encode_event(b"", id=event_id, retry=self.retry_ms))

    async def close_connection(self) -> None:
        """End the HTTP response now but keep the stream: the client resumes it with GET +
        Last-Event-ID (SSE polling, 2025-11-25). Without an event store there is nothing to resume
        from, so the response stays open."""
        if self._ended or self.session is None or self.session.store is None or self.json_only:
            return
        if self.stream is None:
            await self.open(prime=True)  # the priming event gives the client an id to resume from
        assert self.stream is not None
        self.stream.detach()
        self._ended = True
        with contextlib.suppress(Exception):
            await self._send({"type": "http.response.body", "body": b"", "more_body": False})

    async def finish(self, answer: bytes | None) -> None:
        stream = self.stream
        assert stream is not None
        if answer is not None:
            await stream.emit(answer)
        stream.close()
        if self.session is not None:
            self.session.streams.pop(stream.id, None)  # a later resume replays it from the store
        if not self._ended:
            with contextlib.suppress(Exception):
                await self._send({"type": "http.response.body", "body": b"", "more_body": False})


class HandshakeHttp:
    """The handshake-era Streamable HTTP part of :class:`~jsonrpc_mcp.http.app.McpHttpApp`: a
    session's POST (decoded by the app), the GET stream and its resumption, DELETE.

    It holds only what it reads: the server (its router says whether a GET or DELETE names a
    stateless revision), the session table, the revisions by ``MCP-Protocol-Version`` value and the
    one a header-less request speaks, the app's lifecycle (no session opens while draining), and the
    options ``json_response``, ``stateless`` (no sessions), ``retry_ms``, ``keepalive`` and ``redis``.
    """

    def __init__(
        self,
        server: Server,
        table: SessionTable,
        life: Lifecycle,
        by_header: dict[bytes, Revision],
        assumed: Revision,
        *,
        json_response: bool,
        stateless: bool,
        retry_ms: int,
        keepalive: float,
        redis: RedisBackend | None,
        max_requests_per_session: int | None = None,
    ) -> None:
        self.server = server
        self.table = table
        self.max_requests = max_requests_per_session  # POSTs of one session in flight (None: no limit)
        self.life = life
        self.by_header = by_header  # the served revisions by raw MCP-Protocol-Version value
        self.assumed = assumed  # what a handshake-era request without MCP-Protocol-Version speaks
        self.json_response = json_response
        self.stateless = stateless
        self.retry_ms = retry_ms
        self.keepalive = keepalive
        self.redis = redis

    # -- POST -------------------------------------------------------------------------------------
    async def post(
        self,
        scope: Scope,
        send: Send,
        message: Incoming | list[Incoming],
        raw_version: bytes | None,
        version: Revision | None,
    ) -> None:
        """A handshake-era POST (decoded; ``version``: the supported revision ``raw_version`` names):
        to a new session (initialize), the one Mcp-Session-Id names, or a throwaway one (stateless)."""
        if raw_version is not None and version is None:
            value = raw_version.decode("latin-1")
            await _error(
                send, 400, INVALID_REQUEST, f"Bad Request: unsupported MCP-Protocol-Version {value!r}"
            )
            return
        initialize = type(message) is Request and message.method == INITIALIZE
        table = self.table
        if self.stateless:
            if not initialize and version is None:
                version = self.assumed
            session = self._stateless_session(None if initialize else version)
        elif initialize:
            if self.life.phase == DRAINING:  # shutting down: the load balancer sends it elsewhere
                await _error(
                    send, 503, SERVER_BUSY, "Service Unavailable: the server is shutting down", _RETRY
                )
                return
            if not table.has_room():  # max_sessions: refuse a new one rather than grow without bound
                limit = f"the server holds as many sessions as it may (max_sessions={table.max_sessions})"
                await _error(send, 503, SERVER_BUSY, f"Service Unavailable: {limit}; retry later", _RETRY)
                return
            session = HttpSession(table, _new_session_id())
            session.principal = scope.get(PRINCIPAL)
        else:
            raw_id = _header(scope, SESSION_HEADER)
            if raw_id is None:
                await _error(send, 400, INVALID_REQUEST, "Bad Request: missing Mcp-Session-Id header")
                return
            try:
                found = await table.held(raw_id.decode("latin-1"), scope)
            except RedisUnavailable as exc:
                await _error(send, 503, SERVER_BUSY, _STORE_DOWN.format(exc), _RETRY)
                return
            if found is None:
                await _error(send, 404, SESSION_NOT_FOUND, "Session not found")
                return
            session = found
            most = self.max_requests
            if most is not None and session.in_flight >= most:
                # requests whose client went away run on (the spec asks it): this bounds them
                busy = f"Too Many Requests: this session has {session.in_flight} requests in flight"
                await _error(send, 429, SERVER_BUSY, f"{busy} (at most {most})", _RETRY)
                return
        await self._serve_post(session, message, initialize, send)

    def _stateless_session(self, revision: Revision | None) -> HttpSession:
        """A throwaway session, already in the ready state (an initialize request starts it afresh)."""
        session = HttpSession(self.table, None)
        if revision is None:
            return session
        session.mcp.revision = revision
        session.mcp.capabilities = self.server.capabilities(revision)
        session.mcp.state = State.READY
        return session

    async def _serve_post(
        self, session: HttpSession, message: Incoming | list[Incoming], initialize: bool, send: Send
    ) -> None:
        extra: list[tuple[bytes, bytes]] = []
        if session.id_header is not None:
            extra.append((SESSION_HEADER, session.id_header))
        channel = _PostChannel(self.json_response, self.retry_ms, session, send, extra)
        session.in_flight += 1
        try:
            processed = await session.endpoint.process(message, channel)
        finally:
            session.done()
        redis = self.redis
        if redis is not None and session.id is not None:
            if session.shared != session.shared_view():
                await redis.share_view(session)  # subscribed, unsubscribed, set the log level
            if type(message) is Notification and message.method == INITIALIZED:
                redis.publish({"k": "ready", "v": session.id})  # the opener's copy is ready too
        if initialize and session.id is not None:
            if session.mcp.revision is not None and session.mcp.state is not State.NEW:
                if redis is not None:  # recorded first, so that any instance may serve it
                    try:
                        await redis.register_session(session)
                    except RedisUnavailable as exc:
                        if channel.stream is None:  # not answered yet: no session nobody else knows
                            await session.close()
                            await _error(send, 503, SERVER_BUSY, _UNRECORDED.format(exc), _RETRY)
                            return
                        logger.warning("session %s: %s (served by this instance only)", session.id, exc)
                self.table.sessions[session.id] = session
                session.start()
            else:
                extra.clear()  # the handshake failed: no session was made
        if channel.stream is not None:
            await channel.finish(processed.answer)
        elif processed.invalid:
            await _respond(send, 400, processed.answer or b"", extra)
        elif processed.answer is not None:
            await _respond(send, 200, processed.answer, extra)
        elif processed.has_requests and session.closed:
            # the session ended (DELETE, shutdown) while its request ran: it was cancelled, unanswered
            await _error(
                send, 404, SESSION_NOT_FOUND, "Session not found: it ended while the request was in flight"
            )
        else:
            await _respond(send, 202, b"", extra)

    def _refusal(self, scope: Scope) -> str | None:
        """Why a GET or DELETE is not allowed (405): the app is stateless, or MCP-Protocol-Version
        names a stateless revision (the router decides: those have no sessions)."""
        raw = _header(scope, VERSION_HEADER)
        if raw is not None and self.server.router.stateless(None, self.by_header.get(raw)):
            return f"protocol revision {raw.decode('latin-1')} has no sessions"
        return "the server is stateless" if self.stateless else None

    # -- GET: the standalone stream, or resuming a stream ------------------------------------------
    async def get(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = self._refusal(scope)
        if refused is not None:
            await _error(
                send, 405, INVALID_REQUEST, f"Method GET not allowed: {refused}", [(b"allow", b"POST")]
            )
            return
        if not _accepts(scope, EVENT_STREAM):
            await _error(send, 406, INVALID_REQUEST, "Not Acceptable: Accept must list text/event-stream")
            return
        raw_last = _header(scope, LAST_EVENT_ID)
        session = await self._session_of(scope, send)
        if session is None:
            return
        last_event_id = raw_last.decode("latin-1") if raw_last is not None else None
        follow_request = False
        if last_event_id is not None and session.store is not None:
            found = await session.store.events_after(last_event_id)
            stream = session.streams.get(found[0]) if found is not None else None
            if found is not None and stream is None and self.redis is not None:
                # a request's stream another instance may still be writing: follow it in Redis
                # until its answer (replayed at once when it is there already)
                stream, follow_request = EventStream(found[0], session.store), True
            elif found is None or (stream is None and not found[1]):
                await _error(send, 404, INVALID_REQUEST, "Not Found: no stream has that Last-Event-ID")
                return
            elif stream is None:  # the stream already ended: replay what is left and close
                stream = EventStream(found[0], session.store)
                stream.close()
        else:
            last_event_id = None
            stream = session.standalone
            if stream.attached:
                await _error(
                    send, 409, INVALID_REQUEST, "Conflict: this session already has a GET stream open"
                )
                return
        await self._stream_out(session, stream, last_event_id, receive, send, follow_request)

    async def _stream_out(
        self,
        session: HttpSession,
        stream: EventStream,
        last_event_id: str | None,
        receive: Receive,
        send: Send,
        follow_request: bool = False,
    ) -> None:
        headers = [
            (b"content-type", EVENT_STREAM),
            (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no"),
            (SESSION_HEADER, (session.id or "").encode()),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})

        async def write(data: bytes) -> None:
            await send({"type": "http.response.body", "body": data, "more_body": True})

        session.in_flight += 1
        follower: Callable[[], Awaitable[None]] | None = None
        attached: Callable[[bytes], Awaitable[None]] = write
        try:
            revision, store = session.mcp.revision, session.store
            primes = revision is not None and revision.has_sse_priming
            if self.redis is not None and (follow_request or stream is session.standalone):
                follower, attached = await _follower(
                    session, stream, last_event_id, write, primes, self.retry_ms, follow_request
                )
            else:
                # the replay is looked up as the connection is attached (under the stream's lock), so
                # an event emitted while the response headers were being sent is neither lost nor doubled
                await stream.attach(write, last_event_id)
                if last_event_id is None and primes and store is not None:
                    event_id = await store.store_event(stream.id, b"")
                    await stream.write_raw(encode_event(b"", id=event_id, retry=self.retry_ms))
            async with anyio.create_task_group() as tg:
                if follower is not None:

                    async def follow() -> None:
                        assert follower is not None
                        await follower()
                        tg.cancel_scope.cancel()

                    tg.start_soon(follow)

                async def until_disconnect() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    tg.cancel_scope.cancel()

                async def until_closed() -> None:
                    await stream.closed.wait()
                    tg.cancel_scope.cancel()

                async def keepalive() -> None:
                    while True:
                        await anyio.sleep(self.keepalive)
                        await stream.write_raw(KEEPALIVE)

                tg.start_soon(until_disconnect)
                tg.start_soon(until_closed)
                tg.start_soon(keepalive)
        finally:
            stream.detach(attached)
            session.done()
        with contextlib.suppress(Exception):
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    # -- DELETE -----------------------------------------------------------------------------------
    async def delete(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = self._refusal(scope)
        if refused is not None:
            await _error(
                send, 405, INVALID_REQUEST, f"Method DELETE not allowed: {refused}", [(b"allow", b"POST")]
            )
            return
        session = await self._session_of(scope, send)
        if session is None:
            return
        assert session.id is not None
        del self.table.sessions[session.id]
        await session.close()
        if self.redis is not None:  # forget it everywhere
            await self.redis.end_session(session)
        await _respond(send, 200)

    async def _session_of(self, scope: Scope, send: Send) -> HttpSession | None:
        """The session a GET or DELETE names; None once the refusal (400, 404) was answered."""
        raw = _header(scope, VERSION_HEADER)
        if raw is not None and raw not in self.by_header:
            refused = f"Bad Request: unsupported MCP-Protocol-Version {raw.decode('latin-1')!r}"
            await _error(send, 400, INVALID_REQUEST, refused)
            return None
        raw_id = _header(scope, SESSION_HEADER)
        if raw_id is None:
            await _error(send, 400, INVALID_REQUEST, "Bad Request: missing Mcp-Session-Id header")
            return None
        try:
            session = await self.table.held(raw_id.decode("latin-1"), scope)
        except RedisUnavailable as exc:
            await _error(send, 503, SERVER_BUSY, _STORE_DOWN.format(exc), _RETRY)
            return None
        if session is None:
            await _error(send, 404, SESSION_NOT_FOUND, "Session not found")
            return None
        return session


async def _follower(
    session: HttpSession,
    stream: EventStream,
    last_event_id: str | None,
    write: Callable[[bytes], Awaitable[None]],
    primes: bool,
    retry_ms: int,
    until_answer: bool,
) -> tuple[Callable[[], Awaitable[None]], Callable[[bytes], Awaitable[None]]]:
    """A GET connection served from the session's Redis stream (see :mod:`._redis`): what to run
    until the connection ends, and the writer attached to the stream. The standalone stream
    attaches a connection that writes only what the follower cannot: keep-alives, the priming and
    final events (their stored messages are empty: the follower skips those) and an event Redis
    did not take; the follower writes everything else, in the order Redis stored it, whichever
    instance emitted it."""
    from ._redis_events import RedisEventStore

    store = session.store
    assert isinstance(store, RedisEventStore)

    async def direct(data: bytes) -> None:
        stored = data.startswith(b"id: ") and not data[: data.index(b"\n")].endswith(b":0-0")
        if stored and b"\nretry: " not in data:
            return  # stored in Redis: the follower writes it
        await write(data)

    if last_event_id is not None:
        start = last_event_id.rpartition(":")[2]
    else:
        try:
            start = await store.last_entry(stream.id)
        except Exception:  # Redis down: what is stored from now on (entry ids are milliseconds)
            start = f"{int(time.time() * 1000)}-0"
    if not until_answer:
        await stream.attach(direct)
        if last_event_id is None and primes:
            event_id = await store.store_event(stream.id, b"")
            await stream.write_raw(encode_event(b"", id=event_id, retry=retry_ms))

    async def run() -> None:
        await store.follow(stream.id, start, write, until_answer=until_answer)

    return run, direct
