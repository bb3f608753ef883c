"""The test authorization server (server.py) on the wire, with plain httpx: its discovery documents,
registration, the authorization code flow with PKCE and a resource, refresh with rotation, the
client authentication methods, and that the JWTs it issues are what ``serve --http --auth-jwt-*``
accepts."""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import jwt
import orjson
import pytest

from tests import timeouts

from ..http.issuer import ec_key, serving_in_thread
from .server import JWT_BEARER, OAUTH_METADATA, OPENID_APPENDED, AuthServer, running_auth_server
from .support import ProtectedServer, protected_server, tools_list

TIMEOUT = timeouts.STEP
REDIRECT = "http://127.0.0.1:33333/callback"
RESOURCE = "http://127.0.0.1:9/mcp"


@pytest.fixture
def auth() -> Iterator[AuthServer]:
    with running_auth_server(scopes_supported=["mcp:read", "mcp:write", "offline_access"]) as server:
        yield server


@pytest.fixture(scope="module")
def mcp() -> Iterator[tuple[AuthServer, ProtectedServer]]:
    """One authorization server and the ``serve --http`` it protects, for the module."""
    with running_auth_server() as server, protected_server(server.issuer, server.jwks_url) as served:
        yield server, served


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def _authorize(http: httpx.Client, auth: AuthServer, client_id: str, **changes: str | None) -> dict[str, str]:
    """The authorization request, its 302 not followed: the callback's query parameters."""
    verifier, challenge = _pkce()
    params: dict[str, str | None] = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "st-1",
        "scope": "mcp:read offline_access",
        "resource": RESOURCE,
        **changes,
    }
    sent = {k: v for k, v in params.items() if v is not None}
    answer = http.get(auth.authorization_endpoint + "?" + urlencode(sent))
    assert answer.status_code == 302, answer.text
    location = answer.headers["location"]
    assert location.startswith(REDIRECT + "?")
    callback = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    callback["verifier"] = verifier
    return callback


def _claims(token: str, auth: AuthServer, audience: str = RESOURCE) -> dict[str, Any]:
    key = jwt.PyJWKClient(auth.jwks_url).get_signing_key_from_jwt(token).key
    return dict(jwt.decode(token, key, algorithms=["RS256", "ES256"], audience=audience, issuer=auth.issuer))


def test_discovery_documents_follow_the_options() -> None:
    with (
        running_auth_server(issuer_path="/tenant1", metadata=(OPENID_APPENDED,)) as auth,
        httpx.Client(timeout=TIMEOUT) as http,
    ):
        assert auth.issuer == auth.base_url + "/tenant1"
        assert http.get(auth.base_url + "/.well-known/oauth-authorization-server/tenant1").status_code == 404
        assert http.get(auth.base_url + "/.well-known/openid-configuration/tenant1").status_code == 404
        document = http.get(auth.base_url + "/tenant1/.well-known/openid-configuration").json()
        assert document["issuer"] == auth.issuer and document["code_challenge_methods_supported"] == ["S256"]
        assert document["token_endpoint"] == auth.issuer + "/token"
        assert "client_id_metadata_document_supported" not in document and "scopes_supported" not in document

        auth.metadata = (OAUTH_METADATA,)
        auth.code_challenge_methods = None
        auth.registration = False
        auth.client_id_metadata_document_supported = auth.authorization_response_iss = True
        auth.scopes_supported = ["mcp:read"]
        auth.token_endpoint_auth_methods = ("private_key_jwt",)
        document = http.get(auth.metadata_url()).json()
        assert "code_challenge_methods_supported" not in document and "registration_endpoint" not in document
        assert document["client_id_metadata_document_supported"] is True
        assert document["authorization_response_iss_parameter_supported"] is True
        assert document["scopes_supported"] == ["mcp:read"]
        assert document["token_endpoint_auth_methods_supported"] == ["private_key_jwt"]
        assert http.post(auth.registration_endpoint, json={}).status_code == 404
    assert [(r.endpoint, r.status) for r in auth.requests] == [
        ("unknown", 404), ("unknown", 404), ("openid-metadata", 200), ("oauth-metadata", 200),
        ("register", 404),
    ]  # fmt: skip


