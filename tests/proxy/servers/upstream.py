"""An upstream server for the proxy tests, with tools the test can steer.

In-process tests build it with :func:`build_server` and steer it through a :class:`Controls`.
Subprocess tests serve the module-level ``server``: ``JSONRPC_MCP_TEST_ERA=handshake`` in the
environment restricts it to the handshake revisions (a 2026-07-28 request is then, to it, unknown
traffic before ``initialize``).
"""

from __future__ import annotations

import os
from collections import defaultdict

import anyio

from jsonrpc_mcp import Context, Server
from jsonrpc_mcp.revisions import ALL_REVISIONS, HANDSHAKE_REVISIONS, Revision

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


class Controls:
    """Events shared by a test and the tools of the server it runs (same event loop)."""

    def __init__(self) -> None:
        self.started: defaultdict[str, anyio.Event] = defaultdict(anyio.Event)
        self.cancelled: defaultdict[str, anyio.Event] = defaultdict(anyio.Event)
        self.calls: defaultdict[str, int] = defaultdict(int)


def build_server(
    controls: Controls | None = None, revisions: tuple[Revision, ...] = ALL_REVISIONS, name: str = "upstream"
) -> Server:
    controls = controls if controls is not None else Controls()
    server = Server(
        name, "2.5.0", title="The upstream", instructions="Reached through a proxy.", revisions=revisions,
        logging_enabled=True, page_size=2,
    )  # fmt: skip

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool()
    async def progress(steps: int, ctx: Context) -> str:
        """Report progress ``steps`` times, then answer."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return f"done after {steps} steps"

    @server.tool()
    async def greet(ctx: Context) -> str:
        """Ask the user's name (elicitation), then greet."""
        controls.calls["greet"] += 1
        answer = await ctx.elicit("What is your name?", NAME_FORM, key="name")
        if answer.get("action") != "accept":
            return f"no name ({answer.get('action')})"
        return f"Hello, {answer['content']['name']}!"

    @server.tool()
    async def twice(ctx: Context) -> str:
        """Ask two names, one after the other."""
        first = await ctx.elicit("First name?", NAME_FORM, key="first")
        second = await ctx.elicit("Second name?", NAME_FORM, key="second")
        return f"{first['content']['name']} and {second['content']['name']}"

    @server.tool()
    async def visit(ctx: Context) -> str:
        """Send the user to a URL (URL-mode elicitation), then announce it was completed."""
        answer = await ctx.elicit_url("Sign in", "https://example.com/sign-in", "visit-1")
        await ctx.session.notify_elicitation_complete("visit-1")
        return f"visited ({answer['action']})"

    @server.tool()
    async def think(question: str, ctx: Context) -> str:
        """Ask the client's model (sampling)."""
        result = await ctx.sample([question], max_tokens=20, key="model")
        return f"model says: {result['content']['text']}"

    @server.tool()
    async def roots(ctx: Context) -> str:
        """List the client's roots."""
        found = await ctx.list_roots(key="roots")
        return ", ".join(root["uri"] for root in found) or "none"

    @server.tool()
    async def block(gate: str, ctx: Context) -> str:
        """Wait until cancelled (the test sees it start and end)."""
        controls.started[gate].set()
        try:
            await anyio.sleep_forever()
        finally:
            controls.cancelled[gate].set()
        return "unreachable"

    @server.tool()
    async def chatty(ctx: Context) -> str:
        """Log one message of each of three levels."""
        for level in ("debug", "info", "error"):
            await ctx.log(level, f"{level} message", logger="chatty")
        return "logged"

    @server.tool()
    def grow(tool: str) -> str:
        """Add a tool (the tool list changes)."""
        server.add_tool(tool, echo, description="added by grow", replace=True)
        return f"added {tool}"

    @server.tool()
    async def touch(uri: str) -> str:
        """Announce that a resource changed."""
        told = await server.notify_resource_updated(uri)
        return f"told {told}"

    @server.resource("test://static", name="static", mime_type="text/plain")
    def static() -> str:
        return "static text"

    @server.resource("test://items/{id}", name="item", mime_type="text/plain")
    def item(id: str) -> str:
        return f"item {id}"

    @server.prompt("hello", description="A greeting")
    def hello(name: str) -> str:
        return f"Say hello to {name}."

    @server.completion(prompt="hello", argument="name")
    def names(value: str, context: dict[str, str]) -> list[str]:
        return [n for n in ("ada", "alan", "grace") if n.startswith(value)]

    return server


_ERA = os.environ.get("JSONRPC_MCP_TEST_ERA", "")
server = build_server(revisions=HANDSHAKE_REVISIONS if _ERA == "handshake" else ALL_REVISIONS)

if __name__ == "__main__":
    server.run()
