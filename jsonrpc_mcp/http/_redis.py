"""Scale out on Redis: events in Redis Streams, notifications across instances, a shared state key.

Theory of operation
-------------------
Several instances of one server (processes, machines) point at the same Redis; a
:class:`RedisBackend` given to :class:`~jsonrpc_mcp.http.McpHttpApp` (``redis=``) makes them share
what a client may meet on any of them:

* **Sessions**: ``initialize`` records what a handshake session is
  (revision, the client's info and capabilities, the principal that opened it) at
  ``<prefix>:session:<id>``; an instance that meets a session id it does not hold (POST, GET,
  DELETE) adopts the session from that record (:meth:`RedisBackend.adopt`), naming its new streams
  apart. A DELETE drops the record and the streams and tells the others (on the bus), which drop
  their copies; the record expires ``event_ttl`` after the session's last event. The session's
  resource subscriptions and log level are in the record too, and published on the bus when a POST
  changed them, so every copy holds the same (:meth:`RedisBackend.share_view`). Every copy of a
  session hears of a list change or resource update; it is stored once in the session's
  standalone stream, which the client's GET connection follows wherever it is: one copy, the
  session's teller, sends it, and a mark per change makes a second copy's notice a no-op
  (:meth:`RedisBackend.told`, :mod:`._redis_notices`).
* **Events** (:class:`RedisEventStore`): each SSE stream of a session is a Redis stream,
  ``<prefix>:events:<session id>:<stream id>``, written with ``XADD ... MAXLEN ~ max_events`` and
  given ``event_ttl`` seconds to live again on every write. An event id is ``<stream id>:<entry
  id>``: a replay after ``Last-Event-ID`` is one ``XRANGE`` from that entry (which must still be
  there: an id trimmed away or expired is unknown). An instance adopting a session reads the
  streams the others wrote the same way, so a client resumes through any instance. A GET stream
  (standalone, or resuming a request's stream another instance still writes) *follows* its Redis
  stream (``XREAD BLOCK``, :meth:`RedisEventStore.follow`): what any instance emits on the
  session's standalone stream reaches the client wherever its GET connection is, in the order
  Redis stored it, and a resumed request stream runs until its answer.
* **Notifications** (:class:`_BusHub`): the server's subscription hub is replaced by one that also
  publishes each list change and resource update on ``<prefix>:bus`` (pub/sub), tagged with this
  instance's id; each instance's subscriber hands what the others published to its own hub, which
  delivers it to the ``subscriptions/listen`` streams it holds. Publishing never blocks the caller
  (any thread: a queue drained by one task); a message published while Redis is down is lost,
  and the subscriber reconnects with a bounded back-off.
* **The request-state key** of the stateless revisions (multi round-trip retries): unless one was
  given (``Server(state_key=...)`` or ``$JSONRPC_MCP_STATE_KEY``), every instance adopts the key kept
  at ``<prefix>:request-state-key`` (the first instance makes it, ``SET NX``), so any instance
  verifies a retry sealed by any other.
* **Tasks** (:mod:`._redis_tasks`): the Tasks extension's default store is replaced by one in
  Redis, so ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` work on any instance; each change
  of a task is published, and every instance tells its listeners (``notifications/tasks``).
* **Server-to-client requests** (sampling, elicitation, roots): an instance numbers the requests
  it sends a session from its own base (``tag * ID_SPAN``: an integer id says which instance sent
  it). The client may answer through any instance: one that has no request waiting under that id
  publishes the response on the sender's own channel, ``<prefix>:bus:<tag>``, and the sender feeds
  it to the request that waits (its timeout and cancellation are the sender's, as on one
  instance). A ``notifications/cancelled`` for a request this instance is not running is published
  on the bus: the instance running it cancels it.
* **Readiness**: a PING per probe; the app is not ready while Redis does not answer.

``redis`` (the ``redis`` extra, its asyncio API) is imported when a backend is made, never before.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import secrets
import threading
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio
import orjson

from ..jsonrpc import codec
from ..jsonrpc.messages import ErrorResponse, Notification, RequestId, Response
from ..server._session import ServerSession, State
from ..server._subscriptions import SubscriptionHub
from ..wire import INITIALIZED, RESOURCE_UPDATED
from ._redis_events import _BACKOFF, RedisEventStore
from ._redis_notices import (
    ALIVE_MS,
    MARK_TTL,
    NOTICES,
    STOP_TELLING,
    TELLS,
    ChangeLog,
    list_key,
    notice_key,
    resource_key,
)

if TYPE_CHECKING:
    from ..server._server import Server
    from ._sessions import HttpSession, SessionTable
    from .app import McpHttpApp

__all__ = ["RedisBackend", "RedisEventStore", "RedisUnavailable"]

logger = logging.getLogger("jsonrpc_mcp.http.redis")

ID_SPAN = 2**22  # the ids of one instance's server-to-client requests: tag * ID_SPAN + n (< 2**53)


class RedisUnavailable(RuntimeError):
    """Redis cannot be used (unreachable, refused, the ``redis`` package missing)."""


def _import_redis() -> Any:
    try:
        import redis.asyncio
    except ImportError as exc:
        raise RedisUnavailable(
            "the redis package is not installed (pip install 'jsonrpc-mcp[redis]')"
        ) from exc
    return redis.asyncio


class _BusHub(SubscriptionHub):
    """The server's subscription hub, also publishing its changes for the other instances."""

    def __init__(self, backend: RedisBackend, app: McpHttpApp) -> None:
        super().__init__()
        self._backend = backend
        self._app = app
        self._telling: set[asyncio.Task[None]] = set()

    # (Server._changed and notify_resource_updated call these before telling their sessions: a
    # copy's notice finds the change's id in the log)
    def list_changed(self, kind: str) -> None:
        super().list_changed(kind)
        self._backend.publish({"k": "list", "v": kind, "c": self._backend.changes.new_change(list_key(kind))})

    def resource_updated(self, uri: str) -> int:
        told = super().resource_updated(uri)
        self._backend.publish(
            {"k": "res", "v": uri, "c": self._backend.changes.new_change(resource_key(uri))}
        )
        return told

    def deliver(self, message: dict[str, Any]) -> None:
        """What another instance published: to this instance's listeners and sessions only."""
        kind, value = message.get("k"), message.get("v")
        if type(value) is not str:
            return
        if kind == "resp" or kind == "cancel":
            self._backend.settle(self._app, message)
            return
        if kind == "view":
            self._backend.adopt_view(self._app, message)
            return
        if kind == "task":  # a task changed on another instance: notifications/tasks here too
            from ._redis_tasks import tell_listeners

            task = asyncio.get_running_loop().create_task(tell_listeners(self._app.server, value))
            self._telling.add(task)
            task.add_done_callback(self._telling.discard)
            return
        if kind == "ready":  # "initialized" reached another instance: so is the opener's copy
            held = self._app.sessions.get(value)
            if held is not None and held.mcp.state is State.INITIALIZING:
                task = asyncio.get_running_loop().create_task(
                    held.mcp.handle_notification(Notification(INITIALIZED))
                )
                self._telling.add(task)
                task.add_done_callback(self._telling.discard)
            return
        if kind == "end":  # deleted on another instance
            ended = self._app.sessions.pop(value, None)
            if ended is not None:
                task = asyncio.get_running_loop().create_task(ended.close())
                self._telling.add(task)
                task.add_done_callback(self._telling.discard)
            return
        sessions = [s.mcp for s in self._app.sessions.values() if not s.closed]
        change, key = message.get("c"), list_key(value) if kind == "list" else resource_key(value)
        if type(change) is str and key is not None:  # (an instance of an older version sends none)
            self._backend.changes.heard(key, change)
        if kind == "list":
            SubscriptionHub.list_changed(self, value)
            for session in sessions:
                session.list_changed(value)
        elif kind == "res":
            SubscriptionHub.resource_updated(self, value)
            for session in sessions:
                if session.state is State.READY and session.is_subscribed(value):
                    task = asyncio.get_running_loop().create_task(self._tell(session, value))
                    self._telling.add(task)
                    task.add_done_callback(self._telling.discard)

    @staticmethod
    async def _tell(session: ServerSession, uri: str) -> None:  # (a task: kept in _telling)
        try:
            await session.notify(RESOURCE_UPDATED, {"uri": uri})
        except Exception as exc:
            logger.debug("could not tell a session that %s changed: %s", uri, exc)


