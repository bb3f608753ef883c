"""Deprecated location of the HTTP server's Host/Origin policy and checks: use :mod:`jsonrpc_mcp.http`.

The code now lives in ``jsonrpc_mcp/http/_security.py``, with the rest of the server side of MCP over
HTTP; this module re-exports its public names for one release.
"""

from __future__ import annotations

from ...http._security import (
    ALLOWED,
    LOOPBACK_HOSTS,
    LOOPBACK_NAMES,
    LOOPBACK_ORIGINS,
    Decision,
    Headers,
    TransportSecurity,
    accepts,
    content_length,
    content_type_is_json,
    default_allowed_hosts,
    default_allowed_origins,
    header,
    header_values,
    is_loopback,
    is_visible_ascii,
    split_host,
)

__all__ = [
    "ALLOWED",
    "LOOPBACK_HOSTS",
    "LOOPBACK_NAMES",
    "LOOPBACK_ORIGINS",
    "Decision",
    "Headers",
    "TransportSecurity",
    "accepts",
    "content_length",
    "content_type_is_json",
    "default_allowed_hosts",
    "default_allowed_origins",
    "header",
    "header_values",
    "is_loopback",
    "is_visible_ascii",
    "split_host",
]
