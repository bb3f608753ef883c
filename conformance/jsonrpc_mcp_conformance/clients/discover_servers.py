"""The scenario servers of era detection (2026-07-28, ``versioning#backward-compatibility...``): a
legacy server, which speaks only the handshake era, for a client that asks for 2026-07-28 and must
fall back to ``initialize`` when its modern request is refused with an error that is not a
recognised modern one.

``scenario_servers.py`` adds :data:`SERVERS` and :data:`HTTP_WRAPPERS` to its tables. Two servers,
two different refusals, so that a client whose fallback is keyed to one error code is seen:

* ``discover-fallback``: over stdio ``server/discover`` is answered ``-32601`` (Method not found);
  over HTTP the library's own refusal of a legacy-only endpoint (``400``, a JSON-RPC ``-32600``
  error about the ``MCP-Protocol-Version`` header).
* ``discover-fallback-any-error``: over stdio the library's own refusal of a request before
  ``initialize`` (``-32600``, Invalid Request); over HTTP a ``400`` with an empty body.

The client is judged from the recorded traffic (``discover_checks.py``), never from here.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from jsonrpc_mcp import JsonRpcError, Server
from jsonrpc_mcp.revisions import HANDSHAKE_REVISIONS
from jsonrpc_mcp.server import Call, CallNext

from .buffered import read_body

__all__ = ["CACHE_RESOURCES", "DISCOVER", "HTTP_WRAPPERS", "SERVERS", "EmptyRefusal"]

ASGIApp = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]
NAME, VERSION = "conformance-client-scenario", "1.0.0"
DISCOVER = "server/discover"
MODERN_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


def _legacy() -> Server:
    """A server of the handshake revisions only, with the one tool the client is to list."""
    server = Server(NAME, version=VERSION, revisions=HANDSHAKE_REVISIONS)

    @server.tool()
    def add_numbers(a: float, b: float) -> str:
        """Add two numbers."""
        return f"The sum of {a} and {b} is {a + b}"

    return server


def _method_not_found(base: str) -> Server:
    """stdio: ``server/discover`` is an unknown method (-32601), as many legacy servers answer it."""
    server = _legacy()

    @server.middleware
    async def unknown_discover(call: Call, call_next: CallNext) -> Any:
        if call.method == DISCOVER:
            raise JsonRpcError(f"Method not found: {DISCOVER}", code=-32601)
        return await call_next(call)

    return server


def _own_refusal(base: str) -> Server:
    """stdio: the library's legacy server as it is (-32600 for a request before ``initialize``)."""
    return _legacy()


def _is_modern_post(body: bytes) -> bool:
    """A POST holding a request that carries the 2026-07-28 envelope (or is ``server/discover``)."""
    try:
        message = json.loads(body)
    except ValueError:
        return False
    if not isinstance(message, dict) or "method" not in message:
        return False
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return message.get("method") == DISCOVER or (isinstance(meta, dict) and MODERN_VERSION_KEY in meta)


class EmptyRefusal:
    """HTTP only: a POST holding a modern request (one with the 2026-07-28 envelope) is refused
    with ``400`` and an empty body, as a legacy server may refuse a request outside a session;
    everything else goes to ``app``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body, replayed = await read_body(receive)
        if not _is_modern_post(body):
            await self.app(scope, replayed, send)
            return
        await send({"type": "http.response.start", "status": 400, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})


# -- caching-hints (2026-07-28): tools/list says "stale at once", resources/read "fresh for long" ---------
CACHE_RESOURCES = {"test://cache/first": "the first resource", "test://cache/second": "the second resource"}
LONG_TTL_MS = 600_000


def _caching(base: str) -> Server:
    """A 2026-07-28 server whose ``tools/list`` results carry ``ttlMs: 0`` (to be re-fetched whenever
    needed) and whose other cacheable results are fresh for ten minutes, ``public``: a client caching
    ``resources/read`` by method alone would answer the second read from the first's."""
    server = Server(NAME, version=VERSION, cache_ttl_ms=LONG_TTL_MS, cache_scope="public")

    @server.tool()
    def add_numbers(a: float, b: float) -> str:
        """Add two numbers."""
        return f"The sum of {a} and {b} is {a + b}"

    for uri, text in CACHE_RESOURCES.items():

        def read(text: str = text) -> str:
            return text

        server.add_resource(uri, read, name=uri.rsplit("/", 1)[-1], mime_type="text/plain")

    @server.middleware
    async def stale_tools(call: Call, call_next: CallNext) -> Any:
        result = await call_next(call)
        if call.method == "tools/list" and isinstance(result, dict):
            result = {**result, "ttlMs": 0}
        return result

    return server


SERVERS: dict[str, Callable[[str], Server]] = {
    "discover-fallback": _method_not_found,
    "discover-fallback-any-error": _own_refusal,
    "caching-hints": _caching,
}
HTTP_WRAPPERS: dict[str, Callable[[ASGIApp], ASGIApp]] = {"discover-fallback-any-error": EmptyRefusal}
