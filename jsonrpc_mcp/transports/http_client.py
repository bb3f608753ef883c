"""MCP over HTTP, client side: Streamable HTTP (2025-03-26 and later), with fallback to the
deprecated HTTP+SSE transport (2024-11-05).

The transport is a :class:`~jsonrpc_mcp.transports.base.MessageStream`, so :class:`Client` runs over
it unchanged::

    async with connect_http("http://127.0.0.1:8000/mcp") as stream, Client(stream) as client:
        await client.initialize()

This module keeps the names it has always offered; the implementation lives in
:mod:`jsonrpc_mcp.transports.http`: ``_pool`` (HTTP/1.1 connections, the pool, the mapping of
network errors), ``_mcp_headers`` (the ``Mcp-*`` headers of 2026-07-28, shared with the server),
``_streamable`` (Streamable HTTP: POSTs, event streams, resumption, session replay; its docstring
is the theory of operation), ``_legacy`` (the HTTP+SSE fallback) and ``_connect`` (the openers).
"""

from __future__ import annotations

from .http._authz import AuthorizationError, HttpAuth
from .http._connect import connect_http, legacy_sse, streamable_http
from .http._mcp_headers import encode_header_value, header_parameters, modern_headers
from .http._messages import DEFAULT_MAX_MESSAGE, DEFAULT_READ_TIMEOUT, DEFAULT_TIMEOUT
from .http._pool import split_url
from .http._streamable import HttpClientStream

__all__ = [
    "AuthorizationError",
    "DEFAULT_MAX_MESSAGE",
    "DEFAULT_READ_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "HttpAuth",
    "HttpClientStream",
    "connect_http",
    "encode_header_value",
    "header_parameters",
    "legacy_sse",
    "modern_headers",
    "streamable_http",
]

_split_url = split_url  # (kept importable from here for one release: the tests import it)
