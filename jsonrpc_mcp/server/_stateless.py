"""The stateless revisions (2026-07-28 on): every request carries its own envelope.

Theory of operation
-------------------
There is no handshake. A request is *stateless* (modern) when its ``params._meta`` names a protocol
version (or its method exists only in the stateless revisions; the router decides); it is then
served on its own, whatever happened before on the connection: the envelope is checked (missing
fields -32602, an unsupported version -32022), and the request is handed to a throwaway
:class:`ServerSession` set up from the envelope alone (revision, client capabilities, client info,
log level) and already in the ready state. So every handler, and the per-revision rules they
apply, work unchanged; nothing is inferred from earlier requests. The result is then finished the
modern way: ``resultType``, the server's info in ``_meta``, and caching hints on the results of the
revision's cacheable methods.

The revision's ``input_request_methods`` (``tools/call``, ``prompts/get``, ``resources/read``) may
ask the client for input (elicitation, sampling, roots) through their Context: a round whose
handler asked something the client has not answered yet ends with an ``InputRequiredResult`` (see
:mod:`jsonrpc_mcp.server._mrtr`), which carries no caching hints; a complete result of a round that
carried ``inputResponses`` or ``requestState`` says it must not be reused (``ttlMs`` 0,
``cacheScope`` "private"). A handler asking for a capability the client did not declare in this
request gets :class:`MissingClientCapability` (a :class:`CapabilityError`; escaping, the request is
answered with the revision's code, -32021, and ``data.requiredCapabilities``).
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from .. import wire
from ..errors import UnsupportedProtocolVersion
from ..jsonrpc.endpoint import Outbound, RequestContext
from ..jsonrpc.errors import InvalidParams
from ..jsonrpc.messages import Request
from ..revisions import Revision
from ._clientlog import LEVELS, level_index
from ._methods import dispatch, require_method
from ._mrtr import Exchange, current_exchange, is_input_required
from ._session import ServerSession

if TYPE_CHECKING:
    from ._registry import Tool
    from ._server import Server

__all__ = ["Envelope", "finish", "read_envelope", "serve_checked", "serve_modern"]

# (protocol version, client capabilities, the whole params._meta)
Envelope = tuple[str, dict[str, Any], dict[str, Any]]
_NO_LOGS = len(LEVELS)  # a threshold above every level: no notifications/message at all


def read_envelope(request: Request) -> Envelope | str:
    """The request's envelope, or what is wrong with it (the message of the -32602 to answer)."""
    params = request.params
    meta = params.get("_meta") if type(params) is dict else None
    if type(meta) is not dict:
        return f"Invalid params: {request.method} needs params._meta with the request envelope"
    version = meta.get(wire.PROTOCOL_VERSION)
    if type(version) is not str:
        return f"Invalid params: params._meta[{wire.PROTOCOL_VERSION!r}] is required"
    capabilities = meta.get(wire.CLIENT_CAPABILITIES)
    if type(capabilities) is not dict:
        return f"Invalid params: params._meta[{wire.CLIENT_CAPABILITIES!r}] (an object) is required"
    return version, capabilities, meta


def serve_modern(
    server: Server, request: Request, rc: RequestContext, outbound: Outbound | None, transport: str = "stream"
) -> Coroutine[Any, Any, Any]:
    """Serve one modern request from its envelope alone (await the result; a missing envelope field
    raises -32602 at once). A plain function handing on :func:`serve_checked`'s coroutine: one
    coroutine layer fewer per request."""
    envelope = read_envelope(request)
    if isinstance(envelope, str):
        raise InvalidParams(envelope)
    version, capabilities, meta = envelope
    return serve_checked(server, request, rc, outbound, version, capabilities, meta, None, transport)


def _unsupported(server: Server, version: str) -> UnsupportedProtocolVersion:
    """The error for a request naming a revision not served, with the code of the latest stateless
    revision served (2026-07-28: -32022)."""
    modern = [r for r in server.revisions if not r.has_handshake]
    code = modern[-1].unsupported_version_code if modern else None
    return UnsupportedProtocolVersion(
        f"Unsupported protocol version {version!r}",
        {"supported": [r.version for r in modern], "requested": version},
        code=code,
    )


