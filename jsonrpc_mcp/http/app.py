"""MCP over HTTP: an ASGI 3 application serving Streamable HTTP and the legacy HTTP+SSE transport.

Theory of operation
-------------------
:class:`McpHttpApp` is composed of parts, each an object holding only the options it reads: the
session table with its reaping (:class:`~._sessions.SessionTable`), the handshake-era POST, GET and
DELETE (:class:`~._streamable.HandshakeHttp`), the stateless POST of 2026-07-28 on
(:class:`~._stateless.StatelessHttp`) and the legacy HTTP+SSE transport
(:class:`~._legacy_sse.LegacySse`); they share the app's :class:`~._health.Lifecycle` (its phase,
and the signal that it is shutting down). The app itself is the gate and the router: it answers the
health probes, checks Host and Origin (:mod:`._security`) and the bearer token (:mod:`._auth`), then
finds the route (path, then method) in its table of routes, as Starlette's router holds its routes.
A POST to the MCP path is checked (Content-Type, Accept), read and decoded once here, and the
server's router decides its era (``Router.stateless``: the app decides nothing about eras): a
stateless one goes to :class:`~._stateless.StatelessHttp`, anything else to
:class:`~._streamable.HandshakeHttp`. ASGI helpers are in :mod:`._asgi`, resumable streams in
:mod:`._events`. Each module's docstring tells its part of the story. The lifespan and the shutdown
(ending every stream, freeing every session) are here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio
import orjson

from ..jsonrpc import codec
from ..jsonrpc.errors import INTERNAL_ERROR, INVALID_REQUEST
from ..jsonrpc.messages import Invalid
from ..revisions import assumed_http_revision
from ..server._pipeline import current_access_token, current_http_headers
from ..wire import LISTEN as LISTEN
from ._asgi import EVENT_STREAM as EVENT_STREAM
from ._asgi import JSON as JSON
from ._asgi import SESSION_HEADER as SESSION_HEADER
from ._asgi import VERSION_HEADER as VERSION_HEADER
from ._asgi import Message as Message
from ._asgi import Receive as Receive
from ._asgi import Scope as Scope
from ._asgi import Send as Send
from ._asgi import (
    _accepts,
    _BodyTimeout,
    _Disconnected,
    _error,
    _headers,
    _is_json_content,
    _read_body,
    _respond,
)
from ._asgi import error_body as error_body
from ._auth import (
    PRINCIPAL,
    WELL_KNOWN_PRM,
    AuthSettings,
    authenticate,
    principal_of,
    prm_paths,
    protected_resource_metadata,
)
from ._events import EventStore, InMemoryEventStore
from ._health import DRAINING, READY, STARTING, Lifecycle, ReadinessCheck, probe
from ._legacy_sse import LegacySse
from ._security import Decision, TransportSecurity
from ._sessions import HttpSession as HttpSession
from ._sessions import SessionTable
from ._stateless import StatelessHttp
from ._stateless import _ModernCall as _ModernCall
from ._streamable import HandshakeHttp
from ._streamable import _PostChannel as _PostChannel

if TYPE_CHECKING:
    from ..server._server import Server
    from ._redis import RedisBackend

Endpoint = Callable[[Scope, Receive, Send], Awaitable[None]]

__all__ = ["McpHttpApp"]

logger = logging.getLogger("jsonrpc_mcp.http")


class McpHttpApp:
    """The ASGI application. ``McpHttpApp(server)`` serves ``server`` at ``/mcp``.

    Options: ``path``; ``json_response`` (never answer with SSE); ``stateless`` (no sessions, for several
    workers); ``allowed_hosts`` / ``allowed_origins`` (patterns; default: the loopback names when bound to
    loopback, else the bound host) or a ready ``security`` policy; ``auth`` (bearer tokens checked by your
    verifier, RFC 9728 metadata served at its well-known paths); ``max_body`` (bytes, 413 above);
    ``body_timeout`` (seconds a request body may take to arrive, 408 past it; None: no limit);
    ``session_idle_timeout`` (seconds); ``max_sessions`` (at most that many open at once, default 10,000:
    past it an ``initialize`` is answered 503 with a JSON-RPC error and ``Retry-After``, after the idle
    ones were ended; None: no limit); ``max_requests_per_session`` (POSTs of one session in flight at
    once, default 256, those whose client went away included: they run on, as the spec asks; past it
    a POST is answered 429 with a JSON-RPC error and ``Retry-After``; None: no limit);
    ``event_store_factory`` (one store per session); ``legacy_sse`` with
    ``sse_path`` and ``message_path`` (2024-11-05 HTTP+SSE); ``retry_ms`` (the SSE retry hint);
    ``keepalive`` (seconds between SSE comments); ``health_path`` / ``ready_path`` (the liveness and
    readiness probes, unauthenticated; None: not served); ``redis`` (a ``redis://`` URL or a ready
    :class:`~._redis.RedisBackend`: events in Redis Streams, notifications across instances, a readiness
    check; needs the ``redis`` extra).
    """

    def __init__(
        self,
        server: Server,
        *,
        path: str = "/mcp",
        json_response: bool = False,
        stateless: bool = False,
        allowed_hosts: Iterable[str] | None = None,
        allowed_origins: Iterable[str] | None = None,
        security: TransportSecurity | None = None,
        auth: AuthSettings | None = None,
        max_body: int = 4 * 1024 * 1024,
        body_timeout: float | None = 30.0,
        session_idle_timeout: float = 1800.0,
        max_sessions: int | None = 10_000,
        max_requests_per_session: int | None = 256,
        event_store_factory: Callable[[], EventStore] = InMemoryEventStore,
        legacy_sse: bool = True,
        sse_path: str = "/sse",
        message_path: str = "/messages/",
        retry_ms: int = 1000,
        keepalive: float = 15.0,
        health_path: str | None = "/healthz",
        ready_path: str | None = "/readyz",
        redis: str | RedisBackend | None = None,
    ) -> None:
        if body_timeout is not None and body_timeout <= 0:
            raise ValueError("body_timeout must be positive (or None: no limit)")
        self.server = server
        # what the app itself reads: the routes, the POST's checks and body, the gate
        self.path = path.rstrip("/") or "/"
        self.json_response = json_response
        self.stateless = stateless
        self.max_body = max_body
        self.body_timeout = body_timeout
        self.legacy_sse = legacy_sse and not stateless
        self.sse_path = sse_path
        self.message_path = message_path
        self.retry_ms = retry_ms
        self.health_path, self.ready_path = health_path, ready_path
        self.life = Lifecycle()  # starting (during the lifespan startup), ready, draining: see _health
        self.readiness_checks: list[ReadinessCheck] = []
        self.redis: RedisBackend | None = None
        if redis is not None:
            from ._redis import RedisBackend

            self.redis = RedisBackend.from_url(redis) if isinstance(redis, str) else redis
        self.allowed_hosts = list(allowed_hosts) if allowed_hosts is not None else None
        self.allowed_origins = list(allowed_origins) if allowed_origins is not None else None
        self.security = security
        self._policies: dict[str, TransportSecurity] = {}
        self._decisions: dict[tuple[Any, ...], Decision] = {}
        self._refusals: dict[tuple[Any, ...] | None, int] = {}  # see _post_refusal
        self.auth = auth
        self._mounted: dict[tuple[int, str], AuthSettings] = {}  # auth for a mount prefix (_mounted_auth)
        # the server's own revisions (those handed to Server(revisions=...) included), by the raw
        # MCP-Protocol-Version value (latin-1 is one-to-one: the same verdicts, no decoding)
        revisions = server.revisions
        self._by_header = {r.version.encode("latin-1"): r for r in revisions}
        # -- the parts, each with the options it reads
        self.table = SessionTable(
            server,
            session_idle_timeout=session_idle_timeout,
            max_sessions=max_sessions,
            event_store_factory=event_store_factory,
            redis=self.redis,
        )
        self.handshake = HandshakeHttp(
            server,
            self.table,
            self.life,
            self._by_header,
            assumed_http_revision(revisions),  # what a header-less handshake-era request speaks
            json_response=json_response,
            stateless=stateless,
            retry_ms=retry_ms,
            keepalive=keepalive,
            redis=self.redis,
            max_requests_per_session=max_requests_per_session,
        )
        self.modern = StatelessHttp(server, self.life, json_response=json_response, keepalive=keepalive)
        self.legacy: LegacySse | None = None
        if self.legacy_sse:
            self.legacy = LegacySse(
                server, self.life, message_path=message_path, max_body=max_body, body_timeout=body_timeout
            )
        # -- the routes: path -> (method -> endpoint, the Allow header of a 405 there)
        self.routes: dict[str, tuple[dict[str, Endpoint], list[tuple[bytes, bytes]]]] = {}
        if self.legacy is not None:
            self.routes[sse_path] = ({"GET": self.legacy.get}, [])
            self.routes[message_path] = ({"POST": self.legacy.post}, [])
        mcp: dict[str, Endpoint] = {
            "POST": self._post,
            "GET": self.handshake.get,
            "DELETE": self.handshake.delete,
        }
        self.routes[self.path] = (mcp, [(b"allow", b"GET, POST, DELETE")])
        if self.redis is not None:
            self.redis.attach(self)

    @property
    def sessions(self) -> dict[str, HttpSession]:
        """The open Streamable HTTP sessions, by id (the session table's)."""
        return self.table.sessions

    @property
    def legacy_sessions(self) -> dict[str, Any]:
        """The open legacy HTTP+SSE connections, by session id."""
        return self.legacy.sessions if self.legacy is not None else {}

    @property
    def phase(self) -> str:
        """Starting, ready or draining (see :mod:`._health`)."""
        return self.life.phase

    # -- ASGI entry point -------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            current_http_headers.set(scope["headers"])  # for middleware (Call.http_headers), telemetry
            try:
                await self._http(scope, receive, send)
            except _Disconnected:
                logger.debug("client disconnected while sending its request")
            except _BodyTimeout as exc:
                client = scope.get("client")
                logger.warning("408 to %s: %s", f"{client[0]}:{client[1]}" if client else "a client", exc)
                with contextlib.suppress(Exception):  # a client that went away cannot be told
                    await _error(
                        send, 408, INVALID_REQUEST, f"Request Timeout: {exc}", [(b"connection", b"close")]
                    )
            except Exception:
                # a bug or a failing plug-in (event store, ...): answer with a JSON-RPC error, never
                # with the server's bare 500 (if the response had started, this send just fails)
                logger.exception("unhandled error serving %s %s", scope.get("method"), scope.get("path"))
                with contextlib.suppress(Exception):
                    await _error(send, 500, INTERNAL_ERROR, "Internal error")
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """Served directly (not mounted): run the server's lifespan from startup to shutdown, and
        reap idle sessions when no request comes to do it."""
        life = self.life
        async with contextlib.AsyncExitStack() as stack, anyio.create_task_group() as tg:
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    life.phase = STARTING
                    try:
                        if self.redis is not None:
                            await stack.enter_async_context(self.redis.running())
                        await stack.enter_async_context(self.server.running())
                    except Exception as exc:  # the server cannot start: say why, in one line
                        logger.error("the lifespan of server %r failed: %s", self.server.name, exc)
                        failed = f"{type(exc).__name__}: {exc}"
                        await send({"type": "lifespan.startup.failed", "message": failed})
                        return
                    tg.start_soon(self.table.reap_periodically)
                    if life.phase == STARTING:
                        life.phase = READY
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    tg.cancel_scope.cancel()
                    await self.aclose()
                    await stack.aclose()
                    await send({"type": "lifespan.shutdown.complete"})
                    return

    async def aclose(self) -> None:
        """Shut down: end every stream and free every session."""
        self.life.shutting_down.set()
        self.modern.end_subscriptions()
        await self.table.aclose()
        if self.legacy is not None:
            await self.legacy.aclose()

    def begin_drain(self) -> None:
        """Stop being ready (the readiness probe answers 503) and refuse new sessions (503 and
        Retry-After); what is open carries on. The first step of a graceful shutdown."""
        self.life.phase = DRAINING

    def begin_shutdown(self) -> None:
        """Ask long-lived streams to end now (call from the event loop, e.g. a signal handler).

        Only the standalone (GET) streams, which never end by themselves: each gets a final event
        (an id to resume from, and the retry hint) so that its client reconnects, to another
        instance behind a load balancer; a request's stream ends with its result, which the
        graceful shutdown waits for and which must still be delivered.
        """
        self.begin_drain()
        self.life.shutting_down.set()
        self.table.end_standalone(self.retry_ms)
        self.modern.end_subscriptions()

    def _mounted_auth(self, auth: AuthSettings, root: str) -> AuthSettings:
        """``auth`` for an app mounted under ``root``: the well-known location at the host's root is
        outside the mount (whoever serves it, it is not this app), so unless the settings name a
        metadata URL, challenges point to the PRM document inside the mount, where it is served."""
        if auth.resource_metadata_url is not None:
            return auth
        key = (id(auth), root)
        found = self._mounted.get(key)
        if found is None:
            parts = urlsplit(auth.resource_server_url)
            inside = f"{parts.scheme}://{parts.netloc}{root}{WELL_KNOWN_PRM}{self.path}"
            found = self._mounted[key] = dataclasses.replace(auth, resource_metadata_url=inside)
        return found

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        root = scope.get("root_path", "")
        if root and path.startswith(root) and path[len(root) : len(root) + 1] in ("", "/"):
            # mounted under a prefix (Starlette's Mount, uvicorn --root-path): the ASGI path keeps
            # the prefix and root_path names it, so routes are matched on what follows it
            path = path[len(root) :] or "/"
        method = scope["method"]
        if (path == self.health_path or path == self.ready_path) and method in ("GET", "HEAD"):
            # probed by address, with no token: before the Host/Origin check and authentication
            phase = self.life.phase if path == self.ready_path else None
            await probe(send, head=method == "HEAD", phase=phase, checks=self.readiness_checks)
            return
        decision = self._check_security(scope)
        if not decision.allowed:
            await _error(send, decision.status, INVALID_REQUEST, decision.reason)
            return
        if self.auth is not None:
            auth = self.auth if not root else self._mounted_auth(self.auth, root)
            if method == "GET" and (
                path in prm_paths(urlsplit(auth.resource_server_url).path)
                or (root and path == WELL_KNOWN_PRM + self.path)
            ):
                document = orjson.dumps(protected_resource_metadata(auth))
                await _respond(send, 200, document, [(b"cache-control", b"max-age=3600")])
                return
            verdict = await authenticate(scope["headers"], scope.get("query_string", b""), auth)
            if not verdict.ok:
                await _error(
                    send,
                    verdict.status,
                    INVALID_REQUEST,
                    verdict.description or "Unauthorized",
                    verdict.headers,
                )
                return
            assert verdict.access_token is not None
            scope[PRINCIPAL] = principal_of(verdict.access_token)  # the session it opens is bound to it
            current_access_token.set(verdict.access_token)  # for middleware: Call.access_token
        self.table.reap_idle()
        route = self.routes.get(path)
        if route is None and path.rstrip("/") == self.path:  # the MCP path, with a trailing slash
            route = self.routes[self.path]
        if route is None:
            await _error(send, 404, INVALID_REQUEST, f"Not found: {path}")
            return
        endpoint = route[0].get(method)
        if endpoint is None:
            await _error(send, 405, INVALID_REQUEST, f"Method {method} not allowed", route[1])
            return
        await endpoint(scope, receive, send)

    # -- security ---------------------------------------------------------------------------------
    def _check_security(self, scope: Scope) -> Decision:
        """Host and Origin against the policy; decisions are remembered per (Host, Origin) values."""
        headers = scope["headers"]
        server = scope.get("server")
        bound = server[0] if server else None
        index = _headers(scope)
        if len(index) == len(headers):  # no header repeated: at most one Host and one Origin
            key: tuple[Any, ...] = (bound, index.get(b"host"), index.get(b"origin"))
        else:
            key = (bound, None, None, *(h for h in headers if h[0] == b"host" or h[0] == b"origin"))
        decision = self._decisions.get(key)
        if decision is None:
            decision = self._security(scope).check(headers)
            if len(self._decisions) >= 1024:
                self._decisions.clear()
            self._decisions[key] = decision
        return decision

    def _security(self, scope: Scope) -> TransportSecurity:
        """The Host/Origin policy: given, or derived from the address the server is bound to."""
        if self.security is not None:
            return self.security
        server = scope.get("server")
        bound, port = (str(server[0]), server[1]) if server else ("127.0.0.1", None)
        policy = self._policies.get(bound)
        if policy is None:
            policy = TransportSecurity.for_bind(
                bound, port, allowed_hosts=self.allowed_hosts, allowed_origins=self.allowed_origins
            )
            self._policies[bound] = policy
        return policy

    # -- POST -------------------------------------------------------------------------------------
    def _post_refusal(self, scope: Scope, index: dict[bytes, bytes]) -> int:
        """0 when a POST's Content-Type and Accept will do, else the status refusing it (415, 406);
        remembered per pair of values (clients send few distinct ones; a flood is not cached).
        ``index``: the request's headers by name (``_headers``)."""
        key: tuple[Any, ...] | None = (index.get(b"content-type"), index.get(b"accept"), self.json_response)
        try:
            refusal = self._refusals.get(key)
        except TypeError:  # values that are not bytes (not hashable): decide without caching
            refusal, key = None, None
        if refusal is None:
            if not _is_json_content(scope):
                refusal = 415
            elif not _accepts(scope, JSON) or (not self.json_response and not _accepts(scope, EVENT_STREAM)):
                refusal = 406
            else:
                refusal = 0
            if key is not None and len(self._refusals) < 256:
                self._refusals[key] = refusal
        return refusal

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        index = _headers(scope)
        refusal = self._post_refusal(scope, index)
        if refusal == 415:
            await _error(
                send, 415, INVALID_REQUEST, "Unsupported Media Type: the body must be application/json"
            )
            return
        if refusal == 406:
            await _error(
                send,
                406,
                INVALID_REQUEST,
                "Not Acceptable: Accept must list application/json and text/event-stream",
            )
            return
        body = await _read_body(scope, receive, self.max_body, self.body_timeout)
        if body is None:
            await _error(send, 413, INVALID_REQUEST, f"Payload Too Large: the limit is {self.max_body} bytes")
            return
        message = codec.decode(body)
        if type(message) is Invalid:
            await _respond(send, 400, codec.encode_error(message.id, message.error, omit_null_id=True))
            return
        raw_version = index.get(VERSION_HEADER)
        if raw_version is not None and type(raw_version) is not bytes:
            raw_version = bytes(raw_version)
        version = self._by_header.get(raw_version) if raw_version is not None else None
        if self.server.router.stateless(message, version):  # (the router decides the era)
            await self.modern.post(scope, receive, send, message)
            return
        await self.handshake.post(scope, send, message, raw_version, version)
