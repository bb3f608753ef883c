"""A handshake-only server whose lists come in pages of two (inspect must follow nextCursor)."""

from __future__ import annotations

from dataclasses import dataclass

from jsonrpc_mcp import Server
from jsonrpc_mcp.revisions import HANDSHAKE_REVISIONS

server = Server("paged", version="0.1", page_size=2, revisions=HANDSHAKE_REVISIONS)


@dataclass
class Point:
    x: int
    y: int


for i in range(5):
    server.add_tool(f"tool{i}", lambda: "x", description=f"tool number {i}")
    server.add_resource(f"res://{i}", lambda: "x")
    server.add_resource(f"tpl{i}://{{id}}", lambda id: id)


@server.tool()
def shift(p: Point, dx: int = 1) -> Point:
    """Moves a point right."""
    return Point(p.x + dx, p.y)


@server.prompt()
def review(code: str, language: str = "python") -> str:
    """Asks for a review."""
    return f"Review this {language}: {code}"
