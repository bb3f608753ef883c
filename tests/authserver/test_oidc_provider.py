"""The real authorization server (oidc-provider, run by oidc/launcher.mjs) driven with plain httpx
through what an MCP client does: discovery, dynamic registration, the authorization request with
PKCE and a resource followed headlessly to the redirect, the code exchange, a refresh; and its JWT
access tokens accepted by ``serve --http --auth-jwt-*`` pointed at its JWKS and issuer."""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import jwt
import pytest

from tests import timeouts

from .oidc_provider import OidcProvider
from .support import ProtectedServer, protected_server, tools_list

TIMEOUT = timeouts.STEP
REDIRECT = "http://127.0.0.1:45555/callback"  # never contacted: the user agent stops at it
MAX_HOPS = 10


@pytest.fixture(scope="module")
def served(oidc_provider: OidcProvider) -> Iterator[ProtectedServer]:
    with protected_server(oidc_provider.issuer, oidc_provider.jwks_url) as server:
        yield server


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def _follow(http: httpx.Client, url: str, redirect_uri: str) -> str:
    """A headless user agent: GET, follow each redirect (cookies kept) until one names redirect_uri."""
    for _ in range(MAX_HOPS):
        answer = http.get(url)
        assert answer.is_redirect, (answer.status_code, answer.text)
        url = str(answer.url.join(answer.headers["location"]))
        if url.startswith(redirect_uri):
            return url
    raise AssertionError(f"no redirect to {redirect_uri} after {MAX_HOPS} hops")


def _claims(token: str, provider: OidcProvider, audience: str) -> dict[str, Any]:
    key = jwt.PyJWKClient(provider.jwks_url).get_signing_key_from_jwt(token).key
    return dict(jwt.decode(token, key, algorithms=["RS256"], audience=audience, issuer=provider.issuer))


def test_discovery_serves_both_documents(oidc_provider: OidcProvider) -> None:
    with httpx.Client(timeout=TIMEOUT) as http:
        oauth = http.get(oidc_provider.metadata_url).json()
        openid = http.get(oidc_provider.issuer + "/.well-known/openid-configuration").json()
    for document in (oauth, openid):
        assert document["issuer"] == oidc_provider.issuer
        assert document["code_challenge_methods_supported"] == ["S256"]
        assert document["registration_endpoint"] == oidc_provider.issuer + "/register"
        assert document["authorization_response_iss_parameter_supported"] is True
        assert {"authorization_code", "refresh_token", "client_credentials"} <= set(
            document["grant_types_supported"]
        )
        assert "none" in document["token_endpoint_auth_methods_supported"]


def test_the_whole_authorization_code_flow_against_serve(
    oidc_provider: OidcProvider, served: ProtectedServer
) -> None:
    with httpx.Client(timeout=TIMEOUT) as http:
        metadata = http.get(oidc_provider.metadata_url).json()
        registered = http.post(
            metadata["registration_endpoint"],
            json={
                "client_name": "jsonrpc-mcp tests",
                "redirect_uris": [REDIRECT],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            },
        )
        assert registered.status_code == 201, registered.text
        client_id = registered.json()["client_id"]

        verifier, challenge = _pkce()
        query = {
            "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "st-9",
            "code_challenge": challenge, "code_challenge_method": "S256", "scope": "mcp:read",
            "resource": served.url,
        }  # fmt: skip
        callback = _follow(http, metadata["authorization_endpoint"] + "?" + urlencode(query), REDIRECT)
        answer = {k: v[0] for k, v in parse_qs(urlsplit(callback).query).items()}
        assert answer["state"] == "st-9" and answer["iss"] == oidc_provider.issuer, answer

        exchange = {"grant_type": "authorization_code", "code": answer["code"], "redirect_uri": REDIRECT,
                    "client_id": client_id, "code_verifier": verifier, "resource": served.url}  # fmt: skip
        wrong = http.post(metadata["token_endpoint"], data={**exchange, "code_verifier": "x" * 43})
        assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"  # and the code is spent
        callback = _follow(http, metadata["authorization_endpoint"] + "?" + urlencode(query), REDIRECT)
        exchange["code"] = parse_qs(urlsplit(callback).query)["code"][0]
        tokens = http.post(metadata["token_endpoint"], data=exchange)
        assert tokens.status_code == 200, tokens.text
        first = tokens.json()
        claims = _claims(first["access_token"], oidc_provider, served.url)
        assert (
            claims["aud"] == served.url and claims["scope"] == "mcp:read" and claims["client_id"] == client_id
        )

        refresh = {"grant_type": "refresh_token", "refresh_token": first["refresh_token"],
                   "client_id": client_id, "resource": served.url}  # fmt: skip
        refreshed = http.post(metadata["token_endpoint"], data=refresh)
        assert refreshed.status_code == 200, refreshed.text
        second = refreshed.json()
        assert second["refresh_token"] != first["refresh_token"]  # rotated
        assert _claims(second["access_token"], oidc_provider, served.url)["aud"] == served.url

    for token in (first["access_token"], second["access_token"]):
        listed = tools_list(served.url, token)
        assert listed.status_code == 200, (listed.text, served.stderr())
        assert listed.json()["result"]["tools"]
    anonymous = tools_list(served.url, None)
    assert anonymous.status_code == 401 and "resource_metadata=" in anonymous.headers["www-authenticate"]


def test_client_credentials_from_a_registered_client(
    oidc_provider: OidcProvider, served: ProtectedServer
) -> None:
    with httpx.Client(timeout=TIMEOUT) as http:
        metadata = http.get(oidc_provider.metadata_url).json()
        registered = http.post(
            metadata["registration_endpoint"],
            json={"grant_types": ["client_credentials"], "response_types": [], "redirect_uris": [],
                  "token_endpoint_auth_method": "client_secret_basic"},
        )  # fmt: skip
        assert registered.status_code == 201, registered.text
        client = registered.json()
        credentials = (client["client_id"], client["client_secret"])
        grant = {"grant_type": "client_credentials", "resource": served.url, "scope": "mcp:write"}
        answer = http.post(metadata["token_endpoint"], data=grant, auth=credentials)
        assert answer.status_code == 200, answer.text
        elsewhere = {**grant, "resource": "http://127.0.0.1:9/other"}
        other = http.post(metadata["token_endpoint"], data=elsewhere, auth=credentials)
        assert other.status_code == 200, other.text
    assert "refresh_token" not in answer.json()
    assert tools_list(served.url, answer.json()["access_token"]).status_code == 200
    refused = tools_list(served.url, other.json()["access_token"])  # a token for another resource
    assert refused.status_code == 401 and 'error="invalid_token"' in refused.headers["www-authenticate"]
