"""Fixtures for the server tests: a server with one of everything."""

from __future__ import annotations

from typing import Annotated

import pytest

from jsonrpc_mcp import Arg, Context, Server


def build_full_server() -> Server:
    server = Server("full", "1.2.3", instructions="Use the tools.")

    @server.tool(annotations={"readOnlyHint": True})
    def recall(
        keyword: str | None = None,
        limit: Annotated[int, Arg("How many", minimum=1, maximum=20)] = 10,
    ) -> str:
        """Recall memories.

        Args:
            keyword: Only memories containing this word.
        """
        return f"recall {keyword} {limit}"

    @server.tool()
    async def ping_client(ctx: Context) -> str:
        """Ping the client from inside a tool."""
        await ctx.session.ping()
        return "pinged"

    @server.resource("memory://all", mime_type="application/json")
    def all_memories() -> list[dict[str, int]]:
        return [{"id": 1}]

    @server.resource("memory://{id}")
    def one_memory(id: str) -> str:
        return f"memory {id}"

    @server.prompt()
    def recap(date: str, style: str = "short") -> str:
        """Recap a day."""
        return f"recap {date} {style}"

    return server


@pytest.fixture
def full_server() -> Server:
    return build_full_server()
