"""The protected MCP server of the ``auth/*`` client scenarios, and serving a scenario's
authorization side.

:class:`ProtectedResource` goes in front of the scenario's MCP app (itself behind the recorder, so
the recorder sees only the MCP requests that got through): it serves the protected resource
metadata (RFC 9728) where the scenario says, answers a request without a valid token ``401`` with
``WWW-Authenticate: Bearer`` (``resource_metadata`` and ``scope`` as configured), and ``403
insufficient_scope`` when the scenario wants more scopes (step-up). :class:`AuthSide` starts the
scenario's authorization server(s) on 127.0.0.1, port 0, beside the MCP server, and holds what was
recorded for the judges (``ScenarioRun.auth``).
"""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass, field
from typing import Any

from .authserver import (
    AuthConfig,
    AuthorizationServer,
    AuthRecord,
    Receive,
    Scope,
    Send,
    TokenTable,
    read_body,
    request_record,
    respond,
)

__all__ = ["ROOT_PRM", "AuthSide", "ProtectedResource", "build_auth_server", "start_auth"]

ROOT_PRM = "/.well-known/oauth-protected-resource"
MCP_PATH = "/mcp"
STEP_UP_SCOPES = ("mcp:basic", "mcp:write")  # auth/scope-step-up: listing needs the first, calling the second
RETRY_SCOPE = "mcp:admin"  # auth/scope-retry-limit: asked for, never enough
RETRY_CAP = 3  # requests with a token answered 403 before the scenario answers 410 (as the official one)


@dataclass
class AuthSide:
    """What one auth scenario run served and recorded: read by the judges."""

    config: AuthConfig
    mcp_url: str = ""
    resource: str = ""  # the resource the PRM publishes
    servers: dict[str, AuthorizationServer] = field(default_factory=dict)  # label -> server
    records: list[AuthRecord] = field(default_factory=list)
    tokens: TokenTable = field(default_factory=TokenTable)
    context: dict[str, Any] = field(default_factory=dict)  # given to the client with the scenario's
    started: float = field(default_factory=time.monotonic)
    migrated: bool = False
    note: str = ""  # why a part could not be set up (PyJWT missing ...)
    _uvicorn: list[tuple[Any, socket.socket]] = field(default_factory=list)

    def issuer(self, label: str = "as") -> str:
        return self.servers[label].issuer

    def to(self, endpoint: str, server: str | None = None) -> list[AuthRecord]:
        return [r for r in self.records if r.endpoint == endpoint and (server is None or r.server == server)]

    def current_server(self) -> AuthorizationServer:
        return self.servers["as2" if self.migrated else "as"]

    async def start(self, base: str, listen: Any, serve: Any) -> None:
        """Start the authorization server(s); ``base``: the MCP server's origin; ``listen()`` a
        listening socket on 127.0.0.1 port 0, ``serve(app, sock)`` a started server (the runner's)."""
        self.mcp_url = f"{base}{MCP_PATH}"
        prm = self.config.prm_path
        self.resource = self.config.prm_resource or (base if prm == ROOT_PRM else self.mcp_url)
        verify_key = self._client_credentials_key()
        labels = ("as", "as2") if self.config.second_server else ("as",)
        for label in labels:
            if self.config.same_origin or self.config.fallback:
                self.servers[label] = AuthorizationServer(
                    self.config, label, base, self.records, self.tokens, self.started, verify_key
                )
                continue
            sock = listen()
            origin = f"http://127.0.0.1:{sock.getsockname()[1]}"
            server = AuthorizationServer(
                self.config, label, origin, self.records, self.tokens, self.started, verify_key
            )
            self.servers[label] = server
            try:
                self._uvicorn.append((await serve(server, sock), sock))
            except BaseException:
                sock.close()
                raise

    def _client_credentials_key(self) -> Any:
        """auth/client-credentials-jwt: a fresh P-256 key pair; the private key (PEM) goes to the
        client in the context, the public key verifies its assertions."""
        if self.config.preregistered:
            self.context.update(self.config.preregistered)
        if self.config.client_credentials != "jwt":
            return None
        try:
            import jwt  # noqa: F401  (the assertion is verified with PyJWT)
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric import ec
        except ImportError:
            self.note = "PyJWT is not installed (the jwt extra): no private_key_jwt scenario"
            return None
        key = ec.generate_private_key(ec.SECP256R1())
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode()
        self.context.update({"private_key_pem": pem, "signing_algorithm": "ES256"})
        return key.public_key()

    async def stop(self, timeout: float) -> None:
        import anyio

        for server, sock in self._uvicorn:
            with anyio.move_on_after(timeout):
                await server.shutdown(sockets=[sock])
            sock.close()
        self._uvicorn.clear()


def _challenge(side: AuthSide, scopes: list[str] | tuple[str, ...], error: str | None) -> str:
    parts = []
    if error:
        parts.append(f'error="{error}"')
    if scopes:
        parts.append(f'scope="{" ".join(scopes)}"')
    config = side.config
    if config.prm_in_header and config.prm_path is not None:
        origin = side.mcp_url[: -len(MCP_PATH)]
        parts.append(f'resource_metadata="{origin}{config.prm_path}"')
    return "Bearer" + (" " + ", ".join(parts) if parts else "")


