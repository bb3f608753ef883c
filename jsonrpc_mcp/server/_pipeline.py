"""The request pipeline: one dispatch point and one ordered middleware chain for every request.

Every request a :class:`Server` serves, whatever carried it (stdio, the in-memory pair, a
Streamable HTTP session, a 2026-07-28 POST, the legacy HTTP+SSE transport) and whichever era it
speaks, passes through :meth:`Router.handle <jsonrpc_mcp.server._router.Router.handle>`, which
runs the server's middleware around the era's dispatcher. A middleware is an async callable::

    async def timed(call: Call, call_next: CallNext) -> Any:
        started = time.perf_counter()
        try:
            return await call_next(call)  # the result: read it, change it, or return another
        finally:
            log.info("%s took %.1f ms", call.method, (time.perf_counter() - started) * 1000)

It may change ``call.params`` before calling on, change or replace the result, raise an error of
its own, or catch one (what it lets escape becomes the wire error or tool result the revision
prescribes, see :mod:`._boundary`). The first middleware added is the outermost. With no
middleware the chain costs nothing: the dispatcher is called directly.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ..http._auth import AccessToken
    from ..jsonrpc.endpoint import RequestContext
    from ..revisions import Revision
    from ._session import ServerSession

__all__ = ["Call", "CallNext", "Middleware", "chain", "current_access_token", "current_http_headers"]

Era = Literal["handshake", "stateless"]

# The headers of the HTTP request whose messages are being served (ASGI's raw pairs), set by the HTTP
# app for each request; None where no HTTP request carried the call (stdio, in memory). Tasks the
# request starts inherit it, so a session's handler sees the headers of the POST that carried it.
current_http_headers: ContextVar[list[tuple[bytes, bytes]] | None] = ContextVar(
    "jsonrpc_mcp_http_headers", default=None
)
# The bearer token the HTTP app's verifier accepted for that request (an AccessToken), set and
# inherited the same way; None without auth, or where no HTTP request carried the call.
current_access_token: ContextVar[AccessToken | None] = ContextVar("jsonrpc_mcp_access_token", default=None)


class Call:
    """One request on its way through the middleware chain.

    ``method`` and ``params`` are the request's (change ``params`` to change what the handler
    sees); ``request_id`` its JSON-RPC id; ``era`` "handshake" or "stateless"; ``revision`` the
    revision in force (None before ``initialize``, or when a stateless request names a revision
    the server does not serve: the dispatcher then answers with the error); ``transport`` what
    carried it ("stdio", "memory", "http", "sse", or "stream" for any other message stream);
    ``session`` the handshake session (None for a stateless request); ``state`` a dict for
    middleware to share values along the chain.
    """

    __slots__ = (
        "_outbound",
        "_tool",
        "context",
        "era",
        "method",
        "params",
        "request_id",
        "revision",
        "session",
        "state",
        "transport",
    )

    def __init__(
        self,
        method: str,
        params: dict[str, Any],
        request_id: Any,
        era: Era,
        revision: Revision | None,
        transport: str,
        session: ServerSession | None,
        context: RequestContext,
    ) -> None:
        self.method = method
        self.params = params
        self.request_id = request_id
        self.era = era
        self.revision = revision
        self.transport = transport
        self.session = session
        self.context = context
        self.state: dict[str, Any] = {}
        self._outbound: Any = None  # what a stateless request's session talks to the client through
        self._tool: Any = None  # the tool a stateless tools/call names, when the transport found it

    def __repr__(self) -> str:
        return f"Call({self.method!r}, id={self.request_id!r}, era={self.era}, transport={self.transport})"

    @property
    def http_headers(self) -> dict[str, str]:
        """The headers of the HTTP request that carried this call (lower-case names; repeated ones
        joined by ", "); empty when no HTTP request did."""
        raw = current_http_headers.get()
        headers: dict[str, str] = {}
        for name, value in raw or ():
            key, text = name.decode("latin-1").lower(), value.decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        return headers

    @property
    def access_token(self) -> AccessToken | None:
        """The bearer token the server's verifier accepted for the HTTP request that carried this
        call (``client_id``, ``scopes``, ``claims``); None when the server checks no tokens, or no
        HTTP request carried the call (stdio, in memory)."""
        return current_access_token.get()


CallNext = Callable[[Call], Awaitable[Any]]
Middleware = Callable[[Call, CallNext], Awaitable[Any]]


def chain(middleware: tuple[Middleware, ...], inner: CallNext) -> CallNext:
    """``inner`` wrapped in ``middleware``, the first one outermost."""
    call_next = inner
    for layer in reversed(middleware):
        call_next = _link(layer, call_next)
    return call_next


def _link(layer: Middleware, call_next: CallNext) -> CallNext:
    async def step(call: Call) -> Any:
        return await layer(call, call_next)

    return step
