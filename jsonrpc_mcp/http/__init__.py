"""MCP over HTTP, the server side: the ASGI application (Streamable HTTP and legacy HTTP+SSE), its
event store (in memory, or in Redis to scale out), the Host/Origin policy and bearer-token
authorization (static tokens, JWTs checked against a JWKS, RFC 7662 introspection).

Imported only when HTTP is used, so a stdio server never loads it. The helpers behind these names
live in the private modules (``_auth``, ``_security``, ...).
"""

from ._auth import (
    AccessToken,
    AuthResult,
    AuthSettings,
    AuthUnavailable,
    StaticTokenVerifier,
    TokenVerifier,
    audience_matches,
    log_refusal,
)
from ._events import EventStore, EventStream, InMemoryEventStore
from ._introspection import IntrospectionVerifier
from ._jwt import JwtVerifier
from ._redis import RedisBackend, RedisEventStore, RedisUnavailable
from ._security import Decision, TransportSecurity
from .app import McpHttpApp

__all__ = [
    "AccessToken",
    "AuthResult",
    "AuthSettings",
    "AuthUnavailable",
    "Decision",
    "EventStore",
    "EventStream",
    "InMemoryEventStore",
    "IntrospectionVerifier",
    "JwtVerifier",
    "McpHttpApp",
    "RedisBackend",
    "RedisEventStore",
    "RedisUnavailable",
    "StaticTokenVerifier",
    "TokenVerifier",
    "TransportSecurity",
    "audience_matches",
    "log_refusal",
]
