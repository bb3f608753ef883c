"""The request router: the one dispatch point every request of a :class:`Server` passes through.

It is the only module that knows both eras. For each request it decides which era it belongs to
(:func:`is_modern`: the envelope in ``params._meta`` names a protocol version, or the method exists
only in the stateless revisions), runs the server's middleware around that era's dispatcher
(:mod:`._handshake` or :mod:`._stateless`, which do not import each other), and turns whatever
escapes into the wire error the revision prescribes (:func:`._boundary.to_wire`). Every entry
comes here: a session's endpoint (stdio, in-memory, Streamable HTTP sessions, the legacy HTTP+SSE
transport) through :meth:`ServerSession.handle_request`, and a 2026-07-28 POST through
:meth:`Router.serve_stateless`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import wire
from ..jsonrpc.endpoint import Outbound, RequestContext
from ..jsonrpc.errors import InvalidParams, JsonRpcError
from ..jsonrpc.messages import Request
from ..revisions import Revision
from ._boundary import to_wire
from ._handshake import serve_handshake
from ._pipeline import Call, CallNext, Middleware, chain
from ._stateless import Envelope, read_envelope, serve_checked, serve_modern

if TYPE_CHECKING:
    from ._server import Server
    from ._session import ServerSession

__all__ = ["Router", "is_modern"]

_MODERN_ONLY = frozenset({wire.DISCOVER, wire.LISTEN})


def is_modern(request: Request, modern_only: frozenset[str] = _MODERN_ONLY) -> bool:
    """Whether the request speaks a stateless revision: its envelope names a protocol version, or
    its method exists only in the stateless revisions (``modern_only``)."""
    params = request.params
    if type(params) is dict:
        meta = params.get("_meta")
        if type(meta) is dict and wire.PROTOCOL_VERSION in meta:
            return True
    return request.method in modern_only


def wire_error(exc: Exception, revision: Revision | None, method: str) -> JsonRpcError:
    """:func:`to_wire` of an exception outside any tool: always a JSON-RPC error."""
    error = to_wire(exc, revision, method)
    assert isinstance(error, JsonRpcError)
    return error


class Router:
    """Routes each request to its era's dispatcher through the server's middleware chain."""

    __slots__ = ("_handshake_chain", "_modern_only", "_stateless_chain", "middleware", "server")

    def __init__(self, server: Server) -> None:
        self.server = server
        self.middleware: tuple[Middleware, ...] = ()
        self._handshake_chain: CallNext = self._handshake_inner
        self._stateless_chain: CallNext = self._stateless_inner
        self._modern_only: tuple[tuple[Revision, ...], frozenset[str]] | None = None

    def add(self, middleware: Middleware) -> None:
        """Append a middleware (it runs inside those added before it)."""
        self.middleware += (middleware,)
        self._handshake_chain = chain(self.middleware, self._handshake_inner)
        self._stateless_chain = chain(self.middleware, self._stateless_inner)

    def modern_only(self) -> frozenset[str]:
        """The methods that exist only in the server's stateless revisions."""
        revisions = self.server.revisions
        known = self._modern_only
        if known is None or known[0] is not revisions:
            stateless = set().union(*(r.methods for r in revisions if not r.has_handshake))
            handshake = set().union(*(r.methods for r in revisions if r.has_handshake))
            known = self._modern_only = (revisions, frozenset(stateless - handshake))
        return known[1]

    def is_stateless(self, request: Request) -> bool:
        """Whether the server serves this request the stateless way."""
        return self.server.speaks_modern and is_modern(request, self.modern_only())

    async def handle(self, session: ServerSession, request: Request, rc: RequestContext) -> Any:
        """Serve a request that reached a session's endpoint, in whichever era it speaks."""
        server = self.server
        known = self._modern_only  # (is_stateless, inlined: this runs for every request)
        only = known[1] if known is not None and known[0] is server.revisions else self.modern_only()
        stateless = server.speaks_modern and is_modern(request, only)
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
    ) -> Any:
        """Serve a stateless request whose envelope the transport already read (an HTTP POST)."""
        try:
            if not self.middleware:
                return await serve_checked(self.server, request, rc, outbound, *envelope, transport=transport)
            return await self._stateless_call(request, rc, outbound, transport, envelope)
        except Exception as exc:
            raise wire_error(exc, self.server.modern_revision(envelope[0]), request.method) from None

    def _stateless_call(
        self, request: Request, rc: RequestContext, outbound: Outbound | None, transport: str, envelope: Any
    ) -> Any:
        if envelope is None:
            envelope = read_envelope(request)
        revision = self.server.modern_revision(envelope[0]) if type(envelope) is tuple else None
        call = Call(request.method, _given(request), request.id, "stateless", revision, transport, None, rc)
        call._outbound = outbound
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
        if type(envelope) is str:
            raise InvalidParams(envelope)
        return await serve_checked(
            self.server, request, call.context, call._outbound, *envelope, transport=call.transport
        )


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
