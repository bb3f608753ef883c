"""A test OAuth 2.1 authorization server for the OAuth client tests, on 127.0.0.1 in a thread of its own.

Everything an MCP client meets on the authorization server side, each part configurable per test
(the fields of :class:`AuthServer`, which a test may also change while it runs):

* metadata: RFC 8414 at ``/.well-known/oauth-authorization-server[issuer path]`` and OpenID
  Connect discovery at ``/.well-known/openid-configuration[issuer path]`` (path-inserted) and
  ``[issuer path]/.well-known/openid-configuration`` (path-appended), any subset of them
  (``metadata``); what it advertises follows the fields, and ``extra_metadata`` overrides anything;
* dynamic client registration (RFC 7591) at ``{issuer}/register``; pre-registered clients with
  :meth:`AuthServer.add_client`; Client ID Metadata Documents (a URL as ``client_id``, fetched at
  the authorization request) when ``client_id_metadata_document_supported``;
* ``{issuer}/authorize``: checks ``client_id``, ``redirect_uri`` (exact, but any port on a loopback
  host: RFC 8252 §7.3), ``response_type=code``, PKCE (``code_challenge`` with a method it
  advertises), ``state``, ``scope``, ``resource`` (RFC 8707); approves at once (no page) with a
  302 to ``redirect_uri?code=..&state=..`` (``&iss=..`` with ``authorization_response_iss``), or
  denies (``deny``);
* ``{issuer}/token``: ``authorization_code`` (one use; PKCE verifier, ``redirect_uri`` and
  ``resource`` checked against the authorization request), ``refresh_token`` (rotated on every
  use), ``client_credentials``; client authentication ``client_secret_basic``,
  ``client_secret_post``, ``none`` and ``private_key_jwt`` (RFC 7523: an assertion signed with a
  key of the client's registered JWKS, ``iss`` = ``sub`` = the client id, ``aud`` the issuer or
  the token endpoint, ``exp`` and a ``jti`` never seen before), each client held to the method it
  registered;
* access tokens are JWTs (RFC 9068; PyJWT) with ``aud`` = the resource, ``scope``, ``client_id``
  and an ``exp`` ``access_token_lifetime`` seconds ahead, signed with ``signing_key`` and published
  at ``{issuer}/jwks``: what ``serve --http --auth-issuer {issuer} --auth-jwt-jwks {issuer}/jwks``
  accepts.

Every request is kept in :attr:`AuthServer.requests` (a :class:`Recorded`: method, path, which
endpoint, query, form, JSON body, headers, the status answered, a client assertion's claims) so
tests can assert on what the client sent. :meth:`AuthServer.fail_next` makes an endpoint answer
an error once.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote_plus, urlencode, urlsplit, urlunsplit

import httpx
import jwt
import orjson
from cryptography.hazmat.primitives import serialization

from tests import timeouts

from ..http.issuer import SigningKey, rsa_key, serving_in_thread

__all__ = [
    "ALL_METADATA",
    "AUTH_METHODS",
    "GRANT_TYPES",
    "JWT_BEARER",
    "OAUTH_METADATA",
    "OPENID_APPENDED",
    "OPENID_INSERTED",
    "AuthServer",
    "Recorded",
    "RegisteredClient",
    "private_pem",
    "running_auth_server",
]

OAUTH_METADATA = "oauth"  # /.well-known/oauth-authorization-server{path}
OPENID_INSERTED = "openid-inserted"  # /.well-known/openid-configuration{path}
OPENID_APPENDED = "openid-appended"  # {path}/.well-known/openid-configuration
ALL_METADATA = (OAUTH_METADATA, OPENID_INSERTED, OPENID_APPENDED)
AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none", "private_key_jwt")
GRANT_TYPES = ("authorization_code", "refresh_token", "client_credentials")
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
ASSERTION_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA")
CODE_LIFETIME = 60
FETCH_TIMEOUT = timeouts.STEP
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_SECRET_METHODS = ("client_secret_basic", "client_secret_post")


def private_pem(key: SigningKey) -> bytes:
    """The private key of ``key`` as unencrypted PKCS #8 PEM (for a client's ``private_key_jwt``)."""
    return bytes(
        key.private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )


