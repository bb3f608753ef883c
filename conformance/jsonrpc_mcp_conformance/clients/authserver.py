"""The scenario authorization server of the ``auth/*`` client scenarios.

It behaves as the official suite's scenario authorization server does, so that a client written
for that suite plays the same scenarios here: it approves every authorization request at once (a
302 to the client's ``redirect_uri`` with a ``code``, the ``state`` and, as configured, ``iss``),
answers the token endpoint for the ``authorization_code``, ``refresh_token`` and
``client_credentials`` grants with opaque random tokens, registers any client that asks (RFC 7591)
and accepts a URL as ``client_id`` (a Client ID Metadata Document, fetched from nowhere). It is
lenient on purpose: what the client sent is judged afterwards from the records
(:class:`AuthRecord`), every request the authorization server and the protected MCP server got,
by the judges of ``auth_checks``. It refuses only what a scenario needs refused to go on: wrong
pre-registered or client-credentials credentials, a private_key_jwt assertion that does not
verify (PyJWT; the ``jwt`` extra).

How one scenario's servers look is an :class:`AuthConfig`, read from the scenario's ``auth``
object in ``spec/client/scenarios.json``.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field, fields
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = [
    "CIMD_URL",
    "JWT_BEARER",
    "AuthConfig",
    "AuthRecord",
    "AuthorizationServer",
    "Grant",
    "TokenTable",
    "basic_credentials",
]

JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
# The URL the official suite's CIMD scenarios expect as the client_id (nothing is fetched from it)
CIMD_URL = "https://conformance-test.local/client-metadata.json"
SECRET_FIELDS = (
    "client_secret",
    "code_verifier",
    "refresh_token",
    "client_assertion",
    "code",
    "access_token",
)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class AuthConfig:
    """One scenario's protected resource and authorization server(s); every field is a key of the
    scenario's ``auth`` object (its defaults: the official suite's ``metadata-default``)."""

    # the MCP server: protected resource metadata (RFC 9728) and its challenges
    prm_path: str | None = "/.well-known/oauth-protected-resource/mcp"  # None: no PRM (2025-03-26)
    prm_in_header: bool = True  # resource_metadata in WWW-Authenticate
    prm_resource: str | None = None  # what PRM says the resource is (default: the server's own URI)
    prm_scopes: list[str] | None = None  # PRM scopes_supported
    scope_in_header: bool = False  # scope in WWW-Authenticate (required_scopes), and enforced
    required_scopes: list[str] = field(default_factory=list)
    # bearer | step-up | retry-limit | migration | expire-once (what the MCP server demands)
    gate: str = "bearer"
    trap_root_prm: bool = False  # a root PRM request is answered 404 (and judged)
    # the authorization server
    metadata_path: str = "/.well-known/oauth-authorization-server"
    prefix: str = ""  # the issuer's path and its endpoints' prefix
    openid: bool = False  # OpenID Connect discovery fields in the metadata
    as_scopes: list[str] | None = None  # AS metadata scopes_supported
    grant_types: list[str] = field(default_factory=lambda: ["authorization_code", "refresh_token"])
    auth_methods: list[str] = field(default_factory=lambda: ["none"])
    signing_algs: list[str] | None = None
    cimd: bool | None = None  # client_id_metadata_document_supported
    registration: bool = True  # a registration endpoint
    registered_method: str | None = None  # token_endpoint_auth_method a registration is given
    iss_supported: bool | None = True  # authorization_response_iss_parameter_supported
    iss: str = "correct"  # correct | wrong | omit | normalized: iss in the redirect
    metadata_issuer: str | None = None  # the metadata's issuer, when not the real one
    endpoints_prefix: str | None = None  # the endpoints' prefix, when not ``prefix``
    same_origin: bool = False  # the authorization server on the MCP server's origin (2025-03-26)
    fallback: bool = False  # no metadata: /authorize, /token, /register at the root (2025-03-26)
    refresh_tokens: bool = False  # refresh tokens issued with the code grant
    client_credentials: str | None = None  # basic | jwt: the client_credentials scenarios
    preregistered: dict[str, str] | None = None  # client_id, client_secret (given as the context)
    second_server: bool = False  # a second authorization server the PRM moves to (migration)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AuthConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown auth keys {unknown}")
        gates = ("bearer", "step-up", "retry-limit", "migration", "expire-once")
        if data.get("gate", "bearer") not in gates:
            raise ValueError(f"gate must be one of {gates}")
        if data.get("iss", "correct") not in ("correct", "wrong", "omit", "normalized"):
            raise ValueError("iss must be correct, wrong, omit or normalized")
        return cls(**data)


@dataclass
class AuthRecord:
    """One HTTP request the authorization side got: ``server`` ``rs`` (the MCP server), ``as`` or
    ``as2``; ``endpoint`` what it was (``prm``, ``as-metadata``, ``authorize``, ``token``,
    ``register``, ``mcp``, or ``other``); ``status`` what was answered; ``notes`` what the server
    saw in it (the code it issued, whether an assertion verified, the scopes a token carries)."""

    server: str
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    form: dict[str, str] = field(default_factory=dict)
    body: Any = None
    endpoint: str = "other"
    status: int = 0
    t: float = 0.0
    notes: dict[str, Any] = field(default_factory=dict)

    def param(self, name: str) -> str | None:
        """A parameter of the request: the form's, else the query's."""
        return self.form.get(name, self.query.get(name))

    def frame(self) -> str:
        """One line for a report, every secret (credentials, codes, tokens) replaced by ``...``."""
        query = {k: ("..." if k in SECRET_FIELDS else v) for k, v in self.query.items()}
        form = {k: ("..." if k in SECRET_FIELDS else v) for k, v in self.form.items()}
        line = f"{self.method} {self.path}" + (f"?{urlencode(query)}" if query else "")
        auth = self.headers.get("authorization", "")
        if auth:
            line += f" [Authorization: {auth.split(' ', 1)[0]} ...]"
        if form:
            line += f" form={json.dumps(form, sort_keys=True)}"
        return f"[{self.server}] {line} -> {self.status or '-'}"


def basic_credentials(header: str) -> tuple[str, str] | None:
    """The client id and secret of an ``Authorization: Basic`` value (RFC 6749 §2.3.1: each
    form-urlencoded), or None when it is not one."""
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    if ":" not in decoded:
        return None
    name, _, secret = decoded.partition(":")
    from urllib.parse import unquote_plus

    return unquote_plus(name), unquote_plus(secret)


@dataclass
class Grant:
    scopes: list[str]
    server: str  # the authorization server that issued it
    client_id: str = ""
    kind: str = "authorization_code"  # the grant it came from
    uses: int = 0


class TokenTable:
    """The access and refresh tokens issued (opaque random strings), shared by the authorization
    servers and the MCP server of one scenario run."""

    def __init__(self) -> None:
        self.access: dict[str, Grant] = {}
        self.refresh: dict[str, Grant] = {}

    def issue(self, grant: Grant, refresh: bool) -> dict[str, Any]:
        token = secrets.token_urlsafe(24)
        self.access[token] = grant
        answer: dict[str, Any] = {"access_token": token, "token_type": "Bearer", "expires_in": 3600}
        if grant.scopes:
            answer["scope"] = " ".join(grant.scopes)
        if refresh:
            value = secrets.token_urlsafe(24)
            self.refresh[value] = grant
            answer["refresh_token"] = value
        return answer


async def read_body(receive: Receive) -> bytes:
    body = bytearray()
    while True:
        message = await receive()
        if message.get("type") != "http.request":
            break
        body.extend(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return bytes(body)


async def respond(send: Send, status: int, body: Any = None, headers: dict[str, str] | None = None) -> None:
    raw = b"" if body is None else json.dumps(body).encode()
    pairs = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    if body is not None:
        pairs.append((b"content-type", b"application/json"))
    pairs.append((b"content-length", str(len(raw)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": pairs})
    await send({"type": "http.response.body", "body": raw})


def request_record(server: str, scope: Scope, body: bytes, started: float) -> AuthRecord:
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
    record = AuthRecord(server, str(scope.get("method", "")), str(scope.get("path", "")), query, headers)
    record.t = round(time.monotonic() - started, 6)
    kind = headers.get("content-type", "").split(";")[0].strip()
    if kind == "application/x-www-form-urlencoded":
        record.form = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
    elif body:
        try:
            record.body = json.loads(body)
        except ValueError:
            record.body = body.decode("utf-8", "replace")
    return record


class AuthorizationServer:
    """The ASGI app of one scenario authorization server (``label`` ``as`` or ``as2``), at
    ``base`` (its origin), recording into ``records``."""

    def __init__(
        self,
        config: AuthConfig,
        label: str,
        base: str,
        records: list[AuthRecord],
        tokens: TokenTable,
        started: float,
        verify_key: Any = None,  # the public key a client_credentials JWT assertion is checked with
    ) -> None:
        self.config, self.label, self.base = config, label, base
        self.records, self.tokens, self.started = records, tokens, started
        self.verify_key = verify_key
        self.codes: dict[str, dict[str, str]] = {}  # code -> the authorization request's query
        self.registrations = 0

    @property
    def issuer(self) -> str:
        return f"{self.base}{self.config.prefix}"

    @property
    def published_issuer(self) -> str:
        return self.config.metadata_issuer or self.issuer

    def endpoint(self, name: str) -> str:
        prefix = self.config.prefix if self.config.endpoints_prefix is None else self.config.endpoints_prefix
        return f"{prefix}/{name}"

    def metadata(self) -> dict[str, Any]:
        config = self.config
        document: dict[str, Any] = {
            "issuer": self.published_issuer,
            "authorization_endpoint": f"{self.base}{self.endpoint('authorize')}",
            "token_endpoint": f"{self.base}{self.endpoint('token')}",
            "response_types_supported": ["code"],
            "grant_types_supported": config.grant_types,
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": config.auth_methods,
        }
        if config.registration:
            document["registration_endpoint"] = f"{self.base}{self.endpoint('register')}"
        if config.iss_supported is not None:
            document["authorization_response_iss_parameter_supported"] = config.iss_supported
        if config.signing_algs is not None:
            document["token_endpoint_auth_signing_alg_values_supported"] = config.signing_algs
        if config.as_scopes is not None:
            document["scopes_supported"] = config.as_scopes
        if config.cimd is not None:
            document["client_id_metadata_document_supported"] = config.cimd
        if config.openid:
            document["jwks_uri"] = f"{self.base}/.well-known/jwks.json"
            document["subject_types_supported"] = ["public"]
            document["id_token_signing_alg_values_supported"] = ["RS256"]
        return document

    def route(self, method: str, path: str) -> str:
        """Which endpoint ``method path`` is here ("" when none)."""
        if self.config.fallback:  # 2025-03-26 without metadata: the default endpoints at the root
            routes = {("GET", "/authorize"): "authorize", ("POST", "/token"): "token"}
            routes[("POST", "/register")] = "register"
            return routes.get((method, path), "")
        if method == "GET" and path == self.config.metadata_path:
            return "as-metadata"
        if method == "GET" and path == self.endpoint("authorize"):
            return "authorize"
        if method == "POST" and path == self.endpoint("token"):
            return "token"
        if method == "POST" and path == self.endpoint("register") and self.config.registration:
            return "register"
        return ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            return
        record = request_record(self.label, scope, await read_body(receive), self.started)
        self.records.append(record)
        await self.handle(record, send)

    async def handle(self, record: AuthRecord, send: Send) -> None:
        """Answer a recorded request (the MCP server hands on those of a same-origin server)."""
        record.endpoint = self.route(record.method, record.path) or (
            "prm"
            if "/oauth-protected-resource" in record.path
            else "as-metadata"
            if "/.well-known/" in record.path
            else "other"
        )
        status, body = 404, {"error": "not_found"}
        headers: dict[str, str] = {}
        route = self.route(record.method, record.path)
        if route == "as-metadata":
            status, body = 200, self.metadata()
        elif route == "authorize":
            status, body, headers = self.authorize(record)
        elif route == "token":
            status, body = self.token(record)
        elif route == "register":
            status, body = self.register(record)
        record.status = status
        await respond(send, status, body, headers)

    def authorize(self, record: AuthRecord) -> tuple[int, Any, dict[str, str]]:
        redirect = record.query.get("redirect_uri", "")
        parts = urlsplit(redirect)
        if not parts.scheme or not parts.netloc:
            return 400, {"error": "invalid_request", "error_description": "no redirect_uri"}, {}
        code = secrets.token_urlsafe(16)
        self.codes[code] = dict(record.query)
        record.notes["code"] = code
        answer = {"code": code}
        if "state" in record.query:
            answer["state"] = record.query["state"]
        iss = {"correct": self.published_issuer, "wrong": "https://evil.example.com"}.get(self.config.iss)
        if self.config.iss == "normalized":
            iss = f"{self.published_issuer}/"
        if iss is not None:
            answer["iss"] = iss
        query = "&".join(p for p in (parts.query, urlencode(answer)) if p)
        location = urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))
        return 302, None, {"location": location}

    def _client(self, record: AuthRecord) -> tuple[str, str | None, str]:
        """The client id, the secret and the authentication method the token request used."""
        header = record.headers.get("authorization", "")
        basic = basic_credentials(header) if header else None
        if basic is not None:
            return basic[0], basic[1], "client_secret_basic"
        if record.form.get("client_assertion"):
            return record.form.get("client_id", ""), None, "private_key_jwt"
        if "client_secret" in record.form:
            return record.form.get("client_id", ""), record.form["client_secret"], "client_secret_post"
        return record.form.get("client_id", ""), None, "none"

    def _verify_assertion(self, record: AuthRecord, client_id: str) -> str | None:
        """Why the private_key_jwt assertion does not do (None: it verified)."""
        if record.form.get("client_assertion_type") != JWT_BEARER:
            return "client_assertion_type is not the JWT bearer type"
        try:
            import jwt
        except ImportError:
            return "PyJWT is not installed (the jwt extra)"
        if self.verify_key is None:
            return "this scenario has no key to verify an assertion with"
        issuer = self.issuer.rstrip("/")
        try:
            claims = jwt.decode(
                record.form["client_assertion"],
                self.verify_key,
                algorithms=["ES256"],
                audience=[issuer, f"{issuer}/"],
                leeway=30,
                options={"require": ["exp", "iss", "sub", "aud"]},
            )
        except jwt.PyJWTError as exc:
            return f"the assertion does not verify ({type(exc).__name__})"
        if claims.get("iss") != client_id or claims.get("sub") != client_id:
            return "the assertion's iss and sub are not the client id"
        return None

    def token(self, record: AuthRecord) -> tuple[int, Any]:
        form, config = record.form, self.config
        grant_type = form.get("grant_type", "")
        client_id, secret, method = self._client(record)
        record.notes["auth_method"] = method
        record.notes["client_id"] = client_id
        expected = config.preregistered
        if config.client_credentials == "basic" and expected is not None:
            if method != "client_secret_basic" or (client_id, secret) != (
                expected.get("client_id"),
                expected.get("client_secret"),
            ):
                return 401, {"error": "invalid_client", "error_description": "wrong client credentials"}
        elif config.client_credentials == "jwt":
            problem = self._verify_assertion(record, expected.get("client_id", "") if expected else "")
            record.notes["assertion"] = problem or "verified"
            if problem is not None:
                return 401, {"error": "invalid_client", "error_description": problem}
        elif expected is not None and method == "client_secret_basic":
            if (client_id, secret) != (expected.get("client_id"), expected.get("client_secret")):
                return 401, {"error": "invalid_client", "error_description": "wrong client credentials"}
        elif expected is not None:
            return 401, {"error": "invalid_client", "error_description": "use client_secret_basic"}
        if grant_type == "authorization_code":
            asked = self.codes.pop(form.get("code", ""), None)
            if asked is None:
                return 400, {"error": "invalid_grant", "error_description": "unknown or used code"}
            requested = form.get("scope") or asked.get("scope") or ""
            grant = Grant(requested.split(), self.label, client_id, grant_type)
            answer = self.tokens.issue(grant, config.refresh_tokens)
        elif grant_type == "refresh_token":
            held = self.tokens.refresh.pop(form.get("refresh_token", ""), None)
            if held is None:
                return 400, {"error": "invalid_grant", "error_description": "unknown refresh token"}
            grant = Grant(held.scopes, self.label, held.client_id, grant_type)
            answer = self.tokens.issue(grant, True)
        elif grant_type == "client_credentials" and "client_credentials" in config.grant_types:
            scopes = (form.get("scope") or "").split()
            answer = self.tokens.issue(Grant(scopes, self.label, client_id, grant_type), False)
        else:
            return 400, {"error": "unsupported_grant_type"}
        record.notes["scopes"] = answer.get("scope", "")
        return 200, answer

    def register(self, record: AuthRecord) -> tuple[int, Any]:
        body = record.body if isinstance(record.body, dict) else {}
        self.registrations += 1
        client_id = f"{self.label}-client-{self.registrations}-{secrets.token_hex(4)}"
        answer: dict[str, Any] = {
            "client_id": client_id,
            "client_name": body.get("client_name", "client"),
            "redirect_uris": body.get("redirect_uris", []),
        }
        if self.config.registered_method != "none":
            answer["client_secret"] = secrets.token_urlsafe(16)
        if self.config.registered_method is not None:
            answer["token_endpoint_auth_method"] = self.config.registered_method
        record.notes["client_id"] = client_id
        return 201, answer
