"""A server written with the official MCP Python SDK (``mcp``) exposing the official conformance
suite's fixture names: the SDK's stand-in for an "everything" reference server over stdio.

The wheel of the SDK ships no example server, so this driver registers, with the SDK's own
``MCPServer`` API and nothing else, the tools, prompts and resources the official suite calls by name
(``test_simple_text``, ``test_tool_with_progress``, ``test_trigger_tool_change``, ``test://static-text``,
``test_prompt_with_arguments``...). The harness finds them by those names or by discovery, so a
run against it exercises the SDK's behaviour rather than skipping. Usage: ``python sdk_everything.py``
(stdio). Used by ``tests/conformance/stdio_under_load.py``.
"""

from __future__ import annotations

import base64

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

server: MCPServer = MCPServer("sdk-everything", version="1.0.0", log_level="WARNING")

# a 1x1 transparent PNG
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)


@server.tool()
def test_simple_text() -> str:
    """A fixed text answer."""
    return "This is a simple text response for testing."


@server.tool()
def test_error_handling() -> str:
    """Always fails (an error result)."""
    raise ValueError("This tool intentionally returns an error for testing")


@server.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50 and 100 of 100."""
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100)
    return "done"


@server.tool()
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends three log messages."""
    for text in ("starting", "working", "finished"):
        await ctx.info(text)
    return "logged"


class Answer(BaseModel):
    name: str = ""


@server.tool()
async def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the client for a name."""
    result = await ctx.elicit(message, Answer)
    return str(result.action)


class Reading(BaseModel):
    celsius: float
    place: str


@server.tool()
def test_structured_output() -> Reading:
    """A structured result (an outputSchema)."""
    return Reading(celsius=21.5, place="Oslo")


@server.tool()
async def test_trigger_tool_change(ctx: Context) -> str:
    """Adds a tool and removes it again (the official suite's hook for a tool-list change)."""
    server.add_tool(test_simple_text, name="test_temporary_tool")
    await ctx.notify_tools_changed()
    server.remove_tool("test_temporary_tool")
    await ctx.notify_tools_changed()
    return "changed"


@server.resource("test://static-text", mime_type="text/plain")
def static_text() -> str:
    """A fixed text resource."""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A fixed binary resource."""
    return PIXEL


@server.resource("test://template/{id}/data", mime_type="application/json")
def template_data(id: str) -> str:
    """A resource template."""
    return f'{{"id": "{id}"}}'


@server.prompt()
def test_simple_prompt() -> str:
    """A prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt()
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


if __name__ == "__main__":
    server.run()