@dataclass
class RegisteredClient:
    """A client the server knows: pre-registered, registered at ``/register``, or read from its
    Client ID Metadata Document. ``jwks``: its public keys, for ``private_key_jwt``."""

    client_id: str
    client_secret: str | None = None
    redirect_uris: list[str] = field(default_factory=list)
    token_endpoint_auth_method: str = "client_secret_basic"
    grant_types: list[str] = field(default_factory=lambda: ["authorization_code", "refresh_token"])
    jwks: dict[str, Any] | None = None
    scope: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)  # as registered


@dataclass
class Recorded:
    """One request the server received, and the status it answered."""

    method: str
    path: str
    endpoint: str  # "oauth-metadata", "openid-metadata", "authorize", "token", "register", "jwks", "unknown"
    query: dict[str, str]
    form: dict[str, str]
    json: Any
    headers: dict[str, str]
    status: int = 0
    client_assertion: dict[str, Any] | None = None  # a verified private_key_jwt assertion's claims
    location: str | None = None  # a redirect's target


class OAuthError(Exception):
    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error, self.description, self.status = error, description, status


@dataclass
class _Code:
    client_id: str
    redirect_uri: str  # where the code was sent
    redirect_uri_given: bool  # ... named by the request (then the token request must repeat it)
    challenge: str
    method: str
    scope: str | None
    resource: str | None
    expires_at: float


@dataclass
class _Refresh:
    client_id: str
    scope: str | None
    resource: str | None


