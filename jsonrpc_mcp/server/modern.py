"""The stateless revisions (2026-07-28 on): every request carries its own envelope.

Theory of operation
-------------------
There is no handshake. A request is *modern* when its ``params._meta`` names a protocol version (or
its method exists only in the modern revisions); it is then served on its own, whatever happened
before on the connection: the envelope is checked (missing fields -32602, an unsupported version
-32022), and the request is handed to a throwaway :class:`ServerSession` set up from the envelope
alone (revision, client capabilities, client info, log level) and already in the ready state. So
every handler, and the per-revision rules they apply, work unchanged; nothing is inferred from
earlier requests. The result is then finished the modern way: ``resultType``, the server's info in
``_meta``, and caching hints on the cacheable results.

``tools/call``, ``prompts/get`` and ``resources/read`` may ask the client for input (elicitation,
sampling, roots) through their Context: a round whose handler asked something the client has not
answered yet ends with an ``InputRequiredResult`` (see :mod:`jsonrpc_mcp.server.mrtr`), which
carries no caching hints; a complete result of a round that carried ``inputResponses`` or
``requestState`` says it must not be reused (``ttlMs`` 0, ``cacheScope`` "private"). A handler
asking for a capability the client did not declare in this request gets
:class:`MissingClientCapability` (a :class:`CapabilityError`; escaping, the request is answered
-32021 with ``data.requiredCapabilities``).
"""

from __future__ import annotations

from collections.abc import Coroutine
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..errors import CapabilityError
from ..jsonrpc.endpoint import Outbound, RequestContext
from ..jsonrpc.errors import InvalidParams, JsonRpcError, MethodNotFound
from ..jsonrpc.messages import Request
from ..revisions import Revision
from .clientlog import LEVELS, level_index
from .mrtr import MRTR_METHODS, Exchange, current_exchange, is_input_required

if TYPE_CHECKING:
    from .server import Server

__all__ = [
    "CLIENT_CAPABILITIES",
    "CLIENT_INFO",
    "LOG_LEVEL",
    "PROTOCOL_VERSION",
    "SERVER_INFO",
    "MissingClientCapability",
    "UnsupportedProtocolVersion",
    "is_modern",
    "serve_checked",
    "serve_modern",
]

PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"