def test_registration_then_code_flow_with_pkce_and_resource_then_refresh(auth: AuthServer) -> None:
    with httpx.Client(timeout=TIMEOUT) as http:
        registered = http.post(
            auth.registration_endpoint,
            json={
                "redirect_uris": ["http://127.0.0.1/callback"],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "client_name": "t",
            },
        )
        assert registered.status_code == 201, registered.text
        client = registered.json()
        assert "client_secret" not in client and client["client_name"] == "t"
        callback = _authorize(http, auth, client["client_id"])  # another port: loopback, fine
        assert callback["state"] == "st-1" and "iss" not in callback
        form = {"grant_type": "authorization_code", "code": callback["code"], "redirect_uri": REDIRECT,
                "client_id": client["client_id"], "code_verifier": callback["verifier"],
                "resource": RESOURCE}  # fmt: skip
        tokens = http.post(auth.token_endpoint, data=form)
        assert tokens.status_code == 200, tokens.text
        assert tokens.headers["cache-control"] == "no-store"
        body = tokens.json()
        claims = _claims(body["access_token"], auth)
        assert claims["scope"] == "mcp:read offline_access" and claims["client_id"] == client["client_id"]
        assert body["expires_in"] == auth.access_token_lifetime == claims["exp"] - claims["iat"]
        again = http.post(auth.token_endpoint, data=form)  # a code is good once
        assert again.status_code == 400 and again.json()["error"] == "invalid_grant"

        refresh = {"grant_type": "refresh_token", "refresh_token": body["refresh_token"],
                   "client_id": client["client_id"], "scope": "mcp:read"}  # fmt: skip
        refreshed = http.post(auth.token_endpoint, data=refresh)
        assert refreshed.status_code == 200, refreshed.text
        assert refreshed.json()["refresh_token"] != body["refresh_token"]  # rotated
        assert _claims(refreshed.json()["access_token"], auth)["scope"] == "mcp:read"
        reused = http.post(auth.token_endpoint, data=refresh)
        assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    authorize = auth.requests_to("authorize")[0]
    assert authorize.query["code_challenge_method"] == "S256" and authorize.query["resource"] == RESOURCE
    assert [r.form["grant_type"] for r in auth.requests_to("token")] == ["authorization_code"] * 2 + [
        "refresh_token"
    ] * 2


def test_authorization_requests_are_checked(auth: AuthServer) -> None:
    client = auth.add_client(redirect_uris=[REDIRECT], token_endpoint_auth_method="none")
    with httpx.Client(timeout=TIMEOUT) as http:
        assert _authorize(http, auth, client.client_id, code_challenge=None)["error"] == "invalid_request"
        plain = _authorize(http, auth, client.client_id, code_challenge_method="plain")
        assert plain["error"] == "invalid_request" and plain["state"] == "st-1"
        assert _authorize(http, auth, client.client_id, state=None)["error"] == "invalid_request"
        assert _authorize(http, auth, client.client_id, scope="admin")["error"] == "invalid_scope"
        assert _authorize(http, auth, client.client_id, resource="/relative")["error"] == "invalid_target"
        assert _authorize(http, auth, client.client_id, response_type="token")["error"] == (
            "unsupported_response_type"
        )
        stranger = {"client_id": client.client_id, "redirect_uri": "https://evil.example/cb"}
        elsewhere = http.get(auth.authorization_endpoint, params=stranger)
        assert elsewhere.status_code == 400 and "location" not in elsewhere.headers
        auth.authorization_response_iss, auth.deny = True, "access_denied"
        denied = _authorize(http, auth, client.client_id)
        assert denied["error"] == "access_denied" and denied["iss"] == auth.issuer
        auth.deny = None
        callback = _authorize(http, auth, client.client_id)
        assert callback["iss"] == auth.issuer
        wrong = {"grant_type": "authorization_code", "code": callback["code"], "redirect_uri": REDIRECT,
                 "client_id": client.client_id, "code_verifier": "not-the-verifier"}  # fmt: skip
        refused = http.post(auth.token_endpoint, data=wrong)
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"