@dataclass
class AuthServer:
    """The authorization server's configuration and state (see the module docstring).

    ``issuer_path``: the issuer's path (``""``, or like ``"/tenant1"``); its endpoints are below it.
    ``metadata``: which discovery documents are served (``ALL_METADATA`` or a subset).
    ``code_challenge_methods``: advertised and accepted PKCE methods; None advertises nothing (and
    accepts S256 only); ``("plain",)`` advertises no S256.
    ``scopes_supported``: advertised, and the only scopes granted; None advertises nothing and
    grants any. ``token_endpoint_auth_methods``: advertised, and allowed at registration.
    ``grant_types``: advertised, and allowed at registration.
    ``resources``: the resource indicators accepted (None: any absolute URL); ``require_resource``
    refuses requests without one; ``default_audience`` is the ``aud`` of tokens asked for no
    resource (None: no ``aud`` at all, which a resource server refuses).
    ``access_token_lifetime``: seconds. ``issue_refresh_tokens``: to clients allowed the
    refresh_token grant, for authorization codes (and refreshes); with
    ``refresh_requires_offline_access`` only when ``offline_access`` was granted.
    ``rotate_refresh_tokens``: a used refresh token is replaced (and no longer valid).
    ``assertion_audiences``: what a client assertion's ``aud`` may name (``"issuer"``,
    ``"token_endpoint"``). ``deny``: an ``error`` code every authorization request is answered
    with (e.g. ``"access_denied"``). ``require_state``: refuse authorization requests without it.
    """

    issuer_path: str = ""
    metadata: tuple[str, ...] = ALL_METADATA
    code_challenge_methods: tuple[str, ...] | None = ("S256",)
    scopes_supported: list[str] | None = None
    token_endpoint_auth_methods: tuple[str, ...] = AUTH_METHODS
    grant_types: tuple[str, ...] = GRANT_TYPES
    registration: bool = True
    client_id_metadata_document_supported: bool = False
    authorization_response_iss: bool = False
    extra_metadata: dict[str, Any] = field(default_factory=dict)
    resources: list[str] | None = None
    require_resource: bool = False
    default_audience: str | None = None
    require_state: bool = True
    access_token_lifetime: int = 300
    issue_refresh_tokens: bool = True
    refresh_requires_offline_access: bool = False
    rotate_refresh_tokens: bool = True
    assertion_audiences: tuple[str, ...] = ("issuer", "token_endpoint")
    deny: str | None = None
    subject: str = "test-user"  # the resource owner who approves every authorization request
    signing_key: SigningKey = field(default_factory=lambda: rsa_key("as-key-1"))
    published: list[SigningKey] | None = None  # the JWKS; None: [signing_key]

    base_url: str = ""  # http://127.0.0.1:PORT, set when it runs
    clients: dict[str, RegisteredClient] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    issued: list[dict[str, Any]] = field(default_factory=list)  # the claims of every access token issued
    cimd_fetches: list[str] = field(default_factory=list)  # Client ID Metadata Document URLs fetched
    _codes: dict[str, _Code] = field(default_factory=dict)
    _refresh: dict[str, _Refresh] = field(default_factory=dict)
    _seen_jti: set[str] = field(default_factory=set)
    _failures: dict[str, list[tuple[int, Any]]] = field(default_factory=dict)
    _last_refusal: str = ""  # why the last authorization request got no redirect

    # -- URLs -----------------------------------------------------------------------------------
    @property
    def issuer(self) -> str:
        return self.base_url + self.issuer_path

    @property
    def authorization_endpoint(self) -> str:
        return self.issuer + "/authorize"

    @property
    def token_endpoint(self) -> str:
        return self.issuer + "/token"

    @property
    def registration_endpoint(self) -> str:
        return self.issuer + "/register"

    @property
    def jwks_url(self) -> str:
        return self.issuer + "/jwks"

    def metadata_url(self, kind: str = OAUTH_METADATA) -> str:
        """Where the ``kind`` discovery document is (served or not)."""
        path = {
            OAUTH_METADATA: "/.well-known/oauth-authorization-server" + self.issuer_path,
            OPENID_INSERTED: "/.well-known/openid-configuration" + self.issuer_path,
            OPENID_APPENDED: self.issuer_path + "/.well-known/openid-configuration",
        }[kind]
        return self.base_url + path

    # -- what tests call ------------------------------------------------------------------------
    def add_client(
        self,
        client_id: str | None = None,
        *,
        client_secret: str | None = None,
        redirect_uris: list[str] | None = None,
        token_endpoint_auth_method: str = "client_secret_basic",
        grant_types: list[str] | None = None,
        jwks: dict[str, Any] | None = None,
        scope: str | None = None,
    ) -> RegisteredClient:
        """Pre-register a client (a random id, and a random secret for the secret methods, unless
        given); ``jwks``: its public keys for ``private_key_jwt`` (``{"keys": [key.jwk()]}``)."""
        if client_secret is None and token_endpoint_auth_method in _SECRET_METHODS:
            client_secret = secrets.token_urlsafe(24)
        client = RegisteredClient(
            client_id or "client-" + secrets.token_hex(6),
            client_secret,
            list(redirect_uris or []),
            token_endpoint_auth_method,
            list(grant_types) if grant_types is not None else ["authorization_code", "refresh_token"],
            jwks,
            scope,
        )
        self.clients[client.client_id] = client
        return client

    def requests_to(self, endpoint: str) -> list[Recorded]:
        """The recorded requests to one endpoint (``"token"``, ``"authorize"``, ...), in order."""
        return [r for r in self.requests if r.endpoint == endpoint]

    def fail_next(self, endpoint: str, status: int, body: Any) -> None:
        """The next request to ``endpoint`` is answered ``status`` with the JSON ``body`` (then as usual)."""
        self._failures.setdefault(endpoint, []).append((status, body))

    def revoke_refresh_tokens(self) -> None:
        """Every refresh token issued so far is refused from now on."""
        self._refresh.clear()

    def metadata_document(self, openid: bool = False) -> dict[str, Any]:
        """The discovery document as served now."""
        document: dict[str, Any] = {
            "issuer": self.issuer,
            "authorization_endpoint": self.authorization_endpoint,
            "token_endpoint": self.token_endpoint,
            "jwks_uri": self.jwks_url,
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": list(self.grant_types),
            "token_endpoint_auth_methods_supported": list(self.token_endpoint_auth_methods),
        }
        if "private_key_jwt" in self.token_endpoint_auth_methods:
            document["token_endpoint_auth_signing_alg_values_supported"] = ["RS256", "ES256"]
        if self.registration:
            document["registration_endpoint"] = self.registration_endpoint
        if self.code_challenge_methods is not None:
            document["code_challenge_methods_supported"] = list(self.code_challenge_methods)
        if self.scopes_supported is not None:
            document["scopes_supported"] = list(self.scopes_supported)
        if self.client_id_metadata_document_supported:
            document["client_id_metadata_document_supported"] = True
        if self.authorization_response_iss:
            document["authorization_response_iss_parameter_supported"] = True
        if openid:
            document["subject_types_supported"] = ["public"]
            document["id_token_signing_alg_values_supported"] = [self.signing_key.alg]
        document.update(self.extra_metadata)
        return document

    # -- ASGI -----------------------------------------------------------------------------------
    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        recorded = Recorded(
            method=scope["method"],
            path=scope["path"],
            endpoint=self._endpoint(scope["path"]),
            query=dict(parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)),
            form=(
                dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
                if content_type == "application/x-www-form-urlencoded"
                else {}
            ),
            json=_json_or_none(body) if content_type == "application/json" else None,
            headers=headers,
        )
        self.requests.append(recorded)
        failures = self._failures.get(recorded.endpoint)
        if failures:
            status, document = failures.pop(0)
            extra: list[tuple[bytes, bytes]] = []
        else:
            status, document, extra = await self._answer(recorded, scope, body)
        recorded.status = status
        out = [*extra]
        if document is not None:
            out.append((b"content-type", b"application/json"))
        if recorded.endpoint in ("token", "register"):
            out.append((b"cache-control", b"no-store"))
        await send({"type": "http.response.start", "status": status, "headers": out})
        payload = orjson.dumps(document) if document is not None else b""
        await send({"type": "http.response.body", "body": payload})

    def _endpoint(self, path: str) -> str:
        for kind in self.metadata:
            if path == urlsplit(self.metadata_url(kind)).path:
                return "oauth-metadata" if kind == OAUTH_METADATA else "openid-metadata"
        names = {"/authorize": "authorize", "/token": "token", "/register": "register", "/jwks": "jwks"}
        if path.startswith(self.issuer_path) and path[len(self.issuer_path) :] in names:
            return names[path[len(self.issuer_path) :]]
        return "unknown"

    async def _answer(
        self, recorded: Recorded, scope: dict[str, Any], body: bytes
    ) -> tuple[int, Any, list[tuple[bytes, bytes]]]:
        endpoint, method = recorded.endpoint, recorded.method
        if endpoint.endswith("-metadata") and method == "GET":
            return 200, self.metadata_document(openid=endpoint == "openid-metadata"), []
        if endpoint == "jwks" and method == "GET":
            return 200, {"keys": [key.jwk() for key in self.published or [self.signing_key]]}, []
        if endpoint == "authorize" and method == "GET":
            location = await self._authorize(scope)
            if location is None:  # refused without a redirect: recorded.status says it
                return 400, {"error": "invalid_request", "error_description": self._last_refusal}, []
            recorded.location = location
            return 302, None, [(b"location", location.encode())]
        if endpoint == "token" and method == "POST":
            try:
                return 200, self._token(recorded, scope, body), [(b"pragma", b"no-cache")]
            except OAuthError as exc:
                extra = [(b"www-authenticate", b'Basic realm="token"')] if exc.status == 401 else []
                return exc.status, {"error": exc.error, "error_description": exc.description}, extra
        if endpoint == "register" and method == "POST" and self.registration:
            try:
                return 201, self._register(recorded.json), []
            except OAuthError as exc:
                return exc.status, {"error": exc.error, "error_description": exc.description}, []
        return 404, {"error": "not_found"}, []

    # -- /authorize -----------------------------------------------------------------------------
    async def _authorize(self, scope: dict[str, Any]) -> str | None:
        pairs = parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
        names = [name for name, _ in pairs]
        params = dict(pairs)
        client_id = params.get("client_id", "")
        client = self.clients.get(client_id)
        if client is None and self.client_id_metadata_document_supported and _is_url(client_id):
            client = await self._fetch_client_metadata(client_id)
        if client is None:
            self._last_refusal = f"unknown client_id {client_id!r}"
            return None
        redirect_uri = params.get("redirect_uri")
        if redirect_uri is None:
            if len(client.redirect_uris) != 1:
                self._last_refusal = "redirect_uri is required"
                return None
            target = client.redirect_uris[0]
        elif not any(_redirect_matches(redirect_uri, r) for r in client.redirect_uris):
            self._last_refusal = f"redirect_uri {redirect_uri!r} is not registered"
            return None
        else:
            target = redirect_uri
        if len(names) != len(set(names)):
            self._last_refusal = "a parameter is repeated"
            return None
        state = params.get("state")

        def refuse(error: str, description: str) -> str:
            answer = {"error": error, "error_description": description}
            if state is not None:
                answer["state"] = state
            if self.authorization_response_iss:
                answer["iss"] = self.issuer
            return _with_query(target, answer)

        if params.get("response_type") != "code":
            return refuse("unsupported_response_type", "response_type must be code")
        if "authorization_code" not in client.grant_types:
            return refuse("unauthorized_client", "the client may not use the authorization_code grant")
        challenge = params.get("code_challenge")
        method = params.get("code_challenge_method", "plain")
        if not challenge:
            return refuse("invalid_request", "PKCE is required: code_challenge is missing")
        if method not in (self.code_challenge_methods or ("S256",)):
            return refuse("invalid_request", f"code_challenge_method {method} is not supported")
        if state is None and self.require_state:
            return refuse("invalid_request", "state is required")
        try:
            granted = self._check_scope(params.get("scope"), client)
            resource = self._check_resource(params.get("resource"))
        except OAuthError as exc:
            return refuse(exc.error, exc.description)
        if self.deny is not None:
            return refuse(self.deny, "the resource owner said no")
        code = secrets.token_urlsafe(24)
        self._codes[code] = _Code(
            client.client_id,
            target,
            redirect_uri is not None,
            challenge,
            method,
            granted,
            resource,
            time.monotonic() + CODE_LIFETIME,
        )
        answer = {"code": code}
        if state is not None:
            answer["state"] = state
        if self.authorization_response_iss:
            answer["iss"] = self.issuer
        return _with_query(target, answer)

    async def _fetch_client_metadata(self, url: str) -> RegisteredClient | None:
        self.cimd_fetches.append(url)
        try:
            async with httpx.AsyncClient(timeout=FETCH_TIMEOUT) as http:
                response = await http.get(url, headers={"accept": "application/json"})
        except httpx.HTTPError:
            return None
        document = _json_or_none(response.content) if response.status_code == 200 else None
        if not isinstance(document, dict) or document.get("client_id") != url:
            return None
        uris = document.get("redirect_uris")
        method = document.get("token_endpoint_auth_method", "none")
        if not isinstance(uris, list) or method in _SECRET_METHODS:  # no shared secret in a public document
            return None
        grant_types = document.get("grant_types", ["authorization_code"])
        client = RegisteredClient(url, None, list(uris), method, list(grant_types), document.get("jwks"))
        client.metadata = document
        self.clients[url] = client
        return client

    def _check_scope(self, requested: str | None, client: RegisteredClient) -> str | None:
        if requested is None or not requested.strip():
            return None
        scopes = requested.split()
        allowed = self.scopes_supported
        unknown = [s for s in scopes if allowed is not None and s not in allowed]
        if client.scope is not None:
            unknown += [s for s in scopes if s not in client.scope.split()]
        if unknown:
            raise OAuthError("invalid_scope", "unknown scope: " + " ".join(dict.fromkeys(unknown)))
        return " ".join(dict.fromkeys(scopes))

    def _check_resource(self, resource: str | None) -> str | None:
        if resource is None:
            if self.require_resource:
                raise OAuthError("invalid_target", "resource is required")
            return None
        parts = urlsplit(resource)
        if not parts.scheme or not parts.netloc or parts.fragment:
            raise OAuthError("invalid_target", "resource must be an absolute URI without a fragment")
        if self.resources is not None and resource not in self.resources:
            raise OAuthError("invalid_target", f"unknown resource {resource!r}")
        return resource

    # -- /token ---------------------------------------------------------------------------------
    def _token(self, recorded: Recorded, scope: dict[str, Any], body: bytes) -> dict[str, Any]:
        pairs = parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
        if len(pairs) != len({name for name, _ in pairs}):
            raise OAuthError("invalid_request", "a parameter is repeated")
        form = dict(pairs)
        client = self._authenticate(recorded, form)
        grant_type = form.get("grant_type")
        if grant_type not in self.grant_types or grant_type not in client.grant_types:
            raise OAuthError("unauthorized_client", f"grant_type {grant_type!r} is not allowed here")
        if grant_type == "authorization_code":
            return self._code_grant(client, form)
        if grant_type == "refresh_token":
            return self._refresh_grant(client, form)
        if grant_type == "client_credentials":
            if client.token_endpoint_auth_method == "none":
                raise OAuthError("unauthorized_client", "a public client cannot use client_credentials")
            granted = self._check_scope(form.get("scope"), client)
            resource = self._check_resource(form.get("resource"))
            return self._tokens(client, client.client_id, granted, resource, refresh=False)
        raise OAuthError("unsupported_grant_type", f"grant_type {grant_type!r} is not supported")

    def _authenticate(self, recorded: Recorded, form: dict[str, str]) -> RegisteredClient:
        basic = recorded.headers.get("authorization", "")
        used = []
        if basic:
            used.append("client_secret_basic")
        if "client_assertion" in form or "client_assertion_type" in form:
            used.append("private_key_jwt")
        if "client_secret" in form:
            used.append("client_secret_post")
        if len(used) > 1:
            raise OAuthError("invalid_request", "more than one client authentication method", 400)
        method = used[0] if used else "none"
        if method == "client_secret_basic":
            client_id, secret = _basic_credentials(basic)
        elif method == "private_key_jwt":
            return self._verify_assertion(recorded, form)
        else:
            client_id, secret = form.get("client_id", ""), form.get("client_secret")
        if "client_id" in form and form["client_id"] != client_id:
            raise OAuthError("invalid_request", "client_id does not match the credentials")
        client = self.clients.get(client_id)
        if client is None:
            raise OAuthError("invalid_client", "unknown client", 401)
        if client.token_endpoint_auth_method != method:
            raise OAuthError(
                "invalid_client", f"this client authenticates with {client.token_endpoint_auth_method}", 401
            )
        if method != "none" and not (
            secret is not None
            and client.client_secret is not None
            and hmac.compare_digest(secret.encode(), client.client_secret.encode())
        ):
            raise OAuthError("invalid_client", "wrong client secret", 401)
        return client

    def _verify_assertion(self, recorded: Recorded, form: dict[str, str]) -> RegisteredClient:
        if form.get("client_assertion_type") != JWT_BEARER:
            raise OAuthError("invalid_client", "client_assertion_type must be " + JWT_BEARER, 401)
        assertion = form.get("client_assertion", "")
        try:
            header = jwt.get_unverified_header(assertion)
            unverified = jwt.decode(assertion, options={"verify_signature": False})
        except jwt.PyJWTError as exc:
            raise OAuthError("invalid_client", f"malformed client assertion: {exc}", 401) from exc
        client_id = unverified.get("sub")
        client = self.clients.get(client_id) if isinstance(client_id, str) else None
        if client is None or client.token_endpoint_auth_method != "private_key_jwt" or not client.jwks:
            raise OAuthError("invalid_client", "no private_key_jwt client with this sub", 401)
        if "client_id" in form and form["client_id"] != client_id:
            raise OAuthError("invalid_client", "client_id is not the assertion's sub", 401)
        alg = header.get("alg")
        if alg not in ASSERTION_ALGORITHMS:
            raise OAuthError("invalid_client", f"assertion algorithm {alg!r} is not accepted", 401)
        audiences = [
            {"issuer": self.issuer, "token_endpoint": self.token_endpoint}[name]
            for name in self.assertion_audiences
        ]
        claims: dict[str, Any] | None = None
        failure = "no key of the client's JWKS fits"
        for jwk in client.jwks.get("keys", []):
            if header.get("kid") is not None and jwk.get("kid") != header.get("kid"):
                continue
            try:
                key = jwt.PyJWK(jwk, algorithm=alg).key
                claims = jwt.decode(
                    assertion,
                    key,
                    algorithms=[alg],
                    audience=audiences,
                    issuer=client_id,
                    options={"require": ["iss", "sub", "aud", "exp", "jti"]},
                )
                break
            except (jwt.PyJWTError, ValueError, TypeError) as exc:
                failure = f"{type(exc).__name__}: {exc}"
        if claims is None:
            raise OAuthError("invalid_client", f"client assertion refused ({failure})", 401)
        if claims["jti"] in self._seen_jti:
            raise OAuthError("invalid_client", "client assertion replayed (jti seen before)", 401)
        self._seen_jti.add(claims["jti"])
        recorded.client_assertion = claims
        return client

    def _code_grant(self, client: RegisteredClient, form: dict[str, str]) -> dict[str, Any]:
        code = self._codes.pop(form.get("code", ""), None)  # one use, whatever happens next
        if code is None or code.expires_at < time.monotonic():
            raise OAuthError("invalid_grant", "unknown, used or expired code")
        if code.client_id != client.client_id:
            raise OAuthError("invalid_grant", "the code was issued to another client")
        if code.redirect_uri_given and form.get("redirect_uri") != code.redirect_uri:
            raise OAuthError("invalid_grant", "redirect_uri differs from the authorization request's")
        verifier = form.get("code_verifier")
        if verifier is None:
            raise OAuthError("invalid_grant", "code_verifier is missing")
        if code.method == "S256":
            digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
            expected = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        else:
            expected = verifier
        if not hmac.compare_digest(expected.encode(), code.challenge.encode()):
            raise OAuthError("invalid_grant", "code_verifier does not match the code_challenge")
        resource = form.get("resource", code.resource)
        if resource != code.resource:
            raise OAuthError("invalid_target", "resource differs from the authorization request's")
        return self._tokens(client, self.subject, code.scope, resource, refresh=True)

    def _refresh_grant(self, client: RegisteredClient, form: dict[str, str]) -> dict[str, Any]:
        token = form.get("refresh_token", "")
        grant = self._refresh.get(token)
        if grant is None or grant.client_id != client.client_id:
            raise OAuthError("invalid_grant", "unknown or revoked refresh token")
        granted = grant.scope
        if "scope" in form:
            wanted = form["scope"].split()
            if not set(wanted) <= set((grant.scope or "").split()):
                raise OAuthError("invalid_scope", "a refresh cannot widen the scope")
            granted = " ".join(wanted)
        resource = form.get("resource", grant.resource)
        if resource != grant.resource:
            raise OAuthError("invalid_target", "resource differs from the grant's")
        if self.rotate_refresh_tokens:
            del self._refresh[token]
        answer = self._tokens(client, self.subject, granted, resource, refresh=self.rotate_refresh_tokens)
        if not self.rotate_refresh_tokens:
            answer["refresh_token"] = token
        return answer

    def _tokens(
        self,
        client: RegisteredClient,
        subject: str,
        scope: str | None,
        resource: str | None,
        *,
        refresh: bool,
    ) -> dict[str, Any]:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": subject,
            "client_id": client.client_id,
            "iat": now,
            "exp": now + self.access_token_lifetime,
            "jti": secrets.token_hex(12),
        }
        audience = resource if resource is not None else self.default_audience
        if audience is not None:
            claims["aud"] = audience
        if scope:
            claims["scope"] = scope
        self.issued.append(claims)
        answer: dict[str, Any] = {
            "access_token": self.signing_key.sign(claims, typ="at+jwt"),
            "token_type": "Bearer",
            "expires_in": self.access_token_lifetime,
        }
        if scope:
            answer["scope"] = scope
        wants_refresh = not self.refresh_requires_offline_access or "offline_access" in (scope or "").split()
        if refresh and self.issue_refresh_tokens and "refresh_token" in client.grant_types and wants_refresh:
            token = secrets.token_urlsafe(32)
            self._refresh[token] = _Refresh(client.client_id, scope, resource)
            answer["refresh_token"] = token
        return answer

    # -- /register ------------------------------------------------------------------------------
    def _register(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise OAuthError("invalid_client_metadata", "the body must be a JSON object")
        method = body.get("token_endpoint_auth_method", "client_secret_basic")
        if method not in self.token_endpoint_auth_methods:
            raise OAuthError(
                "invalid_client_metadata", f"token_endpoint_auth_method {method!r} is not supported"
            )
        grant_types = body.get("grant_types", ["authorization_code"])
        if not isinstance(grant_types, list) or not all(g in self.grant_types for g in grant_types):
            raise OAuthError("invalid_client_metadata", f"unsupported grant_types {grant_types!r}")
        uris = body.get("redirect_uris", [])
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            raise OAuthError("invalid_redirect_uri", "redirect_uris must be a list of URIs")
        if "authorization_code" in grant_types and not uris:
            raise OAuthError("invalid_redirect_uri", "redirect_uris is required for authorization_code")
        for uri in uris:
            parts = urlsplit(uri)
            secure = parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in _LOOPBACK)
            if not secure or parts.fragment:
                raise OAuthError(
                    "invalid_redirect_uri", f"redirect_uri {uri!r} is not https or loopback http"
                )
        jwks = body.get("jwks")
        if method == "private_key_jwt" and not (isinstance(jwks, dict) and jwks.get("keys")):
            raise OAuthError(
                "invalid_client_metadata", "private_key_jwt needs jwks (jwks_uri is not supported)"
            )
        scope = body.get("scope")
        if scope is not None:
            self._check_scope(str(scope), RegisteredClient(""))
        client = self.add_client(
            token_endpoint_auth_method=method,
            redirect_uris=uris,
            grant_types=grant_types,
            jwks=jwks,
            scope=scope,
        )
        client.metadata = body
        answer = {**body, "client_id": client.client_id, "client_id_issued_at": int(time.time())}
        answer.update(token_endpoint_auth_method=method, grant_types=grant_types, redirect_uris=uris)
        if client.client_secret is not None:
            answer.update(client_secret=client.client_secret, client_secret_expires_at=0)
        return answer


