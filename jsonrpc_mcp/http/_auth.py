"""Bearer-token authorization for the HTTP transports: the MCP server as an OAuth 2.1 resource server.

The application supplies a :class:`TokenVerifier` (introspection, JWT validation, a lookup table:
its business); :func:`authenticate` does everything around it that the MCP authorization pages
(2025-06-18 onwards: ``basic/authorization``) put on the server:

* the token comes only from ``Authorization: Bearer <token>``, never from the query string
  ("Token Requirements"; OAuth 2.1 §5.1.1);
* no token, an invalid or expired one, or one issued for another resource -> **401** with
  ``WWW-Authenticate: Bearer ... resource_metadata="<PRM URL>"`` (RFC 9728 §5.1) and the
  required ``scope`` (RFC 6750 §3; "Scope Selection Strategy"); tokens are checked for this
  server's audience (RFC 8707 §2; "Token Handling": MUST);
* a token without the required scopes -> **403** ``error="insufficient_scope"`` listing all
  of them at once ("Runtime Insufficient Scope Errors");
* a malformed ``Authorization`` header -> **400** ``error="invalid_request"`` (RFC 6750 §3.1);
* a verifier that cannot reach its authorization server raises :class:`AuthUnavailable` -> **503**
  with ``Retry-After`` (the token may well be good: a 401 would send the client to re-authorize).

Why a token was refused (bad signature, wrong issuer, unknown key, ...) is logged on
``jsonrpc_mcp.http.auth`` with a fingerprint of the token (never the token); the client only learns
``invalid_token``. Ready-made verifiers: :class:`StaticTokenVerifier` here, ``JwtVerifier``
(:mod:`._jwt`, the ``jwt`` extra) and ``IntrospectionVerifier`` (:mod:`._introspection`).

:func:`protected_resource_metadata` is the RFC 9728 document, served (without authentication) at
each of :func:`prm_paths`. ``offline_access`` never appears in a challenge or in
``scopes_supported`` (2026-07-28 "Refresh Tokens": servers SHOULD NOT include it).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast, runtime_checkable
from urllib.parse import parse_qsl, urlsplit

from ._security import Headers, header_values

__all__ = [
    "WELL_KNOWN_PRM",
    "AccessToken",
    "AuthResult",
    "AuthSettings",
    "AuthUnavailable",
    "StaticTokenVerifier",
    "TokenVerifier",
    "audience_matches",
    "authenticate",
    "bearer_challenge",
    "insufficient_scope",
    "log_refusal",
    "prm_paths",
    "prm_url",
    "protected_resource_metadata",
    "same_resource",
    "scope_granted",
]

logger = logging.getLogger("jsonrpc_mcp.http.auth")

WELL_KNOWN_PRM = "/.well-known/oauth-protected-resource"
OFFLINE_ACCESS = "offline_access"
# the one sentence every refused token gets: whether it was expired, forged, unknown or issued for
# another resource is for the log only (telling "a real token, for elsewhere" from "forged" would
# confirm to whoever holds a stolen token that it is genuine)
INVALID_TOKEN = "the access token is invalid"

_TOKEN = re.compile(r"[\x21-\x7e]+")  # b64token (RFC 6750 §2.1), loosened to any visible ASCII
_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")  # RFC 6749 §3.3
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class AccessToken:
    """What a verifier knows about a valid token.

    ``expires_at``: Unix seconds; the token is refused from that instant on (None: no expiry).
    ``resource``: the audience (RFC 8707 resource indicator) the token was issued for; when set it
    must be this server's ``resource_server_url``. A verifier that leaves it None takes on the
    audience check itself (MCP servers MUST only accept tokens issued for them); one that sees
    several audiences sets it to this server's when it is among them.
    ``claims``: anything else the application wants to carry (subject, issuer, raw claims).
    """

    token: str
    client_id: str
    scopes: frozenset[str] = frozenset()
    expires_at: int | None = None
    resource: str | None = None
    claims: dict[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(cast(object, self.scopes), frozenset):  # tolerate a set or a list at runtime
            object.__setattr__(self, "scopes", frozenset(self.scopes))


PRINCIPAL = "jsonrpc_mcp.principal"  # the ASGI scope key the app keeps a request's principal under


def principal_of(token: AccessToken) -> tuple[str, str | None]:
    """Who a token speaks for: its client and, when the verifier gave one, its subject (``sub``).
    A session is bound to the principal that opened it."""
    subject = token.claims.get("sub")
    return token.client_id, subject if isinstance(subject, str) else None


class AuthUnavailable(Exception):
    """Raised by a verifier that cannot decide now (its authorization server or JWKS is unreachable,
    slow, or answering nonsense): the request gets 503 with ``Retry-After``, not 401."""

    def __init__(self, reason: str, *, retry_after: int = 5) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


def token_fingerprint(token: str) -> str:
    """A short, one-way name for a token in logs (the first 12 hex digits of its SHA-256)."""
    return hashlib.sha256(_bytes(token)).hexdigest()[:12]


def log_refusal(token: str, reason: str) -> None:
    """Log why a token was refused (the reason never reaches the client)."""
    logger.info("bearer token %s refused: %s", token_fingerprint(token), reason)


@runtime_checkable
class TokenVerifier(Protocol):
    """The application's hook: the token's details, or None when it is unknown, revoked or invalid
    (log why with :func:`log_refusal`).

    :class:`AuthUnavailable` means "cannot tell now" (503). Other exceptions propagate (the app then
    answers 500).
    """

    async def verify(self, token: str) -> AccessToken | None:
        """The token's details, or None when it is unknown, revoked or invalid; raise
        :class:`AuthUnavailable` when it cannot be told now."""
        ...


def scope_granted(granted: frozenset[str], required: str) -> bool:
    """The default scope check: the exact scope string was granted."""
    return required in granted


def _http_url(url: str, what: str) -> None:
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc or parts.fragment:
        raise ValueError(f"{what} must be an absolute http(s) URL without a fragment, not {url!r}")


@dataclass
class AuthSettings:
    """How this server is protected.

    ``resource_server_url``: the canonical URL of the MCP endpoint (``https://mcp.example.com/mcp``):
    the PRM ``resource``, the audience tokens must carry, and the base of :func:`prm_url`.
    ``authorization_servers``: issuer URLs, at least one (RFC 9728 / MCP: MUST).
    ``required_scopes``: every request needs all of them; they go in the 401/403 ``scope``.
    ``scopes_supported``: advertised in the PRM document; None advertises ``required_scopes``.
    ``resource_documentation``: a human-readable page, advertised when given.
    ``has_scope(granted, required)``: override to honour scope hierarchies, where a broader scope
    implies narrower ones (2026-07-28 "Step-Up Authorization Flow": servers MUST account for them).
    ``resource_metadata_url``: the PRM URL challenges advertise; None: its well-known location
    (:func:`prm_url`), or, for an app mounted under a prefix, the same inside the mount (served there).
    """

    verifier: TokenVerifier
    resource_server_url: str
    authorization_servers: list[str]
    required_scopes: list[str] = field(default_factory=list)
    scopes_supported: list[str] | None = None
    resource_documentation: str | None = None
    has_scope: Callable[[frozenset[str], str], bool] = scope_granted
    resource_metadata_url: str | None = None

    def __post_init__(self) -> None:
        _http_url(self.resource_server_url, "resource_server_url")
        if isinstance(cast(object, self.authorization_servers), str) or not self.authorization_servers:
            raise ValueError("authorization_servers must list at least one authorization server")
        for issuer in self.authorization_servers:
            _http_url(issuer, "an authorization server")
        for scope in [*self.required_scopes, *(self.scopes_supported or [])]:
            if not _SCOPE_TOKEN.fullmatch(scope):
                raise ValueError(f"not a valid scope: {scope!r}")
        if OFFLINE_ACCESS in self.required_scopes:
            raise ValueError("offline_access is not a resource requirement: it cannot be a required scope")


@dataclass(frozen=True, slots=True)
class AuthResult:
    """The outcome of :func:`authenticate`. ``ok``: ``access_token`` is set and the request may go on.
    Otherwise answer ``status`` with :attr:`headers` (the ``WWW-Authenticate`` challenge); ``error``
    is the RFC 6750 code (None when no token was presented) and ``description`` a sentence for the
    body."""

    access_token: AccessToken | None = None
    status: int = 200
    error: str | None = None
    description: str = ""
    www_authenticate: str | None = None
    retry_after: int | None = None

    @property
    def ok(self) -> bool:
        """Whether the request is authorized (a token was accepted)."""
        return self.access_token is not None

    @property
    def headers(self) -> list[tuple[bytes, bytes]]:
        """The response headers of a refusal: ``WWW-Authenticate`` and ``Retry-After``, when set."""
        out = []
        if self.www_authenticate is not None:
            out.append((b"www-authenticate", self.www_authenticate.encode("ascii")))
        if self.retry_after is not None:
            out.append((b"retry-after", str(self.retry_after).encode("ascii")))
        return out


# -- WWW-Authenticate ---------------------------------------------------------------------------------


def _quoted(value: str) -> str:
    """An RFC 9110 §5.6.4 quoted-string: ``"`` and ``\\`` become quoted-pairs; characters a header
    cannot carry (controls, non-ASCII) become ``?``, so a value never splits or corrupts the field."""
    out = []
    for char in value:
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\t" or " " <= char <= "~":
            out.append(char)
        else:
            out.append("?")
    return '"' + "".join(out) + '"'


def bearer_challenge(params: Iterable[tuple[str, str | None]]) -> str:
    """``Bearer k1="v1", k2="v2"`` (RFC 6750 §3), skipping None values; values always quoted."""
    rendered = [f"{name}={_quoted(value)}" for name, value in params if value is not None]
    return "Bearer " + ", ".join(rendered) if rendered else "Bearer"


def _scope_param(scopes: Iterable[str]) -> str | None:
    listed = list(dict.fromkeys(s for s in scopes if s != OFFLINE_ACCESS))
    return " ".join(listed) if listed else None


def _refuse(
    settings: AuthSettings, status: int, error: str | None, description: str, *, with_scope: bool = True
) -> AuthResult:
    challenge = bearer_challenge(
        [
            ("error", error),
            ("error_description", description if error else None),
            ("resource_metadata", prm_url(settings)),
            ("scope", _scope_param(settings.required_scopes) if with_scope else None),
        ]
    )
    return AuthResult(None, status, error, description, challenge)


def insufficient_scope(
    settings: AuthSettings, scopes: Iterable[str], *, description: str | None = None
) -> AuthResult:
    """403 ``error="insufficient_scope"`` naming ``scopes`` (all the operation needs, at once;
    2025-11-25 "Runtime Insufficient Scope Errors"). Usable for per-operation scope checks too."""
    scope = _scope_param(scopes)
    text = description or (
        "insufficient scope: this request needs " + scope if scope else "insufficient scope"
    )
    challenge = bearer_challenge(
        [
            ("error", "insufficient_scope"),
            ("scope", scope),
            ("resource_metadata", prm_url(settings)),
            ("error_description", text),
        ]
    )
    return AuthResult(None, 403, "insufficient_scope", text, challenge)


# -- authenticate ---------------------------------------------------------------------------------------


def _query_has_token(query_string: bytes | str) -> bool:
    text = query_string.decode("latin-1") if isinstance(query_string, bytes) else query_string
    return any(name == "access_token" for name, _ in parse_qsl(text, keep_blank_values=True))


def _canonical(url: str) -> tuple[str, str, int | None, str, str] | None:
    """Compare resource URLs as the MCP "Canonical Server URI" section asks: scheme and host
    case-insensitively, the default port spelled or not, a trailing slash aside."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or parts.fragment or parts.username is not None:
        return None
    if port == _DEFAULT_PORTS[scheme]:
        port = None
    return scheme, parts.hostname.lower(), port, parts.path.rstrip("/"), parts.query


def same_resource(token_resource: str, server_url: str) -> bool:
    """True when a token's resource (audience) names this server's canonical URL."""
    mine = _canonical(server_url)
    return mine is not None and _canonical(token_resource) == mine


def _under_prefix(value: str, prefix: str) -> bool:
    mine, theirs = _canonical(prefix), _canonical(value)
    if mine is None or theirs is None or mine[:3] != theirs[:3] or theirs[4]:
        return False
    return theirs[3] == mine[3] or theirs[3].startswith(mine[3] + "/")  # whole path segments only


def audience_matches(claim: object, accepted: Sequence[str], *, prefix: bool = False) -> bool:
    """The audience policy of the JWT and introspection verifiers: True when the ``aud`` claim
    (a string or a list of strings, RFC 7519 §4.1.3) names one of ``accepted``.

    Exact by default: the canonical URL of this MCP endpoint and nothing else (RFC 8707; MCP
    "Token Handling": a server MUST only accept tokens issued for it, so a token obtained for
    another service can never be replayed here, and this server never passes one through).
    ``prefix=True`` also accepts URLs below an accepted one, on whole path segments
    (``https://h/mcp`` accepts ``https://h/mcp/tenant-1``, never ``https://h/mcpx``): for one
    authorization server issuing per-tenant audiences to a multi-tenant deployment."""
    values = [claim] if isinstance(claim, str) else claim if isinstance(claim, list) else []
    for value in values:
        if not isinstance(value, str):
            continue
        for wanted in accepted:
            if same_resource(value, wanted) or (prefix and _under_prefix(value, wanted)):
                return True
    return False


async def authenticate(
    headers: Headers, query_string: bytes | str, settings: AuthSettings, *, now: float | None = None
) -> AuthResult:
    """Check a request's bearer token. ``headers``: ASGI ``scope["headers"]``; ``query_string``:
    ``scope["query_string"]`` (only to explain a refusal: a token there is never accepted, MCP
    "Token Requirements", and is ignored when a header token is present); ``now``: Unix time, for
    tests.

    Order: the header's shape (400), the verifier (401), expiry (401), audience (401), scopes (403).
    """
    values = header_values(headers, b"authorization")
    if not values:
        if _query_has_token(query_string):
            reason = "access tokens are not accepted in the query string; use the Authorization header"
        else:
            reason = "authentication required: send Authorization: Bearer <token>"
        return _refuse(settings, 401, None, reason)
    if len(values) > 1:
        return _refuse(
            settings, 400, "invalid_request", "more than one Authorization header", with_scope=False
        )
    scheme, _, credentials = values[0].strip().partition(" ")
    if scheme.lower() != "bearer":
        return _refuse(settings, 401, None, "the Authorization header must use the Bearer scheme")
    token = credentials.strip()
    if not _TOKEN.fullmatch(token):
        return _refuse(settings, 400, "invalid_request", "malformed Bearer credentials", with_scope=False)

    try:
        access = await settings.verifier.verify(token)
    except AuthUnavailable as exc:
        logger.warning("cannot verify bearer token %s now: %s", token_fingerprint(token), exc)
        reason = "the authorization server cannot be reached; try again later"
        return AuthResult(None, 503, None, reason, None, exc.retry_after)
    if access is None:
        return _refuse(settings, 401, "invalid_token", INVALID_TOKEN)
    if access.expires_at is not None and (time.time() if now is None else now) >= access.expires_at:
        log_refusal(token, "expired")
        return _refuse(settings, 401, "invalid_token", INVALID_TOKEN)
    if access.resource is not None and not same_resource(access.resource, settings.resource_server_url):
        log_refusal(token, f"issued for {access.resource!r}, not this resource")
        return _refuse(settings, 401, "invalid_token", INVALID_TOKEN)
    missing = [s for s in settings.required_scopes if not settings.has_scope(access.scopes, s)]
    if missing:
        logger.info("bearer token %s lacks scope: %s", token_fingerprint(token), " ".join(missing))
        return insufficient_scope(
            settings, settings.required_scopes, description="missing scope: " + " ".join(missing)
        )
    return AuthResult(access)


# -- Protected Resource Metadata (RFC 9728) ---------------------------------------------------------------


def prm_paths(mcp_path: str) -> list[str]:
    """Where to serve the PRM document, in the order clients try them (2025-11-25 "Protected
    Resource Metadata Discovery Requirements"): the path-inserted location
    ``/.well-known/oauth-protected-resource<mcp path>`` (RFC 9728 §3.1), then the root one.
    An endpoint at ``/`` has only the root location."""
    path = mcp_path if mcp_path.startswith("/") else "/" + mcp_path
    if path == "/":
        return [WELL_KNOWN_PRM]
    return [WELL_KNOWN_PRM + path, WELL_KNOWN_PRM]


def prm_url(settings: AuthSettings) -> str:
    """The PRM document's URL for ``resource_metadata``: the well-known suffix inserted between the
    host and the path of ``resource_server_url`` (RFC 9728 §3.1; a lone terminating ``/`` is
    dropped): ``https://h/mcp`` -> ``https://h/.well-known/oauth-protected-resource/mcp``; or
    ``resource_metadata_url`` when set."""
    if settings.resource_metadata_url is not None:
        return settings.resource_metadata_url
    parts = urlsplit(settings.resource_server_url)
    path = "" if parts.path == "/" else parts.path
    query = "?" + parts.query if parts.query else ""
    return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN_PRM}{path}{query}"


