"""The request router: the one dispatch point every request of a :class:`Server` passes through.

It is the only module that knows both eras. It decides which era a message belongs to
(:meth:`Router.stateless`: the envelope in ``params._meta`` names a protocol version, or the method
exists only in the stateless revisions, or the HTTP transport's ``MCP-Protocol-Version`` header
names a stateless revision), for its own dispatch and for the HTTP app, which asks it rather than
deciding (as it asks which revision's rules a stateless message answers to,
:meth:`Router.stateless_rules`). For each request it runs the server's middleware around that
era's dispatcher (:mod:`._handshake` or :mod:`._stateless`, which do not import each other), and
turns whatever escapes into the wire error the revision prescribes (:func:`._boundary.to_wire`).
Every entry comes here: a session's endpoint (stdio, in-memory, Streamable HTTP sessions, the
legacy HTTP+SSE transport) through :meth:`ServerSession.handle_request`, and a 2026-07-28 POST
through :meth:`Router.serve_stateless`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import wire
from ..jsonrpc.endpoint import Outbound, RequestContext
from ..jsonrpc.errors import InvalidParams, JsonRpcError
from ..jsonrpc.messages import Incoming, Notification, Request
from ..revisions import Revision
from ._boundary import to_wire
from ._handshake import serve_handshake
from ._pipeline import Call, CallNext, Middleware, chain
from ._stateless import Envelope, read_envelope, serve_checked, serve_modern
from ._waits import never_waits

if TYPE_CHECKING:
    from ._registry import Tool
    from ._server import Server
    from ._session import ServerSession

__all__ = ["Router"]


def wire_error(exc: Exception, revision: Revision | None, method: str) -> JsonRpcError:
    """:func:`to_wire` of an exception outside any tool: always a JSON-RPC error."""
    error = to_wire(exc, revision, method)
    assert isinstance(error, JsonRpcError)
    return error


class Router:
    """Routes each request to its era's dispatcher through the server's middleware chain, and
    decides the era of every message (:meth:`stateless`), for the transports too."""

    __slots__ = ("_eras", "_handshake_chain", "_stateless_chain", "middleware", "server")

    def __init__(self, server: Server) -> None:
        self.server = server
        self.middleware: tuple[Middleware, ...] = ()
        self._handshake_chain: CallNext = self._handshake_inner
        self._stateless_chain: CallNext = self._stateless_inner
        self._eras: _Eras | None = None

    def add(self, middleware: Middleware) -> None:
        """Append a middleware (it runs inside those added before it)."""
        self.middleware += (middleware,)
        self._handshake_chain = chain(self.middleware, self._handshake_inner)
        self._stateless_chain = chain(self.middleware, self._stateless_inner)

    # -- the era of a message: decided here, for every transport ---------------------------------
    def _known(self) -> _Eras:
        """What the decisions read from the server's revisions, worked out once (again when the
        server's ``revisions`` is replaced)."""
        eras = self._eras
        if eras is None or eras.revisions is not self.server.revisions:
            eras = self._eras = _Eras(self.server.revisions)
        return eras

    def stateless(self, message: Incoming | list[Incoming] | None, header: Revision | None = None) -> bool:
        """Whether ``message`` is served the stateless way (2026-07-28 on): the server speaks a
        stateless revision and either the transport's header names one (``header``: the served
        revision an HTTP request's MCP-Protocol-Version names; ``message`` None for a bodiless
        GET or DELETE), or the message's envelope (``params._meta``) names a protocol version
        (whatever its value: an unsupported one is answered -32022), or it is a request whose
        method exists only in the stateless revisions. The one place the era is decided."""
        eras = self._eras
        if eras is None or eras.revisions is not self.server.revisions:
            eras = self._known()
        if not eras.stateless:
            return False
        if header is not None and not header.has_handshake:
            return True
        t = type(message)
        if t is not Request and t is not Notification:
            return False
        params = message.params  # type: ignore[union-attr]
        if type(params) is dict:
            meta = params.get("_meta")
            if type(meta) is dict and wire.PROTOCOL_VERSION in meta:
                return True
        return t is Request and message.method in eras.modern_only  # type: ignore[union-attr]

    def cannot_wait(self, tool: Tool | None) -> bool:
        """Whether serving a stateless ``tools/call`` of ``tool`` (the one it names, found by the
        transport) can never wait, so that nothing can cancel it before it is answered: no
        middleware runs, and the tool is an ``async def`` with no ``await`` in it (see
        :mod:`._waits`). The HTTP transport serves such a request without a cancel scope."""
        return tool is not None and not self.middleware and never_waits(tool.handler)

    def revision(self, version: str) -> Revision | None:
        """The revision named ``version`` if the server serves it (either era)."""
        return self._known().by_version.get(version)

    def stateless_rules(self, version: str | None = None) -> Revision | None:
        """The stateless revision whose rules apply to a stateless message naming ``version``: that
        one if served, else the latest stateless revision served (None: the server has none)."""
        eras = self._eras
        if eras is None or eras.revisions is not self.server.revisions:
            eras = self._known()
        found = eras.stateless_by_version.get(version) if version is not None else None
        return found if found is not None else eras.latest_stateless

    async def handle(self, session: ServerSession, request: Request, rc: RequestContext) -> Any:
        """Serve a request that reached a session's endpoint, in whichever era it speaks."""
        stateless = self.stateless(request)
        try:
            if not self.middleware:
                if stateless:
                    return await serve_modern(self.server, request, rc, session.outbound, session.transport)
                return await serve_handshake(session, request, rc)
            if stateless:
                return await self._stateless_call(request, rc, session.outbound, session.transport, None)
            call = Call(
                request.method, _given(request), request.id, "handshake", session.revision, session.transport,
                session, rc,
            )  # fmt: skip
            return await self._handshake_chain(call)
        except Exception as exc:
            revision = self._stateless_revision(request) if stateless else session.revision
            raise wire_error(exc, revision, request.method) from None

    async def serve_stateless(
        self,
        request: Request,
        rc: RequestContext,
        outbound: Outbound | None,
        transport: str,
        envelope: Envelope,
        tool: Tool | None = None,
    ) -> Any:
        """Serve a stateless request whose envelope the transport already read (an HTTP POST);
        ``tool``: the tool a ``tools/call`` names, when the transport already looked it up (for
        its header checks), so that it is looked up once."""
        try:
            if not self.middleware:
                version, capabilities, meta = envelope  # (positional: the hot path's call)
                return await serve_checked(
                    self.server, request, rc, outbound, version, capabilities, meta, tool, transport
                )
            return await self._stateless_call(request, rc, outbound, transport, envelope, tool)
        except Exception as exc:
            raise wire_error(exc, self.server.modern_revision(envelope[0]), request.method) from None

    def _stateless_call(
        self,
        request: Request,
        rc: RequestContext,
        outbound: Outbound | None,
        transport: str,
        envelope: Any,
        tool: Tool | None = None,
    ) -> Any:
        if envelope is None:
            envelope = read_envelope(request)
        revision = self.server.modern_revision(envelope[0]) if type(envelope) is tuple else None
        call = Call(request.method, _given(request), request.id, "stateless", revision, transport, None, rc)
        call._outbound = outbound
        call._tool = tool
        return self._stateless_chain(call)

    def _stateless_revision(self, request: Request) -> Revision | None:
        envelope = read_envelope(request)
        return self.server.modern_revision(envelope[0]) if type(envelope) is tuple else None

    # -- the innermost links: the era dispatchers, with what the middleware made of the request --
    async def _handshake_inner(self, call: Call) -> Any:
        session = call.session
        assert session is not None
        return await serve_handshake(session, _request_of(call), call.context)

    async def _stateless_inner(self, call: Call) -> Any:
        request = _request_of(call)
        envelope = read_envelope(request)
        if isinstance(envelope, str):
            raise InvalidParams(envelope)
        # (the tool found before the middleware ran, if any: serve_checked makes sure it is still
        # the one the request names)
        return await serve_checked(
            self.server,
            request,
            call.context,
            call._outbound,
            *envelope,
            tool=call._tool,
            transport=call.transport,
        )


