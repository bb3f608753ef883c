"""How a :class:`~jsonrpc_mcp.server.Server` is served: over any message stream, stdio, or HTTP.

A mixin of the server, kept apart from its registries: the live sessions (``attach`` /
``detach``), the serving entry points, and the telemetry switch. Every way of serving enters
:meth:`Server.running`, where telemetry is switched on if the application configured
OpenTelemetry (see :mod:`jsonrpc_mcp.telemetry`; ``Server(telemetry=...)`` decides otherwise).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, cast

import anyio

from ..jsonrpc.endpoint import Endpoint
from ._session import MCP_CANCEL, ServerSession

if TYPE_CHECKING:
    import weakref
    from contextlib import AbstractAsyncContextManager

    from ..telemetry import Telemetry
    from ..transports.base import MessageStream
    from ._server import Server

__all__ = ["Serving"]

logger = logging.getLogger("jsonrpc_mcp.server")


class Serving:
    """The serving half of :class:`~jsonrpc_mcp.server.Server` (a mixin)."""

    request_timeout: float | None
    telemetry: Telemetry | None  # the telemetry middleware, once switched on
    _telemetry_wanted: bool | None  # Server(telemetry=...): None decides when serving starts
    if TYPE_CHECKING:
        _sessions: weakref.WeakSet[ServerSession]

        def running(self) -> AbstractAsyncContextManager[Any]: ...

    def _server(self) -> Server:
        return cast("Server", self)

    def _start_telemetry(self) -> None:
        """Switch telemetry on once, when serving starts: if asked for, or (``telemetry=None``) if
        the application configured OpenTelemetry. Costs nothing when nobody did."""
        if self.telemetry is not None or self._telemetry_wanted is False:
            return
        from .. import telemetry

        if self._telemetry_wanted or telemetry.configured():
            self.telemetry = telemetry.instrument(self._server())

    # -- serving ----------------------------------------------------------------------------------
    def attach(self, session: ServerSession) -> None:
        """Count ``session`` among the live ones (it gets list_changed and resource updates)."""
        self._sessions.add(session)
        if self.telemetry is not None:
            self.telemetry.session_started(session)

    def detach(self, session: ServerSession) -> None:
        self._sessions.discard(session)
        if self.telemetry is not None:
            self.telemetry.session_ended(session)

    async def serve(self, stream: MessageStream, *, transport: str = "stream") -> None:
        """Serve one connection over a message stream until the client closes it (``transport``
        names the carrier for middleware: "stdio", "memory", ...)."""
        session = ServerSession(self._server(), transport=transport)
        endpoint = Endpoint(stream, session, request_timeout=self.request_timeout, cancel=MCP_CANCEL)
        session.outbound = endpoint
        async with self.running():
            self.attach(session)
            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(session.run_notifier)
                    await endpoint.run()
                    tg.cancel_scope.cancel()
            finally:
                self.detach(session)

    def _run_http(self, given: dict[str, Any]) -> None:
        from .._serve_options import serve_options
        from ..http._serve import serve_http

        options = serve_options().parse_args([])
        unknown = sorted(set(given) - set(vars(options)) | {"http", "workers"} & set(given))
        if unknown:
            raise TypeError(f"not an option of transport='http': {', '.join(unknown)}")
        vars(options).update(given, http=True)
        status = serve_http(self._server(), options, target="", target_args=[])
        if status:
            raise SystemExit(status)

    async def serve_stdio(self, *, max_line: int | None = None) -> None:
        """Serve over this process's stdin/stdout until stdin closes (``max_line``: the longest
        line read, 4 MiB by default)."""
        from ..transports.stdio import stdio_server

        options: dict[str, Any] = {} if max_line is None else {"max_line": max_line}
        async with stdio_server(**options) as stream:
            await self.serve(stream, transport="stdio")

    def http_app(self, **options: Any) -> Any:
        """The ASGI application serving this server over HTTP (see :class:`jsonrpc_mcp.http.McpHttpApp`)."""
        from ..http import McpHttpApp

        return McpHttpApp(self._server(), **options)

    def run(self, transport: str = "stdio", *, max_line: int | None = None, **http_options: Any) -> None:
        """Serve until stopped (blocking): over stdio (then exit promptly even if a sync handler is
        still busy), or with ``transport="http"`` over Streamable HTTP as ``jsonrpc-mcp serve --http``
        does; ``http_options`` are that command's options by their Python names (``host``, ``port``
        (0: any free port), ``path``, ``stateless``, ``json_response``, ``session_timeout``...).
        The URL served is printed on stderr; a failure to start is a ``SystemExit`` with its line."""
        if transport in ("http", "streamable-http"):
            self._run_http(http_options)
            return
        if transport != "stdio":
            raise ValueError(f"transport must be 'stdio' or 'http', not {transport!r}")
        if http_options:
            raise TypeError(
                f"options for transport='http' given with stdio: {', '.join(sorted(http_options))}"
            )
        anyio.run(lambda: self.serve_stdio(max_line=max_line))
        deadline = time.monotonic() + 0.5
        for thread in threading.enumerate():
            if thread is not threading.main_thread() and not thread.daemon:
                thread.join(max(0.0, deadline - time.monotonic()))
        lingering = [
            t
            for t in threading.enumerate()
            if t is not threading.main_thread() and not t.daemon and t.is_alive()
        ]
        if lingering:
            logger.info("exiting with %d busy worker thread(s) abandoned", len(lingering))
            sys.stderr.flush()
            os._exit(0)