def protected_resource_metadata(settings: AuthSettings) -> dict[str, Any]:
    """The RFC 9728 §2 document. ``resource`` is ``resource_server_url`` exactly as configured (§3.3:
    it MUST be identical to the URL the metadata URL was built from)."""
    document: dict[str, Any] = {
        "resource": settings.resource_server_url,
        "authorization_servers": list(settings.authorization_servers),
    }
    scopes = settings.required_scopes if settings.scopes_supported is None else settings.scopes_supported
    supported = list(dict.fromkeys(s for s in scopes if s != OFFLINE_ACCESS))
    if supported:
        document["scopes_supported"] = supported
    document["bearer_methods_supported"] = ["header"]
    if settings.resource_documentation is not None:
        document["resource_documentation"] = settings.resource_documentation
    return document


# -- a ready-made verifier -------------------------------------------------------------------------------


class StaticTokenVerifier:
    """A fixed table of tokens, for tests and simple deployments: ``{token string: AccessToken}``.
    Lookups compare in constant time against every entry, so timing does not reveal a prefix."""

    def __init__(self, tokens: Mapping[str, AccessToken]) -> None:
        self._tokens = [(_bytes(key), value) for key, value in tokens.items()]

    async def verify(self, token: str) -> AccessToken | None:
        """The configured token's details (compared in constant time), or None for an unknown token."""
        candidate = _bytes(token)
        found: AccessToken | None = None
        for key, value in self._tokens:
            if hmac.compare_digest(key, candidate):
                found = value
        if found is None:
            log_refusal(token, "not a known static token")
        return found


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogatepass")
