"""Streamable HTTP of the stateless revisions (2026-07-28 on): a POST served on its own.

Theory of operation
-------------------
Modern traffic (the stateless revisions, 2026-07-28 on) shares the endpoint: a POST whose ``MCP-
Protocol-Version`` names a stateless revision, or whose body's ``_meta`` names a protocol version,
is served on its own: no ``Mcp-Session-Id`` is minted, echoed or required (one sent is ignored, as
is ``Last-Event-ID``), and there are no event ids to resume from. Its metadata headers are checked
against the body first (:mod:`._headers`: 400 and -32020 on any disagreement), then the request goes
to the server's one dispatch point (``Router.serve_stateless``: its middleware, then the stateless
dispatcher) under its own cancel scope, with a :class:`_ModernCall` as its outbound (no HTTP
session, no JSON-RPC endpoint: the hot path of stateless serving builds one ServerSession and
nothing else, and leaves no reference cycle for the GC). A request that cannot wait
(``Router.cannot_wait``: a ``tools/call`` of an ``async def`` tool with no ``await``, no
middleware) gets no cancel scope (:class:`_Unscoped`): nothing can run while it does, so nothing
could cancel it. The lazy JSON-vs-SSE choice is that of a
session's POST (:mod:`._streamable`), with three differences: closing the response (SSE or not)
cancels the request; ``subscriptions/listen`` is always answered with SSE, kept alive with comment
lines and ended gracefully (its final result) when the app shuts down; an error answered as JSON
gets the status the revision assigns to its code (-32601: 404; -32020, -32021, -32022: 400). GET and
DELETE naming a stateless revision get 405.

Whether a POST is stateless is not decided here: the app asks the server's router
(``Router.stateless``), as it asks which revision's header rules a request answers to
(``Router.stateless_rules``). A ``tools/call``'s tool is looked up once, here (for its
``x-mcp-header`` parameters), and handed to the router with the request.

This is the measured hot path of stateless serving (bench/RESULTS.md): :meth:`StatelessHttp.post`
and :meth:`StatelessHttp._answer` are kept lean on purpose (no closures, no task group on asyncio,
one watcher sweep per interval rather than a timer per request, a request's channel made only when
it sends something, the routing headers decided by one look-up in the common case).
"""

from __future__ import annotations

import asyncio
import logging
import math
from typing import TYPE_CHECKING, Any

import anyio

from ..errors import CapabilityError
from ..jsonrpc import codec
from ..jsonrpc.endpoint import RequestContext
from ..jsonrpc.errors import (
    INVALID_REQUEST,
    InvalidParams,
    JsonRpcError,
)
from ..jsonrpc.messages import Incoming, Notification, Request
from ..revisions import Revision
from ..server._router import wire_error
from ..server._stateless import Envelope, read_envelope
from ..transports.sse import KEEPALIVE
from ..wire import LISTEN, TOOLS_CALL
from ._asgi import (
    EVENT_STREAM,
    Receive,
    Scope,
    Send,
    _accepts,
    _error,
    _headers,
    _reject,
    _respond,
    _respond_json,
)
from ._headers import check_notification, check_request, mcp_headers, routing_agrees
from ._health import Lifecycle
from ._streamable import _PostChannel

if TYPE_CHECKING:
    from ..server._registry import Tool
    from ..server._server import Server

__all__ = ["StatelessHttp"]

logger = logging.getLogger("jsonrpc_mcp.http")

_WATCH_AFTER = 0.02  # seconds before a modern request's connection is watched for the client leaving
INVALID_REQUEST = INVALID_REQUEST


class _Unscoped:
    """The cancel scope of a request that cannot wait (``Router.cannot_wait``): it runs from its
    start to its answer without the event loop running anything else, so no cancellation could
    reach it half-way and no anyio cancel scope (several microseconds a request) is set up. A
    cancellation asked for (its client closed an SSE response that its own sends opened) is only
    recorded: the request ends as a cancelled one does (202, its answer dropped), and its own sends
    to the departed client return at once meanwhile."""

    __slots__ = ("cancel_called",)

    def __init__(self) -> None:
        self.cancel_called = False

    def cancel(self) -> None:
        self.cancel_called = True