def test_client_authentication_methods(auth: AuthServer) -> None:
    basic = auth.add_client(
        token_endpoint_auth_method="client_secret_basic", grant_types=["client_credentials"]
    )
    post = auth.add_client(
        token_endpoint_auth_method="client_secret_post", grant_types=["client_credentials"]
    )
    key = ec_key("client-key")
    signed = auth.add_client(token_endpoint_auth_method="private_key_jwt", grant_types=["client_credentials"],
                             jwks={"keys": [key.jwk()]})  # fmt: skip
    grant = {"grant_type": "client_credentials", "resource": RESOURCE, "scope": "mcp:write"}

    def assertion(audience: str, jti: str | None = None) -> str:
        now = int(time.time())
        claims = {"iss": signed.client_id, "sub": signed.client_id, "aud": audience, "iat": now,
                  "exp": now + 60, "jti": jti or secrets.token_hex(8)}  # fmt: skip
        return key.sign(claims)

    assert basic.client_secret is not None and post.client_secret is not None
    with httpx.Client(timeout=TIMEOUT) as http:
        ok = http.post(auth.token_endpoint, data=grant, auth=(basic.client_id, basic.client_secret))
        assert ok.status_code == 200, ok.text
        assert _claims(ok.json()["access_token"], auth)["sub"] == basic.client_id
        assert "refresh_token" not in ok.json()
        wrong = http.post(auth.token_endpoint, data=grant, auth=(basic.client_id, "nope"))
        assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"
        as_post = http.post(auth.token_endpoint, data=grant, auth=(post.client_id, post.client_secret))
        assert as_post.status_code == 401  # registered for client_secret_post, not basic
        form = {**grant, "client_id": post.client_id, "client_secret": post.client_secret}
        assert http.post(auth.token_endpoint, data=form).status_code == 200

        for audience in (auth.issuer, auth.token_endpoint):
            form = {**grant, "client_assertion_type": JWT_BEARER, "client_assertion": assertion(audience)}
            answer = http.post(auth.token_endpoint, data=form)
            assert answer.status_code == 200, answer.text
        replayed = {
            **grant,
            "client_assertion_type": JWT_BEARER,
            "client_assertion": assertion(auth.issuer, "j"),
        }
        assert http.post(auth.token_endpoint, data=replayed).status_code == 200
        assert http.post(auth.token_endpoint, data=replayed).status_code == 401  # the same jti
        other = {
            **grant,
            "client_assertion_type": JWT_BEARER,
            "client_assertion": assertion(auth.base_url + "/x"),
        }
        assert http.post(auth.token_endpoint, data=other).status_code == 401
        forged = ec_key("client-key")  # the same kid, another key
        now = int(time.time())
        bad = forged.sign({"iss": signed.client_id, "sub": signed.client_id, "aud": auth.issuer,
                           "exp": now + 60, "jti": "f"})  # fmt: skip
        refused = http.post(auth.token_endpoint, data={**grant, "client_assertion_type": JWT_BEARER,
                                                       "client_assertion": bad})  # fmt: skip
        assert refused.status_code == 401 and "Signature" in refused.json()["error_description"]
    signed_requests = [r for r in auth.requests_to("token") if r.client_assertion is not None]
    assert [r.client_assertion["aud"] for r in signed_requests if r.client_assertion][:2] == [
        auth.issuer,
        auth.token_endpoint,
    ]


def test_fail_next_answers_one_error(auth: AuthServer) -> None:
    auth.fail_next("token", 503, {"error": "temporarily_unavailable"})
    with httpx.Client(timeout=TIMEOUT) as http:
        assert http.post(auth.token_endpoint, data={}).status_code == 503
        assert http.post(auth.token_endpoint, data={}).status_code == 401  # as usual: no client


