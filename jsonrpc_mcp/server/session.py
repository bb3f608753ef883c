"""One client's connection to a :class:`Server`: lifecycle, negotiated revision, the MCP methods.

The session is the JSON-RPC dispatcher for its connection and knows nothing of the transport: it
talks to the client through an ``Outbound`` (the stdio endpoint, or an HTTP session's streams).

Lifecycle (handshake revisions) is a table from state to the requests allowed in it::

    NEW           -- initialize -->  INITIALIZING  -- notifications/initialized -->  READY
    NEW:          initialize, ping
    INITIALIZING: everything but initialize (clients may race their first request with "initialized")
    READY:        everything but initialize

Anything else is answered with an error; nothing a client sends can crash the session. A method
of a feature the server did not advertise (``_NEEDS``) is -32601.

Per session: the client's logging level (``logging/setLevel``; until the client sets one, every
level is sent, or ``Server.default_log_level`` and up), and the URIs it subscribed to
(``resources/subscribe``). Handlers get a :class:`Context` whose messages are all sent before the
request's answer (see :mod:`jsonrpc_mcp.server.context`).
"""

from __future__ import annotations

import base64
import enum
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.lowlevel

from .. import wire
from ..errors import CapabilityError, ResourceNotFound
from ..jsonrpc.endpoint import CancelSpec, Outbound, RequestContext
from ..jsonrpc.errors import InvalidParams, InvalidRequest, JsonRpcError, MethodNotFound
from ..jsonrpc.messages import Notification, Request
from ..revisions import Revision, negotiate
from .clientlog import LEVELS, level_index
from .context import Context
from .modern import is_modern, serve_modern
from .subscriptions import covers, listen

if TYPE_CHECKING:
    from .server import Server

__all__ = ["MCP_CANCEL", "ServerSession", "State"]

logger = logging.getLogger("jsonrpc_mcp.server")

# how MCP cancels a request: notifications/cancelled naming it by params.requestId
MCP_CANCEL = CancelSpec(wire.CANCELLED, wire.CANCEL_ID_KEY)


class State(enum.Enum):
    NEW = "new"
    INITIALIZING = "initializing"
    READY = "ready"


Handler = Callable[["ServerSession", dict[str, Any], RequestContext], Awaitable[Any]]
T = TypeVar("T")

# registry kind (Registry.kind, what Server._changed reports) -> (capability, notification)
_LIST_CHANGED = {
    "tool": ("tools", "notifications/tools/list_changed"),
    "prompt": ("prompts", "notifications/prompts/list_changed"),
    "resource": ("resources", "notifications/resources/list_changed"),
    "resource template": ("resources", "notifications/resources/list_changed"),
}


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