async def serve_checked(
    server: Server,
    request: Request,
    rc: RequestContext,
    outbound: Outbound | None,
    version: str,
    capabilities: dict[str, Any],
    meta: dict[str, Any],
    tool: Tool | None = None,
    transport: str = "stream",
) -> Any:
    """:func:`serve_modern` of a request whose envelope the caller already read (``meta`` is its
    ``params._meta``, ``version`` a string, ``capabilities`` an object): the revision is checked
    (-32022), the request served by a throwaway ready session and its result finished. ``tool``:
    the tool a ``tools/call`` names, if the caller looked it up already (it is looked up once);
    ``transport`` names what carried it (for the servers mounted into this one, see :mod:`._mount`)."""
    revision = server.modern_revision(version)
    if revision is None:
        raise _unsupported(server, version)
    method = request.method
    if method not in revision.methods and method not in server.extension_methods:
        require_method(revision, method)  # (raises; an extension's method is checked by dispatch)
    level = meta.get(wire.LOG_LEVEL)
    if level is None:
        threshold = _NO_LOGS  # only a request that asks for logs gets them
    elif isinstance(level, str) and level in LEVELS:
        threshold = level_index(level)
    else:
        raise InvalidParams(f"Invalid params: unknown log level {level!r}; use one of {', '.join(LEVELS)}")
    info = meta.get(wire.CLIENT_INFO)
    session = ServerSession.ready(
        server, outbound, revision, capabilities, info if type(info) is dict else {}, threshold, transport
    )
    params = request.params if type(request.params) is dict else {}
    if method == wire.TOOLS_CALL:  # the tool, looked up once (by the caller, or here)
        name = params.get("name")
        if tool is None or tool.name != name:
            tool = server.tools.get(name) if type(name) is str else None
    if method not in revision.input_request_methods or _cannot_ask(server, tool, method, params):
        result = await dispatch(session, request, rc, tool)  # (its Context cannot ask the client anything)
        return finish(server, revision, method, result)
    exchange = Exchange.start(server.request_state, method, params)
    token = current_exchange.set(exchange)
    try:
        result = await dispatch(session, request, rc, tool)
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


def _cannot_ask(server: Server, tool: Tool | None, method: str, params: dict[str, Any]) -> bool:
    """A first round (no ``requestState``, no ``inputResponses``) of a call of a tool (``tool``: the
    one a ``tools/call`` names) that takes no Context: nothing can ask the client anything, so there
    is no exchange to set up (one would stay empty and unretried: the result is the same). Nor is
    there for a request a mounted server serves: it sets up its own (see :mod:`._mount`)."""
    if tool is None:
        composition = server._composition
        return composition is not None and composition.routes_away(method, params)
    if tool.handler.context_param is not None:
        return False
    return params.get("requestState") is None and params.get("inputResponses") is None


def finish(server: Server, revision: Revision, method: str, result: Any, *, cacheable: bool = True) -> Any:
    """Add what every modern result carries: ``resultType``, server info, and caching hints on the
    complete results of cacheable methods (never on ``input_required`` results).

    A complete result reached through ``inputResponses``/``requestState`` (``cacheable`` False)
    depends on inputs outside any cache key: the schema still requires the hints on it (e.g.
    ``ReadResourceResult``), so it says "do not reuse": ``ttlMs`` 0, ``cacheScope`` "private".
    """
    if type(result) is not dict or not revision.has_result_type:
        return result
    out = dict(result)
    kind = out.setdefault("resultType", "complete")
    meta = dict(out["_meta"]) if type(out.get("_meta")) is dict else {}
    meta[wire.SERVER_INFO] = server.server_info(revision)
    out["_meta"] = meta
    if kind == "complete" and method in revision.cacheable_methods:
        if cacheable:
            out.setdefault("ttlMs", server.cache_ttl_ms)
            out.setdefault("cacheScope", server.cache_scope)
        else:
            out["ttlMs"] = 0
            out["cacheScope"] = "private"
    return out
