"""Server-side JSON Schema validation: arguments before the handler runs, schemas at registration."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from jsonrpc_mcp import RegistrationError, Server
from jsonrpc_mcp.jsonrpc import JsonRpcError
from jsonrpc_mcp.server import _schema as schema_module
from jsonrpc_mcp.server._schema import CompiledSchema
from jsonrpc_mcp.testing import connect

pytestmark = pytest.mark.anyio

DRAFT7 = "http://json-schema.org/draft-07/schema#"


def _explicit(server: Server, schema: dict[str, Any], calls: list[dict[str, Any]], name: str = "t") -> None:
    def handler(**arguments: Any) -> str:
        calls.append(arguments)
        return "ran"

    server.add_tool(name, handler, input_schema=schema)


async def _call_old_plane(server: Server, arguments: dict[str, Any], name: str = "t") -> JsonRpcError:
    async with connect(server, protocol_version="2025-06-18") as client:
        with pytest.raises(JsonRpcError) as info:
            await client.call_tool(name, arguments)
    return info.value


# -- arguments are checked before the handler runs -------------------------------------------------
async def test_invalid_arguments_never_reach_the_handler() -> None:
    server, calls = Server("v"), list[dict[str, Any]]()
    _explicit(server, {"type": "object", "properties": {"limit": {"type": "integer", "maximum": 20}}}, calls)
    async with connect(server) as client:
        result = await client.call_tool("t", {"limit": 100})
    assert result["isError"] is True
    assert calls == []


async def test_invalid_arguments_never_reach_the_handler_on_the_old_plane() -> None:
    server, calls = Server("v"), list[dict[str, Any]]()
    _explicit(server, {"type": "object", "required": ["x"]}, calls)
    error = await _call_old_plane(server, {})
    assert error.code == -32602
    assert calls == []


async def test_valid_arguments_reach_the_handler() -> None:
    server, calls = Server("v"), list[dict[str, Any]]()
    _explicit(server, {"type": "object", "properties": {"limit": {"type": "integer"}}}, calls)
    async with connect(server) as client:
        result = await client.call_tool("t", {"limit": 3})
    assert result == {"content": [{"type": "text", "text": "ran"}]}
    assert calls == [{"limit": 3}]


async def test_missing_arguments_are_validated_as_an_empty_object() -> None:
    server, calls = Server("v"), list[dict[str, Any]]()
    _explicit(server, {"type": "object", "required": ["q"]}, calls)
    async with connect(server) as client:
        result = await client.call_tool("t")
    assert result["isError"] is True
    assert "'q' is a required property" in result["content"][0]["text"]
    assert calls == []


async def test_arguments_that_are_not_an_object_are_invalid_params() -> None:
    server, calls = Server("v"), list[dict[str, Any]]()
    _explicit(server, {"type": "object"}, calls)
    async with connect(server) as client:
        with pytest.raises(JsonRpcError) as info:
            await client.request("tools/call", {"name": "t", "arguments": [1, 2]})
    assert info.value.code == -32602
    assert calls == []


# -- readable messages ---------------------------------------------------------------------------------
async def test_the_message_names_the_path_and_the_rule() -> None:
    server, calls = Server("v"), list[dict[str, Any]]()
    _explicit(server, {"type": "object", "properties": {"limit": {"type": "integer", "maximum": 20}}}, calls)
    async with connect(server) as client:
        result = await client.call_tool("t", {"limit": 100})
    assert (
        result["content"][0]["text"]
        == "Invalid arguments for tool 't': limit: 100 is greater than the maximum of 20"
    )


async def test_nested_paths_are_dotted_and_indexed() -> None:
    server, calls = Server("v"), list[dict[str, Any]]()
    schema = {
        "type": "object",
        "properties": {
            "filter": {
                "type": "object",
                "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
            }
        },
    }
    _explicit(server, schema, calls)
    error = await _call_old_plane(server, {"filter": {"tags": ["a", 2]}})
    assert error.data == {"errors": ["filter.tags[1]: 2 is not of type 'string'"]}


async def test_every_violation_is_listed_most_specific_first() -> None:
    server, calls = Server("v"), list[dict[str, Any]]()
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
        "required": ["c"],
    }
    _explicit(server, schema, calls)
    error = await _call_old_plane(server, {"a": "x", "b": 1})
    assert error.data["errors"] == [
        "a: 'x' is not of type 'integer'",
        "b: 1 is not of type 'string'",
        "'c' is a required property",
    ]


def test_at_most_ten_errors_are_reported() -> None:
    compiled = CompiledSchema({"type": "object", "additionalProperties": {"type": "integer"}})
    errors = compiled.errors({f"k{i}": "x" for i in range(30)})
    assert errors is not None
    assert len(errors) == 10


def test_long_messages_are_shortened() -> None:
    compiled = CompiledSchema({"type": "object", "properties": {"s": {"maxLength": 3}}})
    errors = compiled.errors({"s": "y" * 5000})
    assert errors is not None
    assert len(errors[0]) <= 310
    assert errors[0].endswith("...")


# -- compiled once, at registration ----------------------------------------------------------------
async def test_one_validator_is_compiled_per_tool_at_registration(monkeypatch: pytest.MonkeyPatch) -> None:
    server, calls = Server("v"), list[dict[str, Any]]()
    _explicit(server, {"type": "object", "properties": {"n": {"type": "integer"}}}, calls)
    tool = server.tools.get("t")
    assert tool is not None
    validator = tool.input_validator
    compiled: list[Any] = []
    original = CompiledSchema.__init__

    def counting(self: CompiledSchema, *args: Any, **kwargs: Any) -> None:
        compiled.append(args)
        original(self, *args, **kwargs)

    monkeypatch.setattr(CompiledSchema, "__init__", counting)
    async with connect(server) as client:
        for n in range(5):
            await client.call_tool("t", {"n": n})
        await client.call_tool("t", {"n": "bad"})
    assert compiled == []
    assert tool.input_validator is validator
    assert len(calls) == 5


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"x": {"type": "no-such-type"}}},
        {"type": "object", "properties": {"x": {"minimum": "ten"}}},
        {"type": "object", "required": "x"},
        {"type": "array"},
        {"properties": {}},
        ["not", "a", "dict"],
    ],
)
def test_an_invalid_input_schema_is_a_registration_error(schema: Any) -> None:
    with pytest.raises(RegistrationError):
        Server("v").add_tool("t", lambda: "x", input_schema=schema)


def test_an_invalid_output_schema_is_a_registration_error() -> None:
    with pytest.raises(RegistrationError, match="outputSchema"):
        Server("v").add_tool(
            "t", lambda: {}, output_schema={"type": "object", "properties": {"x": {"type": 5}}}
        )


def test_a_failed_registration_leaves_no_tool() -> None:
    server = Server("v")
    with pytest.raises(RegistrationError):
        server.add_tool("t", lambda: "x", input_schema={"type": "object", "properties": {"x": {"type": 1}}})
    assert "t" not in server.tools


# -- dialects --------------------------------------------------------------------------------------
async def test_draft_07_is_honoured_dependencies_enforced() -> None:
    server, calls = Server("v"), list[dict[str, Any]]()
    schema = {"$schema": DRAFT7, "type": "object", "dependencies": {"card": ["billing"]}}
    _explicit(server, schema, calls)
    async with connect(server) as client:
        bad = await client.call_tool("t", {"card": "1234"})
        good = await client.call_tool("t", {"card": "1234", "billing": "here"})
    assert bad["isError"] is True
    assert "'billing' is a dependency of 'card'" in bad["content"][0]["text"]
    assert good == {"content": [{"type": "text", "text": "ran"}]}


async def test_draft_07_ignores_2020_12_keywords() -> None:
    server, calls = Server("v"), list[dict[str, Any]]()
    schema = {"$schema": DRAFT7, "type": "object", "dependentRequired": {"a": ["b"]}}
    _explicit(server, schema, calls)
    async with connect(server) as client:
        result = await client.call_tool("t", {"a": 1})
    assert "isError" not in result


async def test_2020_12_is_the_default_prefix_items_enforced() -> None:
    server, calls = Server("v"), list[dict[str, Any]]()
    schema = {
        "type": "object",
        "properties": {"point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "string"}]}},
    }
    _explicit(server, schema, calls)
    error = await _call_old_plane(server, {"point": [1, 2]})
    assert error.data == {"errors": ["point[1]: 2 is not of type 'string'"]}


async def test_2020_12_defs_and_local_refs_are_resolved() -> None:
    server, calls = Server("v"), list[dict[str, Any]]()
    schema = {
        "type": "object",
        "$defs": {"small": {"type": "integer", "maximum": 3}},
        "properties": {"n": {"$ref": "#/$defs/small"}},
    }
    _explicit(server, schema, calls)
    error = await _call_old_plane(server, {"n": 4})
    assert error.data == {"errors": ["n: 4 is greater than the maximum of 3"]}


async def test_2020_12_dependent_required_enforced() -> None:
    server, calls = Server("v"), list[dict[str, Any]]()
    schema = {"type": "object", "dependentRequired": {"card": ["billing"]}}
    _explicit(server, schema, calls)
    error = await _call_old_plane(server, {"card": "1"})
    assert error.data == {"errors": ["'billing' is a dependency of 'card'"]}
    assert calls == []


async def test_an_explicit_2020_12_dialect_is_accepted() -> None:
    server, calls = Server("v"), list[dict[str, Any]]()
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "required": ["x"]}
    _explicit(server, schema, calls)
    error = await _call_old_plane(server, {})
    assert error.code == -32602


@pytest.mark.parametrize(
    "dialect", ["https://example.com/my-dialect", "http://json-schema.org/draft-03/schema#"]
)
def test_an_unknown_dialect_is_a_registration_error_saying_unsupported(dialect: str) -> None:
    with pytest.raises(RegistrationError, match="not supported"):
        Server("v").add_tool("t", lambda: "x", input_schema={"$schema": dialect, "type": "object"})


# -- no network -----------------------------------------------------------------------------------------
@pytest.fixture
def listener() -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    try:
        yield sock
    finally:
        sock.close()


def _no_connection_arrived(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return True
    conn.close()
    return False


def test_a_remote_ref_is_never_fetched_and_the_registration_is_refused(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    schema = {"type": "object", "properties": {"x": {"$ref": f"http://127.0.0.1:{port}/x.json"}}}
    with pytest.raises(RegistrationError, match="never fetched"):
        Server("v").add_tool("t", lambda: "x", input_schema=schema)
    assert _no_connection_arrived(listener)


def test_a_relative_ref_against_a_remote_id_is_never_fetched(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    schema = {
        "$id": f"http://127.0.0.1:{port}/root.json",
        "type": "object",
        "properties": {"x": {"$ref": "other.json"}},
    }
    with pytest.raises(RegistrationError):
        Server("v").add_tool("t", lambda: "x", input_schema=schema)
    assert _no_connection_arrived(listener)


def test_a_remote_ref_in_an_output_schema_is_refused(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    schema = {"type": "object", "properties": {"x": {"$ref": f"http://127.0.0.1:{port}/x.json"}}}
    with pytest.raises(RegistrationError):
        Server("v").add_tool("t", lambda: {}, output_schema=schema)
    assert _no_connection_arrived(listener)


def test_a_dangling_local_ref_is_a_registration_error() -> None:
    schema = {"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}}
    with pytest.raises(RegistrationError, match="does not resolve"):
        Server("v").add_tool("t", lambda: "x", input_schema=schema)


def test_the_metaschema_ref_is_resolved_offline(listener: socket.socket) -> None:
    schema = {"type": "object", "properties": {"s": {"$ref": "https://json-schema.org/draft/2020-12/schema"}}}
    Server("v").add_tool("t", lambda: "x", input_schema=schema)  # known locally: accepted, no fetch
    assert _no_connection_arrived(listener)


def test_the_retriever_refuses_every_uri() -> None:
    with pytest.raises(Exception, match=r"127\.0\.0\.1"):
        schema_module._refuse_remote("http://127.0.0.1:1/x.json")


# -- outputSchema ------------------------------------------------------------------------------------
OUTPUT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


async def test_structured_content_is_emitted_and_validated() -> None:
    server = Server("v")
    server.add_tool("ok", lambda: {"n": 2}, output_schema=OUTPUT)
    async with connect(server) as client:
        result = await client.call_tool("ok")
    assert result == {"content": [{"type": "text", "text": '{"n":2}'}], "structuredContent": {"n": 2}}


async def test_a_handler_breaking_its_output_schema_is_a_tool_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server("v")
    server.add_tool("liar", lambda: {"n": "two"}, output_schema=OUTPUT)
    caplog.set_level(logging.ERROR, logger="jsonrpc_mcp.server")
    async with connect(server) as client:
        result = await client.call_tool("liar")
    assert result["isError"] is True
    assert "structuredContent" not in result
    text = result["content"][0]["text"]
    assert "Tool 'liar' returned a value that does not match its outputSchema" in text
    assert "n: 'two' is not of type 'integer'" in text
    assert any("liar" in r.getMessage() and "outputSchema" in r.getMessage() for r in caplog.records)


async def test_an_error_result_is_not_checked_against_the_output_schema() -> None:
    from jsonrpc_mcp import ToolError

    def broken() -> dict[str, Any]:
        raise ToolError("no data today")

    server = Server("v")
    server.add_tool("broken", broken, output_schema=OUTPUT)
    async with connect(server) as client:
        result = await client.call_tool("broken")
    assert result == {"content": [{"type": "text", "text": "no data today"}], "isError": True}


async def test_structured_content_is_validated_even_when_the_revision_does_not_carry_it() -> None:
    server = Server("v")
    server.add_tool("liar", lambda: {"n": "two"}, output_schema=OUTPUT)
    async with connect(server, protocol_version="2025-03-26") as client:
        result = await client.call_tool("liar")
    assert result["isError"] is True
    assert "does not match its outputSchema" in result["content"][0]["text"]
