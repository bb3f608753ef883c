"""A small server for the CLI tests: ``jsonrpc-mcp serve tests/server/servers/echo_server.py``."""

from __future__ import annotations

import sys

from jsonrpc_mcp import Server

ARGV = list(sys.argv)  # what the CLI gave this target, captured at import


def make_server(name: str = "factory-made") -> Server:
    server = Server(name, "1.0")

    @server.tool()
    def echo(text: str) -> str:
        """Say it back."""
        return text

    @server.tool()
    def argv() -> list[str]:
        """The sys.argv the target saw when it was loaded."""
        return ARGV

    @server.tool()
    def fail() -> str:
        raise RuntimeError("on purpose")

    @server.resource("echo://hello")
    def hello() -> str:
        return "hello"

    @server.prompt()
    def greet(name: str) -> str:
        return f"Hello {name}"

    return server


server = make_server("echo")
other = make_server("other")
not_a_server = 42
