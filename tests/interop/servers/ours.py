"""A jsonrpc_mcp server for the interop tests: the official SDK's client drives it over stdio.

Serve with ``python -m jsonrpc_mcp serve tests/interop/servers/ours.py [--revision VERSION]``;
``--revision`` restricts the server to that one handshake revision, so it answers every
``initialize`` with it (the counter-offer path).
"""

from __future__ import annotations

import argparse
import sys
from typing import Annotated

from jsonrpc_mcp import Arg, Server, ToolError
from jsonrpc_mcp.revisions import HANDSHAKE_REVISIONS, Revision, get_revision


def _revisions(argv: list[str]) -> tuple[Revision, ...]:
    parser = argparse.ArgumentParser(prog="ours.py")
    parser.add_argument("--revision", help="the only revision to speak")
    version = parser.parse_args(argv).revision
    if version is None:
        return HANDSHAKE_REVISIONS
    revision = get_revision(version)
    if revision is None:
        parser.error(f"unknown revision {version!r}")
    return (revision,)


server = Server(
    "interop-ours",
    "1.2.3",
    instructions="A test server for the official SDK client.",
    revisions=_revisions(sys.argv[1:]),
)


@server.tool(annotations={"readOnlyHint": True})
def add(a: int, b: int) -> str:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return str(a + b)


@server.tool()
def repeat(text: str, times: Annotated[int, Arg("How many copies", minimum=1, maximum=5)] = 1) -> str:
    """Repeat a text a few times (1 to 5)."""
    return " ".join([text] * times)


@server.tool()
def fail(reason: str) -> str:
    """Always fails with the given reason."""
    raise ToolError(f"failed on purpose: {reason}")


@server.resource("interop://greeting", name="greeting", mime_type="text/plain", description="A greeting")
def greeting() -> str:
    return "hello from jsonrpc_mcp"


@server.resource("interop://items/{item_id}", name="item", mime_type="application/json")
def item(item_id: str) -> dict[str, str]:
    return {"id": item_id, "label": f"item {item_id}"}


@server.prompt("summarize", description="Summarize a topic")
def summarize(topic: str, style: str = "brief") -> str:
    """Summarize a topic.

    Args:
        topic: What to summarize.
        style: How to write it.
    """
    return f"Summarize {topic} in a {style} style."