class RedisBackend:
    """One Redis shared by the instances of a server (see the module's docstring).

    ``RedisBackend.from_url("redis://host:6379/0")``; ``prefix`` namespaces every key and channel
    (one per server); ``max_events`` bounds each stream (approximately); ``event_ttl``: seconds a
    stream outlives its last event; ``share_state_key``: adopt the shared request-state key;
    ``share_tasks``: keep the tasks of the server's Tasks extension in Redis (when it has the default
    store).
    """

    def __init__(
        self,
        client: Any,
        *,
        url: str = "redis",
        prefix: str = "jsonrpc-mcp",
        max_events: int = 1000,
        event_ttl: float = 3600.0,
        share_state_key: bool = True,
        share_tasks: bool = True,
    ) -> None:
        self.client = client
        self.url = url
        self.prefix = prefix
        self.max_events = max_events
        self.event_ttl = event_ttl
        self.share_state_key = share_state_key
        self.share_tasks = share_tasks
        self.instance = secrets.token_hex(8)  # tags what this instance publishes
        self.tag = secrets.randbelow(2**30) + 1  # the base of its server-to-client request ids
        self.channel = f"{prefix}:bus"
        self.own_channel = f"{prefix}:bus:{self.tag}"  # what is for this instance only
        self.teller_tag = str(self.tag).encode()
        self.changes = ChangeLog(self.instance)  # the changes heard of, for the notices' marks
        self._ttl = max(1, int(event_ttl))
        self._settling: set[asyncio.Task[None]] = set()
        self._server: Server | None = None
        self._hub: _BusHub | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self._queue: asyncio.Queue[tuple[str, bytes]] | None = None
        self.subscribed = anyio.Event()

    @classmethod
    def from_url(cls, url: str, **options: Any) -> RedisBackend:
        """A backend on a new client for ``url`` (``redis://``, ``rediss://``, ``unix://``)."""
        module = _import_redis()
        client = module.from_url(url, socket_connect_timeout=2.0, health_check_interval=10)
        return cls(client, url=_safe(url), **options)

    def attach(self, app: McpHttpApp) -> None:
        """Serve ``app`` (what its constructor calls): its readiness check and the bus hub."""
        app.readiness_checks.append(self.check)
        self._server = app.server
        if self._hub is None:
            self._hub = _BusHub(self, app)
            app.server.subscriptions = self._hub
        if self.share_tasks:
            from ._redis_tasks import share_tasks

            share_tasks(app.server, self.client, self.prefix, self.publish)

    def event_store(self, session_id: str) -> RedisEventStore:
        """The event store of session ``session_id`` (the same streams on every instance)."""
        base, record = f"{self.prefix}:events:{session_id}", f"{self.prefix}:session:{session_id}"
        return RedisEventStore(
            self.client, base, max_events=self.max_events, ttl=self.event_ttl, record=record
        )

    # -- server-to-client requests ----------------------------------------------------------------
    def bind(self, session: HttpSession) -> None:
        """Number the session's server-to-client requests from this instance's base, and forward
        the responses and cancellations that are for another instance."""
        session_id = session.id
        assert session_id is not None
        endpoint = session.endpoint
        endpoint.number_outgoing_from(self.tag * ID_SPAN)
        session.told = {"": self.changes.now()}  # its notices tell the changes heard of from now on

        def unknown_response(response: Response | ErrorResponse) -> bool:
            rid = response.id
            if type(rid) is not int or rid < ID_SPAN or rid // ID_SPAN == self.tag:
                return False  # not an id of ours, or ours and late (timed out, cancelled)
            if type(response) is Response:
                raw = codec.encode_response(rid, response.result)
            else:
                raw = orjson.dumps({"jsonrpc": "2.0", "id": rid, "error": response.error})  # type: ignore[union-attr]
            owner = f"{self.channel}:{rid // ID_SPAN}"
            self.publish({"k": "resp", "v": session_id, "m": raw.decode()}, owner)
            return True

        def unknown_cancel(rid: RequestId, notification: Notification) -> bool:
            self.publish({"k": "cancel", "v": session_id, "m": rid})
            return True

        endpoint.unknown_response = unknown_response
        endpoint.unknown_cancel = unknown_cancel

    def settle(self, app: McpHttpApp, message: dict[str, Any]) -> None:
        """A response another instance received for a request sent here, or a cancellation."""
        session = app.sessions.get(message["v"])
        if session is None or session.closed:
            return
        if message["k"] == "cancel":
            rid = message.get("m")
            if (type(rid) is int or type(rid) is str) and session.endpoint.cancel_incoming(rid):
                logger.debug("request %r of session %s cancelled from another instance", rid, session.id)
            return
        raw = message.get("m")
        if type(raw) is not str:
            return
        task = asyncio.get_running_loop().create_task(self._answer(session, raw.encode()))
        self._settling.add(task)
        task.add_done_callback(self._settling.discard)

    @staticmethod
    async def _answer(session: HttpSession, raw: bytes) -> None:  # (a task: kept in _settling)
        try:
            await session.endpoint.process(raw, session)
        except Exception as exc:
            logger.debug("a forwarded response was not delivered: %s", exc)

    # -- what the copies of a session share --------------------------------------------------------
    async def told(self, session: HttpSession, message: bytes) -> bool:
        """Whether ``message`` is told through Redis (else the caller emits it as any message): a
        list change or resource update, which every copy of the session hears of, is stored once in
        the session's standalone stream, which a GET follows wherever it is (see
        :mod:`._redis_notices`). The session's *teller* (``<prefix>:teller:<id>``: the instance that
        opened the session, first) sends it; when there is no teller (its copy ended) or it is gone
        (its heartbeat, ``<prefix>:alive:<tag>``, expired: killed, say), the first copy to hear of a
        notice becomes the teller (one Lua script). A copy that does not send a notice looks again
        once a dead teller's heartbeat would have expired (:meth:`look_again`). Whoever sends it,
        the notice is stored only if a change it tells was not stored before (:meth:`_store_once`).
        Redis down: every copy sends it (twice rather than never)."""
        if not any(notice in message for notice in NOTICES) or session.id is None:
            return False
        key, changes = notice_key(message), list[str]()
        if key is not None and session.told is not None:
            changes, session.told[key] = self.changes.since(key, session.told.get(key, session.told[""]))
        if not await self._claim(session.id):
            self.look_again(session, message, changes)
            return True
        return await self._store_once(session, message, changes)

    async def _store_once(self, session: HttpSession, message: bytes, changes: list[str]) -> bool:
        """Store a notice telling ``changes`` unless another copy stored one telling them: whether
        it is done (False: no change ids, or Redis failed: the caller emits it as any message)."""
        store = session.store
        if not changes or not isinstance(store, RedisEventStore):
            return False
        marks = [f"{self.prefix}:told:{session.id}:{change}" for change in changes]
        try:
            await store.store_once(session.standalone.id, message, marks, MARK_TTL)
        except Exception as exc:
            logger.debug("a notice was not stored once in Redis (sent as it is): %s", exc)
            return False
        return True

    async def _claim(self, session_id: str) -> bool:
        keys = (f"{self.prefix}:teller:{session_id}", f"{self.prefix}:alive:")
        try:
            told = await self.client.eval(TELLS, 1, keys[0], self.teller_tag, keys[1], self._ttl)
            return bool(told)
        except Exception:
            return True

    def look_again(self, session: HttpSession, message: bytes, changes: list[str]) -> None:
        """The teller was alive when ``message`` came; if it is gone once its heartbeat would have
        expired, it may have died before telling: this copy becomes the teller and sends it (late
        rather than never; a no-op if the teller stored it after all)."""

        async def later() -> None:  # (a task: kept in _settling)
            await anyio.sleep(ALIVE_MS / 1000 + 0.25)
            assert session.id is not None
            if session.closed or not await self._claim(session.id):
                return
            if not await self._store_once(session, message, changes):
                with contextlib.suppress(Exception):
                    await session.standalone.emit(message)

        with contextlib.suppress(RuntimeError):  # no running loop: nothing to wait on
            task = asyncio.get_running_loop().create_task(later())
            self._settling.add(task)
            task.add_done_callback(self._settling.discard)

    async def become_teller(self, session_id: str) -> None:
        """This instance opened the session: it sends the session's notices (see :meth:`told`)."""
        try:
            await self.client.set(f"{self.prefix}:teller:{session_id}", self.teller_tag, ex=self._ttl)
        except Exception as exc:
            logger.debug("could not record the teller of session %s: %s", session_id, exc)

    def release(self, session_id: str) -> None:
        """This instance's copy of the session ended: stop being its teller, in the background
        (never holding up a shutdown that closes many sessions; if it never runs, the heartbeat
        expires and another copy takes over all the same)."""
        with contextlib.suppress(RuntimeError):  # no running loop
            task = asyncio.get_running_loop().create_task(self.stop_telling(session_id))
            self._settling.add(task)
            task.add_done_callback(self._settling.discard)

    async def stop_telling(self, session_id: str) -> None:
        """If this instance is the session's teller, no copy is any more (the next notice makes
        one)."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
            try:
                await self.client.eval(STOP_TELLING, 1, f"{self.prefix}:teller:{session_id}", self.teller_tag)
            except Exception as exc:
                logger.debug("could not clear the teller of session %s: %s", session_id, exc)

    async def _heartbeat_forever(self) -> None:
        """Say this instance is alive (a key that expires soon after it stops being refreshed)."""
        key = f"{self.prefix}:alive:{self.tag}"
        while True:
            with contextlib.suppress(Exception):
                await self.client.set(key, b"1", px=ALIVE_MS)
            await anyio.sleep(ALIVE_MS / 4000)

    async def share_view(self, session: HttpSession) -> None:
        """A POST changed the session's subscriptions or log level: into the record, and to the
        instances holding a copy."""
        subscriptions, threshold = view = session.shared_view()
        session.shared = view
        fields = {"subscriptions": sorted(subscriptions), "logThreshold": threshold}
        key = f"{self.prefix}:session:{session.id}"
        try:
            # published before the POST is answered (not queued): every instance has the view
            # before anything the client does next, a resource update on a third one included
            data = orjson.dumps({"k": "view", "v": session.id, "m": fields, "o": self.instance})
            await self.client.publish(self.channel, data)
            raw = await self.client.get(key)
            record = orjson.loads(raw) if raw is not None else None
            if type(record) is dict:
                await self.client.set(key, orjson.dumps({**record, **fields}), keepttl=True)
        except Exception as exc:
            logger.warning("the subscriptions of session %s were not recorded in Redis: %s", session.id, exc)

    @staticmethod
    def adopt_view(app: McpHttpApp, message: dict[str, Any]) -> None:
        """What another instance published of a session's subscriptions and log level."""
        session = app.sessions.get(message["v"])
        fields = message.get("m")
        if session is not None and type(fields) is dict:
            _take_view(session, fields)

    async def register_session(self, session: HttpSession) -> None:
        """Record what the session is (its revision, the client's info and capabilities, who opened
        it), so that any instance may serve it; the record lives as long as the session's streams.
        :class:`RedisUnavailable` when it cannot be recorded (no other instance would know it)."""
        mcp, revision = session.mcp, session.mcp.revision
        assert session.id is not None and revision is not None
        record = {
            "principal": session.principal,
            "revision": revision.version,
            "clientInfo": mcp.client_info,
            "clientCapabilities": mcp.client_capabilities,
        }
        key = f"{self.prefix}:session:{session.id}"
        try:
            await self.client.set(key, orjson.dumps(record), ex=max(1, int(self.event_ttl)))
            await self.become_teller(session.id)
        except Exception as exc:
            raise RedisUnavailable(f"the session could not be recorded: {exc}") from exc

    async def adopt(self, table: SessionTable, session_id: str) -> HttpSession | None:
        """The session another instance opened, served here from now on (None: no such record;
        :class:`RedisUnavailable` when Redis cannot say).

        What is adopted is the record; what the other instance holds in memory is not (requests in
        flight there, resource subscriptions, the log level)."""
        from ._sessions import HttpSession

        if len(session_id) > 64:
            return None
        try:
            raw = await self.client.get(f"{self.prefix}:session:{session_id}")
        except Exception as exc:  # the caller answers 503: the session may well exist
            logger.warning("could not look session %s up in Redis: %s", session_id, exc)
            raise RedisUnavailable(f"Redis at {self.url} is unreachable") from exc
        record = orjson.loads(raw) if raw is not None else None
        revision = table.server.router.revision(str(record.get("revision"))) if type(record) is dict else None
        if record is None or revision is None:
            return None
        held = table.sessions.get(session_id)  # adopted meanwhile by another request
        if held is not None:
            return held
        session = HttpSession(table, session_id)
        principal = record.get("principal")
        session.principal = tuple(principal) if type(principal) is list else principal
        session.stream_prefix = f"{self.instance[:6]}x"
        mcp = session.mcp
        mcp.revision, mcp.capabilities, mcp.state = revision, table.server.capabilities(revision), State.READY
        mcp.client_info = record.get("clientInfo") or {}
        mcp.client_capabilities = record.get("clientCapabilities") or {}
        _take_view(session, record)
        table.sessions[session_id] = session
        session.start()
        logger.info("session %s adopted from Redis", session_id)
        return session

    async def end_session(self, session: HttpSession) -> None:
        """The client deleted the session: drop its record and streams, and tell the others."""
        if isinstance(session.store, RedisEventStore):
            await session.store.drop()
        self.publish({"k": "end", "v": session.id})

    # -- health -----------------------------------------------------------------------------------
    async def check(self) -> str | None:
        """None when Redis answers a PING, else why not (a readiness check)."""
        for attempt in (1, 2):  # a second time: the first may meet a connection Redis closed (restarted)
            try:
                await self.client.ping()
            except Exception as exc:
                if attempt == 2:
                    return f"Redis at {self.url} is unreachable: {exc}"
            else:
                return None
        return None  # (not reached)

    async def ping(self) -> None:
        """Raise :class:`RedisUnavailable` (one clear line) unless Redis answers a PING."""
        with anyio.move_on_after(5.0):
            problem = await self.check()
            if problem is not None:
                raise RedisUnavailable(problem)
            return
        raise RedisUnavailable(f"Redis at {self.url} did not answer a PING within 5 s")

    async def shared_state_key(self) -> str:
        """The request-state key the instances share (made by the first one that asks)."""
        key = f"{self.prefix}:request-state-key"
        await self.client.set(key, secrets.token_hex(32), nx=True)
        value = await self.client.get(key)
        return str(value.decode("ascii"))

    # -- running ----------------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Check Redis, adopt the shared key, run the bus (publisher and subscriber) until exit."""
        await self.ping()
        server = self._server
        if self.share_state_key and server is not None:
            shared = await self.shared_state_key()
            if server.request_state.adopt_shared_key(shared):
                logger.info("the request-state key is the one shared through Redis")
        loop = self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._queue = asyncio.Queue(maxsize=10_000)
        self.subscribed = anyio.Event()
        # plain tasks, not a task group: this is entered and exited in a lifespan whose own scope
        # is cancelled first at shutdown; the clean-up below is shielded from that
        tasks = [
            loop.create_task(self._publish_forever()),
            loop.create_task(self._subscribe_forever()),
            loop.create_task(self._heartbeat_forever()),
        ]
        try:
            with anyio.move_on_after(5.0):
                await self.subscribed.wait()
            yield
        finally:
            self._loop = self._queue = None
            with anyio.CancelScope(shield=True):
                for task in tasks:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await task
                with contextlib.suppress(Exception), anyio.move_on_after(1.0):
                    await self.client.delete(f"{self.prefix}:alive:{self.tag}")
                with contextlib.suppress(Exception):
                    await self.client.aclose()

    def publish(self, message: dict[str, Any], channel: str | None = None) -> None:
        """Queue ``message`` for the other instances (from any thread; dropped when not running),
        on the bus or on ``channel``."""
        loop, queue = self._loop, self._queue
        if loop is None or queue is None:
            return
        item = (channel or self.channel, orjson.dumps({**message, "o": self.instance}))
        if threading.get_ident() == self._thread:
            self._put(queue, item)
        else:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(self._put, queue, item)

    @staticmethod
    def _put(queue: asyncio.Queue[tuple[str, bytes]], item: tuple[str, bytes]) -> None:
        try:
            queue.put_nowait(item)
        except asyncio.QueueFull:
            logger.warning("the Redis bus is backed up: a notification for other instances was dropped")

    async def _publish_forever(self) -> None:
        assert self._queue is not None
        queue = self._queue
        while True:
            channel, data = await queue.get()
            try:
                await self.client.publish(channel, data)
            except Exception as exc:
                logger.warning("could not publish to Redis at %s: %s", self.url, exc)

    async def _subscribe_forever(self) -> None:
        attempt = 0
        while True:
            pubsub = self.client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.channel, self.own_channel)
                self.subscribed.set()
                if attempt:
                    logger.info("the Redis bus at %s is back", self.url)
                attempt = 0
                while True:
                    message = await pubsub.get_message(timeout=None)
                    if message is not None and message.get("type") == "message":
                        self._received(message["data"])
            except Exception as exc:
                log = logger.warning if attempt == 0 else logger.debug  # once per outage
                log("the Redis bus at %s failed (%s): reconnecting", self.url, exc)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            await anyio.sleep(_BACKOFF[min(attempt, len(_BACKOFF) - 1)])
            attempt += 1

    def _received(self, data: bytes) -> None:
        try:
            message = orjson.loads(data)
        except orjson.JSONDecodeError:
            return
        if type(message) is dict and message.get("o") != self.instance and self._hub is not None:
            self._hub.deliver(message)


def _take_view(session: HttpSession, fields: dict[str, Any]) -> None:
    """Give this copy of the session the subscriptions and log level of ``fields`` (a record)."""
    subscriptions, threshold = fields.get("subscriptions"), fields.get("logThreshold")
    if type(subscriptions) is list:
        session.mcp.subscriptions = {uri for uri in subscriptions if type(uri) is str}
    if type(threshold) is int:
        session.mcp.log_threshold = threshold
    session.shared = session.shared_view()


def _safe(url: str) -> str:
    """``url`` without its password (for messages)."""
    return re.sub(r"//([^:@/]*):[^@/]*@", r"//\1:***@", url)