MODERN_ONLY = frozenset({"server/discover", "subscriptions/listen"})
# methods the stateless revisions removed: unknown to a modern request (a handshake session keeps them)
REMOVED = frozenset(
    {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
)
CACHEABLE = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
_NO_LOGS = len(LEVELS)  # a threshold above every level: no notifications/message at all


class UnsupportedProtocolVersion(JsonRpcError):
    """-32022: the request names a revision this server does not serve."""

    code = -32022


class MissingClientCapability(CapabilityError):
    """-32021: serving the request needs a capability the client did not declare in it.

    What the Context raises in modern requests where a handshake session raises a plain
    :class:`CapabilityError`, so a handler catching ``CapabilityError`` works in both eras; let
    escape, it answers the request with -32021 and ``data.requiredCapabilities`` (e.g.
    ``{"elicitation": {}}``).
    """

    code = -32021

    def __init__(self, message: str, required: dict[str, Any]) -> None:
        JsonRpcError.__init__(self, message, {"requiredCapabilities": required}, code=-32021)
        self.required = required


def is_modern(request: Request) -> bool:
    """Whether the request speaks a stateless revision (its envelope names a protocol version)."""
    params = request.params
    if type(params) is dict:
        meta = params.get("_meta")
        if type(meta) is dict and PROTOCOL_VERSION in meta:
            return True
    return request.method in MODERN_ONLY


def _envelope(request: Request) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The envelope's protocol version, client capabilities and ``_meta`` (-32602 when missing)."""
    params = request.params
    meta = params.get("_meta") if type(params) is dict else None
    if type(meta) is not dict:
        raise InvalidParams(f"Invalid params: {request.method} needs params._meta with the request envelope")
    version = meta.get(PROTOCOL_VERSION)
    if type(version) is not str:
        raise InvalidParams(f"Invalid params: params._meta[{PROTOCOL_VERSION!r}] is required")
    capabilities = meta.get(CLIENT_CAPABILITIES)
    if type(capabilities) is not dict:
        raise InvalidParams(f"Invalid params: params._meta[{CLIENT_CAPABILITIES!r}] (an object) is required")
    return version, capabilities, meta


_session: ModuleType | None = None  # .session, which imports this module: imported on first use


def _import_session() -> ModuleType:
    global _session
    from . import session

    _session = session
    return session


def serve_modern(
    server: Server, request: Request, rc: RequestContext, outbound: Outbound | None
) -> Coroutine[Any, Any, Any]:
    """Serve one modern request from its envelope alone (await the result; a missing envelope field
    raises -32602 at once). A plain function handing on :func:`serve_checked`'s coroutine: one
    coroutine layer fewer per request."""
    version, capabilities, meta = _envelope(request)
    return serve_checked(server, request, rc, outbound, version, capabilities, meta)


async def serve_checked(
    server: Server,
    request: Request,
    rc: RequestContext,
    outbound: Outbound | None,
    version: str,
    capabilities: dict[str, Any],
    meta: dict[str, Any],
) -> Any:
    """:func:`serve_modern` of a request whose envelope the caller already read (``meta`` is its
    ``params._meta``, ``version`` a string, ``capabilities`` an object): the revision is checked
    (-32022), the request served by a throwaway ready session and its result finished."""
    revision = server.modern_revision(version)
    if revision is None:
        supported = [r.version for r in server.revisions if not r.has_handshake]
        raise UnsupportedProtocolVersion(
            f"Unsupported protocol version {version!r}", {"supported": supported, "requested": version}
        )
    method = request.method
    if method in REMOVED:
        raise MethodNotFound(f"Method not found: {method} (not part of protocol revision {revision.version})")
    level = meta.get(LOG_LEVEL)
    if level is None:
        threshold = _NO_LOGS  # only a request that asks for logs gets them
    elif isinstance(level, str) and level in LEVELS:
        threshold = level_index(level)
    else:
        raise InvalidParams(f"Invalid params: unknown log level {level!r}; use one of {', '.join(LEVELS)}")
    api = _session or _import_session()
    info = meta.get(CLIENT_INFO)
    session = api.ServerSession.ready(
        server, outbound, revision, capabilities, info if type(info) is dict else {}, threshold
    )
    params = request.params if type(request.params) is dict else {}
    if method not in MRTR_METHODS or _cannot_ask(server, method, params):
        result = await api.dispatch(session, request, rc)  # (its Context cannot ask the client anything)
        return finish(server, revision, method, result)
    exchange = Exchange.start(server.request_state, method, params)
    token = current_exchange.set(exchange)
    try:
        result = await api.dispatch(session, request, rc)
    except BaseException as exc:
        if not (exchange.pending and is_input_required(exc)):
            raise
        result = exchange.input_required_result(server.request_state)
    else:
        if exchange.pending:  # the handler swallowed InputRequired: its questions still stand
            result = exchange.input_required_result(server.request_state)
    finally:
        current_exchange.reset(token)
    return finish(server, revision, method, result, cacheable=not exchange.retried)


def _cannot_ask(server: Server, method: str, params: dict[str, Any]) -> bool:
    """A first round (no ``requestState``, no ``inputResponses``) of a call of a tool that takes no
    Context: nothing can ask the client anything, so there is no exchange to set up (one would stay
    empty and unretried: the result is the same)."""
    if method != "tools/call" or params.get("requestState") is not None:
        return False
    if params.get("inputResponses") is not None:
        return False
    name = params.get("name")
    tool = server.tools.get(name) if type(name) is str else None
    return tool is not None and tool.handler.context_param is None


def finish(server: Server, revision: Revision, method: str, result: Any, *, cacheable: bool = True) -> Any:
    """Add what every modern result carries: ``resultType``, server info, and caching hints on the
    complete results of cacheable methods (never on ``input_required`` results).

    A complete result reached through ``inputResponses``/``requestState`` (``cacheable`` False)
    depends on inputs outside any cache key: the schema still requires the hints on it (e.g.
    ``ReadResourceResult``), so it says "do not reuse": ``ttlMs`` 0, ``cacheScope`` "private".
    """
    if type(result) is not dict:
        return result
    out = dict(result)
    kind = out.setdefault("resultType", "complete")
    meta = dict(out["_meta"]) if type(out.get("_meta")) is dict else {}
    meta[SERVER_INFO] = server.server_info(revision)
    out["_meta"] = meta
    if kind == "complete" and method in CACHEABLE:
        if cacheable:
            out.setdefault("ttlMs", server.cache_ttl_ms)
            out.setdefault("cacheScope", server.cache_scope)
        else:
            out["ttlMs"] = 0
            out["cacheScope"] = "private"
    return out
