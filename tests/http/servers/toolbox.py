"""A jsonrpc_mcp server for the HTTP tests, with tools the test can steer.

In-process tests build it with :func:`build_server` and steer it through a :class:`Controls`: a
gate the ``gated`` tool waits on, events the ``block`` tool sets when it starts and when it is
cancelled. Subprocess tests serve the module-level ``server`` (``python -m jsonrpc_mcp serve
tests/http/servers/toolbox.py --http``), whose controls are simply never touched.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import anyio

from jsonrpc_mcp import Context, Server
from jsonrpc_mcp.revisions import ALL_REVISIONS, Revision


class Controls:
    """Events shared by a test and the tools of the server it runs (same event loop)."""

    def __init__(self) -> None:
        self.gates: defaultdict[str, anyio.Event] = defaultdict(anyio.Event)
        self.started: defaultdict[str, anyio.Event] = defaultdict(anyio.Event)
        self.cancelled: defaultdict[str, anyio.Event] = defaultdict(anyio.Event)
        self.finished: defaultdict[str, anyio.Event] = defaultdict(anyio.Event)


def build_server(
    controls: Controls | None = None,
    name: str = "http-toolbox",
    revisions: tuple[Revision, ...] = ALL_REVISIONS,
) -> Server:
    controls = controls if controls is not None else Controls()
    server = Server(name, "0.1.0", revisions=revisions)

    @server.tool()
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    @server.tool()
    async def progress(steps: int, ctx: Context) -> str:
        """Report progress ``steps`` times, then answer."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return f"done after {steps} steps"

    @server.tool()
    async def gated(gate: str, ctx: Context) -> str:
        """Report progress, wait until the test opens ``gate``, report again, answer."""
        await ctx.report_progress(1, 2, "waiting")
        controls.started[gate].set()
        await controls.gates[gate].wait()
        await ctx.report_progress(2, 2, "released")
        controls.finished[gate].set()
        return f"released {gate}"

    @server.tool()
    async def block(name: str) -> str:
        """Run until cancelled (the test waits on ``started`` and ``cancelled``)."""
        controls.started[name].set()
        try:
            await anyio.sleep_forever()
        finally:
            controls.cancelled[name].set()
        return "unreachable"

    @server.tool()
    async def ask_roots(ctx: Context) -> Any:
        """Ask the client for its roots and answer with them."""
        result = await ctx.send_request("roots/list", {}, timeout=10)
        return result

    @server.tool()
    async def say(text: str, ctx: Context) -> str:
        """Send a log message notification before answering."""
        await ctx.send_notification("notifications/message", {"level": "info", "data": text})
        return text

    return server


server = build_server()
