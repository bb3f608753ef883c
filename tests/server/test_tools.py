"""tools/list and tools/call: results, errors, unknown tools."""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest

from jsonrpc_mcp import Server, ToolError, ToolResult
from jsonrpc_mcp.jsonrpc import JsonRpcError
from jsonrpc_mcp.testing import connect

pytestmark = pytest.mark.anyio


async def _call(server: Server, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    async with connect(server) as client:
        return await client.call_tool(name, arguments)


async def test_tools_list_shows_name_description_and_schema() -> None:
    server = Server("t")

    @server.tool()
    def echo(text: str) -> str:
        """Say it back."""
        return text

    async with connect(server) as client:
        tools = await client.list_tools()
    assert tools == [
        {
            "name": "echo",
            "description": "Say it back.",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
        }
    ]


async def test_a_string_is_one_text_block() -> None:
    server = Server("t")
    server.add_tool("t", lambda: "hello")
    assert await _call(server, "t") == {"content": [{"type": "text", "text": "hello"}]}


async def test_none_is_no_content() -> None:
    server = Server("t")
    server.add_tool("t", lambda: None)
    assert await _call(server, "t") == {"content": []}


async def test_json_data_is_a_json_text_block_without_structured_content() -> None:
    server = Server("t")
    server.add_tool("t", lambda: {"a": [1, 2]})
    assert await _call(server, "t") == {"content": [{"type": "text", "text": '{"a":[1,2]}'}]}


async def test_tool_result_gives_full_control() -> None:
    server = Server("t")
    blocks = [{"type": "text", "text": "a"}, {"type": "image", "data": "aGk=", "mimeType": "image/png"}]
    server.add_tool("t", lambda: ToolResult(content=blocks, is_error=True, meta={"com.example/k": 1}))
    assert await _call(server, "t") == {"content": blocks, "isError": True, "_meta": {"com.example/k": 1}}


async def test_tool_error_becomes_an_error_result() -> None:
    def fail() -> str:
        raise ToolError("the city is unknown; try a capital")

    server = Server("t")
    server.add_tool("t", fail)
    assert await _call(server, "t") == {
        "content": [{"type": "text", "text": "the city is unknown; try a capital"}],
        "isError": True,
    }


async def test_an_unexpected_exception_is_masked_for_the_client_and_logged_with_its_reference(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def crash() -> str:
        raise OverflowError("/srv/app/secrets.db: int too large for user 123 (token=abc)")

    server = Server("t")
    server.add_tool("crash", crash)
    caplog.set_level(logging.ERROR, logger="jsonrpc_mcp.server")
    result = await _call(server, "crash")
    text = result["content"][0]["text"]
    assert result["isError"] is True
    match = re.fullmatch(r"Tool 'crash' failed: an internal error \(reference ([0-9a-f]{12})\)", text)
    assert match, text
    assert "secrets" not in text and "OverflowError" not in text  # nothing of the exception leaks
    record = next(r for r in caplog.records if "crash" in r.getMessage())
    assert match.group(1) in record.getMessage()  # the log line carries the same reference
    assert record.exc_info is not None and record.exc_info[0] is OverflowError


async def test_with_masking_off_the_exception_text_is_shown() -> None:
    def crash() -> str:
        raise ZeroDivisionError("division by zero")

    server = Server("t", mask_errors=False)
    server.add_tool("crash", crash)
    assert await _call(server, "crash") == {
        "content": [{"type": "text", "text": "Tool 'crash' failed: ZeroDivisionError: division by zero"}],
        "isError": True,
    }


async def test_a_json_rpc_error_raised_by_a_tool_is_the_response() -> None:
    def refuse() -> str:
        raise JsonRpcError("Not allowed", {"why": "policy"}, code=-32001)

    server = Server("t")
    server.add_tool("t", refuse)
    async with connect(server) as client:
        with pytest.raises(JsonRpcError) as info:
            await client.call_tool("t")
    assert (info.value.code, info.value.message, info.value.data) == (
        -32001,
        "Not allowed",
        {"why": "policy"},
    )


@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25"])
async def test_an_unknown_tool_is_invalid_params(version: str) -> None:
    server = Server("t")
    server.add_tool("known", lambda: "x")
    async with connect(server, protocol_version=version) as client:
        with pytest.raises(JsonRpcError) as info:
            await client.call_tool("unknown")
    assert info.value.code == -32602
    assert "unknown" in info.value.message


@pytest.mark.parametrize("params", [{}, {"name": 5}, {"name": None}])
async def test_tools_call_without_a_string_name_is_invalid_params(params: dict[str, Any]) -> None:
    server = Server("t")
    server.add_tool("known", lambda: "x")
    async with connect(server) as client:
        with pytest.raises(JsonRpcError) as info:
            await client.request("tools/call", params)
    assert info.value.code == -32602


async def test_params_that_are_not_an_object_are_invalid_params() -> None:
    server = Server("t")
    server.add_tool("known", lambda: "x")
    async with connect(server) as client:
        with pytest.raises(JsonRpcError) as info:
            await client.request("tools/call", ["known"])
    assert info.value.code == -32602


async def test_extra_arguments_not_in_the_signature_are_not_passed() -> None:
    server = Server("t")

    @server.tool()
    def f(a: int) -> str:
        return str(a)

    assert (await _call(server, "f", {"a": 1, "zzz": 2}))["content"][0]["text"] == "1"


async def test_var_kwargs_receive_every_argument() -> None:
    server = Server("t")
    seen: dict[str, Any] = {}

    def f(**kwargs: Any) -> str:
        seen.update(kwargs)
        return "ok"

    server.add_tool("f", f, input_schema={"type": "object"})
    await _call(server, "f", {"a": 1, "b": [2]})
    assert seen == {"a": 1, "b": [2]}


async def test_a_callable_object_and_an_async_callable_object_are_handlers() -> None:
    class Sync:
        def __call__(self, text: str) -> str:
            return f"sync {text}"

    class Async:
        async def __call__(self, text: str) -> str:
            return f"async {text}"

    server = Server("t")
    server.add_tool("s", Sync())
    server.add_tool("a", Async())
    async with connect(server) as client:
        s = await client.call_tool("s", {"text": "x"})
        a = await client.call_tool("a", {"text": "y"})
    assert s["content"][0]["text"] == "sync x"
    assert a["content"][0]["text"] == "async y"


async def test_a_removed_tool_is_unknown() -> None:
    server = Server("t")
    server.add_tool("gone", lambda: "x")
    server.add_tool("kept", lambda: "x")
    async with connect(server) as client:
        assert server.remove_tool("gone")
        with pytest.raises(JsonRpcError) as info:
            await client.call_tool("gone")
    assert info.value.code == -32602
    assert server.remove_tool("gone") is False


async def test_a_tool_name_outside_the_2025_11_25_rules_is_accepted_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="jsonrpc_mcp.server")
    Server("t").add_tool("has space", lambda: "x")
    assert any("has space" in r.getMessage() for r in caplog.records)


async def test_a_partial_is_a_handler() -> None:
    import functools

    def greet(greeting: str, name: str) -> str:
        return f"{greeting}, {name}"

    server = Server("t")
    server.add_tool("hello", functools.partial(greet, "Hello"))
    async with connect(server) as client:
        (tool,) = await client.list_tools()
        result = await client.call_tool("hello", {"name": "Ada"})
    assert tool["inputSchema"] == {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    }
    assert result["content"][0]["text"] == "Hello, Ada"


async def test_a_result_that_is_not_json_is_an_internal_error_naming_the_tool() -> None:
    server = Server("t")
    server.add_tool("odd", lambda: object())
    async with connect(server) as client:
        with pytest.raises(JsonRpcError) as info:
            await client.call_tool("odd")
    assert info.value.code == -32603
    assert "'odd'" in info.value.message
    assert "not JSON" in info.value.message
