"""Composition: servers mounted into another one under a namespace (:meth:`Server.mount`).

Theory of operation
-------------------
A mounted server stays a server of its own: its registries, middleware, lifespan and request
router are untouched, and the parent holds a :class:`Mount` naming it and its namespace. What the
parent's clients see is the union, renamed: tool and prompt ``name`` becomes ``{namespace}_name``,
a resource URI or template ``scheme://path`` becomes ``scheme://{namespace}/path`` (no namespace:
the names stay as they are). The parent's own definitions win over mounted ones, and a server
mounted later wins over one mounted before it.

Requests. A request reaches the parent as any request does (its transport, its router, its
middleware, the era's checks) and comes to :func:`dispatch <jsonrpc_mcp.server._methods.dispatch>`,
which hands it to the parent's :class:`Composition` when there is one. The lists are the parent's
own list and every page of each mounted server's; a request for one mounted definition
(``tools/call``, ``prompts/get``, ``resources/read``, ``completion/complete``, ``resources/subscribe``)
is renamed and served by the mounted server's own router chain (its middleware, then its
dispatcher), exactly as if a client had sent it there:

* handshake era: through a :class:`MountedSession`, the mounted server's view of the parent's
  session (same client, revision, capabilities and log level; the mounted server's capabilities);
* 2026-07-28: as a stateless request of its own (its envelope is the client's), so a multi
  round-trip request's ``requestState`` is sealed and opened by the server that asked (the parent
  sets up no exchange of its own for it, see :func:`._stateless._cannot_ask`).

Notifications go the other way: a mounted server's list changes and resource updates are announced
by the parent (renamed) to its sessions and ``subscriptions/listen`` streams, through every level of
mounting. A mounted server that relays a remote one (:class:`jsonrpc_mcp.proxy.Proxy`) is told
which URIs are wanted: ``resources/subscribe`` is forwarded to it, and a listen stream's URIs are
held on it while the stream is open.

Lifespans nest: the parent's :meth:`Server.running` enters its own lifespan, then each mounted
server's (in mount order), and leaves them in reverse.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import re
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from .. import wire
from ..errors import RegistrationError
from ..jsonrpc.endpoint import Outbound, RequestContext
from ..jsonrpc.errors import InternalError, InvalidParams, JsonRpcError
from ..jsonrpc.messages import Request
from ..revisions import Revision
from ._handshake import State
from ._methods import decode_cursor, encode_cursor
from ._pipeline import Call
from ._session import ServerSession
from ._uritemplate import UriTemplate

if TYPE_CHECKING:
    from ._server import Server

__all__ = ["Composition", "Mount", "MountedSession", "import_server"]

logger = logging.getLogger("jsonrpc_mcp.server")

NAMESPACE = re.compile(r"^[A-Za-z0-9.-]+(?:_[A-Za-z0-9.-]+)*$")
Handler = Callable[[ServerSession, dict[str, Any], RequestContext], Awaitable[Any]]

# list method -> (the parent's registry kind, the list's key, the key naming an item)
_LISTS = {
    wire.TOOLS_LIST: ("tools", "tools", "name"),
    wire.PROMPTS_LIST: ("prompts", "prompts", "name"),
    wire.RESOURCES_LIST: ("resources", "resources", "uri"),
    wire.RESOURCES_TEMPLATES_LIST: ("resource templates", "resourceTemplates", "uriTemplate"),
}
_QUIET = frozenset(
    {wire.RESOURCE_UPDATED, wire.TOOLS_LIST_CHANGED, wire.PROMPTS_LIST_CHANGED, wire.RESOURCES_LIST_CHANGED}
)
_SERVED = frozenset(
    {*_LISTS, wire.TOOLS_CALL, wire.PROMPTS_GET, wire.RESOURCES_READ, wire.COMPLETE, wire.SET_LEVEL,
     wire.RESOURCES_SUBSCRIBE, wire.RESOURCES_UNSUBSCRIBE, wire.LISTEN}
)  # fmt: skip


class Mount:
    """One server mounted into another, and how names cross between them."""

    def __init__(self, parent: Server, server: Server, namespace: str | None) -> None:
        self.parent = parent
        self.server = server
        self.namespace = namespace
        # the mounted server's view of each parent session (weak: it lives as long as the session)
        self.views: weakref.WeakKeyDictionary[ServerSession, MountedSession] = weakref.WeakKeyDictionary()

    def __repr__(self) -> str:
        return f"Mount({self.server.name!r}, namespace={self.namespace!r})"

    # -- names ---------------------------------------------------------------------------------------
    def name(self, inner: str) -> str:
        """A tool's or prompt's name as the parent's clients see it."""
        return inner if self.namespace is None else f"{self.namespace}_{inner}"

    def inner_name(self, name: str) -> str | None:
        """The mounted server's name for the parent's ``name``; None when it is not one of its."""
        if self.namespace is None:
            return name
        prefix = self.namespace + "_"
        return name[len(prefix) :] if name.startswith(prefix) and len(name) > len(prefix) else None

    def uri(self, inner: str) -> str:
        """A resource URI (or template) as the parent's clients see it: ``scheme://ns/path``."""
        if self.namespace is None:
            return inner
        head, sep, rest = _split(inner)
        return f"{head}{sep}{self.namespace}/{rest}"

    def inner_uri(self, uri: str) -> str | None:
        """The mounted server's URI for the parent's ``uri``; None when it is not one of its."""
        if self.namespace is None:
            return uri
        head, sep, rest = _split(uri)
        prefix = self.namespace + "/"
        return f"{head}{sep}{rest[len(prefix) :]}" if rest.startswith(prefix) else None

    # -- what it offers ------------------------------------------------------------------------------
    def offers(self, kind: str, inner: str) -> bool:
        """Whether the mounted server serves this tool, prompt or resource (``kind``): read from its
        registries; a server that serves what it does not register (a proxy) is asked."""
        return _offers(self.server, kind, inner)

    def view(self, session: ServerSession) -> MountedSession:
        """The mounted server's view of a parent handshake session (made on first use)."""
        view = self.views.get(session)
        if view is None:
            view = self.views[session] = MountedSession(self.server, session)
            self.server._sessions.add(view)
        return view


