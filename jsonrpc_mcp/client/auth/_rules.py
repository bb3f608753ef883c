"""The rules of MCP authorization that need no network: the canonical URI of a server (RFC 8707),
where metadata lives (RFC 9728, RFC 8414, OpenID Connect discovery, and the 2025-03-26 fallbacks),
which scopes to ask for, and PKCE (RFC 7636).

Every function here is pure: the flow in :mod:`._oauth` calls them and does the I/O. (Reading a
``WWW-Authenticate`` challenge is the transport's: :func:`parse_challenge`, re-exported here.)"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

from ...transports.http._authz import Challenge, parse_challenge

__all__ = [
    "Challenge",
    "as_metadata_urls",
    "canonical_resource",
    "fallback_endpoints",
    "parse_challenge",
    "pkce_pair",
    "prm_urls",
    "resource_matches",
    "scope_union",
]

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN = "/.well-known/openid-configuration"


def canonical_resource(url: str) -> str:
    """The canonical URI of an MCP server (RFC 8707 as the MCP spec uses it): lower-case scheme and
    host, no fragment, no query, no default port, no trailing slash (except a bare root)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    default = {"http": 80, "https": 443}.get(scheme)
    netloc = host if port is None or port == default else f"{host}:{port}"
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, netloc, path, "", ""))


def resource_matches(advertised: str, server_url: str) -> bool:
    """Whether a Protected Resource Metadata ``resource`` names this server: the same canonical URI,
    or a parent of it on the same origin (a PRM served for the whole host)."""
    want = canonical_resource(server_url)
    have = canonical_resource(advertised)
    if have == want:
        return True
    mine, theirs = urlsplit(want), urlsplit(have)
    if (mine.scheme, mine.netloc) != (theirs.scheme, theirs.netloc):
        return False
    return theirs.path == "" or mine.path.startswith(theirs.path + "/")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def prm_urls(server_url: str, from_header: str | None) -> list[str]:
    """Where to look for Protected Resource Metadata, in the spec's order: the challenge's
    ``resource_metadata``; then the path-inserted well-known URI; then the root one."""
    urls: list[str] = [from_header] if from_header else []
    path = urlsplit(server_url).path.rstrip("/")
    origin = _origin(server_url)
    if path:
        urls.append(origin + PRM_WELL_KNOWN + path)
    urls.append(origin + PRM_WELL_KNOWN)
    return list(dict.fromkeys(urls))


def as_metadata_urls(issuer: str) -> list[str]:
    """Where an authorization server's metadata lives, in the spec's order: for an issuer with a
    path, RFC 8414 path-inserted, OpenID Connect path-inserted, OpenID Connect path-appended; for
    one without, RFC 8414 then OpenID Connect at the root."""
    path = urlsplit(issuer).path.rstrip("/")
    origin = _origin(issuer)
    if path:
        return [
            origin + OAUTH_WELL_KNOWN + path,
            origin + OIDC_WELL_KNOWN + path,
            origin + path + OIDC_WELL_KNOWN,
        ]
    return [origin + OAUTH_WELL_KNOWN, origin + OIDC_WELL_KNOWN]


def fallback_endpoints(server_url: str) -> dict[str, str]:
    """2025-03-26: with no metadata at all, the default endpoints at the server's root."""
    origin = _origin(server_url)
    return {
        "issuer": origin,
        "authorization_endpoint": origin + "/authorize",
        "token_endpoint": origin + "/token",
        "registration_endpoint": origin + "/register",
    }


def scope_union(*scopes: str | Iterable[str] | None) -> str | None:
    """The scopes of every argument, each once, in first-seen order; None when there are none."""
    seen: dict[str, None] = {}
    for item in scopes:
        if item is None:
            continue
        words = item.split() if isinstance(item, str) else item
        for word in words:
            seen.setdefault(word, None)
    return " ".join(seen) or None


def pkce_pair() -> tuple[str, str]:
    """A PKCE ``(code_verifier, code_challenge)`` with the S256 method (RFC 7636 §4)."""
    verifier = secrets.token_urlsafe(48)  # 64 characters of the unreserved alphabet
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
