"""prompts/list and prompts/get: arguments, results, errors."""

from __future__ import annotations

from typing import Any

import pytest

from jsonrpc_mcp import Server
from jsonrpc_mcp.jsonrpc import JsonRpcError
from jsonrpc_mcp.testing import connect

pytestmark = pytest.mark.anyio


def _server() -> Server:
    server = Server("p")

    @server.prompt("daily-recap", description="Recap a day")
    def recap(date: str, style: str = "short") -> str:
        return f"Recap {date} in {style} style"

    @server.prompt()
    def conversation() -> list[Any]:
        return ["Hi", {"role": "assistant", "content": {"type": "text", "text": "Hello!"}}]

    @server.prompt()
    def explicit() -> dict[str, Any]:
        return {
            "description": "mine",
            "messages": [{"role": "user", "content": {"type": "text", "text": "x"}}],
        }

    @server.prompt()
    def broken() -> Any:
        return 42

    return server


async def _get(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    async with connect(_server()) as client:
        return await client.get_prompt(name, arguments)


async def _error(name: str, arguments: Any = None) -> JsonRpcError:
    async with connect(_server()) as client:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        with pytest.raises(JsonRpcError) as info:
            await client.request("prompts/get", params)
    return info.value


async def test_a_string_is_one_user_message() -> None:
    assert await _get("daily-recap", {"date": "2026-11-29"}) == {
        "description": "Recap a day",
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Recap 2026-11-29 in short style"}}
        ],
    }


async def test_optional_arguments_are_used_when_given() -> None:
    result = await _get("daily-recap", {"date": "d", "style": "long"})
    assert result["messages"][0]["content"]["text"] == "Recap d in long style"


async def test_a_list_mixes_strings_and_messages() -> None:
    assert (await _get("conversation"))["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Hi"}},
        {"role": "assistant", "content": {"type": "text", "text": "Hello!"}},
    ]


async def test_a_messages_dict_is_used_as_is() -> None:
    assert await _get("explicit") == {
        "description": "mine",
        "messages": [{"role": "user", "content": {"type": "text", "text": "x"}}],
    }


async def test_a_missing_required_argument_is_invalid_params() -> None:
    error = await _error("daily-recap", {})
    assert error.code == -32602
    assert "date" in error.message


async def test_a_non_string_argument_is_invalid_params() -> None:
    error = await _error("daily-recap", {"date": 20261129})
    assert error.code == -32602
    assert "must be strings" in error.message


async def test_an_unknown_argument_is_invalid_params() -> None:
    error = await _error("daily-recap", {"date": "d", "mood": "happy"})
    assert error.code == -32602
    assert "mood" in error.message


async def test_arguments_that_are_not_an_object_are_invalid_params() -> None:
    assert (await _error("daily-recap", ["d"])).code == -32602


async def test_an_unknown_prompt_is_invalid_params() -> None:
    error = await _error("no-such-prompt")
    assert error.code == -32602
    assert "no-such-prompt" in error.message


async def test_a_prompt_returning_a_non_message_is_an_internal_error() -> None:
    assert (await _error("broken")).code == -32603


async def test_prompts_list_shows_arguments_and_required() -> None:
    async with connect(_server()) as client:
        prompts = {p["name"]: p for p in await client.list_prompts()}
    assert prompts["daily-recap"]["arguments"] == [
        {"name": "date", "required": True},
        {"name": "style", "required": False},
    ]
    assert "arguments" not in prompts["conversation"]
