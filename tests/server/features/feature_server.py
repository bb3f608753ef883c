"""A server using every Context feature, served in-memory by the tests and as a real process
(``python -m jsonrpc_mcp serve tests/server/features/feature_server.py [--http --port N]``)."""

from __future__ import annotations

import json
from typing import Any

from jsonrpc_mcp import Context, Server, ToolError, content

LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 1},
        "age": {"type": "integer", "minimum": 0},
        "subscribe": {"type": "boolean", "default": False},
    },
    "required": ["name"],
}
PNG = b"\x89PNG\r\n\x1a\n"


def build_server() -> Server:
    server = Server("features", "1.0.0", logging_enabled=True)

    @server.tool()
    async def log_every_level(ctx: Context) -> str:
        """Log one message at every RFC 5424 level, least severe first."""
        for level in LEVELS:
            await ctx.log(level, {"level": level}, logger="levels")
        return "logged"

    @server.tool()
    def log_from_thread(ctx: Context) -> str:
        """A sync tool (a worker thread) logging through ctx.logger."""
        ctx.logger.info("first")
        ctx.logger.getChild("db").warning("second %s", 2)
        ctx.logger.error({"third": 3})
        return "logged from a thread"

    @server.tool()
    async def log_from_loop(ctx: Context) -> str:
        """An async tool logging through ctx.logger (synchronous calls on the event loop)."""
        for n in range(5):
            ctx.logger.info("record %d", n)
        return "logged from the loop"

    @server.tool()
    async def count_up(steps: int, ctx: Context) -> str:
        """Report progress steps/steps with a message, then return."""
        for n in range(1, steps + 1):
            await ctx.report_progress(n, steps, f"step {n}")
        return f"counted to {steps}"

    @server.tool()
    async def ask_model(question: str, ctx: Context) -> str:
        """Sample the client's model."""
        result = await ctx.sample([question], max_tokens=50, system_prompt="Answer briefly.", temperature=0.1)
        block = result["content"]
        return f"{result['model']} says {block.get('text')}"

    @server.tool()
    async def ask_user(ctx: Context) -> str:
        """Elicit a form from the user."""
        return json.dumps(await ctx.elicit("Who are you?", FORM), sort_keys=True)

    @server.tool()
    async def send_to_url(ctx: Context) -> str:
        """URL-mode elicitation (2025-11-25)."""
        result = await ctx.elicit_url("Authorize", "https://example.com/auth", elicitation_id="e-1")
        return json.dumps(result, sort_keys=True)

    @server.tool()
    async def show_roots(ctx: Context) -> str:
        """The client's roots, as JSON."""
        return json.dumps(await ctx.list_roots())

    @server.tool()
    async def touch(uri: str) -> str:
        """Tell subscribers that ``uri`` changed."""
        told = await server.notify_resource_updated(uri)
        return f"told {told}"

    @server.tool()
    def rich() -> list[dict[str, Any]]:
        """One block of every kind."""
        return [
            content.text("text", annotations=content.annotations(audience=["user"], priority=0.5)),
            content.image(PNG, "image/png"),
            content.audio(b"RIFF", "audio/wav"),
            content.embedded_resource("res://watched", text="watched text", mime_type="text/plain"),
            content.resource_link("res://items/1", "item-1", mime_type="text/plain", title="Item 1"),
        ]

    @server.tool()
    def fail() -> str:
        raise ToolError("failed on purpose")

    @server.resource("res://watched", mime_type="text/plain")
    def watched() -> str:
        return "watched text"

    @server.resource("res://items/{id}", mime_type="text/plain")
    def item(id: str) -> str:
        return f"item {id}"

    @server.prompt()
    def greet(name: str, style: str = "plain") -> str:
        """Greet someone."""
        return f"Hello {name} ({style})"

    @server.completion(prompt="greet", argument="name")
    def complete_name(value: str, context: dict[str, str]) -> list[str]:
        names = ["alice", "albert", "bob"]
        if context.get("style") == "formal":
            names = [n.title() for n in names]
        return [n for n in names if n.lower().startswith(value.lower())]

    @server.completion(resource="res://items/{id}", argument="id")
    def complete_id(value: str) -> dict[str, Any]:
        ids = [str(n) for n in range(250) if str(n).startswith(value)]
        return {"values": ids, "total": len(ids), "hasMore": False}

    return server


server = build_server()