def _split(uri: str) -> tuple[str, str, str]:
    """``scheme``, the separator (``://``, or ``:``, or nothing) and the rest of a URI."""
    head, sep, rest = uri.partition("://")
    if sep:
        return head, sep, rest
    head, sep, rest = uri.partition(":")
    return (head, sep, rest) if sep else ("", "", uri)


def _registers(server: Server) -> bool:
    """Whether the server serves what its registries hold (a proxy serves what it relays)."""
    return server._registered


def _offers(server: Server, kind: str, inner: str) -> bool:
    if not _registers(server):
        return True
    if kind == "tool":
        found = inner in server.tools
    elif kind == "prompt":
        found = inner in server.prompts
    elif kind == "template":
        found = inner in server.templates
    else:
        found = inner in server.resources or any(
            t.template.match(inner) is not None for t in server.templates
        )
    if found:
        return True
    composition = server._composition
    return composition is not None and composition.find(kind, inner) is not None


class MountedSession(ServerSession):
    """A mounted server's view of one of its parent's handshake sessions: the parent's client,
    revision, state and log level; the mounted server's capabilities. It sends the parent's client
    what the mounted server sends it (log messages, elicitation completions) except list changes
    and resource updates, which the parent announces, renamed."""

    def __init__(self, server: Server, parent: ServerSession) -> None:
        self._parent = weakref.ref(parent)  # (set first: the properties below read it)
        super().__init__(
            server,
            None,
            revision=parent.revision,
            client_capabilities=parent.client_capabilities,
            client_info=parent.client_info,
            transport=parent.transport,
        )
        self.session_id = parent.session_id

    # what the parent session says, read when asked
    @property
    def outbound(self) -> Outbound | None:
        parent = self._parent()
        return parent.outbound if parent is not None else None

    @outbound.setter
    def outbound(self, value: Outbound | None) -> None:
        pass

    @property
    def state(self) -> State:
        parent = self._parent()
        return parent.state if parent is not None else State.NEW

    @state.setter
    def state(self, value: State) -> None:
        pass

    @property
    def log_threshold(self) -> int:
        parent = self._parent()
        return parent.log_threshold if parent is not None else 0

    @log_threshold.setter
    def log_threshold(self, value: int) -> None:
        pass  # (logging/setLevel sets the parent session's)

    @property
    def capabilities(self) -> dict[str, Any]:
        revision = self.revision
        return self.server.capabilities(revision) if revision is not None else {}

    @capabilities.setter
    def capabilities(self, value: dict[str, Any]) -> None:
        pass

    @property
    def loop_token(self) -> Any:
        parent = self._parent()
        return parent.loop_token if parent is not None else None

    def list_changed(self, kind: str) -> None:
        """The parent announces it (renamed)."""

    async def notify(self, method: str, params: Any = None) -> None:
        if method not in _QUIET:
            await super().notify(method, params)


