"""The OAuth side of the faulty test client (``faulty_client.py``): the ``auth/*`` scenarios.

Written by hand with httpx (no OAuth library), so that each fault breaks exactly one thing: PRM
discovery (RFC 9728), authorization server metadata (RFC 8414 / OpenID Connect, issuer checked),
pre-registration, Client ID Metadata Documents or dynamic registration, the authorization code flow
with PKCE (S256), ``resource`` (RFC 8707) and ``iss`` (RFC 9207) checks, scope selection and
step-up, refresh, and the client_credentials grant. The authorization endpoint is followed with one
GET (the scenario authorization server redirects at once); nothing listens at the redirect URI.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import time
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx

AUTH_FAULTS = {
    "ignore-prm-header": "auth: read the PRM at the well-known URIs, not at the challenge's URL",
    "prm-root-first": "auth: ask for the root PRM before the path-inserted one",
    "as-metadata-root": "auth: ask for the AS metadata at the root even for an issuer with a path",
    "no-pkce": "auth: no code_challenge / code_verifier",
    "pkce-plain": "auth: code_challenge_method plain",
    "no-resource": "auth: no resource parameter",
    "token-in-query": "auth: the access token in the query string, not in Authorization",
    "wrong-scope": "auth: always ask for scope 'profile'",
    "no-step-up": "auth: give up on 403 insufficient_scope",
    "no-scope-union": "auth: the step-up asks for the challenged scope only",
    "no-retry-limit": "auth: authorize again on every 403, without end",
    "wrong-auth-method": "auth: the secret in the form where Basic is wanted, and in Basic otherwise",
    "use-dcr-despite-preregistration": "auth: register dynamically though given pre-registered credentials",
    "no-cimd": "auth: register dynamically though the server supports Client ID Metadata Documents",
    "no-application-type": "auth: register without application_type",
    "no-resource-check": "auth: accept a PRM naming another resource",
    "no-iss-check": "auth: exchange the code whatever the redirect's iss",
    "no-issuer-check": "auth: use metadata whose issuer does not match",
    "offline-access-always": "auth: always ask for offline_access",
    "reuse-credentials": "auth: present the first authorization server's client_id to a new one",
    "no-refresh": "auth: authorize again instead of using the refresh token",
    "cc-auth-code": "auth: the authorization code flow where client_credentials is wanted",
}
CIMD_URL = "https://conformance-test.local/client-metadata.json"
REDIRECT = "http://127.0.0.1:3000/callback"
ROOT_PRM = "/.well-known/oauth-protected-resource"


class AuthFailed(ValueError):
    """The flow stopped (what the scenario wanted refused, or the server refused)."""


def challenge(header: str) -> dict[str, str]:
    return {k.lower(): v for k, v in re.findall(r'(\w+)="([^"]*)"', header or "")}


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


class Authorizer:
    def __init__(self, faults: set[str], scenario: str, context: dict[str, Any], timeout: float) -> None:
        self.faults, self.scenario, self.context = faults, scenario, context
        self.http = httpx.Client(timeout=timeout, follow_redirects=False)
        self.token: str | None = None
        self.refresh_token: str | None = None
        self.scopes: list[str] = []
        self.attempts = 0
        self.clients: dict[str, dict[str, Any]] = {}  # issuer -> registration
        self.metadata: dict[str, Any] = {}
        self.client: dict[str, Any] = {}
        self.resource = ""

    # -- what every request carries -------------------------------------------------------------------
    def headers(self) -> dict[str, str]:
        if self.token and "token-in-query" not in self.faults:
            return {"Authorization": f"Bearer {self.token}"}
        return {}

    def target(self, url: str) -> str:
        if self.token and "token-in-query" in self.faults:
            return f"{url}?{urlencode({'access_token': self.token})}"
        return url

    def challenged(self, url: str, status: int, header: str) -> bool:
        """A 401 or 403 came back: True when a new token was obtained (send again)."""
        found = challenge(header)
        if status == 403:
            if found.get("error") != "insufficient_scope" or "no-step-up" in self.faults:
                return False
            if self.attempts >= 3 and "no-retry-limit" not in self.faults:
                return False
            wanted = found.get("scope", "").split()
            if "no-scope-union" not in self.faults:
                wanted = list(dict.fromkeys(self.scopes + wanted))
            self.authorize(url, found, wanted)
            return True
        if status != 401:
            return False
        if self.token and self.refresh_token and "no-refresh" not in self.faults:
            self.use_refresh()
            return True
        if self.attempts >= 3 and "no-retry-limit" not in self.faults:
            return False
        self.authorize(url, found, None)
        return True

    # -- discovery ----------------------------------------------------------------------------------
    def _get(self, url: str) -> dict[str, Any] | None:
        reply = self.http.get(url)
        if reply.status_code != 200:
            return None
        body = reply.json()
        return body if isinstance(body, dict) else None

    def prm(self, url: str, found: dict[str, str]) -> dict[str, Any] | None:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        candidates = [f"{origin}{ROOT_PRM}{parts.path}", f"{origin}{ROOT_PRM}"]
        if "prm-root-first" in self.faults:
            candidates.reverse()
        if found.get("resource_metadata") and "ignore-prm-header" not in self.faults:
            candidates = [found["resource_metadata"]]
        for candidate in candidates:
            document = self._get(candidate)
            if document is not None:
                return document
        return None

    def as_metadata(self, issuer: str) -> dict[str, Any] | None:
        parts = urlsplit(issuer)
        origin, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
        candidates = [
            f"{origin}/.well-known/oauth-authorization-server{path}",
            f"{origin}/.well-known/openid-configuration{path}",
        ]
        if path:
            candidates.append(f"{origin}{path}/.well-known/openid-configuration")
            if "as-metadata-root" in self.faults:
                candidates.insert(0, f"{origin}/.well-known/oauth-authorization-server")
        for candidate in candidates:
            document = self._get(candidate)
            if document is not None:
                if document.get("issuer") != issuer and "no-issuer-check" not in self.faults:
                    raise AuthFailed("the metadata's issuer is not the authorization server's")
                return document
        return None

    # -- the flows ----------------------------------------------------------------------------------
    def authorize(self, url: str, found: dict[str, str], scopes: list[str] | None) -> None:
        self.attempts += 1
        prm = self.prm(url, found)
        resource = url
        if prm is not None:
            resource = str(prm.get("resource"))
            if not url.startswith(resource.rstrip("/")) and "no-resource-check" not in self.faults:
                raise AuthFailed("the PRM names another resource")
            issuer = str((prm.get("authorization_servers") or [""])[0])
        else:  # 2025-03-26: the authorization server is the MCP server's origin
            parts = urlsplit(url)
            issuer = f"{parts.scheme}://{parts.netloc}"
        self.resource = resource
        metadata = self.as_metadata(issuer)
        if metadata is None:
            metadata = {k: f"{issuer}/{k}" for k in ("authorize", "token", "register")}
            metadata = {
                "authorization_endpoint": metadata["authorize"],
                "token_endpoint": metadata["token"],
                "registration_endpoint": metadata["register"],
            }
        self.metadata = metadata
        if (
            "client_credentials" in (metadata.get("grant_types_supported") or [])
            and "cc-auth-code" not in self.faults
        ):
            self.client_credentials(metadata, resource)
            return
        client = self.identify(issuer, metadata)
        if scopes is None:
            scopes = found.get("scope", "").split() or (prm or {}).get("scopes_supported") or []
        if "wrong-scope" in self.faults:
            scopes = ["profile"]
        if "offline-access-always" in self.faults or "offline_access" in (
            metadata.get("scopes_supported") or []
        ):
            scopes = [*scopes, "offline_access"] if "offline_access" not in scopes else scopes
        self.scopes = list(scopes)
        verifier = secrets.token_urlsafe(48)
        state = secrets.token_urlsafe(12)
        query = {
            "response_type": "code",
            "client_id": client["client_id"],
            "redirect_uri": REDIRECT,
            "state": state,
        }
        if "no-pkce" not in self.faults:
            plain = "pkce-plain" in self.faults
            query["code_challenge"] = verifier if plain else _s256(verifier)
            query["code_challenge_method"] = "plain" if plain else "S256"
        if scopes:
            query["scope"] = " ".join(scopes)
        if "no-resource" not in self.faults:
            query["resource"] = resource
        reply = self.http.get(f"{metadata['authorization_endpoint']}?{urlencode(query)}")
        back = dict(parse_qsl(urlsplit(reply.headers.get("location", "")).query))
        if "code" not in back or back.get("state") != state:
            raise AuthFailed("the authorization server did not redirect back with a code")
        if "no-iss-check" not in self.faults:
            if metadata.get("authorization_response_iss_parameter_supported") and "iss" not in back:
                raise AuthFailed("the redirect lacks the promised iss")
            if "iss" in back and back["iss"] != metadata.get("issuer"):
                raise AuthFailed("the redirect's iss is not the issuer")
        form = {"grant_type": "authorization_code", "code": back["code"], "redirect_uri": REDIRECT}
        if "no-pkce" not in self.faults:
            form["code_verifier"] = verifier
        if "no-resource" not in self.faults:
            form["resource"] = resource
        self.token_request(metadata, client, form)

    def identify(self, issuer: str, metadata: dict[str, Any]) -> dict[str, Any]:
        given = self.context.get("client_id")
        if given and "use-dcr-despite-preregistration" not in self.faults:
            return {
                "client_id": given,
                "client_secret": self.context.get("client_secret"),
                "method": "client_secret_basic",
            }
        if metadata.get("client_id_metadata_document_supported") and "no-cimd" not in self.faults:
            return {"client_id": CIMD_URL, "method": "none"}
        if issuer in self.clients:
            return self.clients[issuer]
        if self.clients and "reuse-credentials" in self.faults:
            return next(iter(self.clients.values()))
        body: dict[str, Any] = {
            "client_name": "faulty-client",
            "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        }
        if "no-application-type" not in self.faults:
            body["application_type"] = "native"
        if not metadata.get("registration_endpoint"):
            raise AuthFailed("the authorization server offers no registration")
        reply = self.http.post(str(metadata["registration_endpoint"]), json=body)
        if reply.status_code >= 400:
            raise AuthFailed(f"the registration was refused ({reply.status_code})")
        client = dict(reply.json())
        methods = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        client["method"] = client.get("token_endpoint_auth_method") or methods[0]
        self.clients[issuer] = client
        return client

    def token_request(self, metadata: dict[str, Any], client: dict[str, Any], form: dict[str, str]) -> None:
        method, secret = client.get("method"), client.get("client_secret")
        if "wrong-auth-method" in self.faults:
            method = "client_secret_post" if method == "client_secret_basic" else "client_secret_basic"
            secret = secret or "x"
        headers = {}
        if method == "client_secret_basic" and secret is not None:
            raw = f"{client['client_id']}:{secret}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(raw).decode()
        else:
            form = {**form, "client_id": client["client_id"]}
            if method == "client_secret_post" and secret is not None:
                form["client_secret"] = secret
        reply = self.http.post(str(metadata["token_endpoint"]), data=form, headers=headers)
        if reply.status_code != 200:
            raise AuthFailed(f"the token request was refused ({reply.status_code})")
        body = reply.json()
        self.token = body["access_token"]
        self.refresh_token = body.get("refresh_token", self.refresh_token)
        self.client = client

    def use_refresh(self) -> None:
        form = {"grant_type": "refresh_token", "refresh_token": str(self.refresh_token)}
        if self.resource and "no-resource" not in self.faults:
            form["resource"] = self.resource
        self.refresh_token = None
        self.token_request(self.metadata, self.client, form)

    def client_credentials(self, metadata: dict[str, Any], resource: str) -> None:
        client_id = str(self.context.get("client_id"))
        form = {"grant_type": "client_credentials", "resource": resource}
        if self.context.get("private_key_pem"):
            import jwt

            now = int(time.time())
            claims = {
                "iss": client_id,
                "sub": client_id,
                "aud": metadata.get("issuer"),
                "iat": now,
                "exp": now + 300,
                "jti": secrets.token_urlsafe(12),
            }
            assertion = jwt.encode(claims, self.context["private_key_pem"], algorithm="ES256")
            form.update(
                client_id=client_id,
                client_assertion=assertion,
                client_assertion_type="urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            )
            client: dict[str, Any] = {"client_id": client_id, "method": "private_key_jwt"}
        else:
            client = {
                "client_id": client_id,
                "client_secret": self.context.get("client_secret"),
                "method": "client_secret_basic",
            }
        if client["method"] == "private_key_jwt":
            reply = self.http.post(str(metadata["token_endpoint"]), data=form)
            if reply.status_code != 200:
                raise AuthFailed(f"the token request was refused ({reply.status_code})")
            self.token = reply.json()["access_token"]
            return
        self.token_request(metadata, client, form)

    def close(self) -> None:
        self.http.close()
