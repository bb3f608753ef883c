"""MCP over HTTP, the server side: the ASGI application (Streamable HTTP and legacy HTTP+SSE), its
event store (in memory, or in Redis to scale out), the Host/Origin policy and bearer-token
authorization.

Imported only when HTTP is used, so a stdio server never loads it. The helpers behind these names
live in the private modules (``_auth``, ``_security``, ...).
"""

from ._auth import AccessToken, AuthResult, AuthSettings, StaticTokenVerifier, TokenVerifier
from ._events import EventStore, EventStream, InMemoryEventStore
from ._redis import RedisBackend, RedisEventStore, RedisUnavailable
from ._security import Decision, TransportSecurity
from .app import McpHttpApp

__all__ = [
    "AccessToken",
    "AuthResult",
    "AuthSettings",
    "Decision",
    "EventStore",
    "EventStream",
    "InMemoryEventStore",
    "McpHttpApp",
    "RedisBackend",
    "RedisEventStore",
    "RedisUnavailable",
    "StaticTokenVerifier",
    "TokenVerifier",
    "TransportSecurity",
]