class _ModernCall:
    """One modern request served directly (no session, no endpoint): the Outbound its handler talks
    through (what it sends goes to its own response, through a channel made at its first message:
    most requests send none), the owner of a listen subscription it opens, and the watcher that
    cancels it when the client closes the response.

    Made of slots and bound methods, not closures: a request leaves no reference cycle behind
    (``stop`` breaks the one with its channel), so it is freed at once, not by the cyclic GC."""

    __slots__ = (
        "__weakref__",
        "channel",
        "json_only",
        "keepalive",
        "listen",
        "loop",
        "receive",
        "scope",
        "send",
        "since",
        "watcher",
    )

    def __init__(
        self,
        send: Send,
        json_only: bool,
        receive: Receive,
        scope: anyio.CancelScope | _Unscoped,
        listen: bool,
        keepalive: float,
    ) -> None:
        self.send = send
        self.json_only = json_only  # the app's json_response
        self.receive = receive
        self.scope = scope
        self.listen = listen  # subscriptions/listen: SSE always, kept alive with comment lines
        self.keepalive = keepalive
        self.channel: _PostChannel | None = None  # made by the first message (see open_channel)
        self.watcher: asyncio.Task[None] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None  # asyncio: the loop serving it
        self.since = 0.0  # asyncio: when it started (loop time)

    def open_channel(self) -> _PostChannel:
        """The request's channel: what it sends before its answer (the response turns SSE then,
        unless the app answers JSON only and this is no listen request)."""
        channel = self.channel
        if channel is None:
            channel = self.channel = _PostChannel(self.json_only, 0, None, self.send, [])
            channel.force_sse = self.listen
            if self.loop is not None:  # asyncio: watch from the moment the response is a stream
                channel.on_open = self.start_watching
        return channel

    async def notify(self, method: str, params: Any = None) -> None:
        await self.open_channel().send(codec.encode_notification(method, params))

    async def request(self, method: str, params: Any = None, *, timeout: float | None = None) -> Any:
        # a Context never gets here (a modern request's asks are multi round-trip); a raw caller does
        raise CapabilityError(f"a modern request sends no requests to the client; {method} cannot be sent")

    def start_watching(self) -> None:
        """Watch the connection from now on (asyncio: a plain task, cheaper than a task group)."""
        if self.watcher is None and self.loop is not None:
            self.watcher = self.loop.create_task(self.watch())

    async def watch(self) -> None:
        """Cancel the request when the client closes the response (which, unlike in the handshake
        era, abandons it); keep a listen stream alive meanwhile."""
        while True:
            with anyio.move_on_after(self.keepalive if self.listen else math.inf):
                while (await self.receive())["type"] != "http.disconnect":
                    pass
                self.scope.cancel()
                return
            stream = self.channel.stream if self.channel is not None else None
            if stream is not None:
                await stream.write_raw(KEEPALIVE)

    def stop(self) -> None:
        """The request is over: stop watching, and drop the reference cycle with the channel."""
        self.loop = None
        if self.watcher is not None:
            self.watcher.cancel()
            self.watcher = None
        if self.channel is not None:
            self.channel.on_open = None


def _repeated(revision: Revision, repeated: str | None) -> str | None:
    """A routing header sent twice, when the revision has header rules (readers taking the first or
    the last copy would disagree)."""
    if repeated is None or not (revision.has_protocol_version_header or revision.has_routing_headers):
        return None
    return f"Header mismatch: {repeated} appears more than once"


def _mismatch_code(revision: Revision) -> int:
    """The code of a header mismatch in this revision (2026-07-28: -32020)."""
    code = revision.header_mismatch_code
    return INVALID_REQUEST if code is None else code