class _Eras:
    """What the era decisions read from a tuple of revisions (worked out once per tuple)."""

    __slots__ = (
        "by_version",
        "latest_stateless",
        "modern_only",
        "revisions",
        "stateless",
        "stateless_by_version",
    )

    def __init__(self, revisions: tuple[Revision, ...]) -> None:
        self.revisions = revisions
        self.by_version = {r.version: r for r in revisions}
        modern = [r for r in revisions if not r.has_handshake]
        self.stateless_by_version = {r.version: r for r in reversed(modern)}  # (the first one wins)
        self.stateless = bool(modern)  # without a stateless revision, nothing is stateless
        self.latest_stateless = modern[-1] if modern else None
        # the methods that exist only in the stateless revisions
        stateless_methods = set().union(*(r.methods for r in modern))
        handshake_methods = set().union(*(r.methods for r in revisions if r.has_handshake))
        self.modern_only = frozenset(stateless_methods - handshake_methods)


def _given(request: Request) -> dict[str, Any]:
    params = request.params
    return params if type(params) is dict else {}


def _request_of(call: Call) -> Request:
    """The request as the middleware left it: the original, or a new one with its new params."""
    request = call.context.request
    params = call.params
    if params is request.params or (not params and type(request.params) is not dict):
        return request
    request = Request(request.id, call.method, params)
    call.context.request = request  # so that the handler's Context sees the same
    return request
