"""A jsonrpc_mcp server that speaks only the handshake revisions (2024-11-05 .. 2025-11-25).

Served with ``python -m jsonrpc_mcp serve tests/modern/servers/handshake_only.py``: a modern request
is, to it, an unknown request before ``initialize``.
"""

from __future__ import annotations

from jsonrpc_mcp import Server
from jsonrpc_mcp.revisions import HANDSHAKE_REVISIONS

server = Server("handshake-only", "1.0.0", revisions=HANDSHAKE_REVISIONS)


@server.tool()
def echo(text: str) -> str:
    """Echo the text."""
    return text


if __name__ == "__main__":
    server.run()
