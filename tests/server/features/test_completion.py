"""Completion: completion/complete for prompt arguments and resource-template variables."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Client, Context, RegistrationError, Server
from jsonrpc_mcp.jsonrpc import JsonRpcError
from jsonrpc_mcp.testing import connect

from .feature_server import build_server
from .support import SERVE, TIMEOUT, VERSIONS, check_schema, frames

pytestmark = pytest.mark.anyio

GREET = {"type": "ref/prompt", "name": "greet"}
ITEMS = {"type": "ref/resource", "uri": "res://items/{id}"}


async def test_a_prompt_argument_is_completed() -> None:
    async with connect(build_server()) as client:
        result = await client.complete(GREET, {"name": "name", "value": "al"})
    assert result == {"completion": {"values": ["alice", "albert"]}}


async def test_a_resource_template_variable_is_completed() -> None:
    async with connect(build_server()) as client:
        result = await client.complete(ITEMS, {"name": "id", "value": "24"})
    assert result["completion"] == {
        "values": ["24", "240", "241", "242", "243", "244", "245", "246", "247", "248", "249"],
        "total": 11,
        "hasMore": False,
    }


async def test_more_than_100_values_are_cut_to_100_with_total_and_has_more() -> None:
    async with connect(build_server()) as client:
        result = await client.complete(ITEMS, {"name": "id", "value": ""})
    completion = result["completion"]
    assert completion["values"] == [str(n) for n in range(100)]
    assert completion["total"] == 250
    assert completion["hasMore"] is True


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
async def test_context_arguments_reach_the_handler(version: str) -> None:
    async with connect(build_server(), protocol_version=version) as client:
        result = await client.complete(
            GREET, {"name": "name", "value": "a"}, context_arguments={"style": "formal"}
        )
    assert result["completion"]["values"] == ["Alice", "Albert"]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
async def test_context_arguments_are_ignored_where_the_revision_has_none(version: str) -> None:
    async with connect(build_server(), protocol_version=version) as client:
        result = await client.complete(
            GREET, {"name": "name", "value": "a"}, context_arguments={"style": "formal"}
        )
    assert result["completion"]["values"] == ["alice", "albert"]


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25"])
async def test_the_completions_capability_is_advertised_where_it_exists(version: str) -> None:
    async with connect(build_server(), protocol_version=version) as client:
        assert client.server_capabilities["completions"] == {}


async def test_2024_11_05_serves_completion_without_a_capability() -> None:
    async with connect(build_server(), protocol_version="2024-11-05") as client:
        assert "completions" not in client.server_capabilities
        result = await client.complete(GREET, {"name": "name", "value": "b"})
    assert result["completion"]["values"] == ["bob"]


@pytest.mark.parametrize("version", VERSIONS)
async def test_a_server_without_completions_answers_method_not_found(version: str) -> None:
    server = Server("plain")
    server.add_prompt("greet", lambda name: f"hi {name}")
    async with connect(server, protocol_version=version) as client:
        assert "completions" not in client.server_capabilities
        with pytest.raises(JsonRpcError) as raised:
            await client.complete(GREET, {"name": "name", "value": ""})
    assert raised.value.code == -32601


async def test_an_argument_without_a_completer_has_no_values() -> None:
    async with connect(build_server()) as client:
        result = await client.complete(GREET, {"name": "style", "value": "p"})
    assert result == {"completion": {"values": []}}


@pytest.mark.parametrize(
    ("ref", "argument", "fragment"),
    [
        ({"type": "ref/prompt", "name": "nope"}, {"name": "name", "value": ""}, "unknown prompt 'nope'"),
        (GREET, {"name": "nope", "value": ""}, "has no argument 'nope'"),
        (
            {"type": "ref/resource", "uri": "res://nope/{x}"},
            {"name": "x", "value": ""},
            "unknown resource template",
        ),
        ({"type": "ref/resource", "uri": "res://watched"}, {"name": "x", "value": ""}, "is not a template"),
        (ITEMS, {"name": "nope", "value": ""}, "has no variable 'nope'"),
        ({"type": "ref/tool", "name": "x"}, {"name": "x", "value": ""}, "'ref' must be"),
        (GREET, {"value": ""}, "needs 'argument'"),
        (GREET, {"name": "name", "value": 7}, "'value' must be a string"),
    ],
)
async def test_a_bad_reference_or_argument_is_invalid_params(
    ref: dict[str, Any], argument: dict[str, Any], fragment: str
) -> None:
    async with connect(build_server()) as client:
        with pytest.raises(JsonRpcError) as raised:
            await client.request("completion/complete", {"ref": ref, "argument": argument})
    assert raised.value.code == -32602
    assert fragment in raised.value.message


async def test_context_arguments_that_are_not_strings_are_invalid_params() -> None:
    async with connect(build_server()) as client:
        with pytest.raises(JsonRpcError) as raised:
            await client.complete(GREET, {"name": "name", "value": ""}, context_arguments={"style": 1})  # type: ignore[dict-item]
    assert raised.value.code == -32602


async def test_a_failing_completer_is_an_internal_error() -> None:
    server = Server("t")
    server.add_prompt("p", lambda q: q)

    @server.completion(prompt="p", argument="q")
    def broken(value: str) -> list[str]:
        raise RuntimeError("no")

    async with connect(server) as client:
        with pytest.raises(JsonRpcError) as raised:
            await client.complete({"type": "ref/prompt", "name": "p"}, {"name": "q", "value": ""})
    assert raised.value.code == -32603


async def test_a_completer_returning_non_strings_is_an_internal_error() -> None:
    server = Server("t")
    server.add_prompt("p", lambda q: q)
    server.add_completion(lambda value: [1, 2], prompt="p", argument="q")
    async with connect(server) as client:
        with pytest.raises(JsonRpcError) as raised:
            await client.complete({"type": "ref/prompt", "name": "p"}, {"name": "q", "value": ""})
    assert raised.value.code == -32603


async def test_an_async_completer_gets_the_context() -> None:
    server = Server("t")
    server.add_prompt("p", lambda q: q)

    @server.completion(prompt="p", argument="q")
    async def with_ctx(value: str, context: dict[str, str], ctx: Context) -> list[str]:
        await ctx.log("info", f"completing {value!r}")
        return [f"{value}-{ctx.revision.version}"]

    async with connect(server) as client:
        result = await client.complete({"type": "ref/prompt", "name": "p"}, {"name": "q", "value": "v"})
    assert result["completion"]["values"] == [f"v-{client.protocol_version}"]


def test_a_completion_needs_exactly_one_target() -> None:
    server = Server("t")
    with pytest.raises(RegistrationError):
        server.add_completion(lambda value: [], argument="a")
    with pytest.raises(RegistrationError):
        server.add_completion(lambda value: [], argument="a", prompt="p", resource="r://{a}")


def test_a_second_completion_for_the_same_argument_is_refused() -> None:
    server = Server("t")
    server.add_completion(lambda value: [], argument="a", prompt="p")
    with pytest.raises(RegistrationError, match="already registered"):
        server.add_completion(lambda value: [], argument="a", prompt="p")


@pytest.mark.parametrize("version", VERSIONS)
async def test_complete_requests_and_results_validate_against_the_official_schema(version: str) -> None:
    async with connect(build_server(), protocol_version=version, recorder=True) as client:
        await client.complete(GREET, {"name": "name", "value": "a"}, context_arguments={"style": "formal"})
        await client.complete(ITEMS, {"name": "id", "value": ""})
        await client.complete(GREET, {"name": "style", "value": ""})
        sent, received = frames(client)
    requests = [f for f in sent if f.get("method") == "completion/complete"]
    answers = [f for f in received if f.get("id") in {r["id"] for r in requests}]
    assert len(answers) == 3
    for frame in answers:
        check_schema(version, "CompleteResult", frame["result"])
    for frame in requests:  # the client's side: context.arguments is an extra field before 2025-06-18
        check_schema(version, "CompleteRequest", frame)


async def test_completion_over_stdio_with_a_subprocess() -> None:
    with anyio.fail_after(TIMEOUT * 2):
        async with Client.stdio(SERVE) as client:
            result = await client.complete(GREET, {"name": "name", "value": "b"})
    assert result == {"completion": {"values": ["bob"]}}