class StatelessHttp:
    """The stateless-revision POST part of :class:`~jsonrpc_mcp.http.app.McpHttpApp`.

    It holds only what it reads: the server (its router decides the rules a request answers to,
    and serves it), the app's lifecycle (a listen request opened while shutting down is ended at
    once), ``json_response`` and ``keepalive``; and the requests it is serving.
    """

    def __init__(self, server: Server, life: Lifecycle, *, json_response: bool, keepalive: float) -> None:
        self.server = server
        self.life = life
        self.json_response = json_response
        self.keepalive = keepalive
        self.posts: set[_ModernCall] = set()  # modern requests being served
        self._sweeping: asyncio.AbstractEventLoop | None = None  # where _sweep is scheduled
        self._scope_type: type[anyio.CancelScope] | None = None  # anyio's CancelScope class on asyncio

    def end_subscriptions(self) -> None:
        """End the subscriptions/listen requests served here gracefully (each gets its result)."""
        for call in self.posts:
            self.server.subscriptions.end_all(owner=call)

    async def post(
        self, scope: Scope, receive: Receive, send: Send, message: Incoming | list[Incoming]
    ) -> None:
        """A POST the router decided is stateless (decoded by the app): its headers checked against
        its body, then served on its own; answered as JSON with its status, or as the SSE stream its
        handler opened."""
        if type(message) is not Request:
            await self._not_a_request(scope, send, message)
            return
        request: Request = message
        router = self.server.router
        envelope = read_envelope(request)  # (the one reading of the envelope, shared with stdio)
        if isinstance(envelope, str):
            await _reject(send, 400, request.id, InvalidParams(envelope))
            return
        version = envelope[0]
        # the header rules of the revision the body names (of the latest served, if it names another)
        revision = router.stateless_rules(version)
        assert revision is not None
        tool = None
        params = request.params
        if revision.has_routing_headers and request.method == TOOLS_CALL and type(params) is dict:
            name = params.get("name")
            if type(name) is str:  # for its x-mcp-header parameters; handed on: looked up once
                tool = self.server.tools.get(name)
        raw_headers, index = scope["headers"], _headers(scope)
        if not routing_agrees(raw_headers, index, request, version, tool, revision):  # (the common case)
            headers, repeated = mcp_headers(raw_headers, index)
            problem = _repeated(revision, repeated) or check_request(
                request, version, headers, tool, revision
            )
            if problem is not None:
                await _reject(send, 400, request.id, JsonRpcError(problem, code=_mismatch_code(revision)))
                return
        listen = request.method == LISTEN
        if listen and not _accepts(scope, EVENT_STREAM):
            await _error(
                send,
                406,
                INVALID_REQUEST,
                "Not Acceptable: subscriptions/listen answers with text/event-stream",
            )
            return
        # Served directly: no session, no endpoint, one ServerSession made from its envelope.
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        cancel: anyio.CancelScope | _Unscoped
        if loop is not None and self.server.router.cannot_wait(tool):
            cancel = _Unscoped()  # (nothing can cancel it before it is answered)
        elif loop is None or self._scope_type is None:
            cancel = anyio.CancelScope()
        else:  # anyio.CancelScope() looks the backend up each time: on asyncio, make its class directly
            cancel = self._scope_type()
        call = _ModernCall(send, self.json_response, receive, cancel, listen, self.keepalive)
        answer: bytes | None
        if isinstance(cancel, _Unscoped):
            # It cannot wait (see _Unscoped): no sweep needs to find it (it is answered before the
            # next one); its watcher starts if its response becomes a stream (its own log records).
            call.loop = loop
            try:
                answer, status = await self._answer(request, call, None, envelope, tool)
            finally:
                call.stop()
            if cancel.cancel_called:
                answer, status = None, 202
        else:
            self.posts.add(call)
            if listen and self.life.shutting_down.is_set():
                self.server.subscriptions.end_all(owner=call)  # answered at once
            try:
                answer, status = await self._watched(request, call, cancel, loop, envelope, tool)
            finally:
                self.posts.discard(call)
        channel = call.channel
        if channel is not None and channel.stream is not None:
            await channel.finish(answer)
        elif answer is None:  # cancelled: the client is gone, and nobody reads this
            await _respond(send, 202)
        else:
            await _respond_json(send, status, answer)

    async def _watched(
        self,
        request: Request,
        call: _ModernCall,
        cancel: anyio.CancelScope,
        loop: asyncio.AbstractEventLoop | None,
        envelope: Envelope,
        tool: Tool | None,
    ) -> tuple[bytes | None, int]:
        """Run the request under its cancel scope, watched for the client closing its response."""
        if loop is None:  # (trio) the watcher is a task of a task group
            async with anyio.create_task_group() as tg:
                tg.start_soon(call.watch)
                answer, status = await self._run(request, call, cancel, envelope, tool)
                tg.cancel_scope.cancel()
            return answer, status
        self._scope_type = type(cancel)
        # Closing the response cancels the request, but most requests are answered before a client
        # could close anything: the watcher starts once the request has run for _WATCH_AFTER (one
        # sweep per interval finds those, rather than a timer per request), or at once when the
        # response becomes a stream.
        call.loop = loop
        call.since = loop.time()
        if self._sweeping is not loop:
            self._sweeping = loop
            loop.call_later(_WATCH_AFTER, self._sweep, loop)
        try:
            return await self._run(request, call, cancel, envelope, tool)
        finally:
            call.stop()

    async def _not_a_request(self, scope: Scope, send: Send, message: Incoming | list[Incoming]) -> None:
        """A batch or a response (refused: 400), or a notification (202 once its headers agree)."""
        if type(message) is list:
            await _error(
                send,
                400,
                INVALID_REQUEST,
                "Invalid Request: the stateless protocol revisions have no batches",
            )
            return
        if type(message) is not Notification:
            await _error(
                send,
                400,
                INVALID_REQUEST,
                "Invalid Request: a client of the stateless protocol revisions sends no responses",
            )
            return
        headers, repeated = mcp_headers(scope["headers"], _headers(scope))
        rules = (
            self.server.router.stateless_rules()
        )  # (a notification names no revision the headers answer to)
        assert rules is not None
        problem = _repeated(rules, repeated) or check_notification(message, headers, rules)
        if problem is not None:
            await _reject(send, 400, None, JsonRpcError(problem, code=_mismatch_code(rules)))
        else:
            await _respond(send, 202)  # no client notification means anything here (no sessions)

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start watching the modern requests served on ``loop`` for _WATCH_AFTER or longer; again
        after _WATCH_AFTER while any is in flight."""
        if self._sweeping is not loop:
            return
        due = loop.time() - _WATCH_AFTER
        waiting = False
        for call in self.posts:
            if call.loop is loop and call.watcher is None:
                if call.since <= due:
                    call.start_watching()
                else:
                    waiting = True
        if waiting:
            loop.call_later(_WATCH_AFTER, self._sweep, loop)
        else:
            self._sweeping = None  # the next modern request schedules a sweep

    def _error_answer(self, request: Request, exc: Exception, version: str) -> tuple[bytes, int]:
        """The encoded error answer and the HTTP status the revision assigns to its code (its latest
        stateless revision's, when the request named one the server does not serve)."""
        error = exc if isinstance(exc, JsonRpcError) else wire_error(exc, None, request.method)
        revision = self.server.router.stateless_rules(version)
        status = 200 if revision is None else revision.status_for(error.code)
        return codec.encode_error(request.id, error), status

    async def _run(
        self,
        request: Request,
        call: _ModernCall,
        scope: anyio.CancelScope,
        envelope: Envelope,
        tool: Tool | None,
    ) -> tuple[bytes | None, int]:
        """Run the request under its cancel scope: its encoded answer and HTTP status (see
        :meth:`_answer`); no answer when it was cancelled. ``envelope``: the protocol version, client
        capabilities and ``_meta`` :meth:`post` checked; ``tool``: the tool a ``tools/call``
        names, if :meth:`post` looked it up."""
        answer: bytes | None = None
        status = 202
        with scope:
            answer, status = await self._answer(request, call, scope, envelope, tool)
        if scope.cancel_called:
            return None, 202
        return answer, status

    async def _answer(
        self,
        request: Request,
        call: _ModernCall,
        scope: anyio.CancelScope | None,
        envelope: Envelope,
        tool: Tool | None,
    ) -> tuple[bytes, int]:
        """Serve the request: its encoded answer and HTTP status (an error gets the status the
        revision assigns to its code)."""
        try:
            rc = RequestContext(request, call, scope)
            # the server's one dispatch point: its middleware, then the stateless dispatcher
            result = await self.server.router.serve_stateless(request, rc, call, "http", envelope, tool)
        except Exception as exc:  # (no local may keep it: its traceback holds this frame)
            return self._error_answer(request, exc, envelope[0])
        return codec.encode_answer(request, result), 200
