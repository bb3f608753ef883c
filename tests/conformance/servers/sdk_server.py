"""A small server written with the official MCP Python SDK (``mcp``), served over stdio.

It is the subject of ``tests/conformance/test_sdk_server.py``: two tools (one with a bounded
argument), a resource, a resource template and a prompt with a required argument, which is what the
fixtures in ``spec/`` need to exercise the tools, resources and prompts requirements.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field

server: MCPServer = MCPServer("sdk-conformance", version="1.0.0", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def repeat(text: str, times: Annotated[int, Field(ge=1, le=5)] = 1) -> str:
    """Repeat the text 1 to 5 times."""
    return text * times


@server.resource("memo://greeting", mime_type="text/plain")
def greeting() -> str:
    """A fixed greeting."""
    return "hello"


@server.resource("memo://notes/{name}", mime_type="text/plain")
def note(name: str) -> str:
    """The note called ``name``."""
    return f"note {name}"


@server.prompt()
def summarize(topic: str) -> str:
    """Ask for a summary of a topic."""
    return f"Summarize {topic}."


if __name__ == "__main__":
    server.run()