class Composition:
    """The servers mounted into one server, and how its requests reach them."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.mounts: list[Mount] = []
        self._merged: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}

    def add(self, mount: Mount) -> None:
        self.mounts.append(mount)
        self._merged.clear()

    def reach(self) -> list[Server]:
        """Every server mounted here, at any depth."""
        found: list[Server] = []
        for mount in self.mounts:
            found.append(mount.server)
            if mount.server._composition is not None:
                found.extend(mount.server._composition.reach())
        return found

    def find(self, kind: str, key: str) -> tuple[Mount, str] | None:
        """The mount serving the parent's tool, prompt, resource or template ``key`` (the latest
        mounted first), and its own name for it."""
        for mount in reversed(self.mounts):
            inner = mount.inner_uri(key) if kind in ("resource", "template") else mount.inner_name(key)
            if inner is not None and mount.offers(kind, inner):
                return mount, inner
        return None

    # -- what the server says of itself --------------------------------------------------------------
    def capabilities(self, own: dict[str, Any], revision: Revision) -> dict[str, Any]:
        """The server's capabilities with what the mounted servers offer (the parent announces
        their list changes, and takes subscriptions for their resources)."""
        inner = tuple(m.server.capabilities(revision) for m in self.mounts)
        key = (own, *inner)
        cached = self._merged.get(revision.version)
        if (
            cached is not None
            and len(cached[0]) == len(key)
            and all(a is b for a, b in zip(cached[0], key, strict=True))
        ):
            return cached[1]
        merged = dict(own)
        for caps in inner:
            for name in ("tools", "prompts"):
                if name in caps:
                    merged[name] = {"listChanged": True}
            if "resources" in caps:
                merged["resources"] = {"subscribe": True, "listChanged": True}
            if "logging" in caps:
                merged["logging"] = {}
            if "completions" in caps:
                merged["completions"] = {}
        self._merged[revision.version] = (key, merged)
        return merged

    def has_completions(self) -> bool:
        return any(m.server.has_completions for m in self.mounts)

    def running(self, own: AbstractAsyncContextManager[Any]) -> AbstractAsyncContextManager[Any]:
        """The server's lifespan, with each mounted server's running inside it."""

        @contextlib.asynccontextmanager
        async def nested() -> AsyncIterator[Any]:
            async with own as state, contextlib.AsyncExitStack() as stack:
                for mount in self.mounts:
                    await stack.enter_async_context(mount.server.running())
                yield state

        return nested()

    def routes_away(self, method: str, params: dict[str, Any]) -> bool:
        """Whether a 2026-07-28 request asking for input is served by a mounted server (which then
        keeps its own multi round-trip state)."""
        if method == wire.TOOLS_CALL or method == wire.PROMPTS_GET:
            name = params.get("name")
            kind, registry = (
                ("tool", self.server.tools) if method == wire.TOOLS_CALL else ("prompt", self.server.prompts)
            )
            return type(name) is str and name not in registry and self.find(kind, name) is not None
        if method == wire.RESOURCES_READ:
            uri = params.get("uri")
            return (
                type(uri) is str
                and not _offers_own(self.server, uri)
                and self.find("resource", uri) is not None
            )
        return False

    # -- serving ---------------------------------------------------------------------------------------
    async def dispatch(
        self,
        session: ServerSession,
        method: str,
        params: dict[str, Any],
        rc: RequestContext,
        handler: Handler,
    ) -> Any:
        """Serve a request of the parent's that the lifecycle and its capabilities allow."""
        if method not in _SERVED:
            return await handler(session, params, rc)
        if method in _LISTS:
            return await self._list(session, method, params, rc)
        if method == wire.TOOLS_CALL or method == wire.PROMPTS_GET:
            kind = "tool" if method == wire.TOOLS_CALL else "prompt"
            name = params.get("name")
            own = self.server.tools if kind == "tool" else self.server.prompts
            found = self.find(kind, name) if type(name) is str and name not in own else None
            if found is None:
                return await handler(session, params, rc)
            mount, inner = found
            try:
                return await self.forward(mount, session, rc, method, {**params, "name": inner})
            except InvalidParams as exc:  # "unknown tool 'x'": say it with the client's name
                if isinstance(exc.data, dict) and exc.data.get("name") == inner:
                    raise InvalidParams(
                        exc.message.replace(repr(inner), repr(name)), {"name": name}
                    ) from None
                raise
        if method == wire.RESOURCES_READ:
            return await self._read(session, method, params, rc, handler)
        if method == wire.COMPLETE:
            return await self._complete(session, method, params, rc, handler)
        if method == wire.SET_LEVEL:
            result = await handler(session, params, rc)
            for mount in self.mounts:  # (a proxy asks its upstream for the level)
                if not session.revision or session.revision.has_handshake:
                    await _quietly(self.forward(mount, session, rc, method, params), method)
            return result
        if method == wire.LISTEN:
            return await self._listen(session, method, params, rc, handler)
        return await self._subscription(session, method, params, rc, handler)

    async def forward(
        self, mount: Mount, session: ServerSession, rc: RequestContext, method: str, params: dict[str, Any]
    ) -> Any:
        """Serve ``method`` with ``params`` (renamed) on the mounted server, through its router chain."""
        revision = session.revision
        assert revision is not None
        inner_rc = copy.copy(rc)
        inner_rc.request = Request(rc.request.id, method, params)
        router = mount.server.router
        if revision.has_handshake:
            call = Call(method, params, rc.request.id, "handshake", revision, session.transport,
                        mount.view(session), inner_rc)  # fmt: skip
            return await router._handshake_chain(call)
        call = Call(method, params, rc.request.id, "stateless", revision, session.transport, None, inner_rc)
        call._outbound = session.outbound
        return await router._stateless_chain(call)

    async def _list(
        self, session: ServerSession, method: str, params: dict[str, Any], rc: RequestContext
    ) -> Any:
        kind, key, field = _LISTS[method]
        revision = session.revision
        assert revision is not None
        items: list[Any] = list(self.server.wire_list(kind, revision))
        taken = {item.get(field) for item in items}
        mounted: list[list[Any]] = []
        for mount in reversed(self.mounts):  # the latest mounted wins a name
            offered = await self._every_page(mount, session, rc, method, params, key)
            rename = mount.name if field == "name" else mount.uri
            kept = []
            for item in offered:
                if type(item) is dict and isinstance(item.get(field), str):
                    name = rename(item[field])
                    if name not in taken:
                        taken.add(name)
                        kept.append(
                            _linked({**item, field: name}, mount)
                            if kind == "tools"
                            else {**item, field: name}
                        )
            mounted.append(kept)
        for kept in reversed(mounted):
            items.extend(kept)
        offset = decode_cursor(params.get("cursor"))
        if offset > len(items):
            raise InvalidParams(f"Invalid params: invalid cursor {params.get('cursor')!r}")
        size = self.server.page_size
        result: dict[str, Any] = {key: items[offset : offset + size]}
        if offset + size < len(items):
            result["nextCursor"] = encode_cursor(offset + size)
        return result

    async def _every_page(
        self,
        mount: Mount,
        session: ServerSession,
        rc: RequestContext,
        method: str,
        params: dict[str, Any],
        key: str,
    ) -> list[Any]:
        items: list[Any] = []
        cursor: Any = None
        seen: set[str] = set()
        asked = {k: v for k, v in params.items() if k != "cursor"}
        while True:
            page = await self.forward(
                mount, session, rc, method, asked if cursor is None else {**asked, "cursor": cursor}
            )
            if type(page) is not dict or type(page.get(key, [])) is not list:
                raise InternalError(
                    f"Internal error: server {mount.server.name!r} answered {method} without a list"
                )
            items.extend(page.get(key, []))
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or cursor in seen:
                return items
            seen.add(cursor)

    async def _read(
        self,
        session: ServerSession,
        method: str,
        params: dict[str, Any],
        rc: RequestContext,
        handler: Handler,
    ) -> Any:
        uri = params.get("uri")
        found = self.find("resource", uri) if type(uri) is str and not _offers_own(self.server, uri) else None
        if found is None:
            return await handler(session, params, rc)
        mount, inner = found
        result = await self.forward(mount, session, rc, method, {**params, "uri": inner})
        contents = result.get("contents") if type(result) is dict else None
        if type(contents) is list:
            renamed = [
                {**c, "uri": mount.uri(c["uri"])} if type(c) is dict and isinstance(c.get("uri"), str) else c
                for c in contents
            ]
            result = {**result, "contents": renamed}
        return result

    async def _complete(
        self,
        session: ServerSession,
        method: str,
        params: dict[str, Any],
        rc: RequestContext,
        handler: Handler,
    ) -> Any:
        ref = params.get("ref")
        if type(ref) is not dict:
            return await handler(session, params, rc)
        if (
            ref.get("type") == "ref/prompt"
            and isinstance(ref.get("name"), str)
            and ref["name"] not in self.server.prompts
        ):
            found = self.find("prompt", ref["name"])
            field = "name"
        elif (
            ref.get("type") == "ref/resource"
            and isinstance(ref.get("uri"), str)
            and ref["uri"] not in self.server.templates
        ):
            found = self.find("template", ref["uri"])
            field = "uri"
        else:
            found = None
        if found is None:
            return await handler(session, params, rc)
        mount, inner = found
        return await self.forward(mount, session, rc, method, {**params, "ref": {**ref, field: inner}})

    async def _subscription(
        self,
        session: ServerSession,
        method: str,
        params: dict[str, Any],
        rc: RequestContext,
        handler: Handler,
    ) -> Any:
        """``resources/subscribe`` and ``unsubscribe``: the parent's session records the URI (the
        parent announces the updates); a mounted server that can is told too."""
        uri = params.get("uri")
        found = self.find("resource", uri) if type(uri) is str and not _offers_own(self.server, uri) else None
        if found is not None:
            mount, inner = found
            view = mount.view(session) if session.revision and session.revision.has_handshake else None
            if view is not None and view.has_feature("resources.subscribe"):
                if method == wire.RESOURCES_SUBSCRIBE:
                    await self.forward(mount, session, rc, method, {**params, "uri": inner})
                else:
                    await _quietly(self.forward(mount, session, rc, method, {**params, "uri": inner}), method)
        return await handler(session, params, rc)

    async def _listen(
        self,
        session: ServerSession,
        method: str,
        params: dict[str, Any],
        rc: RequestContext,
        handler: Handler,
    ) -> Any:
        """A listen stream of the parent's: the mounted servers that relay a remote one hold the
        URIs it watches of theirs while it is open."""
        filters = params.get("notifications")
        uris = filters.get("resourceSubscriptions") if type(filters) is dict else None
        uris = [u for u in uris if type(u) is str] if type(uris) is list else []
        async with contextlib.AsyncExitStack() as stack:
            for mount in self.mounts:
                watching = getattr(mount.server, "_watching", None)
                inner = [i for i in (mount.inner_uri(u) for u in uris) if i is not None]
                if inner and watching is not None:
                    await stack.enter_async_context(watching(inner))
            return await handler(session, params, rc)