def test_serve_accepts_its_client_credentials_tokens(mcp: tuple[AuthServer, ProtectedServer]) -> None:
    auth, served = mcp
    client = auth.add_client(grant_types=["client_credentials"])
    assert client.client_secret is not None
    with httpx.Client(timeout=TIMEOUT) as http:
        grant = {"grant_type": "client_credentials", "resource": served.url}
        answer = http.post(auth.token_endpoint, data=grant, auth=(client.client_id, client.client_secret))
        assert answer.status_code == 200, answer.text
        token = answer.json()["access_token"]
        other = {**grant, "resource": served.url + "/elsewhere"}
        stray = http.post(auth.token_endpoint, data=other, auth=(client.client_id, client.client_secret))
    listed = tools_list(served.url, token)
    assert listed.status_code == 200, (listed.text, served.stderr())
    assert any(tool["name"] == "test_simple_text" for tool in listed.json()["result"]["tools"])

    anonymous = tools_list(served.url, None)
    assert anonymous.status_code == 401
    prm = urlsplit(served.url)._replace(path="/.well-known/oauth-protected-resource/mcp").geturl()
    assert f'resource_metadata="{prm}"' in anonymous.headers["www-authenticate"]
    assert httpx.get(prm, timeout=TIMEOUT).json()["authorization_servers"] == [auth.issuer]
    wrong_audience = tools_list(served.url, stray.json()["access_token"])
    assert (
        wrong_audience.status_code == 401
        and 'error="invalid_token"' in wrong_audience.headers["www-authenticate"]
    )


class _Document:
    """An ASGI app serving one JSON document at every path (a Client ID Metadata Document)."""

    def __init__(self) -> None:
        self.body: dict[str, Any] = {}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})  # fmt: skip
        await send({"type": "http.response.body", "body": orjson.dumps(self.body)})


def test_a_client_id_metadata_document_is_fetched_at_the_authorization_request() -> None:
    document = _Document()
    with (
        serving_in_thread(document) as site,
        running_auth_server(client_id_metadata_document_supported=True) as auth,
        httpx.Client(timeout=TIMEOUT) as http,
    ):
        client_id = site + "/client.json"
        document.body = {"client_id": client_id, "redirect_uris": [REDIRECT], "client_name": "cimd",
                         "token_endpoint_auth_method": "none",
                         "grant_types": ["authorization_code"]}  # fmt: skip
        callback = _authorize(http, auth, client_id)
        form = {"grant_type": "authorization_code", "code": callback["code"], "redirect_uri": REDIRECT,
                "client_id": client_id, "code_verifier": callback["verifier"]}  # fmt: skip
        tokens = http.post(auth.token_endpoint, data=form)
        assert tokens.status_code == 200, tokens.text
        assert "refresh_token" not in tokens.json()  # the document did not ask for the refresh_token grant
        assert auth.cimd_fetches == [client_id] and auth.clients[client_id].metadata["client_name"] == "cimd"

        # the document served at /x.json names /client.json: not its own URL, refused
        refused = http.get(auth.authorization_endpoint, params={"client_id": site + "/x.json"})
        assert refused.status_code == 400 and "location" not in refused.headers


def test_required_resource_and_revoked_refresh_tokens(auth: AuthServer) -> None:
    client = auth.add_client(redirect_uris=[REDIRECT], token_endpoint_auth_method="none")
    auth.require_resource = True
    with httpx.Client(timeout=TIMEOUT) as http:
        assert _authorize(http, auth, client.client_id, resource=None)["error"] == "invalid_target"
        callback = _authorize(http, auth, client.client_id)
        form = {"grant_type": "authorization_code", "code": callback["code"], "redirect_uri": REDIRECT,
                "client_id": client.client_id, "code_verifier": callback["verifier"]}  # fmt: skip
        tokens = http.post(auth.token_endpoint, data=form).json()
        assert _claims(tokens["access_token"], auth)["aud"] == RESOURCE  # the authorization request's
        auth.revoke_refresh_tokens()
        refresh = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
                   "client_id": client.client_id}  # fmt: skip
        refused = http.post(auth.token_endpoint, data=refresh)
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
