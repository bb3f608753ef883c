"""A server for the scale-out test: it says which process answered, and asks the client a question."""

from __future__ import annotations

import os

from jsonrpc_mcp import Context, Server

server = Server("scale-out", "1.0.0")


@server.tool()
def whoami() -> str:
    """The id of the process that answered."""
    return str(os.getpid())


@server.tool()
async def confirm(item: str, ctx: Context) -> str:
    """Ask the user to confirm an item (an elicitation: a multi round-trip request when stateless)."""
    answer = await ctx.elicit(
        f"Confirm {item}?", {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    )
    return f"{item}: {answer.get('action')} {answer.get('content')} (answered by {os.getpid()})"
