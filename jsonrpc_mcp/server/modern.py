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
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..jsonrpc.endpoint import Outbound, RequestContext
from ..jsonrpc.errors import InvalidParams, JsonRpcError, MethodNotFound
from ..jsonrpc.messages import Request
from ..revisions import Revision
from .clientlog import LEVELS, level_index

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


class MissingClientCapability(JsonRpcError):
    """-32021: serving the request needs a capability the client did not declare."""

    code = -32021

    def __init__(self, message: str, required: dict[str, Any]) -> None:
        super().__init__(message, {"requiredCapabilities": required})


def is_modern(request: Request) -> bool:
    """Whether the request speaks a stateless revision (its envelope names a protocol version)."""
    params = request.params
    if type(params) is dict:
        meta = params.get("_meta")
        if type(meta) is dict and PROTOCOL_VERSION in meta:
            return True
    return request.method in MODERN_ONLY


def _envelope(request: Request, server: Server) -> tuple[Revision, dict[str, Any], dict[str, Any]]:
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
    revision = server.modern_revision(version)
    if revision is None:
        supported = [r.version for r in server.revisions if not r.has_handshake]
        raise UnsupportedProtocolVersion(
            f"Unsupported protocol version {version!r}", {"supported": supported, "requested": version}
        )
    return revision, capabilities, meta


async def serve_modern(
    server: Server, request: Request, rc: RequestContext, outbound: Outbound | None
) -> Any:
    """Serve one modern request from its envelope alone."""
    from .session import ServerSession, State, dispatch

    revision, capabilities, meta = _envelope(request, server)
    method = request.method
    if method in REMOVED:
        raise MethodNotFound(f"Method not found: {method} (not part of protocol revision {revision.version})")
    session = ServerSession(server, outbound)
    session.revision = revision
    session.state = State.READY
    session.client_capabilities = capabilities
    info = meta.get(CLIENT_INFO)
    session.client_info = info if type(info) is dict else {}
    session.capabilities = server.capabilities(revision)
    level = meta.get(LOG_LEVEL)
    if level is None:
        session.log_threshold = _NO_LOGS  # only a request that asks for logs gets them
    elif isinstance(level, str) and level in LEVELS:
        session.log_threshold = level_index(level)
    else:
        raise InvalidParams(f"Invalid params: unknown log level {level!r}; use one of {', '.join(LEVELS)}")
    result = await dispatch(session, request, rc)
    return finish(server, revision, method, result)


def finish(server: Server, revision: Revision, method: str, result: Any) -> Any:
    """Add what every modern result carries: ``resultType``, server info, caching hints."""
    if type(result) is not dict:
        return result
    out = dict(result)
    kind = out.setdefault("resultType", "complete")
    meta = dict(out["_meta"]) if type(out.get("_meta")) is dict else {}
    meta[SERVER_INFO] = server.server_info(revision)
    out["_meta"] = meta
    if kind == "complete" and method in CACHEABLE:
        out.setdefault("ttlMs", server.cache_ttl_ms)
        out.setdefault("cacheScope", server.cache_scope)
    return out
