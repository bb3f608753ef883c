"""The tools the official suite's tasks-* scenarios call (SEP-2663, the Tasks extension).

``add_task_fixtures(server)`` registers them on the everything server; ``server.py`` calls it.
"""

from __future__ import annotations

import anyio

from jsonrpc_mcp import Context, Server, ToolError
from jsonrpc_mcp.jsonrpc.errors import InternalError
from jsonrpc_mcp.server.tasks import start_task

CONFIRM_SCHEMA = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def add_task_fixtures(server: Server) -> None:
    """Register greet, slow_compute, failing_job, protocol_error_job, confirm_delete, multi_input and
    test_tool_with_task on ``server``."""

    @server.tool
    def greet(name: str) -> str:
        """Greets by name (an ordinary tool: never a task)."""
        return f"Hello, {name}!"

    @server.tool(task="optional")
    async def slow_compute(seconds: float = 1.0, label: str = "") -> str:
        """Sleeps ``seconds`` then answers: a task when the client speaks the Tasks extension."""
        await anyio.sleep(seconds)
        return f"computed {label or 'result'} after {seconds:g}s"

    @server.tool(task="required")
    async def failing_job() -> str:
        """Fails (a tool execution error) after a moment; runs only as a task."""
        await anyio.sleep(0.5)
        raise ToolError("the job failed, as it always does")

    @server.tool(task="optional")
    async def protocol_error_job() -> str:
        """Fails with a protocol-level error (the task ends 'failed')."""
        raise InternalError("Internal error: the job crashed")

    @server.tool(task="optional")
    async def confirm_delete(filename: str, ctx: Context) -> str:
        """Asks the user to confirm, then 'deletes' the file."""
        answer = await ctx.elicit(f"Delete {filename}?", CONFIRM_SCHEMA)
        confirmed = answer.get("action") == "accept" and (answer.get("content") or {}).get("confirm")
        return f"deleted {filename}" if confirmed else f"kept {filename}"

    @server.tool(task="optional")
    async def multi_input(ctx: Context) -> str:
        """Asks two questions at once (both pending together), then answers with both names."""
        answers = await ctx.ask(
            {
                "first": ctx.elicitation("First name?", NAME_SCHEMA),
                "second": ctx.elicitation("Second name?", NAME_SCHEMA),
            }
        )
        names = [(answers[key].get("content") or {}).get("name", "?") for key in ("first", "second")]
        return f"got {names[0]} and {names[1]}"

    @server.tool(task="required", defer_task=True)
    async def test_tool_with_task(ctx: Context) -> str:
        """Asks for the user's name the multi round-trip way, then goes on as a task."""
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA)
        name = (answer.get("content") or {}).get("name", "stranger")
        await start_task()
        await anyio.sleep(0.2)
        return f"Hello, {name}, from a task!"
