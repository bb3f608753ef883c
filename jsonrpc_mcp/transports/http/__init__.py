"""MCP over HTTP, the client side: Streamable HTTP (2025-03-26 and later), falling back to the
deprecated HTTP+SSE transport (2024-11-05).

The transport is a :class:`~jsonrpc_mcp.transports.base.MessageStream`, so :class:`Client` runs over
it unchanged (``Client.http(url)`` opens both at once)::

    async with connect_http("http://127.0.0.1:8000/mcp") as stream, Client(stream) as client:
        await client.connect()

The names are loaded on first use (PEP 562): the server side, which shares the ``Mcp-*`` header
rules of :mod:`._mcp_headers`, does not load the client's HTTP/1.1. The private modules:
``_pool`` (HTTP/1.1 connections over h11, the pool, the mapping of network errors),
``_mcp_headers`` (the ``Mcp-*`` headers of 2026-07-28), ``_streamable`` (Streamable HTTP: POSTs,
event streams, resumption, session replay; its docstring is the theory of operation), ``_legacy``
(the HTTP+SSE fallback), ``_authz`` (answering a 401/403) and ``_connect`` (the openers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_names

if TYPE_CHECKING:
    from ._authz import AuthorizationError, HttpAuth
    from ._connect import connect_http, legacy_sse, streamable_http
    from ._messages import DEFAULT_MAX_MESSAGE, DEFAULT_READ_TIMEOUT, DEFAULT_TIMEOUT
    from ._streamable import HttpClientStream

__all__ = [
    "DEFAULT_MAX_MESSAGE",
    "DEFAULT_READ_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "AuthorizationError",
    "HttpAuth",
    "HttpClientStream",
    "connect_http",
    "legacy_sse",
    "streamable_http",
]

if not TYPE_CHECKING:  # hidden from type checkers, which would take any unknown name for Any
    # the TYPE_CHECKING block as data, so no source is read (tests/test_lazy.py: they agree)
    __getattr__, __dir__ = lazy_names(
        globals(),
        {
            "._authz": ("AuthorizationError", "HttpAuth"),
            "._connect": ("connect_http", "legacy_sse", "streamable_http"),
            "._messages": ("DEFAULT_MAX_MESSAGE", "DEFAULT_READ_TIMEOUT", "DEFAULT_TIMEOUT"),
            "._streamable": ("HttpClientStream",),
        },
    )
