"""A server whose handlers ask the client (elicitation, sampling, roots) through their Context, the
same code in both eras: served in-memory by the MRTR tests and as a real process
(``python -m jsonrpc_mcp serve tests/server/modern/mrtr_server.py``)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import anyio.from_thread

from jsonrpc_mcp import CapabilityError, Context, Server

NAME_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "title": "Name"}},
    "required": ["name"],
}
CONFIRM_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean", "title": "Proceed?"}},
    "required": ["ok"],
}
STATE_KEY = "mrtr-tests-shared-state-key-0123456789"


def _name(result: dict[str, Any]) -> str:
    content = result.get("content") or {}
    return str(content.get("name", "")) if result.get("action") == "accept" else f"<{result.get('action')}>"


def build_server(**options: Any) -> Server:
    server = Server("mrtr", "1.0.0", **{"state_key": STATE_KEY, **options})

    @server.tool()
    async def greet(ctx: Context) -> str:
        """Ask the user's name, then greet them."""
        result = await ctx.elicit("What is your name?", NAME_FORM)
        return f"Hello, {_name(result)}!"

    @server.tool()
    async def survey(topic: str, ctx: Context) -> str:
        """Ask three things, one after the other: a name, the model's opinion, the roots."""
        who = _name(await ctx.elicit(f"Who is asking about {topic}?", NAME_FORM))
        sampled = await ctx.sample([f"One word about {topic}"], max_tokens=20)
        roots = await ctx.list_roots()
        text = sampled["content"].get("text") if isinstance(sampled.get("content"), dict) else None
        return json.dumps({"who": who, "model": sampled["model"], "says": text, "roots": roots})

    @server.tool()
    async def confirm_twice(ctx: Context) -> str:
        """Two elicitations with different questions: asked in two rounds."""
        first = await ctx.elicit("First: proceed?", CONFIRM_FORM)
        second = await ctx.elicit("Second: really proceed?", CONFIRM_FORM)
        return f"{first.get('content')} {second.get('content')}"

    @server.tool()
    async def ask_both(ctx: Context) -> str:
        """Two questions asked concurrently (one round when the loop runs both before answering)."""
        answers: list[Any] = [None, None]

        async def elicit() -> None:
            answers[0] = _name(await ctx.elicit("Name?", NAME_FORM))

        async def sample() -> None:
            answers[1] = (await ctx.sample(["Pick a colour"]))["model"]

        async with anyio.create_task_group() as tg:
            tg.start_soon(elicit)
            tg.start_soon(sample)
        return f"{answers[0]} / {answers[1]}"

    @server.tool()
    async def sample_or_fallback(ctx: Context) -> str:
        """Sample if the client can; otherwise answer without it."""
        try:
            result = await ctx.sample(["Say hi"])
        except CapabilityError as exc:
            return f"fallback ({exc.data})"
        return f"sampled from {result['model']}"

    @server.tool()
    async def show_roots(ctx: Context) -> str:
        """The client's roots, as JSON."""
        return json.dumps(await ctx.list_roots())

    @server.tool()
    async def visit(ctx: Context) -> str:
        """URL-mode elicitation."""
        result = await ctx.elicit_url("Sign in", "https://example.com/login", elicitation_id="login-1")
        return f"visit: {result['action']}"

    @server.tool()
    def ask_from_thread(ctx: Context) -> str:
        """A sync tool (a worker thread) asking through the event loop."""
        result = anyio.from_thread.run(ctx.elicit, "Name from a thread?", NAME_FORM)
        return f"thread got {_name(result)}"

    @server.tool()
    async def swallow(ctx: Context) -> str:
        """A handler catching BaseException around an ask (wrong, but its question still stands)."""
        try:
            await ctx.elicit("Name?", NAME_FORM)
        except BaseException:
            return "swallowed"
        return "answered"

    @server.prompt()
    async def interview(topic: str, ctx: Context) -> str:
        """A prompt that asks who it is for."""
        result = await ctx.elicit(f"Who is the {topic} interview for?", NAME_FORM)
        return f"Interview {_name(result)} about {topic}"

    @server.resource("vault://secret", mime_type="text/plain")
    async def secret(ctx: Context) -> str:
        result = await ctx.elicit("Unlock the vault?", CONFIRM_FORM)
        return "the secret" if (result.get("content") or {}).get("ok") else "locked"

    @server.resource("plain://static", mime_type="text/plain")
    def static() -> str:
        return "static text"

    @server.completion(prompt="interview", argument="topic")
    async def topics(value: str, ctx: Context) -> list[str]:
        try:
            await ctx.sample(["topics?"])
        except CapabilityError as exc:
            return [f"no: {exc.message}"]
        return ["sampled"]

    return server


# served as a process: the key comes from $JSONRPC_MCP_STATE_KEY, else it is random per process
server = build_server(state_key=None)
