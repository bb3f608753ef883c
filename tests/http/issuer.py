"""A tiny authorization server for the auth tests, on 127.0.0.1 in a thread of its own: a JWKS at
``/jwks`` and an RFC 7662 introspection endpoint at ``/introspect``, with the test's own keys; for
OAuth clients, its RFC 8414 metadata and a ``/token`` endpoint granting ``client_credentials`` to one
client authenticated with ``client_secret_basic`` (JWTs signed with the first published key, for
the ``resource`` and ``scope`` asked for). The metadata names an authorization endpoint (PKCE S256)
that is not served: a test that starts the authorization code flow plays the user itself.

Its own thread and event loop, so that a ``serve --http`` subprocess and an in-process app alike
can fetch from it while the test itself waits. It can be made to fail (``jwks_status``) or to
answer slowly (``stall``) to prove the verifiers' bounds.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote_plus

import jwt
import orjson
import uvicorn
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from tests import timeouts

START_TIMEOUT = timeouts.STARTUP


@dataclass
class SigningKey:
    kid: str
    alg: str
    private: Any

    def jwk(self) -> dict[str, Any]:
        algorithm = jwt.get_algorithm_by_name(self.alg)
        public: dict[str, Any] = algorithm.to_jwk(self.private.public_key(), as_dict=True)
        return {**public, "kid": self.kid, "alg": self.alg, "use": "sig"}

    def sign(self, claims: dict[str, Any], **header: Any) -> str:
        return jwt.encode(claims, self.private, algorithm=self.alg, headers={"kid": self.kid, **header})


def rsa_key(kid: str) -> SigningKey:
    return SigningKey(kid, "RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048))


def ec_key(kid: str) -> SigningKey:
    return SigningKey(kid, "ES256", ec.generate_private_key(ec.SECP256R1()))


@dataclass
class Issuer:
    """The authorization server's state; the tests change it as they go."""

    url: str = ""
    published: list[SigningKey] = field(default_factory=list)
    jwks_status: int = 200
    stall: float = 0.0  # seconds every answer waits
    jwks_fetches: int = 0
    introspections: int = 0
    client: tuple[str, str] = ("mcp-server", "s3cret")
    tokens: dict[str, dict[str, Any]] = field(default_factory=dict)  # token -> introspection answer
    token_client: tuple[str, str] = ("cli-app", "cli-app-s3cret")  # the client_credentials client
    token_requests: int = 0

    @property
    def jwks_url(self) -> str:
        return self.url + "/jwks"

    @property
    def introspection_url(self) -> str:
        return self.url + "/introspect"

    @property
    def token_url(self) -> str:
        return self.url + "/token"

    def metadata(self) -> dict[str, Any]:
        """The RFC 8414 authorization server metadata."""
        return {
            "issuer": self.url,
            "token_endpoint": self.token_url,
            "jwks_uri": self.jwks_url,
            "introspection_endpoint": self.introspection_url,
            "authorization_endpoint": self.url + "/authorize",
            "code_challenge_methods_supported": ["S256"],
            "grant_types_supported": ["authorization_code", "client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
            "response_types_supported": ["code"],
        }

    def _token(self, scope: dict[str, Any], body: bytes) -> tuple[int, Any]:
        """``client_credentials`` for :attr:`token_client` (HTTP Basic, RFC 6749 §2.3.1)."""
        self.token_requests += 1
        scheme, _, credentials = dict(scope["headers"]).get(b"authorization", b"").decode().partition(" ")
        try:
            pair = base64.b64decode(credentials, validate=True).decode()
        except ValueError:
            pair = ""
        client_id, _, secret = pair.partition(":")
        if scheme.lower() != "basic" or (unquote_plus(client_id), unquote_plus(secret)) != self.token_client:
            return 401, {"error": "invalid_client", "error_description": "client authentication failed"}
        form = dict(parse_qsl(body.decode()))
        if form.get("grant_type") != "client_credentials":
            return 400, {"error": "unsupported_grant_type"}
        if not form.get("resource"):
            return 400, {"error": "invalid_target", "error_description": "no resource"}
        now = int(time.time())
        client = self.token_client[0]
        claims: dict[str, Any] = {
            "iss": self.url,
            "aud": form["resource"],
            "sub": client,
            "client_id": client,
        }
        claims.update(iat=now, exp=now + 300, scope=form.get("scope", ""))
        token = self.published[0].sign(claims)
        return 200, {
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": 300,
            "scope": claims["scope"],
        }

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if self.stall:
            await asyncio.sleep(self.stall)  # a slow authorization server (the verifier must not wait)
        status, document = self._answer(scope, body)
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": orjson.dumps(document)})

    def _answer(self, scope: dict[str, Any], body: bytes) -> tuple[int, Any]:
        if scope["path"] == "/jwks" and scope["method"] == "GET":
            self.jwks_fetches += 1
            return self.jwks_status, {"keys": [key.jwk() for key in self.published]}
        if scope["path"] == "/introspect" and scope["method"] == "POST":
            self.introspections += 1
            expected = base64.b64encode(":".join(self.client).encode()).decode()
            if dict(scope["headers"]).get(b"authorization", b"").decode() != "Basic " + expected:
                return 401, {"error": "invalid_client"}
            form = dict(parse_qsl(body.decode()))
            return 200, self.tokens.get(form.get("token", ""), {"active": False})
        if scope["path"] == "/.well-known/oauth-authorization-server" and scope["method"] == "GET":
            return 200, self.metadata()
        if scope["path"] == "/token" and scope["method"] == "POST":
            return self._token(scope, body)
        return 404, {"error": "not found"}


@contextlib.contextmanager
def serving_in_thread(app: Any) -> Iterator[str]:
    """Serve the ASGI ``app`` with uvicorn on a free port of 127.0.0.1, in a thread (and event loop)
    of its own; yield its base URL (``http://127.0.0.1:N``). Startup and shutdown are bounded."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        app, lifespan="off", log_config=None, log_level="warning", timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started:  # another thread's loop: polled, bounded
        if time.monotonic() > deadline or not thread.is_alive():
            server.should_exit = True
            sock.close()
            raise RuntimeError(f"{type(app).__name__} did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(START_TIMEOUT)
        sock.close()


@contextlib.contextmanager
def running_issuer() -> Iterator[Issuer]:
    issuer = Issuer()
    with serving_in_thread(issuer) as url:
        issuer.url = url
        try:
            yield issuer
        finally:
            issuer.stall = 0.0
