"""The OAuth 2.1 client of the MCP authorization spec, as one object handed to the HTTP transport.

Theory of operation
-------------------
The transport asks :meth:`OAuth.authorization` for the ``Authorization`` value of each request (a
stored token for that server, refreshed first when it has expired). When the server answers 401, or
403 with ``error="insufficient_scope"``, the transport calls :meth:`OAuth.challenged` with the
answer's ``WWW-Authenticate``; when it returns True the transport sends the request once more with
the new token, otherwise the request fails with :class:`AuthorizationError`.

``challenged`` runs the flow, under one lock per server (concurrent 401s run it once):

1. **Protected Resource Metadata** (RFC 9728): the challenge's ``resource_metadata`` URL, then the
   path-inserted well-known URI, then the root one. Its ``resource`` must name this server (else
   the flow stops: a token for another resource is never asked for). No PRM at all: the 2025-03-26
   rules (the authorization server is the MCP server's origin).
2. **Authorization server metadata**: RFC 8414 then OpenID Connect discovery, path-inserted for an
   issuer with a path (:func:`._rules.as_metadata_urls`). Its ``issuer`` must be the issuer the
   URL was built from (RFC 8414 §3.3). None found under 2025-03-26 rules: the default endpoints.
3. **Scopes**: what the application asked for, with the challenge's ``scope`` or else the PRM's
   ``scopes_supported``; a step-up asks for the union with what was asked before (SEP-2350);
   ``offline_access`` is added when the authorization server lists it (a refresh token is wanted).
4. **Client identity**, in the spec's order: pre-registered ``client_id``; a Client ID Metadata
   Document URL when the server supports them; Dynamic Client Registration (RFC 7591). A
   registration belongs to its issuer: another authorization server means another registration.
5. **Grant**: the authorization code with PKCE S256 (a server that does not list S256 is refused),
   ``state`` checked, ``iss`` checked (RFC 9207: an exact string match; required when the server
   says it sends one), ``resource`` (RFC 8707) on both requests; or ``client_credentials``
   (SEP-1046) with ``client_secret_basic``, ``client_secret_post`` or ``private_key_jwt`` (RFC 7523,
   signed by PyJWT).
6. The tokens are stored (:mod:`._storage`) under the server and the issuer, and used only for
   that server.

Loops are bounded: a request is retried at most twice (a 401, then one step-up), and authorizations
(or step-ups) that still end in 401 (or 403) stop after ``max_step_ups`` in a row until a request
succeeds: a server that refuses every token does not send the user to the browser again and again.
"""

from __future__ import annotations

import logging
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import anyio

from ...transports.http._authz import AuthorizationError
from ...transports.http._pool import HttpTransportError
from ._agent import LoopbackBrowser, UserAgent
from ._client_auth import ClientKey, authenticate_client
from ._http import Fetch, HttpReply
from ._rules import (
    Challenge,
    as_metadata_urls,
    canonical_resource,
    fallback_endpoints,
    parse_challenge,
    pkce_pair,
    prm_urls,
    resource_matches,
    scope_union,
)
from ._storage import InMemoryTokenStorage, TokenStorage

__all__ = ["OAuth"]

logger = logging.getLogger("jsonrpc_mcp.client.auth")

Grant = Literal["authorization_code", "client_credentials"]
AUTH_METHODS = ("client_secret_basic", "client_secret_post", "private_key_jwt", "none")
EXPIRY_MARGIN = 30.0  # seconds: a token this close to its expiry is refreshed before use


@dataclass
class _Server:
    """What is known about one MCP server: where its tokens come from, and the tokens."""

    url: str
    key: str  # the server's canonical URI: what its storage entries are named by
    resource: str  # the resource tokens are asked for (RFC 8707): the PRM's, else the key
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    loaded: bool = False
    issuer: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    client: dict[str, Any] = field(default_factory=dict)
    tokens: dict[str, Any] = field(default_factory=dict)
    scope: str | None = None  # what was asked for last
    failed_step_ups: int = 0  # step-ups (403) and authorizations (401) in a row that did not help
    failed_authorizations: int = 0
    default_endpoints: bool = False  # 2025-03-26: no metadata was found, the default endpoints are used

    @property
    def header(self) -> str | None:
        token = self.tokens.get("access_token")
        return f"Bearer {token}" if isinstance(token, str) and token else None

    def expired(self) -> bool:
        expires = self.tokens.get("expires_at")
        return isinstance(expires, (int, float)) and time.time() >= expires - EXPIRY_MARGIN


