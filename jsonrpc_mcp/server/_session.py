"""One client's connection to a :class:`Server`: its state, negotiated revision and client.

The session is the JSON-RPC dispatcher for its connection and knows nothing of the transport: it
talks to the client through an ``Outbound`` (the stdio endpoint, or an HTTP session's streams).
Every request it receives goes to the server's request router (:mod:`._router`), which picks the
era, runs the middleware and maps what escapes to the wire; the lifecycle of the handshake
revisions is the table in :mod:`._handshake`. Nothing a client sends can crash the session.

Per session: the client's logging level (``logging/setLevel``; until the client sets one, every
level is sent, or ``Server.default_log_level`` and up), and the URIs it subscribed to
(``resources/subscribe``). Handlers get a :class:`Context` whose messages are all sent before the
request's answer (see :mod:`jsonrpc_mcp.server._context`).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
from collections.abc import Container, Coroutine
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

from .. import wire
from ..errors import CapabilityError
from ..jsonrpc.endpoint import CancelSpec, Outbound, RequestContext
from ..jsonrpc.messages import Notification, Request
from ..revisions import Revision
from ._clientlog import level_index
from ._handshake import State, transition
from ._subscriptions import covers

if TYPE_CHECKING:
    from ._server import Server

__all__ = ["MCP_CANCEL", "ServerSession", "State"]

logger = logging.getLogger("jsonrpc_mcp.server")

# how MCP cancels a request: notifications/cancelled naming it by params.requestId
MCP_CANCEL = CancelSpec(wire.CANCELLED, wire.CANCEL_ID_KEY)

_NO_SUBSCRIPTIONS: frozenset[str] = frozenset()
# what an idle session's _pending is: one empty set shared by all (never added to: a set is made first)
_NO_CHANGES: set[str] = set()

# registry kind (Registry.kind, what Server._changed reports) -> (capability, notification)
_LIST_CHANGED = {
    "tool": ("tools", wire.TOOLS_LIST_CHANGED),
    "prompt": ("prompts", wire.PROMPTS_LIST_CHANGED),
    "resource": ("resources", wire.RESOURCES_LIST_CHANGED),
    "resource template": ("resources", wire.RESOURCES_LIST_CHANGED),
}


class ServerSession:
    """The MCP server side of one connection (a JSON-RPC :class:`Dispatcher`)."""

    # What most sessions never change, as class-level defaults (a stateless request makes a session
    # per request: each attribute not set is one store fewer)
    _pending: set[str] = _NO_CHANGES  # the lists changed, not yet announced (shared until one)
    _wake: anyio.Event | None = None  # made by run_notifier (a throwaway session never needs it)
    # or, without run_notifier, a task made per burst of changes (notify_on_demand)
    _on_demand: tuple[asyncio.AbstractEventLoop, contextvars.Context] | None = None
    _flusher: asyncio.Task[None] | None = None
    _token: anyio.lowlevel.EventLoopToken | None = None
    # the URIs subscribed to (resources/subscribe): a set from the first one on, until then one
    # shared empty frozenset (an empty set is 216 bytes, and most sessions never subscribe)
    subscriptions: set[str] | frozenset[str] = _NO_SUBSCRIPTIONS
    session_id: str | None = None  # the transport's id of the session (Mcp-Session-Id), if any

    def __init__(
        self,
        server: Server,
        outbound: Outbound | None = None,
        *,
        revision: Revision | None = None,
        client_capabilities: dict[str, Any] | None = None,
        client_info: dict[str, Any] | None = None,
        log_threshold: int | None = None,
        transport: str = "stream",
    ) -> None:
        """A new session; with ``revision``, one already ready (see :meth:`ready`). ``transport``
        names what carries it, for middleware: "stdio", "memory", "http", "sse", "stream"."""
        self.server = server
        self.outbound = outbound
        self.transport = transport
        self.state = State.NEW if revision is None else State.READY
        self.revision = revision
        self.client_info = {} if client_info is None else client_info
        self.client_capabilities = {} if client_capabilities is None else client_capabilities
        self.capabilities: dict[str, Any] = {} if revision is None else server.capabilities(revision)
        self._thread = threading.get_ident()
        self.log_threshold = level_index(server.default_log_level) if log_threshold is None else log_threshold

    @classmethod
    def ready(
        cls,
        server: Server,
        outbound: Outbound | None,
        revision: Revision,
        client_capabilities: dict[str, Any],
        client_info: dict[str, Any],
        log_threshold: int,
        transport: str = "stream",
    ) -> ServerSession:
        """A session already in the ready state (a modern request's, made from its envelope): what
        ``__init__`` does with all of these given, without its keyword handling (one per request)."""
        session = cls.__new__(cls)
        session.server = server
        session.outbound = outbound
        session.transport = transport
        session.state = State.READY
        session.revision = revision
        session.client_info = client_info
        session.client_capabilities = client_capabilities
        session.capabilities = server.capabilities(revision)
        session._thread = threading.get_ident()
        session.log_threshold = log_threshold
        return session

    # -- JSON-RPC dispatcher protocol -------------------------------------------------------------
    @property
    def accepts_batches(self) -> bool:
        """Whether a JSON array of messages is served (the negotiated revision allows batches)."""
        return self.revision is not None and self.revision.allows_batch

    @property
    def omits_unknown_ids(self) -> bool:
        """Whether an error for an unreadable request leaves ``id`` out (True) or sends ``null``."""
        if self.revision is None:  # nothing negotiated: 2026-07-28 traffic never negotiates, and its
            return self.server.speaks_modern  # schema has no null id; older clients accept either
        return self.revision.error_id_omittable

    # initialize decides how everything after it is read (revision, batches): serve it in order
    ordered_methods = frozenset({wire.INITIALIZE})

    @property
    def threaded_requests(self) -> tuple[str, str, Container[str]]:
        """The requests that surely wait for a worker thread: ``tools/call`` naming (``params.name``)
        one of the server's plain ``def`` tools (a live set). The endpoint's fast path starts them
        in a task of their own rather than inline (see :mod:`jsonrpc_mcp.jsonrpc._fastpath`)."""
        return wire.TOOLS_CALL, "name", self.server.threaded_tools

    def handle_request(self, request: Request, context: RequestContext) -> Coroutine[Any, Any, Any]:
        """Serve a request (await the result): the server's router picks the era and runs it
        through the middleware."""
        return self.server.router.handle(self, request, context)

    def has_feature(self, capability: str) -> bool:
        """Whether the session serves a feature: a capability key, or ``resources.subscribe``."""
        caps = self.capabilities
        if capability == "resources.subscribe":
            resources = caps.get("resources")
            return isinstance(resources, dict) and bool(resources.get("subscribe"))
        revision = self.revision
        if capability == "completions" and revision is not None and not revision.has_completions_capability:
            return self.server.has_completions  # 2024-11-05: the method exists without a capability
        return capability in caps

    async def handle_notification(self, notification: Notification) -> None:
        """``notifications/initialized``, ``notifications/cancelled`` and the other client
        notifications; unknown ones are ignored."""
        method = notification.method
        if method == wire.INITIALIZED:
            state = self.state
            if transition(self, method):
                if self._pending:
                    self._poke()  # changes made during the handshake are announced now
            else:
                logger.debug("'notifications/initialized' in state %s ignored", state.value)
        elif method == wire.CANCELLED:
            pass  # the endpoint already cancelled the request
        elif method == wire.ROOTS_LIST_CHANGED:
            logger.debug("the client's roots changed (ask again with ctx.list_roots())")
        else:
            logger.debug("notification %r ignored", method)

    # -- logging and subscriptions ----------------------------------------------------------------
    @property
    def loop_token(self) -> anyio.lowlevel.EventLoopToken | None:
        """The event loop serving this session (known once it runs), for threads without one."""
        return self._token

    def wants_log(self, rank: int) -> bool:
        """Whether a message of this level (index in LEVELS) goes to the client."""
        return rank >= self.log_threshold and "logging" in self.capabilities

    def subscribe(self, uri: str) -> None:
        """Add ``uri`` to the session's subscriptions (``resources/subscribe``)."""
        if type(self.subscriptions) is not set:
            self.subscriptions = set(self.subscriptions)
        self.subscriptions.add(uri)

    def is_subscribed(self, uri: str) -> bool:
        """Whether ``uri`` is, or is below (``uri`` starts with it and a "/"), a subscribed URI."""
        subscriptions = self.subscriptions
        return bool(subscriptions) and covers(subscriptions, uri)  # the rule listen streams share

    # -- server -> client -------------------------------------------------------------------------
    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification to the client; raises RuntimeError when not connected."""
        if self.outbound is None:
            raise RuntimeError("the session is not connected")
        await self.outbound.notify(method, params)

    async def ping(self, *, timeout: float | None = 10.0) -> None:
        """Ping the client; raises RequestTimeout if it does not answer."""
        if self.outbound is None:
            raise RuntimeError("the session is not connected")
        self._need_handshake("ping the client")
        await self.outbound.request(wire.PING, None, timeout=timeout)

    def _need_handshake(self, what: str) -> None:
        revision = self.revision
        if revision is not None and not revision.has_handshake:
            raise CapabilityError(f"cannot {what}: revision {revision.version} has no server-sent requests")

    async def notify_elicitation_complete(self, elicitation_id: str) -> None:
        """Tell the client a URL-mode elicitation finished (``notifications/elicitation/complete``)."""
        revision = self._rev()
        self._need_handshake("send notifications/elicitation/complete")
        if not revision.has_url_elicitation:
            raise CapabilityError(f"protocol revision {revision.version} has no URL-mode elicitation")
        await self.notify(wire.ELICITATION_COMPLETE, {"elicitationId": elicitation_id})

    def _poke(self) -> None:
        if self._wake is not None:
            self._wake.set()
        elif self._on_demand is not None and self._flusher is None:
            loop, context = self._on_demand
            self._flusher = context.run(loop.create_task, self._flush())  # (context= is 3.11+)

    def notify_on_demand(self, context: contextvars.Context) -> None:
        """Send list_changed from a task made for each burst of changes, in a copy of ``context``,
        instead of a :meth:`run_notifier` task for the session's whole life: a server holding many
        idle sessions (Streamable HTTP) then keeps no task, future or event per session. Called on
        the session's event loop (asyncio); :meth:`stop_notifying` undoes it."""
        self._token = anyio.lowlevel.current_token()
        self._thread = threading.get_ident()
        self._on_demand = (asyncio.get_running_loop(), context)

    def stop_notifying(self) -> None:
        """No more list_changed from :meth:`notify_on_demand` (the session ended)."""
        self._on_demand = None
        if self._flusher is not None:
            self._flusher.cancel()
            self._flusher = None

    async def _flush(self) -> None:
        try:
            # the task starts on the loop's next turn: the changes of this one are announced together
            while self._pending and self.state is State.READY:
                kinds, self._pending = self._pending, _NO_CHANGES
                await self._announce(kinds)
        finally:
            self._flusher = None

    def list_changed(self, kind: str) -> None:
        """A registry changed (from any thread): schedule the matching list_changed notification."""
        if threading.get_ident() != self._thread:
            if self._token is not None:
                import anyio.from_thread  # here: only threads need it (it is not on the serving path)

                try:
                    anyio.from_thread.run_sync(self.list_changed, kind, token=self._token)
                except Exception:  # the loop is gone: nobody to notify
                    logger.debug("list_changed(%s) after the session ended", kind)
            return
        if self.state is State.NEW:
            return  # capabilities and lists are decided at initialize: nothing to announce yet
        if self._pending is _NO_CHANGES:
            self._pending = set()
        self._pending.add(kind)
        self._poke()

    async def run_notifier(self) -> None:
        """Send list_changed notifications, coalescing bursts, until cancelled.

        Nothing is sent before the handshake completes: changes before ``initialize`` are already in
        what initialize and the lists report; changes between ``initialize`` and ``initialized`` are
        held and sent once the session is ready.
        """
        self._token = anyio.lowlevel.current_token()
        self._thread = threading.get_ident()
        while True:
            self._wake = wake = anyio.Event()
            if self._pending and self.state is State.READY:
                wake.set()
            await wake.wait()
            if self.state is not State.READY:
                continue  # held until the client says "initialized" (handle_notification wakes us)
            kinds, self._pending = self._pending, _NO_CHANGES
            await self._announce(kinds)

    async def _announce(self, kinds: set[str]) -> None:
        """One list_changed notification per list that changed and whose capability says so."""
        sent: set[str] = set()
        for kind in sorted(kinds):
            entry = _LIST_CHANGED.get(kind)
            if entry is None:
                logger.warning("no list_changed notification for registry kind %r", kind)
                continue
            capability, method = entry
            if method in sent or not self.capabilities.get(capability, {}).get("listChanged"):
                continue
            sent.add(method)
            try:
                await self.notify(method)
            except Exception as exc:
                logger.debug("could not send %s: %s", method, exc)

    # -- helpers ----------------------------------------------------------------------------------
    def _rev(self) -> Revision:
        assert self.revision is not None
        return self.revision
