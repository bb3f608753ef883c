"""A server for the Redis tests (both eras): it says which process answered, changes its tool list
and a resource on request, asks the client a question, and has a tool that takes its time."""

from __future__ import annotations

import os

import anyio

from jsonrpc_mcp import Context, Server

server = Server("redis-shared", "1.0.0")


@server.resource("res://doc", mime_type="text/plain")
def doc() -> str:
    return "the document"


@server.tool()
def whoami() -> str:
    """The id of the process that answered."""
    return str(os.getpid())


@server.tool()
def grow(name: str) -> str:
    """Register a tool named ``name`` (the tool list changes)."""
    server.add_tool(name, lambda: name, description="grown", replace=True)
    return f"grew {name}"


@server.tool()
async def touch(uri: str) -> str:
    """Tell the subscribers that ``uri`` changed."""
    return f"told {await server.notify_resource_updated(uri)}"


@server.tool()
async def slow(seconds: float, ctx: Context) -> str:
    """Report progress, take ``seconds``, answer."""
    await ctx.report_progress(0, 1, "started")
    await anyio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
async def confirm(item: str, ctx: Context) -> str:
    """Ask the user to confirm an item (a multi round-trip request when stateless)."""
    answer = await ctx.elicit(
        f"Confirm {item}?", {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    )
    return f"{item}: {answer.get('action')} (answered by {os.getpid()})"


@server.tool(task="optional")
async def compute(seconds: float) -> str:
    """Take ``seconds``, answer with this process's id: a task when the client speaks Tasks."""
    await anyio.sleep(seconds)
    return f"computed by {os.getpid()}"


@server.tool()
async def ask_briefly(ctx: Context) -> str:
    """Ask the client for its roots, waiting at most half a second."""
    try:
        result = await ctx.send_request("roots/list", {}, timeout=0.5)
    except Exception as exc:
        return f"no answer: {type(exc).__name__}"
    return f"roots: {len(result.get('roots', []))}"


@server.tool()
async def chatty(ctx: Context) -> str:
    """Log one message at each of debug, info and warning."""
    await ctx.debug("a debug line")
    await ctx.info("an info line")
    await ctx.warning("a warning line")
    return "logged"


@server.tool()
async def sample(prompt: str, ctx: Context) -> str:
    """Ask the client's model to answer ``prompt``; say what it answered and who asked."""
    result = await ctx.sample(
        messages=[{"role": "user", "content": {"type": "text", "text": prompt}}], max_tokens=50
    )
    content = result.get("content")
    text = content.get("text") if isinstance(content, dict) else None
    return f"the model said {text!r} (asked by {os.getpid()})"