class ProtectedResource:
    """The MCP server's authorization gate (an ASGI middleware in front of ``app``)."""

    def __init__(self, app: Any, side: AuthSide) -> None:
        self.app, self.side = app, side
        self.with_token = 0  # requests with a valid token (retry-limit, migration)

    def prm(self) -> dict[str, Any]:
        side = self.side
        document: dict[str, Any] = {
            "resource": side.resource,
            "authorization_servers": [side.current_server().issuer],
        }
        if side.config.prm_scopes is not None:
            document["scopes_supported"] = side.config.prm_scopes
        return document

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        side, config = self.side, self.side.config
        body = await read_body(receive)
        record = request_record("rs", scope, body, side.started)
        side.records.append(record)
        path, method = record.path, record.method
        if config.same_origin or config.fallback:
            server = side.servers["as"]
            if server.route(method, path) or (path.startswith("/.well-known/") and path != config.prm_path):
                record.server = "as"
                await server.handle(record, send)
                return
        if method == "GET" and config.prm_path is not None and path == config.prm_path:
            record.endpoint, record.status = "prm", 200
            await respond(send, 200, self.prm())
            return
        if path.startswith("/.well-known/"):
            record.endpoint = "prm" if path.startswith(ROOT_PRM) else "other"
            record.status = 404
            await respond(send, 404, {"error": "not_found"})
            return
        record.endpoint = "mcp" if path == MCP_PATH else "other"
        refusal = self.refusal(record, body)
        if refusal is not None:
            status, header, description = refusal
            record.status = status
            answer = {"error": {403: "insufficient_scope", 410: "test_complete"}.get(status, "invalid_token")}
            answer["error_description"] = description
            await respond(send, status, answer, {"www-authenticate": header} if header else None)
            return
        replay = [{"type": "http.request", "body": body, "more_body": False}]

        async def replayed() -> Any:
            return replay.pop(0) if replay else await receive()

        async def noted(message: Any) -> None:
            if message.get("type") == "http.response.start":
                record.status = int(message.get("status", 0))
            await send(message)

        await self.app(scope, replayed, noted)

    def refusal(self, record: AuthRecord, body: bytes) -> tuple[int, str, str] | None:
        """(status, WWW-Authenticate, description) when the request is refused; None: let it in."""
        side, config = self.side, self.side.config
        try:
            message = json.loads(body) if body else None
        except ValueError:
            message = None
        rpc_method = message.get("method") if isinstance(message, dict) else None
        record.notes["rpc_method"] = rpc_method
        handshake = isinstance(rpc_method, str) and (
            rpc_method == "initialize" or rpc_method.startswith("notifications/")
        )
        if config.gate in ("step-up", "retry-limit", "migration") and handshake:
            return None  # (as the official scenarios: the handshake needs no token)
        header = record.headers.get("authorization", "")
        token = header[7:].strip() if header[:7].lower() == "bearer " else ""
        grant = side.tokens.access.get(token) if token else None
        first_scopes: list[str] | tuple[str, ...] = config.required_scopes if config.scope_in_header else ()
        if config.gate == "step-up":
            first_scopes = STEP_UP_SCOPES[:1]
        elif config.gate == "retry-limit":
            first_scopes = (RETRY_SCOPE,)
        elif config.gate == "migration":
            first_scopes = ("mcp:basic",)
        if grant is None:
            error = "invalid_token" if token else None
            return 401, _challenge(side, first_scopes, error), "no valid access token"
        record.notes["token_server"] = grant.server
        if config.gate == "migration":
            if not side.migrated:
                side.migrated = True  # the next 401 sends the client to the second server
                return None
            if grant.server != "as2":
                return (
                    401,
                    _challenge(side, first_scopes, "invalid_token"),
                    "the authorization server changed",
                )
            return None
        if config.gate == "expire-once" and grant.kind == "authorization_code":
            grant.uses += 1
            if grant.uses > 1:
                return 401, _challenge(side, (), "invalid_token"), "the access token expired"
            return None
        if config.gate == "retry-limit":
            self.with_token += 1
            if self.with_token > RETRY_CAP:
                return 410, "", "the scenario is over: too many attempts"
            return 403, _challenge(side, (RETRY_SCOPE,), "insufficient_scope"), "this scope is never enough"
        needed: list[str] | tuple[str, ...] = first_scopes
        if config.gate == "step-up":
            needed = STEP_UP_SCOPES[1:] if rpc_method == "tools/call" else STEP_UP_SCOPES[:1]
        if any(s not in grant.scopes for s in needed):
            return 403, _challenge(side, needed, "insufficient_scope"), "the token lacks a scope"
        return None


def build_auth_server(base: str) -> Any:  # (registered in servers.SERVERS below)
    """The MCP server of the auth scenarios: one tool, ``test-tool`` (as the official suite's)."""
    from jsonrpc_mcp import Server

    server = Server("conformance-client-auth-scenario", version="1.0.0")

    @server.tool("test-tool", input_schema={"type": "object"})
    def test_tool() -> str:
        """A tool behind the authorization."""
        return "test"

    return server


async def start_auth(
    scenario: Any, base: str, app: Any, env: dict[str, str], listen: Any, serve: Any
) -> tuple[AuthSide, Any]:
    """Start ``scenario``'s authorization side (see :meth:`AuthSide.start`); the gated app to
    serve, and the client's context (``env``'s ``MCP_CONFORMANCE_CONTEXT``) completed with what
    the run made (a private key)."""
    side = AuthSide(AuthConfig.from_json(scenario.auth))
    await side.start(base, listen, serve)
    if side.context:
        context = {"name": scenario.name, **(scenario.context or {}), **side.context}
        env["MCP_CONFORMANCE_CONTEXT"] = json.dumps(context)
    return side, ProtectedResource(app, side)


def _register() -> None:
    from .servers import SERVERS

    SERVERS.setdefault("auth", build_auth_server)


_register()
