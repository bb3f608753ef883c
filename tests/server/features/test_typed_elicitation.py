"""``ctx.elicit(message, SomeType)``: the form is described by a dataclass, TypedDict or pydantic
model, and the accepted answer comes back as one of it, in both eras."""

from __future__ import annotations

import dataclasses
from typing import Any, TypedDict

import pytest

from jsonrpc_mcp import Context, Elicited, Server
from jsonrpc_mcp.testing import connect

from .support import answers

pytestmark = pytest.mark.anyio


@dataclasses.dataclass
class Person:
    name: str
    age: int


class Place(TypedDict):
    city: str


def make_server() -> Server:
    server = Server("forms")

    @server.tool
    async def greet(ctx: Context) -> str:
        answer = await ctx.elicit("Who are you?", Person)
        if not answer.accepted:
            return f"no answer ({answer.action})"
        assert isinstance(answer.content, Person)
        return f"{answer.content.name} turns {answer.content.age + 1}"

    @server.tool
    async def where(ctx: Context) -> str:
        answer: Elicited[Place] = await ctx.elicit("Where?", Place)
        return answer.content["city"] if answer.content is not None else "nowhere"

    return server


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_answer_is_an_instance_of_the_form_type(mode: str) -> None:
    seen: list[tuple[str, Any]] = []
    accepted = {"action": "accept", "content": {"name": "Ada", "age": 36, "city": "London"}}
    handlers = answers(elicitation=accepted, seen=seen)
    async with connect(
        make_server(), mode=mode, capabilities={"elicitation": {}}, request_handlers=handlers
    ) as c:
        assert (await c.call_tool("greet"))["content"][0]["text"] == "Ada turns 37"
        assert (await c.call_tool("where"))["content"][0]["text"] == "London"
    schema = seen[0][1]["requestedSchema"]
    assert schema["properties"] == {"name": {"type": "string"}, "age": {"type": "integer"}}
    assert sorted(schema["required"]) == ["age", "name"]


async def test_a_declined_form_has_no_content() -> None:
    handlers = answers(elicitation={"action": "decline"})
    async with connect(make_server(), capabilities={"elicitation": {}}, request_handlers=handlers) as c:
        assert (await c.call_tool("greet"))["content"][0]["text"] == "no answer (decline)"


async def test_a_type_that_is_not_a_flat_form_is_the_authors_error() -> None:
    server = Server("forms")

    @dataclasses.dataclass
    class Nested:
        person: Person

    @server.tool
    async def bad(ctx: Context) -> str:
        await ctx.elicit("?", Nested)
        return "unreachable"

    handlers = answers(elicitation={"action": "accept", "content": {}})
    async with connect(server, capabilities={"elicitation": {}}, request_handlers=handlers) as c:
        assert (await c.call_tool("bad"))["isError"] is True  # masked: the log says what is wrong


async def test_get_context_in_a_tool_without_a_context_parameter_can_log() -> None:
    from jsonrpc_mcp import get_context

    server = Server("deferred", logging_enabled=True)  # (advertised by itself when a handler takes a Context)

    @server.tool
    def plain() -> str:  # no Context parameter: one is made when asked for, in its worker thread
        ctx = get_context()
        ctx.logger.warning("from a helper")
        return f"request {ctx.request_id}"

    heard: list[Any] = []
    async with connect(server, on_notification=lambda method, params: heard.append((method, params))) as c:
        result = await c.call_tool("plain")
    assert result["content"][0]["text"].startswith("request ")
    assert [p["data"] for m, p in heard if m == "notifications/message"] == ["from a helper"]