def _linked(tool: dict[str, Any], mount: Mount) -> dict[str, Any]:
    """A mounted tool's entry with its MCP Apps view link (``_meta.ui.resourceUri``, and the
    deprecated flat ``_meta["ui/resourceUri"]``) renamed as the view's resource is."""
    meta = tool.get("_meta")
    if type(meta) is not dict:
        return tool
    meta = dict(meta)
    ui = meta.get("ui")
    if type(ui) is dict and isinstance(ui.get("resourceUri"), str):
        meta["ui"] = {**ui, "resourceUri": mount.uri(ui["resourceUri"])}
    if isinstance(meta.get("ui/resourceUri"), str):
        meta["ui/resourceUri"] = mount.uri(meta["ui/resourceUri"])
    return {**tool, "_meta": meta}


def _offers_own(server: Server, uri: str) -> bool:
    return uri in server.resources or any(t.template.match(uri) is not None for t in server.templates)


async def _quietly(step: Awaitable[Any], method: str) -> None:
    try:
        await step
    except (JsonRpcError, RuntimeError) as exc:
        logger.debug("a mounted server refused %s: %s", method, exc)


def mount(parent: Server, server: Server, namespace: str | None) -> Mount:
    """:meth:`Server.mount`."""
    if namespace is not None and (not isinstance(namespace, str) or not NAMESPACE.match(namespace)):
        raise RegistrationError(
            f"namespace {namespace!r}: use letters, digits, '.', '-', and '_' between them (a name prefix)"
        )
    if server is parent or (server._composition is not None and parent in server._composition.reach()):
        raise RegistrationError(f"server {server.name!r} cannot be mounted into itself")
    composition = parent._composition
    if composition is None:
        composition = parent._composition = Composition(parent)
    if any(m.server is server and m.namespace == namespace for m in composition.mounts):
        raise RegistrationError(f"server {server.name!r} is already mounted under {namespace!r}")
    link = Mount(parent, server, namespace)
    composition.add(link)
    server._mounted_in.append(link)
    parent._capabilities_cache.clear()
    for kind in ("tool", "prompt", "resource"):
        parent._changed(kind)
    return link