class ServerSession:
    """The MCP server side of one connection (a JSON-RPC :class:`Dispatcher`)."""

    def __init__(
        self,
        server: Server,
        outbound: Outbound | None = None,
        *,
        revision: Revision | None = None,
        client_capabilities: dict[str, Any] | None = None,
        client_info: dict[str, Any] | None = None,
        log_threshold: int | None = None,
    ) -> None:
        """A new session; with ``revision``, one already ready (see :meth:`ready`)."""
        self.server = server
        self.outbound = outbound
        self.state = State.NEW if revision is None else State.READY
        self.revision = revision
        self.client_info = {} if client_info is None else client_info
        self.client_capabilities = {} if client_capabilities is None else client_capabilities
        self.capabilities: dict[str, Any] = {} if revision is None else server.capabilities(revision)
        self._pending: set[str] = set()
        self._wake: anyio.Event | None = None  # made by run_notifier (a throwaway session never needs it)
        self._token: anyio.lowlevel.EventLoopToken | None = None
        self._thread = threading.get_ident()
        self.log_threshold = level_index(server.default_log_level) if log_threshold is None else log_threshold
        self.subscriptions: set[str] = set()

    @classmethod
    def ready(
        cls,
        server: Server,
        outbound: Outbound | None,
        revision: Revision,
        client_capabilities: dict[str, Any],
        client_info: dict[str, Any],
        log_threshold: int,
    ) -> ServerSession:
        """A session already in the ready state (a modern request's, made from its envelope)."""
        return cls(
            server,
            outbound,
            revision=revision,
            client_capabilities=client_capabilities,
            client_info=client_info,
            log_threshold=log_threshold,
        )

    # -- JSON-RPC dispatcher protocol -------------------------------------------------------------
    @property
    def accepts_batches(self) -> bool:
        return self.revision is not None and self.revision.allows_batch

    @property
    def omits_unknown_ids(self) -> bool:
        if self.revision is None:  # nothing negotiated: 2026-07-28 traffic never negotiates, and its
            return self.server.speaks_modern  # schema has no null id; older clients accept either
        return self.revision.error_id_omittable

    # initialize decides how everything after it is read (revision, batches): serve it in order
    ordered_methods = frozenset({"initialize"})

    async def handle_request(self, request: Request, context: RequestContext) -> Any:
        if self.server.speaks_modern and is_modern(request):  # it stands on its own envelope
            return await serve_modern(self.server, request, context, self.outbound)
        method = request.method
        # the lifecycle table first: before the handshake only initialize and ping exist
        if self.state is State.NEW:
            if method != "initialize" and method != "ping":
                raise InvalidRequest(
                    f"Invalid Request: {method!r} before initialization; send 'initialize' first"
                )
        elif method == "initialize":
            raise InvalidRequest("Invalid Request: the session is already initialized")
        return await dispatch(self, request, context)

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
        method = notification.method
        if method == "notifications/initialized":
            if self.state is State.INITIALIZING:
                self.state = State.READY
                if self._pending:
                    self._poke()  # changes made during the handshake are announced now
            else:
                logger.debug("'notifications/initialized' in state %s ignored", self.state.value)
        elif method == "notifications/cancelled":
            pass  # the endpoint already cancelled the request
        elif method == "notifications/roots/list_changed":
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

    def is_subscribed(self, uri: str) -> bool:
        """Whether ``uri`` is, or is below (``uri`` starts with it and a "/"), a subscribed URI."""
        subscriptions = self.subscriptions
        return bool(subscriptions) and covers(subscriptions, uri)  # the rule listen streams share

    # -- server -> client -------------------------------------------------------------------------
    async def notify(self, method: str, params: Any = None) -> None:
        if self.outbound is None:
            raise RuntimeError("the session is not connected")
        await self.outbound.notify(method, params)

    async def ping(self, *, timeout: float | None = 10.0) -> None:
        """Ping the client; raises RequestTimeout if it does not answer."""
        if self.outbound is None:
            raise RuntimeError("the session is not connected")
        self._need_handshake("ping the client")
        await self.outbound.request("ping", None, timeout=timeout)

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
        await self.notify("notifications/elicitation/complete", {"elicitationId": elicitation_id})

    def _poke(self) -> None:
        if self._wake is not None:
            self._wake.set()

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
            kinds, self._pending = self._pending, set()
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

    def _page(self, kind: str, params: dict[str, Any], key: str) -> dict[str, Any]:
        items = self.server.wire_list(kind, self._rev())
        offset = decode_cursor(params.get("cursor"))
        if offset > len(items):
            raise InvalidParams(f"Invalid params: invalid cursor {params.get('cursor')!r}")
        size = self.server.page_size
        page = items[offset : offset + size]
        result: dict[str, Any] = {key: page}
        if offset + size < len(items):
            result["nextCursor"] = encode_cursor(offset + size)
        return result


