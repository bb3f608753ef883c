"""An authorization server in memory, for the OAuth client's logic: a :class:`Fetch` stand-in that
answers the flow's HTTP requests (metadata, registration, tokens) and a user agent that "visits" its
authorization endpoint. Requests to any other origin go to the real network (the MCP server under
test, on 127.0.0.1). Everything the client sent is recorded for the tests to read."""

from __future__ import annotations

import base64
import hashlib
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import orjson

from jsonrpc_mcp.client.auth._http import Fetch, HttpReply, fetch

from ...http.issuer import SigningKey, rsa_key


@dataclass
class Seen:
    method: str
    url: str
    headers: dict[str, str]
    form: dict[str, str] | None
    json: Any


@dataclass
class FakeAS:
    """``issuer`` is ``http://as.test`` (plus ``path``); tokens are JWTs signed by ``key``."""

    path: str = ""
    key: SigningKey = field(default_factory=lambda: rsa_key("fake-as"))
    metadata_at: str = "oauth"  # "oauth", "oidc", "none"
    pkce: list[str] | None = field(default_factory=lambda: ["S256"])
    registration: bool = True
    cimd: bool | None = None
    auth_methods: list[str] | None = None
    scopes_supported: list[str] | None = None
    iss_supported: bool | None = True
    iss_in_redirect: str = "correct"  # "correct", "wrong", "omit"
    metadata_issuer: str | None = None
    expires_in: int = 3600
    refresh: bool = True
    token_scopes: str | None = None  # what tokens are granted (default: what was asked)
    deny_authorization: str | None = None  # an error code the authorization endpoint answers
    origin_audience: bool = False  # issue tokens for another resource than the one asked for
    seen: list[Seen] = field(default_factory=list)
    codes: dict[str, dict[str, str]] = field(default_factory=dict)
    clients: dict[str, dict[str, Any]] = field(default_factory=dict)
    refresh_tokens: dict[str, str] = field(default_factory=dict)
    origin: str = "http://as.test"

    @property
    def issuer(self) -> str:
        return self.origin + self.path

    def document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "issuer": self.metadata_issuer or self.issuer,
            "authorization_endpoint": self.issuer + "/authorize",
            "token_endpoint": self.issuer + "/token",
            "response_types_supported": ["code"],
        }
        if self.registration:
            doc["registration_endpoint"] = self.issuer + "/register"
        if self.pkce is not None:
            doc["code_challenge_methods_supported"] = self.pkce
        if self.cimd is not None:
            doc["client_id_metadata_document_supported"] = self.cimd
        if self.auth_methods is not None:
            doc["token_endpoint_auth_methods_supported"] = self.auth_methods
        if self.scopes_supported is not None:
            doc["scopes_supported"] = self.scopes_supported
        if self.iss_supported is not None:
            doc["authorization_response_iss_parameter_supported"] = self.iss_supported
        return doc

    # -- the network, as the flow sees it ------------------------------------------------------
    def fetcher(self) -> Fetch:
        fake = self

        class _Fetch(Fetch):
            async def __call__(
                self,
                method: str,
                url: str,
                *,
                headers: dict[str, str] | None = None,
                form: dict[str, str] | None = None,
                json: Any = None,
            ) -> HttpReply:
                if not url.startswith(fake.origin):
                    return await fetch(method, url, headers=headers, form=form, json=json)
                fake.seen.append(Seen(method, url, dict(headers or {}), form, json))
                return fake.answer(method, url, headers or {}, form, json)

        return _Fetch()

    def requests(self, path: str) -> list[Seen]:
        return [
            s for s in self.seen if urlsplit(s.url).path == self.path + path or urlsplit(s.url).path == path
        ]

    def answer(
        self, method: str, url: str, headers: dict[str, str], form: dict[str, str] | None, body: Any
    ) -> HttpReply:
        path = urlsplit(url).path
        wanted = {
            "oauth": "/.well-known/oauth-authorization-server" + self.path,
            "oidc": "/.well-known/openid-configuration" + self.path,
        }.get(self.metadata_at)
        if method == "GET" and path == wanted:
            return _json(200, self.document())
        if method == "POST" and path == self.path + "/register" and self.registration:
            client_id = f"client-{len(self.clients) + 1}"
            method_asked = body.get("token_endpoint_auth_method", "none")
            client = {"client_id": client_id, "token_endpoint_auth_method": method_asked, **body}
            if method_asked != "none":
                client["client_secret"] = f"secret-{client_id}"
            self.clients[client_id] = client
            return _json(201, client)
        if method == "POST" and path == self.path + "/token":
            return self.token(headers, form or {})
        return _json(404, {"error": "not_found"})

    def token(self, headers: dict[str, str], form: dict[str, str]) -> HttpReply:
        grant = form.get("grant_type")
        scope = form.get("scope")
        if grant == "authorization_code":
            issued = self.codes.pop(form.get("code", ""), None)
            if issued is None:
                return _json(400, {"error": "invalid_grant", "error_description": "unknown code"})
            digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
            if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != issued["code_challenge"]:
                return _json(400, {"error": "invalid_grant", "error_description": "PKCE verifier mismatch"})
            scope = issued.get("scope")
        elif grant == "refresh_token":
            scope = self.refresh_tokens.pop(form.get("refresh_token", ""), None)
            if scope is None:
                return _json(400, {"error": "invalid_grant", "error_description": "unknown refresh token"})
        elif grant != "client_credentials":
            return _json(400, {"error": "unsupported_grant_type"})
        granted = self.token_scopes if self.token_scopes is not None else (scope or "")
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "aud": "https://elsewhere.example/mcp" if self.origin_audience else form.get("resource"),
            "sub": "alice",
            "scope": granted,
            "iat": now,
            "exp": now + self.expires_in,
        }
        answer: dict[str, Any] = {
            "access_token": self.key.sign(claims),
            "token_type": "Bearer",
            "expires_in": self.expires_in,
        }
        if self.refresh and grant != "client_credentials":
            refresh = f"refresh-{len(self.seen)}"
            self.refresh_tokens[refresh] = granted
            answer["refresh_token"] = refresh
        return _json(200, answer)

    # -- the user agent ------------------------------------------------------------------------
    def agent(self, redirect_uri: str = "http://127.0.0.1:9/callback") -> FakeAgent:
        return FakeAgent(self, redirect_uri)

    def authorize(self, url: str) -> str:
        query = dict(parse_qsl(urlsplit(url).query))
        self.seen.append(Seen("GET", url, {}, None, query))
        back = query["redirect_uri"]
        if self.deny_authorization:
            return back + "?" + urlencode({"error": self.deny_authorization, "state": query.get("state", "")})
        code = f"code-{len(self.seen)}"
        self.codes[code] = query
        answer = {"code": code, "state": query.get("state", "")}
        if self.iss_in_redirect == "correct":
            answer["iss"] = self.metadata_issuer or self.issuer
        elif self.iss_in_redirect == "wrong":
            answer["iss"] = "https://evil.example.com"
        return back + "?" + urlencode(answer)


class FakeAgent:
    def __init__(self, server: FakeAS, redirect_uri: str) -> None:
        self.server = server
        self._redirect_uri = redirect_uri
        self.visits: list[str] = []

    @property
    def redirect_uri(self) -> str:
        return self._redirect_uri

    async def authorize(self, url: str) -> str:
        self.visits.append(url)
        return self.server.authorize(url)


def _json(status: int, body: Any) -> HttpReply:
    return HttpReply(status, {"content-type": "application/json"}, orjson.dumps(body))
