"""The MCP methods: one handler per request method, and the dispatch that finds them.

The handlers are era-agnostic: they read the revision, capabilities and client state from the
session they are given (a handshake session, or the throwaway session a stateless request is served
by) and apply the revision's rules from its data. Which requests reach :func:`dispatch` at all is
decided before it: by the lifecycle table (:mod:`._handshake`) or the envelope (:mod:`._stateless`).
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from .. import wire
from ..jsonrpc.endpoint import RequestContext
from ..jsonrpc.errors import InvalidParams, JsonRpcError, MethodNotFound
from ..jsonrpc.messages import Request
from ..revisions import Revision, negotiate
from ._boundary import InvalidArguments, to_wire
from ._clientlog import LEVELS, level_index
from ._context import Context, Deferred, current_context
from ._extensions import client_extensions, missing_extension
from ._subscriptions import listen

if TYPE_CHECKING:
    from ._registry import Tool
    from ._session import ServerSession

__all__ = [
    "CAPABILITY_NEEDED",
    "decode_cursor",
    "dispatch",
    "encode_cursor",
    "in_context",
    "page",
    "require_method",
]

logger = logging.getLogger("jsonrpc_mcp.server")

Handler = Callable[["ServerSession", dict[str, Any], RequestContext], Awaitable[Any]]
T = TypeVar("T")


def _params(request: Request) -> dict[str, Any]:
    params = request.params
    if params is None:
        return {}
    if type(params) is not dict:
        raise InvalidParams("Invalid params: MCP request params must be an object")
    return params


def _required_string(params: dict[str, Any], key: str, method: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise InvalidParams(f"Invalid params: {method} needs a string {key!r}")
    return value


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode("ascii")


def decode_cursor(cursor: Any) -> int:
    """The offset a cursor stands for; -32602 for anything we did not issue."""
    if cursor is None:
        return 0
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
        if not text.startswith("o:"):
            raise ValueError
        offset = int(text[2:])
        if offset < 0:
            raise ValueError
    except (ValueError, AttributeError, UnicodeError):
        raise InvalidParams(f"Invalid params: invalid cursor {cursor!r}") from None
    return offset


def page(session: ServerSession, kind: str, params: dict[str, Any], key: str) -> dict[str, Any]:
    """One page of a registry's wire form (``nextCursor`` when more follow)."""
    revision = session.revision
    assert revision is not None
    items = session.server.wire_list(kind, revision)
    offset = decode_cursor(params.get("cursor"))
    if offset > len(items):
        raise InvalidParams(f"Invalid params: invalid cursor {params.get('cursor')!r}")
    size = session.server.page_size
    result: dict[str, Any] = {key: items[offset : offset + size]}
    if offset + size < len(items):
        result["nextCursor"] = encode_cursor(offset + size)
    return result


def require_method(revision: Revision, method: str) -> None:
    """-32601 unless the revision has the method."""
    if method not in revision.methods:
        raise MethodNotFound(f"Method not found: {method} (not part of protocol revision {revision.version})")


def dispatch(
    session: ServerSession, request: Request, context: RequestContext, tool: Tool | None = None
) -> Awaitable[Any]:
    """Serve a request the lifecycle or the envelope allows (await the result): find its handler,
    check that the revision has the method and the session the capability, run it. ``tool``: the
    tool a ``tools/call`` names, when the caller already looked it up (and found it). A plain
    function handing on the handler's coroutine (what it refuses, it raises at once): one
    coroutine layer fewer per request."""
    method = request.method
    handler = _METHODS.get(method)
    if handler is None:
        return _extension_method(session, request, context)
    revision = session.revision
    if revision is not None and method not in revision.methods:
        require_method(revision, method)  # (raises)
    capability = CAPABILITY_NEEDED.get(method)
    if capability is not None and not session.has_feature(capability):
        raise MethodNotFound(f"Method not found: {method} (the server has no {capability!r} capability)")
    if tool is not None:  # (this server's own: it wins over a mounted server's of the same name)
        return _tools_call(session, _params(request), context, tool)
    composition = session.server._composition
    if composition is not None:  # servers mounted into this one (see ._mount)
        return composition.dispatch(session, method, _params(request), context, handler)
    return handler(session, _params(request), context)


