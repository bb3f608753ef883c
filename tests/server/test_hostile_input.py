"""Hostile input the server must answer with a clear error, never an internal one: values nested as
deep as JSON allows, and URIs far longer than any real one."""

from __future__ import annotations

from typing import Any

import pytest

from jsonrpc_mcp import Server
from jsonrpc_mcp.jsonrpc import JsonRpcError
from jsonrpc_mcp.testing import connect

pytestmark = pytest.mark.anyio

TREE = {
    "type": "object",
    "properties": {"tree": {"$ref": "#/$defs/node"}},
    "required": ["tree"],
    "$defs": {"node": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
}


def _nested(depth: int, leaf: Any) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("depth", [10, 250])  # 250: about as deep as a client's encoder goes
async def test_a_wrong_value_nested_deep_is_refused_as_invalid_arguments(depth: int) -> None:
    server = Server("deep")
    server.add_tool("count", lambda tree: "ok", input_schema=TREE)
    async with connect(server) as client:  # 2025-11-25: invalid arguments are a tool error result
        result = await client.call_tool("count", {"tree": _nested(depth, 7)})
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "internal error" not in text.lower()
    if depth == 250:
        assert "nested too deeply" in text


async def test_a_schema_that_loops_on_itself_costs_each_call_an_error_not_the_request() -> None:
    """``not: {$ref: "#"}`` recurses forever whatever the value; where Python's recursion limit is met
    inside referencing's Rust maps it surfaces as a pyo3 panic, which must not lose the request."""
    server = Server("loop")
    server.add_tool("count", lambda: "ok", input_schema={"type": "object", "not": {"$ref": "#"}})
    async with connect(server) as client:
        for _ in range(6):  # (where the limit is met varies with the stack: several calls meet both)
            result = await client.call_tool("count", {})
            assert result["isError"] is True
            assert "nested too deeply" in result["content"][0]["text"]
        await client.ping()  # (raises unless answered)


async def test_a_huge_unknown_uri_is_quoted_short_and_not_echoed_twice() -> None:
    server = Server("r")
    server.add_resource("res://known", lambda: "here")
    uri = "res://" + "x" * 1_000_000
    async with connect(server) as client:
        with pytest.raises(JsonRpcError) as info:
            await client.read_resource(uri)
    assert info.value.code == -32002
    assert len(info.value.message) < 300 and "(1000006 characters)" in info.value.message
    assert info.value.data is None  # not sent back whole


async def test_a_usual_unknown_uri_is_in_the_message_and_the_data() -> None:
    server = Server("r")
    server.add_resource("res://known", lambda: "here")
    async with connect(server) as client:
        with pytest.raises(JsonRpcError) as info:
            await client.read_resource("res://missing")
    assert info.value.message == "Resource not found: res://missing"
    assert info.value.data == {"uri": "res://missing"}