class OAuth:
    """Authorization for MCP servers over HTTP: pass it as ``Client.http(url, auth=OAuth(...))``.

    With no arguments it runs the authorization code flow in the user's browser
    (:class:`LoopbackBrowser`), registering itself where the server allows it, and keeps the tokens
    in memory. ``client_id``/``client_secret``: pre-registered credentials. ``scope``: scopes to ask
    for besides the server's. ``client_metadata_url``: a Client ID Metadata Document URL, used as
    the ``client_id`` where the authorization server supports them. ``grant="client_credentials"``:
    machine to machine (needs ``client_id`` and ``client_secret`` or ``private_key``, a PEM for
    ``private_key_jwt``). ``token_endpoint_auth_method`` forces one. ``storage``: where tokens and
    registrations are kept (:class:`FileTokenStorage` keeps them across runs). ``agent``: the
    user-agent step (:class:`LoopbackBrowser`, :class:`HeadlessBrowser`)."""

    def __init__(
        self,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        scope: str | None = None,
        client_metadata_url: str | None = None,
        grant: Grant = "authorization_code",
        token_endpoint_auth_method: str | None = None,
        private_key: str | bytes | None = None,
        signing_algorithm: str | None = None,
        storage: TokenStorage | None = None,
        agent: UserAgent | None = None,
        client_name: str = "jsonrpc-mcp",
        max_step_ups: int = 2,
        timeout: float = 30.0,
        fetch: Fetch | None = None,
    ) -> None:
        if grant not in ("authorization_code", "client_credentials"):
            raise ValueError(f"grant must be 'authorization_code' or 'client_credentials'; got {grant!r}")
        if token_endpoint_auth_method is not None and token_endpoint_auth_method not in AUTH_METHODS:
            raise ValueError(f"token_endpoint_auth_method must be one of {', '.join(AUTH_METHODS)}")
        if grant == "client_credentials" and not client_id:
            raise ValueError("the client_credentials grant needs a client_id")
        if grant == "client_credentials" and client_secret is None and private_key is None:
            raise ValueError("the client_credentials grant needs a client_secret or a private_key")
        if token_endpoint_auth_method == "private_key_jwt" and private_key is None:
            raise ValueError("private_key_jwt needs a private_key (PEM)")
        self.client_id = client_id
        self._client_secret = client_secret
        self.scope = scope
        self.client_metadata_url = client_metadata_url
        self.grant: Grant = grant
        self.token_endpoint_auth_method = token_endpoint_auth_method
        self._private_key = private_key
        self.signing_algorithm = signing_algorithm
        self.storage: TokenStorage = storage if storage is not None else InMemoryTokenStorage()
        self._agent = agent
        self.client_name = client_name
        self.max_step_ups = max_step_ups
        self._fetch = fetch if fetch is not None else Fetch(timeout)
        self._servers: dict[str, _Server] = {}  # by canonical URI
        self._by_url: dict[str, _Server] = {}  # the same, by the URLs the transport asked about

    def __repr__(self) -> str:  # no secret in a repr
        return f"OAuth(grant={self.grant!r}, client_id={self.client_id!r}, scope={self.scope!r})"

    @property
    def agent(self) -> UserAgent:
        """The user-agent step (made on first use: a :class:`LoopbackBrowser`)."""
        if self._agent is None:
            self._agent = LoopbackBrowser()
        return self._agent

    # -- what the transport calls -------------------------------------------------------------
    def _server(self, url: str) -> _Server:
        """The state of the server at ``url`` (by its canonical URI; the URL itself is looked up
        first, so a request costs one dictionary lookup, not a parse)."""
        server = self._by_url.get(url)
        if server is None:
            key = canonical_resource(url)
            server = self._servers.get(key)
            if server is None:
                server = self._servers[key] = _Server(url, key, key)
            self._by_url[url] = server
        return server

    async def authorization(self, url: str) -> str | None:
        """The ``Authorization`` value for a request to ``url`` (None: send none yet)."""
        server = self._server(url)
        if not server.loaded:
            async with server.lock:
                await self._load(server)
        if server.expired():
            async with server.lock:
                if server.expired():
                    await self._refresh_or_forget(server)
        return server.header

    async def challenged(self, url: str, status: int, www_authenticate: str | None, sent: str | None) -> bool:
        """The server at ``url`` answered ``status`` (401, or 403) with this challenge to a request
        that carried ``sent``. Run the flow; True when the request should be sent again."""
        server = self._server(url)
        challenge = parse_challenge(www_authenticate)
        async with server.lock:
            if server.header is not None and server.header != sent:
                return True  # another request already got a new token meanwhile
            if status == 403:
                if challenge.error != "insufficient_scope":
                    return False
                return await self._authorize_bounded(server, challenge, step_up=True)
            if (
                sent is not None
                and server.tokens.get("refresh_token")
                and await self._same_issuer(server, challenge)
            ) and await self._refresh(server):
                return True
            return await self._authorize_bounded(server, challenge, step_up=False)

    async def _authorize_bounded(self, server: _Server, challenge: Challenge, *, step_up: bool) -> bool:
        """Authorize again, unless ``max_step_ups`` of the same kind in a row have not helped."""
        failed = server.failed_step_ups if step_up else server.failed_authorizations
        if failed >= self.max_step_ups:
            what = "step-ups" if step_up else "authorizations"
            logger.warning("not authorizing again: %d %s in a row did not help", failed, what)
            return False
        if step_up:
            server.failed_step_ups += 1
        else:
            server.failed_authorizations += 1
        await self._authorize(server, challenge, step_up=step_up)
        return True

    def succeeded(self, url: str) -> None:
        """A request with a token went through: step-ups may be tried again later."""
        server = self._server(url)
        server.failed_step_ups = server.failed_authorizations = 0

    # -- storage ------------------------------------------------------------------------------
    @staticmethod
    def _pointer(server: _Server) -> str:
        return f"server {server.key}"

    @staticmethod
    def _entry_key(server: _Server, issuer: str) -> str:
        return f"server {server.key} issuer {issuer}"

    async def _load(self, server: _Server) -> None:
        server.loaded = True
        pointer = await self.storage.get(self._pointer(server))
        issuer = pointer.get("issuer") if pointer else None
        entry = await self.storage.get(self._entry_key(server, issuer)) if isinstance(issuer, str) else None
        if not entry:
            return
        server.issuer = issuer
        server.metadata = dict(entry.get("metadata") or {})
        server.client = dict(entry.get("client") or {})
        server.tokens = dict(entry.get("tokens") or {})
        server.scope = entry.get("scope")
        resource = entry.get("resource")
        if isinstance(resource, str):
            server.resource = resource

    async def _save(self, server: _Server) -> None:
        assert server.issuer is not None
        entry = {
            "issuer": server.issuer,
            "resource": server.resource,
            "metadata": server.metadata,
            "client": server.client,
            "tokens": server.tokens,
            "scope": server.scope,
        }
        await self.storage.set(self._entry_key(server, server.issuer), entry)
        await self.storage.set(self._pointer(server), {"issuer": server.issuer})

    async def _client_for(self, server: _Server, issuer: str) -> dict[str, Any]:
        """A registration stored earlier for this server at ``issuer`` (never another issuer's)."""
        if issuer == server.issuer and server.client:
            return server.client
        entry = await self.storage.get(self._entry_key(server, issuer))
        client = entry.get("client") if entry else None
        return dict(client) if isinstance(client, dict) else {}

    # -- HTTP ---------------------------------------------------------------------------------
    async def _get_json(self, url: str) -> dict[str, Any] | None:
        """A JSON object from ``url``; None for a 4xx or a body that is not one."""
        try:
            reply = await self._fetch("GET", url)
        except HttpTransportError as exc:
            logger.info("could not fetch %s: %s", url, exc)
            return None
        data = reply.json() if reply.ok else None
        return data if isinstance(data, dict) else None

    # -- discovery ----------------------------------------------------------------------------
    async def _discover(
        self, server: _Server, challenge: Challenge
    ) -> tuple[dict[str, Any] | None, str, dict[str, Any]]:
        """(PRM or None, issuer, authorization server metadata)."""
        prm: dict[str, Any] | None = None
        for url in prm_urls(server.url, challenge.resource_metadata):
            prm = await self._get_json(url)
            if prm is not None:
                break
        if prm is None:  # 2025-03-26: the MCP server's origin is the authorization server
            issuer = fallback_endpoints(server.url)["issuer"]
            server.resource = canonical_resource(server.url)
            metadata = await self._as_metadata(issuer)
            server.default_endpoints = metadata is None
            return None, issuer, metadata or fallback_endpoints(server.url)
        advertised = prm.get("resource")
        if not isinstance(advertised, str) or not resource_matches(advertised, server.url):
            raise AuthorizationError(
                f"the protected resource metadata names another resource ({advertised!r}), not {server.url}"
            )
        server.resource = advertised  # as the resource names itself (the token's audience)
        server.default_endpoints = False
        servers = prm.get("authorization_servers")
        if not isinstance(servers, list) or not servers or not all(isinstance(s, str) for s in servers):
            raise AuthorizationError("the protected resource metadata names no authorization server")
        issuer = servers[0]
        metadata = await self._as_metadata(issuer)
        if metadata is None:
            raise AuthorizationError(f"no authorization server metadata found for {issuer}")
        return prm, issuer, metadata

    async def _as_metadata(self, issuer: str) -> dict[str, Any] | None:
        for url in as_metadata_urls(issuer):
            metadata = await self._get_json(url)
            if metadata is None:
                continue
            said = metadata.get("issuer")
            if not isinstance(said, str) or said.rstrip("/") != issuer.rstrip("/"):
                raise AuthorizationError(
                    f"the authorization server metadata at {url} names issuer {said!r}, not {issuer!r}"
                )
            return metadata
        return None

    async def _same_issuer(self, server: _Server, challenge: Challenge) -> bool:
        """Whether the server still names the issuer our tokens come from (fresh PRM)."""
        for url in prm_urls(server.url, challenge.resource_metadata):
            prm = await self._get_json(url)
            if prm is not None:
                servers = prm.get("authorization_servers")
                return isinstance(servers, list) and bool(servers) and servers[0] == server.issuer
        return server.issuer == fallback_endpoints(server.url)["issuer"]

    # -- the flow -----------------------------------------------------------------------------
    async def _authorize(self, server: _Server, challenge: Challenge, *, step_up: bool) -> None:
        prm, issuer, metadata = await self._discover(server, challenge)
        if step_up:
            scope = scope_union(server.scope, challenge.scope)
        else:
            supported = prm.get("scopes_supported") if prm else None
            server_scope = challenge.scope or (
                " ".join(s for s in supported if isinstance(s, str)) if isinstance(supported, list) else None
            )
            scope = scope_union(self.scope, server_scope)
        as_scopes = metadata.get("scopes_supported")
        if (
            self.grant == "authorization_code"
            and isinstance(as_scopes, list)
            and "offline_access" in as_scopes
            and scope is not None
        ):
            scope = scope_union(scope, "offline_access")
        if issuer != server.issuer:  # another authorization server: nothing of the old one is reused
            server.issuer, server.client, server.tokens = issuer, await self._client_for(server, issuer), {}
        server.metadata = metadata
        server.scope = scope
        logger.info(
            "authorizing at %s for %s%s", issuer, server.resource, f" (scope {scope})" if scope else ""
        )
        if self.grant == "client_credentials":
            server.client = self._pre_registered(metadata)
            tokens = await self._token_request(server, {"grant_type": "client_credentials"}, scope)
        else:
            tokens = await self._code_flow(server, metadata, scope)
        server.tokens = tokens
        await self._save(server)

    def _pre_registered(self, metadata: dict[str, Any]) -> dict[str, Any]:
        assert self.client_id is not None
        method = self.token_endpoint_auth_method
        supported = metadata.get("token_endpoint_auth_methods_supported")
        offered = supported if isinstance(supported, list) else ["client_secret_basic"]
        if method is None:
            if self._private_key is not None and (
                self._client_secret is None or "private_key_jwt" in offered
            ):
                method = "private_key_jwt"
            elif self._client_secret is None:
                method = "none"
            elif "client_secret_basic" in offered or "client_secret_post" not in offered:
                method = "client_secret_basic"
            else:
                method = "client_secret_post"
        client: dict[str, Any] = {"client_id": self.client_id, "token_endpoint_auth_method": method}
        return client

    async def _identify(self, server: _Server, metadata: dict[str, Any], redirect_uri: str) -> dict[str, Any]:
        """The client identity for this authorization server, in the spec's order of preference."""
        if self.client_id is not None:
            return self._pre_registered(metadata)
        if server.client.get("client_id") and redirect_uri in server.client.get(
            "redirect_uris", [redirect_uri]
        ):
            return server.client
        if self.client_metadata_url and metadata.get("client_id_metadata_document_supported") is True:
            return {"client_id": self.client_metadata_url, "token_endpoint_auth_method": "none"}
        endpoint = metadata.get("registration_endpoint")
        if not isinstance(endpoint, str):
            raise AuthorizationError(
                "the authorization server offers neither client registration nor client ID metadata "
                "documents: give a pre-registered client_id"
            )
        return await self._register(endpoint, metadata, redirect_uri)

    async def _register(self, endpoint: str, metadata: dict[str, Any], redirect_uri: str) -> dict[str, Any]:
        """Dynamic Client Registration (RFC 7591)."""
        supported = metadata.get("token_endpoint_auth_methods_supported")
        offered = supported if isinstance(supported, list) else ["none"]
        asked = next(
            (m for m in ("none", "client_secret_basic", "client_secret_post") if m in offered), "none"
        )
        host = urlsplit(redirect_uri).hostname or ""
        native = host in ("127.0.0.1", "localhost", "::1") or urlsplit(redirect_uri).scheme not in (
            "http",
            "https",
        )
        request = {
            "client_name": self.client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": asked,
            "application_type": "native" if native else "web",
        }
        reply = await self._post(endpoint, json=request)
        body = reply.json()
        if not reply.ok or not isinstance(body, dict) or not isinstance(body.get("client_id"), str):
            raise self._as_error("client registration", reply)
        secret = body.get("client_secret")
        method = body.get("token_endpoint_auth_method")
        if method not in AUTH_METHODS:
            method = asked if asked != "none" or not secret else "client_secret_basic"
        client = {
            "client_id": body["client_id"],
            "token_endpoint_auth_method": method,
            "redirect_uris": [redirect_uri],
        }
        if isinstance(secret, str):
            client["client_secret"] = secret
        logger.info("registered as client %s", body["client_id"])
        return client

    async def _code_flow(
        self, server: _Server, metadata: dict[str, Any], scope: str | None
    ) -> dict[str, Any]:
        methods = metadata.get("code_challenge_methods_supported")
        if not server.default_endpoints and (not isinstance(methods, list) or "S256" not in methods):
            # metadata that does not list S256 means no PKCE (with the 2025-03-26 default endpoints
            # there is no metadata to ask, and PKCE is sent all the same)
            raise AuthorizationError("the authorization server does not support PKCE with S256: refusing it")
        endpoint = metadata.get("authorization_endpoint")
        if not isinstance(endpoint, str):
            raise AuthorizationError("the authorization server metadata has no authorization_endpoint")
        agent = self.agent
        redirect_uri = agent.redirect_uri
        server.client = await self._identify(server, metadata, redirect_uri)
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(32)
        query = {
            "response_type": "code",
            "client_id": server.client["client_id"],
            "redirect_uri": redirect_uri,
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": server.resource,
        }
        if scope:
            query["scope"] = scope
        url = endpoint + ("&" if "?" in endpoint else "?") + urlencode(query, quote_via=quote)
        callback = await agent.authorize(url)
        answer = dict(parse_qsl(urlsplit(callback).query))
        if "error" in answer:
            raise AuthorizationError(
                f"the authorization server refused: {answer.get('error_description') or answer['error']}",
                error=answer["error"],
                error_description=answer.get("error_description"),
            )
        if answer.get("state") != state:
            raise AuthorizationError("the authorization response's state does not match the request's")
        # RFC 9207: an iss that is there must be the issuer, string for string; one the server
        # promised must be there
        issuer = metadata.get("issuer")
        if "iss" in answer:
            if answer["iss"] != issuer:
                raise AuthorizationError(
                    "the authorization response comes from another issuer (iss mismatch)"
                )
        elif metadata.get("authorization_response_iss_parameter_supported") is True:
            raise AuthorizationError("the authorization response lacks the iss its server promised")
        code = answer.get("code")
        if not code:
            raise AuthorizationError("the authorization response carries no code")
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
        }
        return await self._token_request(server, form, None)

    async def _refresh(self, server: _Server) -> bool:
        refresh_token = server.tokens.get("refresh_token")
        if not isinstance(refresh_token, str):
            return False
        try:
            tokens = await self._token_request(
                server, {"grant_type": "refresh_token", "refresh_token": refresh_token}, None
            )
        except AuthorizationError as exc:
            logger.info("refreshing the token failed: %s", exc)
            return False
        tokens.setdefault("refresh_token", refresh_token)  # (a server that does not rotate it)
        server.tokens = tokens
        await self._save(server)
        return True

    async def _refresh_or_forget(self, server: _Server) -> None:
        if not await self._refresh(server):
            server.tokens = {}

    async def _token_request(
        self, server: _Server, form: dict[str, str], scope: str | None
    ) -> dict[str, Any]:
        endpoint = server.metadata.get("token_endpoint")
        if not isinstance(endpoint, str):
            raise AuthorizationError("the authorization server metadata has no token_endpoint")
        form = {**form, "resource": server.resource}
        if scope:
            form["scope"] = scope
        headers = self._client_auth(server, form)
        reply = await self._post(endpoint, form=form, headers=headers)
        body = reply.json()
        if not reply.ok or not isinstance(body, dict) or not isinstance(body.get("access_token"), str):
            raise self._as_error("the token request", reply)
        token_type = body.get("token_type")
        if not isinstance(token_type, str) or token_type.lower() != "bearer":
            raise AuthorizationError(
                f"the authorization server issued a {token_type!r} token, not a Bearer token"
            )
        tokens: dict[str, Any] = {"access_token": body["access_token"]}
        expires_in = body.get("expires_in")
        if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool):
            tokens["expires_at"] = time.time() + float(expires_in)
        if isinstance(body.get("refresh_token"), str):
            tokens["refresh_token"] = body["refresh_token"]
        if isinstance(body.get("scope"), str):
            tokens["scope"] = body["scope"]
        return tokens

    def _client_auth(self, server: _Server, form: dict[str, str]) -> dict[str, str]:
        """Authenticate the client at the token endpoint: adds to ``form``, returns headers."""
        client_id = server.client.get("client_id")
        if not isinstance(client_id, str):
            raise AuthorizationError("no client identity for the token request")
        secret = server.client.get(
            "client_secret", self._client_secret if client_id == self.client_id else None
        )
        method = server.client.get("token_endpoint_auth_method") or (
            "client_secret_basic" if secret else "none"
        )
        audience = server.metadata.get("issuer") or server.issuer or ""
        key = ClientKey(self._private_key, self.signing_algorithm) if self._private_key is not None else None
        return authenticate_client(form, client_id, method, secret, key, audience)

    async def _post(
        self,
        url: str,
        *,
        form: dict[str, str] | None = None,
        json: Any = None,
        headers: dict[str, str] | None = None,
    ) -> HttpReply:
        try:
            return await self._fetch("POST", url, form=form, json=json, headers=headers)
        except HttpTransportError as exc:
            raise AuthorizationError(f"could not reach the authorization server at {url}: {exc}") from None

    @staticmethod
    def _as_error(what: str, reply: HttpReply) -> AuthorizationError:
        body = reply.json()
        error = body.get("error") if isinstance(body, dict) else None
        description = body.get("error_description") if isinstance(body, dict) else None
        said = description or error or f"HTTP {reply.status}"
        return AuthorizationError(
            f"{what} failed: {said}",
            error=error if isinstance(error, str) else None,
            error_description=description if isinstance(description, str) else None,
        )