async def dispatch(session: ServerSession, request: Request, context: RequestContext) -> Any:
    """Serve a request the lifecycle allows: find its handler, check the capability, run it."""
    method = request.method
    handler = _METHODS.get(method)
    if handler is None:
        raise MethodNotFound(f"Method not found: {method}")
    capability = _NEEDS.get(method)
    if capability is not None and not session.has_feature(capability):
        raise MethodNotFound(f"Method not found: {method} (the server has no {capability!r} capability)")
    return await handler(session, _params(request), context)


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
    session.state = State.INITIALIZING
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
    return session._page("tools", params, "tools")


async def in_context(session: ServerSession, rc: RequestContext, run: Callable[[Context], Awaitable[T]]) -> T:
    """Run a handler with its Context: what it queued is sent before the answer, nothing after it."""
    ctx = Context(session, rc)
    try:
        result = await run(ctx)
    except BaseException as exc:
        if rc.cancelled or isinstance(exc, anyio.get_cancelled_exc_class()):
            ctx._abandon()
        else:
            try:
                await ctx._finish()
            except Exception:
                logger.debug("could not flush the %s request's messages", rc.method, exc_info=True)
        raise
    await ctx._finish()
    return result


async def _tools_call(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    name = _required_string(params, "name", "tools/call")
    tool = session.server.tools.get(name)
    if tool is None:
        raise InvalidParams(f"Invalid params: unknown tool {name!r}", {"name": name})
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    elif type(arguments) is not dict:
        raise InvalidParams("Invalid params: 'arguments' must be an object")
    revision = session._rev()
    errors = tool.check_arguments(arguments)
    if errors:
        message = f"Invalid arguments for tool {name!r}: " + "; ".join(errors)
        if revision.input_errors_as_tool_results:
            return {"content": [{"type": "text", "text": message}], "isError": True}
        raise InvalidParams(message, {"errors": errors})
    server = session.server
    if tool.handler.context_param is None:  # nothing can reach a Context: do without one
        return await server.call_tool(tool, arguments, None, revision)
    return await in_context(session, rc, lambda ctx: server.call_tool(tool, arguments, ctx, revision))


async def _resources_list(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    return session._page("resources", params, "resources")


async def _templates_list(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    return session._page("resource templates", params, "resourceTemplates")


async def _resources_read(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    uri = _required_string(params, "uri", "resources/read")
    server = session.server
    try:
        contents = await in_context(session, rc, lambda ctx: server.read_resource(uri, ctx))
    except ResourceNotFound as exc:
        raise JsonRpcError(exc.message, exc.data, code=session._rev().resource_not_found_code) from None
    return {"contents": contents}


async def _prompts_list(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    return session._page("prompts", params, "prompts")


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
    session.subscriptions.add(uri)
    return {}


async def _unsubscribe(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    uri = _required_string(params, "uri", "resources/unsubscribe")
    session.subscriptions.discard(uri)
    return {}


async def _complete(session: ServerSession, params: dict[str, Any], rc: RequestContext) -> Any:
    server = session.server
    revision = session._rev()
    return await in_context(session, rc, lambda ctx: server.complete(params, ctx, revision))


_METHODS: dict[str, Handler] = {
    "initialize": _initialize,
    "ping": _ping,
    "server/discover": _discover,
    "tools/list": _tools_list,
    "tools/call": _tools_call,
    "resources/list": _resources_list,
    "resources/templates/list": _templates_list,
    "resources/read": _resources_read,
    "prompts/list": _prompts_list,
    "prompts/get": _prompts_get,
    "logging/setLevel": _set_level,
    "resources/subscribe": _subscribe,
    "resources/unsubscribe": _unsubscribe,
    "completion/complete": _complete,
    "subscriptions/listen": listen,
}

_NEEDS: dict[str, str] = {
    "tools/list": "tools",
    "tools/call": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resources",
    "resources/read": "resources",
    "prompts/list": "prompts",
    "prompts/get": "prompts",
    "logging/setLevel": "logging",
    "resources/subscribe": "resources.subscribe",
    "resources/unsubscribe": "resources.subscribe",
    "completion/complete": "completions",
}
