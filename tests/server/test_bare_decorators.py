"""``@server.tool`` and ``@server.prompt`` without parentheses register the function, as with them;
``@server.resource`` without its URI is refused at once instead of silently registering nothing."""

from __future__ import annotations

import pytest

from jsonrpc_mcp import RegistrationError, Server
from jsonrpc_mcp.testing import connect

pytestmark = pytest.mark.anyio


async def test_a_bare_tool_decorator_registers_the_function_and_keeps_it() -> None:
    server = Server("bare")

    @server.tool
    def shout(text: str) -> str:
        """Shout the text."""
        return text.upper()

    assert shout("hi") == "HI"  # the function, not a registering wrapper
    async with connect(server) as client:
        tools = await client.list_tools()
        result = await client.call_tool("shout", {"text": "hi"})
    assert [t["name"] for t in tools] == ["shout"]
    assert tools[0]["description"] == "Shout the text."
    assert result["content"][0]["text"] == "HI"


async def test_a_bare_prompt_decorator_registers_the_function_and_keeps_it() -> None:
    server = Server("bare")

    @server.prompt
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Say hello to {name}."

    assert greet("Ada") == "Say hello to Ada."
    async with connect(server) as client:
        prompts = await client.list_prompts()
        got = await client.get_prompt("greet", {"name": "Ada"})
    assert [p["name"] for p in prompts] == ["greet"]
    assert got["messages"][0]["content"]["text"] == "Say hello to Ada."


def test_the_decorators_with_parentheses_still_take_a_name() -> None:
    server = Server("named")

    @server.tool("loud")
    def shout(text: str) -> str:
        return text.upper()

    @server.prompt("hello")
    def greet(name: str) -> str:
        return name

    assert "loud" in server.tools and "hello" in server.prompts


def test_a_resource_decorator_without_its_uri_is_refused() -> None:
    server = Server("bare")
    with pytest.raises(RegistrationError, match="needs a URI"):

        @server.resource  # type: ignore[arg-type]
        def everything() -> str:
            return "all"

    assert len(server.resources) == 0
