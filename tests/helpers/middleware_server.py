"""A server with one tool and a middleware that stamps every tools/call result with what carried it.

The stamp (``_meta["test/middleware"]``: transport, era, method, and the tool's original text)
shows, from outside the process, that the middleware saw the request and could change its result.
Served over stdio by ``jsonrpc-mcp serve``, over HTTP by the tests' in-process uvicorn.
"""

from __future__ import annotations

from typing import Any

from jsonrpc_mcp import Call, Server
from jsonrpc_mcp.server import CallNext

STAMP = "test/middleware"

server = Server("middleware")
seen: list[tuple[str, str, str]] = []  # (transport, era, method) of every request, in order


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.middleware
async def stamp(call: Call, call_next: CallNext) -> Any:
    seen.append((call.transport, call.era, call.method))
    result = await call_next(call)
    if call.method == "tools/call" and isinstance(result, dict):
        meta = dict(result.get("_meta") or {})
        meta[STAMP] = {"transport": call.transport, "era": call.era, "seen": len(seen)}
        result = {**result, "_meta": meta, "content": [{"type": "text", "text": "changed by middleware"}]}
    return result
