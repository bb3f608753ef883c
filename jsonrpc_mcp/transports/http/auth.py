"""Deprecated location of the HTTP server's bearer-token authorization: use :mod:`jsonrpc_mcp.http`.

The code now lives in ``jsonrpc_mcp/http/_auth.py``, with the rest of the server side of MCP over
HTTP; this module re-exports its public names for one release.
"""

from __future__ import annotations

from ...http._auth import (
    WELL_KNOWN_PRM,
    AccessToken,
    AuthResult,
    AuthSettings,
    StaticTokenVerifier,
    TokenVerifier,
    authenticate,
    bearer_challenge,
    insufficient_scope,
    prm_paths,
    prm_url,
    protected_resource_metadata,
    same_resource,
    scope_granted,
)

__all__ = [
    "WELL_KNOWN_PRM",
    "AccessToken",
    "AuthResult",
    "AuthSettings",
    "StaticTokenVerifier",
    "TokenVerifier",
    "authenticate",
    "bearer_challenge",
    "insufficient_scope",
    "prm_paths",
    "prm_url",
    "protected_resource_metadata",
    "same_resource",
    "scope_granted",
]
