"""A small server written with the official MCP Python SDK (``mcp``), served over stdio or Streamable HTTP.

It is the subject of ``tests/conformance/test_sdk_server*.py``: two tools (one with a bounded
argument), a resource, a resource template and a prompt with a required argument, which is what the
fixtures in ``spec/`` need to exercise the tools, resources and prompts requirements.

Usage: ``python sdk_server.py`` serves stdio; ``python sdk_server.py --http [PORT]`` serves the SDK's
``streamable_http_app()`` with its defaults (stateful, ``Mcp-Session-Id`` sessions; SSE responses,
``json_response=False``) under uvicorn on 127.0.0.1 (PORT 0 or none: a free port), and prints its URL
(``http://127.0.0.1:N/mcp``) on stdout once the port is listening.
"""

from __future__ import annotations

import sys
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


def main(argv: list[str]) -> None:
    if argv[:1] != ["--http"]:
        server.run()
        return
    import socket

    import uvicorn

    host = "127.0.0.1"
    # host= picks the SDK's DNS-rebinding allowlist for loopback; everything else is the SDK default
    app = server.streamable_http_app(host=host)
    # bound and listening before the URL is printed, so a client may connect as soon as it reads it
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, int(argv[1]) if len(argv) > 1 else 0))
    sock.listen(128)
    print(f"http://{host}:{sock.getsockname()[1]}/mcp", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main(sys.argv[1:])