def import_server(parent: Server, server: Server, namespace: str | None) -> None:
    """:meth:`Server.import_server`: copies of the server's definitions, renamed, registered on
    ``parent`` (later changes to ``server`` are not followed)."""
    if not _registers(server):
        raise RegistrationError(f"server {server.name!r} serves what it does not register: mount it instead")
    link = Mount(parent, server, namespace)
    for tool in server.tools:
        copied = copy.copy(tool)
        copied.name = link.name(tool.name)
        if copied.meta:
            copied.meta = _linked({"_meta": copied.meta}, link)["_meta"]
        parent.tools.add(copied.name, copied)
    for resource in server.resources:
        copied_resource = copy.copy(resource)
        copied_resource.uri = link.uri(resource.uri)
        parent.resources.add(copied_resource.uri, copied_resource)
    for template in server.templates:
        copied_template = copy.copy(template)
        copied_template.uri = link.uri(template.uri)
        copied_template.template = UriTemplate(copied_template.uri)
        parent.templates.add(copied_template.uri, copied_template)
    for prompt in server.prompts:
        copied_prompt = copy.copy(prompt)
        copied_prompt.name = link.name(prompt.name)
        parent.prompts.add(copied_prompt.name, copied_prompt)
    for (kind, target, argument), completer in server.completers.items():
        renamed = link.name(target) if kind == "ref/prompt" else link.uri(target)
        parent.completers[(kind, renamed, argument)] = completer
