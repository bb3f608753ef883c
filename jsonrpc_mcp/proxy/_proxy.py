"""The :class:`Proxy`: a :class:`~jsonrpc_mcp.server.Server` that serves what an upstream server offers.

Theory of operation
-------------------
The proxy is a Server with no registered tools, resources or prompts, and one middleware
(:meth:`Proxy._forward`). Every request of every downstream client, whatever carries it and
whichever era it speaks, passes through the server's request router and so through that
middleware (:mod:`jsonrpc_mcp.server._pipeline`). What the server core does on its own stays its
own: the handshake (``initialize``, the lifecycle table, batches), ``ping``, ``server/discover``,
the envelope checks of 2026-07-28 requests (-32602, -32022), per-session log levels and
subscriptions, and ``subscriptions/listen`` streams. What an upstream server serves is forwarded
at the JSON-RPC level, as it came: ``tools/list`` and ``tools/call``, ``resources/list``, ``read``
and ``templates/list``, ``prompts/list`` and ``get``, ``completion/complete``. A request the core
would refuse (before ``initialize``, a method its revision lacks, a capability the upstream does
not offer, a bad envelope) is handed on to the core, which answers it as it answers any request.
``logging/setLevel``, ``resources/subscribe`` and ``unsubscribe`` and ``subscriptions/listen`` are
served by the core and also change what is asked of the upstream (see :mod:`._relay`).

The capabilities, the server's info and its instructions mirror the upstream's (read when the
upstream connection opens: the Server's ``lifespan``, entered when serving starts), so a client
sees the upstream server, reached through the proxy. Lists are flattened (every upstream page is
fetched) and paged again by the proxy's ``page_size``.

Eras: the downstream side is the server core, which speaks every revision on one endpoint; the
upstream side is a :class:`~jsonrpc_mcp.client.Client` in the ``mode`` given (``auto`` by default).
Results are fitted to the downstream revision (:mod:`._fit`); a 2026-07-28 client's results are
finished as the core finishes its own (``resultType``, caching hints). The four ways a request
that may need the client's input (``tools/call``, ``prompts/get``, ``resources/read``) crosses:

==========  ==========  ===============================================================
downstream  upstream    the upstream's questions
==========  ==========  ===============================================================
handshake   handshake   its requests are sent on to the client (see :mod:`._relay`)
handshake   2026-07-28  its input requests are sent to the client as requests; the proxy
                        retries with the answers (:func:`~jsonrpc_mcp.client._modern.with_input`)
2026-07-28  2026-07-28  passed through: the ``InputRequiredResult`` and the client's retry
2026-07-28  handshake   the upstream call is parked across the client's rounds (:mod:`._forwarded`)
==========  ==========  ===============================================================

Progress tokens are mapped both ways; a downstream ``notifications/cancelled`` (or a closed HTTP
response) cancels the forwarding task, which cancels the upstream request. Tool-level extensions
(tasks, skills) are not relayed.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
from anyio.abc import TaskGroup

from .. import wire
from .._version import __version__
from ..client import Client, InputRequiredError
from ..client._modern import is_input_required, with_input
from ..errors import MissingClientCapability, ResourceNotFound
from ..jsonrpc.errors import ConnectionClosed, InternalError, InvalidParams, JsonRpcError, RequestTimeout
from ..revisions import Revision
from ..server._boundary import tool_error
from ..server._clientlog import LEVELS, level_index
from ..server._handshake import State
from ..server._methods import CAPABILITY_NEEDED, decode_cursor, encode_cursor
from ..server._mrtr import DEFAULT_STATE_TTL, INPUT_METHODS
from ..server._pipeline import Call, CallNext
from ..server._server import Server
from ..server._session import ServerSession
from ..server._stateless import finish
from ._fit import fit_items, fit_result, handshake_result
from ._forwarded import ASKING_METHODS, Forwarded, relayable
from ._relay import Relay

__all__ = ["DEFAULT_CLIENT_CAPABILITIES", "Proxy"]

logger = logging.getLogger("jsonrpc_mcp.proxy")

# what the proxy's client declares to a handshake-era upstream (it relays each to the client asked)
DEFAULT_CLIENT_CAPABILITIES: dict[str, Any] = {
    "elicitation": {"form": {}, "url": {}},
    "sampling": {},
    "roots": {},
}

Connect = Callable[..., AbstractAsyncContextManager[Client]]

# method -> the list's key in the result
_LISTS = {
    wire.TOOLS_LIST: "tools",
    wire.RESOURCES_LIST: "resources",
    wire.RESOURCES_TEMPLATES_LIST: "resourceTemplates",
    wire.PROMPTS_LIST: "prompts",
}
# what each forwarded method needs the upstream to offer: the server core's rule, and listen (none)
_NEEDS: dict[str, str | None] = {**CAPABILITY_NEEDED, wire.LISTEN: None}
_SERVED_TOO = frozenset({wire.SET_LEVEL, wire.RESOURCES_SUBSCRIBE, wire.RESOURCES_UNSUBSCRIBE, wire.LISTEN})
_MRTR_FIELDS = ("inputResponses", "requestState")


class Proxy(Server):
    """A Server serving what an upstream MCP server offers (see the module docs).

    ``connect(**client_options)`` opens the upstream connection: an async context manager giving a
    connected :class:`Client` made with those options (request handlers, notification callback,
    capabilities), e.g. ``functools.partial(Client.http, url, mode="auto")``; :meth:`http` and
    :meth:`stdio` build it. It is entered when serving starts (the server's lifespan) and left when
    serving ends. ``client_capabilities`` are declared to a handshake-era upstream (a 2026-07-28
    upstream gets each downstream request's own). ``input_ttl`` bounds how long an upstream call
    waits for a 2026-07-28 client's next round. Other keywords go to :class:`Server` (``page_size``,
    ``revisions``, ``cache_ttl_ms``, ...).
    """

    _registered = False  # it serves what it relays (a server it is mounted into asks it for everything)

    def __init__(
        self,
        connect: Connect,
        *,
        name: str = "jsonrpc-mcp proxy",
        client_capabilities: dict[str, Any] | None = None,
        input_ttl: float = DEFAULT_STATE_TTL,
        **options: Any,
    ) -> None:
        if "lifespan" in options:
            raise TypeError("a Proxy's lifespan is its upstream connection: it takes no other")
        super().__init__(name, "0", lifespan=_upstream_connection, **options)
        self._connect = connect
        self.client_capabilities = (
            DEFAULT_CLIENT_CAPABILITIES if client_capabilities is None else client_capabilities
        )
        self.input_ttl = input_ttl
        self._upstream: Client | None = None
        self._upstream_capabilities: dict[str, Any] = {}
        self._mirrored: dict[str, dict[str, Any]] = {}
        self._tg: TaskGroup | None = None
        self._relay = Relay(self)
        self.add_middleware(self._forward)

    @classmethod
    def http(
        cls,
        url: str,
        *,
        mode: str = "auto",
        headers: dict[str, str] | None = None,
        auth: Any = None,
        client_options: dict[str, Any] | None = None,
        **options: Any,
    ) -> Proxy:
        """A proxy for the server at ``url`` (Streamable HTTP, or the legacy HTTP+SSE transport it
        falls back to); ``auth`` (a :class:`jsonrpc_mcp.client.auth.OAuth`) authorizes it.
        ``client_options`` go to :meth:`Client.http`, ``options`` to :class:`Proxy`."""
        given = {**(client_options or {}), **({"auth": auth} if auth is not None else {})}

        def connect(**client: Any) -> AbstractAsyncContextManager[Client]:
            return Client.http(url, headers=headers, mode=mode, **given, **client)

        return cls(connect, **options)

    @classmethod
    def stdio(
        cls,
        command: Sequence[str],
        *,
        mode: str = "auto",
        client_options: dict[str, Any] | None = None,
        **options: Any,
    ) -> Proxy:
        """A proxy for the stdio server ``command`` (spawned when serving starts, stopped when it
        ends). ``client_options`` go to :meth:`Client.stdio` (``env``, ``cwd``, ...)."""
        given = dict(client_options or {})

        def connect(**client: Any) -> AbstractAsyncContextManager[Client]:
            return Client.stdio(command, mode=mode, **given, **client)

        return cls(connect, **options)

    # -- the upstream connection --------------------------------------------------------------------
    @property
    def upstream(self) -> Client:
        """The upstream connection (RuntimeError when not serving)."""
        if self._upstream is None:
            raise RuntimeError("the proxy has no upstream connection: serve it, or enter running()")
        return self._upstream

    @contextlib.asynccontextmanager
    async def _connected(self) -> AsyncIterator[Client]:
        options: dict[str, Any] = {
            "request_handlers": self._relay.request_handlers(),
            "on_notification": self._relay.notified,
            "capabilities": self.client_capabilities,
            "client_info": {"name": "jsonrpc-mcp-proxy", "version": __version__},
        }
        async with self._connect(**options) as client, anyio.create_task_group() as tg:
            self._adopt(client)
            self._tg = tg
            if client.is_modern:
                tg.start_soon(self._relay.listen_upstream, client)
            try:
                yield client
            finally:
                tg.cancel_scope.cancel()
                self._upstream = self._tg = None

    def _adopt(self, client: Client) -> None:
        """Mirror the upstream server's info, instructions and capabilities."""
        info = client.server_info
        self.name = str(info.get("name") or self.name)
        self.version = str(info.get("version") or self.version)
        self.title = info.get("title")
        self.description = info.get("description")
        self.icons = info.get("icons")
        self.website_url = info.get("websiteUrl")
        self.instructions = client.instructions
        self._upstream_capabilities = client.server_capabilities
        self._mirrored.clear()
        self._upstream = client
        logger.info(
            "connected to the upstream server %r %s (protocol revision %s)",
            self.name,
            self.version,
            client.protocol_version,
        )

    def _spawn(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run ``fn(*args)`` in a task of the upstream connection's (it ends with the connection)."""
        if self._tg is None:
            raise RuntimeError("the proxy has no upstream connection")
        self._tg.start_soon(fn, *args)

    def _live_sessions(self) -> list[ServerSession]:
        """The ready handshake sessions of the downstream clients."""
        return [s for s in list(self._sessions) if s.state is State.READY]

    # -- what the downstream clients are told -----------------------------------------------------
    def capabilities(self, revision: Revision) -> dict[str, Any]:
        """The upstream's capabilities, as far as the proxy relays them, in ``revision``."""
        mirrored = self._mirrored.get(revision.version)
        if mirrored is None:
            up = self._upstream_capabilities
            mirrored = {}
            if isinstance(up.get("logging"), dict):
                mirrored["logging"] = {}
            if isinstance(up.get("completions"), dict) and revision.has_completions_capability:
                mirrored["completions"] = {}
            for name, flags in (("tools", ("listChanged",)), ("resources", ("subscribe", "listChanged")),
                                ("prompts", ("listChanged",))):  # fmt: skip
                declared = up.get(name)
                if isinstance(declared, dict):
                    mirrored[name] = {flag: True for flag in flags if declared.get(flag)}
            self._mirrored[revision.version] = mirrored
        return mirrored

    def uses_logging(self) -> bool:
        """Whether the upstream offers logging (the ``logging`` capability is mirrored)."""
        return isinstance(self._upstream_capabilities.get("logging"), dict)

    @property
    def has_completions(self) -> bool:
        """Whether the upstream offers completions."""
        return isinstance(self._upstream_capabilities.get("completions"), dict)

    # -- forwarding ---------------------------------------------------------------------------------
    async def _forward(self, call: Call, call_next: CallNext) -> Any:
        """The middleware: forward what the upstream serves, hand everything else to the core."""
        if call.method not in _NEEDS:
            return await call_next(call)
        fwd = self._forwardable(call)
        if fwd is None:
            return await call_next(call)
        if call.method in _SERVED_TOO:
            return await self._served_too(fwd, call, call_next)
        self._relay.begin(fwd)
        try:
            if call.method in _LISTS:
                result = await self._list(fwd, _LISTS[call.method])
            elif call.method in ASKING_METHODS:
                result = await self._asking(fwd)
            else:
                result = await self.upstream.request(call.method, self._upstream_params(fwd, fwd.params))
        except JsonRpcError as exc:
            result = self._refused(fwd, exc)
        except (RequestTimeout, TimeoutError):
            raise InternalError("Internal error: the upstream server did not answer in time") from None
        except ConnectionClosed:
            raise InternalError("Internal error: the connection to the upstream server is closed") from None
        except InputRequiredError as exc:
            raise InternalError(f"Internal error: {exc}") from None
        finally:
            self._relay.end(fwd)
        if fwd.missing is not None and fwd.modern:  # as a 2026-07-28 server answers it
            needed = ", ".join(sorted(fwd.missing))
            raise MissingClientCapability(f"the request needs the client capability {needed}", fwd.missing)
        return self._finished(fwd, result)

    def _forwardable(self, call: Call) -> Forwarded | None:
        """The request as the proxy forwards it; None when the core must answer it (a refusal)."""
        revision = call.revision
        if revision is None or call.method not in revision.methods:
            return None
        params = call.params
        meta = params.get("_meta")
        meta = meta if type(meta) is dict else {}
        need = _NEEDS[call.method]
        session = call.session
        log_rank: int | None
        if call.era == "handshake":
            if session is None or session.state is State.NEW:
                return None
            if need is not None and not session.has_feature(need):
                return None
            declared, log_rank = session.client_capabilities, session.log_threshold
        else:
            session = None
            level = meta.get(wire.LOG_LEVEL)
            if level is not None and level not in LEVELS:
                return None  # (the core answers -32602)
            log_rank = level_index(level) if isinstance(level, str) else None
            if need is not None and not _offers(self.capabilities(revision), need):
                return None
            caps = meta.get(wire.CLIENT_CAPABILITIES)
            declared = caps if type(caps) is dict else {}
        token = meta.get(wire.PROGRESS_TOKEN)
        progress = token if isinstance(token, (str, int)) and not isinstance(token, bool) else None
        return Forwarded(call.method, params, call.context, revision, session, declared, log_rank, progress)

    def _upstream_params(self, fwd: Forwarded, params: dict[str, Any]) -> dict[str, Any]:
        """``params`` as sent upstream: the proxy's progress token, the client's capabilities and log
        level (2026-07-28 upstream); without the envelope of the downstream request."""
        client = self.upstream
        passthrough = client.is_modern and fwd.modern
        out = {k: v for k, v in params.items() if k != "_meta" and (passthrough or k not in _MRTR_FIELDS)}
        given = params.get("_meta")
        meta = {
            k: v
            for k, v in (given.items() if type(given) is dict else ())
            if not k.startswith(wire.META_PREFIX) and k != wire.PROGRESS_TOKEN
        }
        if fwd.progress is not None:
            meta[wire.PROGRESS_TOKEN] = self._relay.progress_token(fwd)
        if client.is_modern:
            meta[wire.CLIENT_CAPABILITIES] = relayable(fwd.client_capabilities)
            if fwd.log_rank is not None and fwd.log_rank < len(LEVELS):
                meta[wire.LOG_LEVEL] = LEVELS[fwd.log_rank]
        if meta:
            out["_meta"] = meta
        return out

    async def _list(self, fwd: Forwarded, key: str) -> dict[str, Any]:
        """Every page of the upstream's list, paged again for the client."""
        items: list[Any] = []
        ttls: list[int] = []
        private = False
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            page = await self.upstream.request(
                fwd.method, self._upstream_params(fwd, {} if cursor is None else {"cursor": cursor})
            )
            if type(page) is not dict or type(page.get(key, [])) is not list:
                raise InternalError(f"Internal error: the upstream's {fwd.method} result has no {key!r} list")
            items.extend(page.get(key, []))
            if type(page.get("ttlMs")) is int:
                ttls.append(page["ttlMs"])
            private = private or page.get("cacheScope") == "private"
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str):
                break
            if cursor in seen:
                raise InternalError(f"Internal error: the upstream repeated the {fwd.method} cursor")
            seen.add(cursor)
        offset = decode_cursor(fwd.params.get("cursor"))
        if offset > len(items):
            raise InvalidParams(f"Invalid params: invalid cursor {fwd.params.get('cursor')!r}")
        result: dict[str, Any] = {key: fit_items(items[offset : offset + self.page_size], fwd.revision)}
        if offset + self.page_size < len(items):
            result["nextCursor"] = encode_cursor(offset + self.page_size)
        if ttls:
            result["ttlMs"] = min(ttls)
        if private:
            result["cacheScope"] = "private"
        return result

    async def _asking(self, fwd: Forwarded) -> Any:
        """``tools/call``, ``prompts/get``, ``resources/read``: the four crossings (module docs)."""
        client = self.upstream
        params = self._upstream_params(fwd, fwd.params)

        async def send(method: str, params: dict[str, Any]) -> Any:
            return await client.request(method, params, timeout=None)  # the client bounds its own

        if client.is_modern and not fwd.modern:
            handlers = {method: _asker(fwd, method) for method in INPUT_METHODS}
            try:
                result = await with_input(send, fwd.method, params, handlers, client.max_input_rounds)
            except _Refused as refused:  # what a handshake server makes of the client's error
                if fwd.method == wire.TOOLS_CALL:
                    return tool_error(f"Tool {fwd.params.get('name')!r} failed: {refused}")
                raise InternalError(f"Internal error: {refused}") from None
            if is_input_required(result):
                raise InternalError("Internal error: the upstream asked for input the client cannot give")
            return result
        if fwd.modern and not client.is_modern and relayable(fwd.client_capabilities):
            return await self._relay.park_round(fwd, lambda p: send(fwd.method, p), params)
        return await send(fwd.method, params)

    def _refused(self, fwd: Forwarded, exc: JsonRpcError) -> Any:
        """The upstream's error as the client's revision has it (raised), or an ``isError`` result."""
        upstream = self.upstream.revision
        data = exc.data if isinstance(exc.data, dict) else {}
        uri = data.get("uri", fwd.params.get("uri"))
        if (
            fwd.method == wire.RESOURCES_READ
            and upstream is not None
            and exc.code == upstream.resource_not_found_code
            and (exc.code != InvalidParams.code or "uri" in data)
            and isinstance(uri, str)
        ):
            raise ResourceNotFound(uri, exc.message) from None
        if exc.code == wire.MISSING_CLIENT_CAPABILITY and not fwd.modern:
            if fwd.method == wire.TOOLS_CALL:  # what a handshake server makes of the same failure
                return tool_error(f"Tool {fwd.params.get('name')!r} failed: {exc.message}")
            raise InternalError(f"Internal error: {exc.message}") from None
        raise exc

    def _finished(self, fwd: Forwarded, result: Any) -> Any:
        if fwd.method in ASKING_METHODS:
            result = fit_result(fwd.method, result, fwd.revision)
        if fwd.modern:
            cacheable = not any(field in fwd.params for field in _MRTR_FIELDS)
            return finish(self, fwd.revision, fwd.method, result, cacheable=cacheable)
        return handshake_result(result)

    async def _served_too(self, fwd: Forwarded, call: Call, call_next: CallNext) -> Any:
        """Served by the core, and what the upstream is asked follows (log level, subscriptions)."""
        relay = self._relay
        if call.method == wire.LISTEN:
            filters = call.params.get("notifications")
            uris = filters.get("resourceSubscriptions") if type(filters) is dict else None
            uris = [u for u in uris if type(u) is str] if type(uris) is list else []
            async with self._watching(uris):
                return await call_next(call)
        result = await call_next(call)
        if call.method == wire.SET_LEVEL:
            await _quietly(relay.sync_log_level())
        elif call.method == wire.RESOURCES_SUBSCRIBE:
            try:
                await relay.sync_subscriptions()
            except JsonRpcError:
                if fwd.session is not None:
                    fwd.session.subscriptions = fwd.session.subscriptions - {call.params.get("uri")}
                raise
        else:
            await _quietly(relay.sync_subscriptions())
        return result

    @contextlib.asynccontextmanager
    async def _watching(self, uris: list[str]) -> AsyncIterator[None]:
        """Hold ``uris`` among those the upstream reports updates of, while a listen stream (this
        proxy's, or that of a server it is mounted into) is open."""
        relay = self._relay
        relay.listen_uris.update(uris)
        await _quietly(relay.sync_subscriptions())
        try:
            yield
        finally:
            relay.listen_uris.subtract(uris)
            if self._tg is not None:  # (the upstream connection may be closing)
                self._spawn(_quietly, relay.sync_subscriptions())


def _upstream_connection(server: Server) -> AbstractAsyncContextManager[Client]:
    """The proxy's lifespan: its upstream connection."""
    assert isinstance(server, Proxy)
    return server._connected()


def _offers(capabilities: dict[str, Any], need: str) -> bool:
    if need == "resources.subscribe":
        resources = capabilities.get("resources")
        return isinstance(resources, dict) and bool(resources.get("subscribe"))
    return need in capabilities


class _Refused(Exception):
    """The client answered one of the upstream's input requests with an error."""


def _asker(fwd: Forwarded, method: str) -> Callable[[Any], Awaitable[Any]]:
    async def ask(params: Any) -> Any:
        try:
            return await fwd.ask(method, params)
        except JsonRpcError as exc:
            raise _Refused(f"the client answered {method} with error {exc.code}: {exc.message}") from None

    return ask


async def _quietly(step: Awaitable[None]) -> None:
    """Run a step whose failure only the log should hear of (the request it follows succeeded)."""
    try:
        await step
    except Exception as exc:
        logger.warning("the upstream refused: %s", exc)
