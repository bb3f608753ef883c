"""A server with a lifespan that records its enter and exit in the file named by $LIFESPAN_LOG, and
hands its handlers a shared object through ``ctx.lifespan``."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator

from jsonrpc_mcp import Context, Server


def _log(line: str) -> None:
    path = os.environ.get("LIFESPAN_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(line + "\n")


@contextlib.asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[dict[str, int]]:
    _log(f"enter {os.getpid()}")
    try:
        yield {"opened": 1, "calls": 0}
    finally:
        _log(f"exit {os.getpid()}")


server = Server("lifespan", lifespan=lifespan)


@server.tool()
def count(ctx: Context) -> str:
    """Count calls in the lifespan's shared state."""
    state = ctx.lifespan
    state["calls"] += 1
    return f"{state['calls']} of {state['opened']}"