async def _extension_method(session: ServerSession, request: Request, context: RequestContext) -> Any:
    """Serve a method of one of the server's extensions (SEP-2133): -32601 where the extension is
    not offered (not added, or not in this era), -32021 when the client did not declare it."""
    method = request.method
    found = session.server.extension_methods.get(method)
    revision = session.revision
    if found is None or revision is None or not found[0].serves(revision):
        raise MethodNotFound(f"Method not found: {method}")
    extension, handler = found
    if extension.id not in client_extensions(session.client_capabilities):
        raise missing_extension(extension.id, method)
    params = _params(request)
    return await in_context(session, context, lambda ctx: handler(ctx, params))


# -- method handlers ------------------------------------------------------------------------------
async def _initialize(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    requested = params.get("protocolVersion")
    if not isinstance(requested, str):
        raise InvalidParams("Invalid params: initialize needs a string 'protocolVersion'")
    capabilities = params.get("capabilities", {})
    client_info = params.get("clientInfo", {})
    if not isinstance(capabilities, dict) or not isinstance(client_info, dict):
        raise InvalidParams("Invalid params: 'capabilities' and 'clientInfo' must be objects")
    server = session.server
    revision = negotiate(requested, server.revisions)
    session.revision = revision
    session.client_capabilities = capabilities
    session.client_info = client_info
    session.capabilities = server.capabilities(revision)
    if revision.version != requested:
        logger.info("client asked for %r; answering with %s", requested, revision.version)
    result: dict[str, Any] = {
        "protocolVersion": revision.version,
        "capabilities": session.capabilities,
        "serverInfo": server.server_info(revision),
    }
    if server.instructions:
        result["instructions"] = server.instructions
    return result


async def _ping(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    return {}


async def _discover(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    server = session.server
    result: dict[str, Any] = {
        "supportedVersions": [r.version for r in reversed(server.revisions) if not r.has_handshake],
        "capabilities": session.capabilities,
    }
    if server.instructions:
        result["instructions"] = server.instructions
    return result


async def _tools_list(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    return page(session, "tools", params, "tools")


async def in_context(
    session: ServerSession, rc: RequestContext, run: Callable[[Any], Awaitable[T]], *, deferred: bool = False
) -> T:
    """Run a handler with its Context: what it queued is sent before the answer, nothing after it.
    ``deferred``: the handler takes no Context (``run`` gets None); one is made only if
    :func:`get_context` asks for it during the run."""
    slot: Context | Deferred = Deferred(session, rc) if deferred else Context(session, rc)
    token = current_context.set(slot)
    try:
        result = await run(None if deferred else slot)
    except BaseException as exc:
        ctx = slot if isinstance(slot, Context) else slot.made
        if ctx is None:
            pass
        elif rc.cancelled or isinstance(exc, anyio.get_cancelled_exc_class()):
            ctx._abandon()
        else:
            try:
                await ctx._finish()
            except Exception:
                logger.debug("could not flush the %s request's messages", rc.method, exc_info=True)
        raise
    finally:
        current_context.reset(token)
    ctx = slot if isinstance(slot, Context) else slot.made
    if ctx is not None:
        await ctx._finish()
    return result


async def _tools_call(
    session: ServerSession, params: dict[str, Any], rc: RequestContext, tool: Tool | None = None
) -> Any:
    """``tools/call``; ``tool``: the tool ``params`` names, when the caller already found it."""
    if tool is None:
        name = _required_string(params, "name", wire.TOOLS_CALL)
        tool = session.server.tools.get(name)
        if tool is None:
            raise InvalidParams(f"Invalid params: unknown tool {name!r}", {"name": name})
    else:
        name = tool.name
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    elif type(arguments) is not dict:
        raise InvalidParams("Invalid params: 'arguments' must be an object")
    revision = session.revision
    assert revision is not None
    errors = tool.check_arguments(arguments)
    if errors:  # the model's mistake: an isError result from 2025-11-25 on, -32602 before
        outcome = to_wire(InvalidArguments(name, errors), revision, wire.TOOLS_CALL, tool=name)
        if isinstance(outcome, JsonRpcError):
            raise outcome
        return outcome
    server = session.server
    # a tool that takes no Context gets one only if it asks (get_context()): most never do
    deferred = tool.handler.context_param is None
    return await in_context(
        session, rc, lambda ctx: server.call_tool(tool, arguments, ctx, revision), deferred=deferred
    )


async def _resources_list(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    return page(session, "resources", params, "resources")


async def _templates_list(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    return page(session, "resource templates", params, "resourceTemplates")


async def _resources_read(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    uri = _required_string(params, "uri", "resources/read")
    server = session.server
    contents = await in_context(session, rc, lambda ctx: server.read_resource(uri, ctx))
    return {"contents": contents}  # (a ResourceNotFound gets the revision's code at the boundary)


async def _prompts_list(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    return page(session, "prompts", params, "prompts")


async def _prompts_get(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    name = _required_string(params, "name", "prompts/get")
    prompt = session.server.prompts.get(name)
    if prompt is None:
        raise InvalidParams(f"Invalid params: unknown prompt {name!r}", {"name": name})
    arguments = prompt.check_arguments(params.get("arguments"))
    return await in_context(session, rc, lambda ctx: prompt.render(arguments, ctx))


async def _set_level(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    level = params.get("level")
    if not isinstance(level, str) or level not in LEVELS:
        raise InvalidParams(
            f"Invalid params: unknown logging level {level!r}; use one of {', '.join(LEVELS)}",
            {"level": level},
        )
    session.log_threshold = level_index(level)
    return {}


async def _subscribe(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    uri = _required_string(params, "uri", "resources/subscribe")
    session.subscribe(uri)
    return {}


async def _unsubscribe(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    uri = _required_string(params, "uri", "resources/unsubscribe")
    session.subscriptions = session.subscriptions - {uri}
    return {}


async def _complete(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    server = session.server
    revision = session.revision
    assert revision is not None
    return await in_context(session, rc, lambda ctx: server.complete(params, ctx, revision))


_METHODS: dict[str, Handler] = {
    wire.INITIALIZE: _initialize,
    wire.PING: _ping,
    wire.DISCOVER: _discover,
    wire.TOOLS_LIST: _tools_list,
    wire.TOOLS_CALL: _tools_call,
    wire.RESOURCES_LIST: _resources_list,
    wire.RESOURCES_TEMPLATES_LIST: _templates_list,
    wire.RESOURCES_READ: _resources_read,
    wire.PROMPTS_LIST: _prompts_list,
    wire.PROMPTS_GET: _prompts_get,
    wire.SET_LEVEL: _set_level,
    wire.RESOURCES_SUBSCRIBE: _subscribe,
    wire.RESOURCES_UNSUBSCRIBE: _unsubscribe,
    wire.COMPLETE: _complete,
    wire.LISTEN: listen,
}

# method -> the server capability it needs (a dotted path: "resources.subscribe")
CAPABILITY_NEEDED: dict[str, str] = {
    wire.TOOLS_LIST: "tools",
    wire.TOOLS_CALL: "tools",
    wire.RESOURCES_LIST: "resources",
    wire.RESOURCES_TEMPLATES_LIST: "resources",
    wire.RESOURCES_READ: "resources",
    wire.PROMPTS_LIST: "prompts",
    wire.PROMPTS_GET: "prompts",
    wire.SET_LEVEL: "logging",
    wire.RESOURCES_SUBSCRIBE: "resources.subscribe",
    wire.RESOURCES_UNSUBSCRIBE: "resources.subscribe",
    wire.COMPLETE: "completions",
}