def _json_or_none(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return None


def _is_url(value: str) -> bool:
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _redirect_matches(given: str, registered: str) -> bool:
    """Exact, except that the port of a loopback IP redirect URI may vary (RFC 8252 §7.3)."""
    if given == registered:
        return True
    a, b = urlsplit(given), urlsplit(registered)
    loopback = a.scheme == b.scheme == "http" and a.hostname == b.hostname and a.hostname in _LOOPBACK
    return loopback and (a.path, a.query, a.fragment) == (b.path, b.query, b.fragment)


def _with_query(uri: str, params: dict[str, str]) -> str:
    parts = urlsplit(uri)
    query = parts.query + ("&" if parts.query else "") + urlencode(params)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def _basic_credentials(header: str) -> tuple[str, str | None]:
    """``Authorization: Basic`` as RFC 6749 §2.3.1 has it: id and secret form-urlencoded, then joined."""
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        raise OAuthError("invalid_client", "unsupported Authorization scheme", 401)
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except ValueError as exc:
        raise OAuthError("invalid_client", "malformed Basic credentials", 401) from exc
    client_id, colon, secret = decoded.partition(":")
    if not colon:
        raise OAuthError("invalid_client", "malformed Basic credentials", 401)
    return unquote_plus(client_id), unquote_plus(secret)


@contextlib.contextmanager
def running_auth_server(server: AuthServer | None = None, **options: Any) -> Iterator[AuthServer]:
    """``server``, or an :class:`AuthServer` with ``options`` (its fields), served on 127.0.0.1 until
    the block ends."""
    if server is None:
        server = AuthServer(**options)
    elif options:
        raise TypeError("give an AuthServer or its options, not both")
    with serving_in_thread(server) as url:
        server.base_url = url
        yield server
