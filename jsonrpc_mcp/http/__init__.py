"""MCP over HTTP: the ASGI application (Streamable HTTP and legacy HTTP+SSE) and its event store.

Imported only when HTTP is used, so a stdio server never loads it.
"""

from .app import McpHttpApp
from .events import EventStore, EventStream, InMemoryEventStore

__all__ = ["EventStore", "EventStream", "InMemoryEventStore", "McpHttpApp"]
