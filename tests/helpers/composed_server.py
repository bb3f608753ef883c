"""A server with another one mounted into it under the namespace "inner", each with a middleware.

The mounted tool ``inner_where`` answers with what carried the call as the mounted server's
middleware saw it (and the mounted server's lifespan value), and the parent's middleware adds what
it saw to the result's ``_meta``: so a client reading the answer over the wire knows both chains
ran. Served over stdio by ``jsonrpc-mcp serve``, over HTTP by the tests' in-process uvicorn; the
in-memory tests :func:`build` their own (a lifespan's lock belongs to one event loop).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import AsyncIterator
from typing import Any

from jsonrpc_mcp import Call, Context, Server
from jsonrpc_mcp.server import CallNext

STAMP = "test/parent"
_carried: contextvars.ContextVar[str] = contextvars.ContextVar("carried", default="?")


@contextlib.asynccontextmanager
async def _inner_lifespan(server: Server) -> AsyncIterator[str]:
    yield "inner lifespan"


def build() -> Server:
    inner = Server("inner", lifespan=_inner_lifespan)

    @inner.middleware
    async def inner_sees(call: Call, call_next: CallNext) -> Any:
        token = _carried.set(f"{call.transport}/{call.era}")
        try:
            return await call_next(call)
        finally:
            _carried.reset(token)

    @inner.tool()
    async def where(ctx: Context) -> str:
        """What carried the call, as the mounted server's middleware saw it, and its lifespan."""
        return f"{_carried.get()} {ctx.lifespan}"

    @inner.resource("memo://notes/{name}")
    def note(name: str) -> str:
        return f"note {name}"

    parent = Server("parent")

    @parent.middleware
    async def parent_sees(call: Call, call_next: CallNext) -> Any:
        result = await call_next(call)
        if call.method == "tools/call" and isinstance(result, dict):
            meta = dict(result.get("_meta") or {})
            meta[STAMP] = f"{call.transport}/{call.era}"
            result = {**result, "_meta": meta}
        return result

    parent.mount(inner, namespace="inner")
    return parent


server = build()
