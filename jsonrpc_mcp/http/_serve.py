"""``jsonrpc-mcp serve --http``: run the ASGI app under uvicorn, with a graceful shutdown."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import importlib.util
import inspect
import json
import logging
import os
import secrets
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import uvicorn

from .._auth_options import auth_settings, auth_spec
from .._targets import load_target
from ..server._mrtr import STATE_KEY_ENV
from .app import McpHttpApp

if TYPE_CHECKING:
    from ..server._server import Server

__all__ = ["serve_http", "worker_app"]

logger = logging.getLogger("jsonrpc_mcp.http")
_ENV = "JSONRPC_MCP_HTTP_WORKER"


def _app_options(options: argparse.Namespace) -> dict[str, Any]:
    return {
        "path": options.path,
        "stateless": options.stateless,
        "json_response": options.json_response,
        "session_idle_timeout": options.session_timeout,
        "max_sessions": options.max_sessions or None,
        "max_requests_per_session": getattr(options, "max_requests_per_session", 256) or None,
        "body_timeout": getattr(options, "body_timeout", 30.0) or None,
        "health_path": getattr(options, "health_path", "/healthz") or None,
        "ready_path": getattr(options, "ready_path", "/readyz") or None,
        "redis": getattr(options, "redis", None),
    }


def serve_http(server: Server, options: argparse.Namespace, *, target: str, target_args: list[str]) -> int:
    """Serve until SIGINT/SIGTERM; open streams are ended and sessions freed before exiting."""
    log_level = logging.getLevelName(logging.getLogger().level).lower()
    if log_level not in ("debug", "info", "warning", "error", "critical"):
        log_level = "warning"
    common: dict[str, Any] = {
        "host": options.host,
        "port": options.port,
        "log_level": log_level
        if log_level in ("debug", "info", "warning", "error", "critical")
        else "warning",
        "access_log": False,
        "lifespan": "on",
        "timeout_graceful_shutdown": getattr(options, "drain_grace", 5.0),  # for requests in flight
    }
    certfile, keyfile = getattr(options, "ssl_certfile", None), getattr(options, "ssl_keyfile", None)
    if certfile:  # https: uvicorn terminates TLS
        common.update(ssl_certfile=certfile, ssl_keyfile=keyfile)
    scheme = "https" if certfile else "http"
    redis_url = getattr(options, "redis", None)
    if redis_url:  # checked before anything starts: an unreachable Redis is one line and exit 1
        problem = _redis_problem(redis_url)
        if problem is not None:
            sys.stderr.write(f"jsonrpc-mcp: cannot use --redis: {problem}\n")
            return 1
    try:  # bound here, before anything starts: a port in use is one line and exit 1, no lifespan traces
        sock = _bind(options.host, options.port)
    except OSError as exc:
        where = f"{scheme}://{_host_port(options.host, options.port)}{options.path}"
        sys.stderr.write(f"jsonrpc-mcp: cannot serve at {where}: {exc.strerror or exc}\n")
        return 1
    port = sock.getsockname()[1]
    url = f"{scheme}://{_host_port(options.host, port)}{options.path}"
    try:  # --auth-*: settings checked (and secrets read) before serving anything
        auth = auth_spec(options, url)
        settings = auth_settings(auth)
    except (ValueError, ImportError, OSError) as exc:
        sock.close()
        sys.stderr.write(f"jsonrpc-mcp: {exc}\n")
        return 2
    try:
        loop, http = http_stack(getattr(options, "loop", None), getattr(options, "http_parser", None))
    except ValueError as exc:
        sock.close()
        sys.stderr.write(f"jsonrpc-mcp: {exc}\n")
        return 2
    common.update(loop=loop, http=http)
    # listening before the line that says so: a client that reads it may connect at once (the
    # --workers processes share this socket, so that --port 0 serves on the port announced). One
    # process says it once its startup (Redis, the lifespan) is done: a startup that fails is then
    # never announced; the workers' supervisor says it before they start theirs.
    sock.listen(common.get("backlog", 2048))

    def announce() -> None:
        sys.stderr.write(f"jsonrpc-mcp: serving {server.name} at {url}\n")
        sys.stderr.write(f"jsonrpc-mcp: event loop {loop}, HTTP parser {http}\n")
        sys.stderr.flush()

    if options.workers > 1:
        announce()
        # each worker process imports the app afresh: hand it the target and the options, and one
        # requestState key, so that a multi round-trip retry may land on any worker (with --redis,
        # each adopts the one kept in Redis, shared with the other machines too)
        if not redis_url:
            os.environ.setdefault(STATE_KEY_ENV, secrets.token_hex(32))
        os.environ[_ENV] = json.dumps(
            {
                "target": target,
                "args": target_args,
                "options": _app_options(options),
                "auth": auth,
                "drain_delay": getattr(options, "drain_delay", 0.0),
            }
        )
        from uvicorn.supervisors import Multiprocess

        # what uvicorn.run(..., workers=N) does, on the socket bound above rather than a new one
        # (older uvicorn versions take the workers' target, newer ones make their own)
        config = uvicorn.Config(
            "jsonrpc_mcp.http._serve:worker_app", factory=True, workers=options.workers, **common
        )
        takes_target = "target" in inspect.signature(Multiprocess).parameters
        run: dict[str, Any] = {"target": uvicorn.Server(config).run} if takes_target else {}
        Multiprocess(config, sockets=[sock], **run).run()
        return 0
    app = McpHttpApp(server, auth=settings, **_app_options(options))
    config = uvicorn.Config(app, **common)
    _GracefulServer(config, app, getattr(options, "drain_delay", 0.0), announce).run(sockets=[sock])
    return 0


LOOP_ENV, PARSER_ENV = "JSONRPC_MCP_LOOP", "JSONRPC_MCP_HTTP_PARSER"
_STACK = {"loop": ("uvloop", "asyncio"), "http": ("httptools", "h11")}  # (the fast one, the default)


def http_stack(loop: str | None = None, http: str | None = None) -> tuple[str, str]:
    """The event loop and HTTP/1.1 parser to serve with: the option, else ``$JSONRPC_MCP_LOOP`` /
    ``$JSONRPC_MCP_HTTP_PARSER``, else ``auto``: uvloop and httptools when installed (the ``fast``
    extra), asyncio and h11 otherwise. Raises ValueError for a choice that is not installed."""
    chosen = []
    for kind, value, env in (("loop", loop, LOOP_ENV), ("http", http, PARSER_ENV)):
        fast, default = _STACK[kind]
        wanted = (value or os.environ.get(env) or "auto").strip().lower()
        if wanted not in ("auto", fast, default):
            raise ValueError(f"${env} must be auto, {default} or {fast}, not {wanted!r}")
        installed = importlib.util.find_spec(fast) is not None
        if wanted == fast and not installed:
            raise ValueError(f"{fast} is not installed (pip install 'jsonrpc-mcp[fast]')")
        chosen.append(wanted if wanted != "auto" else fast if installed else default)
    return chosen[0], chosen[1]


def _redis_problem(url: str) -> str | None:
    """Why Redis at ``url`` cannot be used now (one line), or None."""
    from ._redis import RedisBackend, RedisUnavailable

    async def check() -> None:
        backend = RedisBackend.from_url(url)
        try:
            await backend.ping()
        finally:
            await backend.client.aclose()

    try:
        asyncio.run(check())
    except RedisUnavailable as exc:
        return str(exc)
    except Exception as exc:  # e.g. a URL the client refuses
        return f"{type(exc).__name__}: {exc}"
    return None


def _bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` (IPv6 when the host has a colon), as uvicorn binds one.

    ``IPPROTO_TCP`` is spelled out: asyncio sets ``TCP_NODELAY`` on the connections it accepts only
    when the listening socket's ``proto`` says TCP, and without it every small response waits out
    the client's delayed ACK (about 40 ms a request on keep-alive connections)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class _Shutdown:
    """What SIGINT and SIGTERM do to a served app, on its event loop (for one process and for each
    ``--workers`` process alike): with ``drain_delay``, the first SIGTERM only makes the app drain
    (readiness fails, new sessions are refused) for that many seconds; then, or at once for SIGINT
    or a second signal, the long-lived streams are ended and ``exit`` (uvicorn's own shutdown) runs."""

    def __init__(self, app: McpHttpApp, drain_delay: float, exit: Callable[[int, Any], None]) -> None:
        self.app = app
        self.drain_delay = drain_delay
        self.exit = exit
        self._delayed: asyncio.TimerHandle | None = None

    def signalled(self, loop: asyncio.AbstractEventLoop, sig: int, frame: Any) -> None:
        if sig == signal.SIGTERM and self.drain_delay > 0 and self._delayed is None:
            self.app.begin_drain()
            self._delayed = loop.call_later(self.drain_delay, self._stop, sig, frame)
            return
        self._stop(sig, frame)

    def _stop(self, sig: int, frame: Any) -> None:
        if self._delayed is not None:
            self._delayed.cancel()
        self.app.begin_shutdown()
        self.exit(sig, frame)


class _GracefulServer(uvicorn.Server):
    """On SIGINT/SIGTERM, end the long-lived SSE streams first so that uvicorn's shutdown is prompt.

    With ``drain_delay``, the first SIGTERM only makes the app drain (readiness fails, new sessions
    are refused) for that many seconds, so that a load balancer stops sending it traffic while it
    still accepts some; then the shutdown proper begins. A second signal, or SIGINT, skips the wait.
    """

    def __init__(
        self,
        config: uvicorn.Config,
        app: McpHttpApp,
        drain_delay: float = 0.0,
        started: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(config)
        self.mcp_app = app
        self._shutdown = _Shutdown(app, drain_delay, super().handle_exit)
        self._started = started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's, then ``started`` (the line saying where it serves) unless startup failed."""
        await super().startup(sockets)
        if self._started is not None and not self.should_exit:
            self._started()

    def handle_exit(self, sig: int, frame: Any) -> None:
        # a signal handler may run between any two bytecodes of the loop: schedule, don't act here
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (yet, or any more): nothing is streaming
            super().handle_exit(sig, frame)
            return
        loop.call_soon_threadsafe(self._shutdown.signalled, loop, sig, frame)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """uvicorn's, minus re-raising the signal once shut down: a signal is how this server is
        meant to stop, so the command then exits normally (status 0, no KeyboardInterrupt trace)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        original = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


def worker_app() -> _Worker:
    """The app of one ``--workers`` process (uvicorn calls this factory in each worker)."""
    spec = json.loads(os.environ[_ENV])
    sys.argv = [spec["target"], *spec["args"]]
    server = load_target(spec["target"])
    if os.environ.get("JSONRPC_MCP_LOG_FORMAT") == "json":
        from ..telemetry import use_json_logs

        use_json_logs(server)
    app = McpHttpApp(server, auth=auth_settings(spec.get("auth")), **spec["options"])
    return _Worker(app, float(spec.get("drain_delay", 0.0)))


class _Worker:
    """A ``--workers`` process's app: the :class:`McpHttpApp`, and the shutdown of
    :class:`_GracefulServer` for the plain uvicorn server each worker runs.

    uvicorn's supervisor passes SIGINT and SIGTERM on to its workers as SIGTERM. Once the lifespan
    has started (uvicorn's handlers are installed by then), this wraps them with the steps of
    :class:`_Shutdown`, then uvicorn's own graceful shutdown follows."""

    def __init__(self, app: McpHttpApp, drain_delay: float) -> None:
        self.app = app
        self.server = app.server
        self._previous: dict[int, Callable[[int, Any], None]] = {}  # uvicorn's handlers
        self._shutdown = _Shutdown(app, drain_delay, lambda sig, frame: self._previous[sig](sig, frame))

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return

        async def started(message: Any) -> None:
            if message["type"] == "lifespan.startup.complete":
                self._capture(asyncio.get_running_loop())
            await send(message)

        await self.app(scope, receive, started)

    def _capture(self, loop: asyncio.AbstractEventLoop) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous = signal.getsignal(sig)
            if callable(previous):
                self._previous[sig] = previous
                signal.signal(sig, functools.partial(self._signalled, loop))

    def _signalled(self, loop: asyncio.AbstractEventLoop, sig: int, frame: Any) -> None:
        # a signal handler may run between any two bytecodes of the loop: schedule, don't act here
        loop.call_soon_threadsafe(self._shutdown.signalled, loop, sig, frame)
