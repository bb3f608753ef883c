"""Types in and out: what an annotation gives the tool's schemas, the Python value its function
receives, and the structured result its return value becomes (tests/server/servers/typed_server.py),
in both eras over the in-memory pair, and once over real stdio."""

from __future__ import annotations

import dataclasses
import datetime as dt
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Annotated, Any

import annotated_types as at
import pytest
from pydantic import BaseModel

from jsonrpc_mcp import Client, RegistrationError, Server
from jsonrpc_mcp.server._introspect import schema_for_type
from jsonrpc_mcp.server._output import infer_output
from jsonrpc_mcp.testing import connect
from tests import timeouts

from .servers.typed_server import server

pytestmark = pytest.mark.anyio

MODES = ["legacy", "2026-07-28"]
HERE = Path(__file__).parent
REPO = HERE.parents[1]


def _plain(result: dict[str, Any]) -> dict[str, Any]:
    """The result without the 2026-07-28 additions (resultType, serverInfo in _meta)."""
    return {k: v for k, v in result.items() if k not in ("resultType", "_meta")}


async def _tools(mode: str) -> dict[str, dict[str, Any]]:
    async with connect(server, mode=mode) as client:
        listed = await client.list_tools()
    return {t["name"]: t for t in listed}


# -- types in: schemas ----------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
async def test_a_pydantic_field_gives_minimum_maximum_and_description(mode: str) -> None:
    rate = (await _tools(mode))["rate"]
    assert rate["inputSchema"]["properties"]["stars"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 5,
        "description": "How many stars",
    }
    assert "outputSchema" not in rate  # -> str stays text


async def test_annotated_types_constraints_become_keywords() -> None:
    props = (await _tools("legacy"))["span"]["inputSchema"]["properties"]
    assert props["width"] == {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 10}
    assert props["label"] == {"type": "string", "minLength": 2, "maxLength": 5, "default": "ab"}
    assert props["tags"]["anyOf"][0] == {"type": "array", "items": {"type": "string"}, "maxItems": 2}


async def test_string_shaped_types_have_formats() -> None:
    tools = await _tools("legacy")
    book = tools["book"]["inputSchema"]["properties"]
    assert book["at_"] == {"type": "string", "format": "date-time"}
    assert book["ident"] == {"type": "string", "format": "uuid"}
    assert book["color"] == {"enum": ["red", "green"]}
    assert book["booking"]["properties"]["day"] == {"type": "string", "format": "date"}
    where = tools["where"]["inputSchema"]["properties"]
    assert where["path"] == {"type": "string", "format": "path"}
    assert where["amount"] == {"type": ["number", "string"]}
    assert where["hour"] == {"type": "string", "format": "time"}


async def test_a_pydantic_model_parameter_keeps_its_nested_definitions_at_the_root() -> None:
    schema = (await _tools("legacy"))["greet"]["inputSchema"]
    person = schema["properties"]["person"]
    assert person["required"] == ["name", "age"]
    assert person["properties"]["age"]["minimum"] == 0
    assert "Address" in schema["$defs"]  # the #/$defs/Address reference resolves from the root
    assert "$defs" not in person


# -- types in: validation and conversion ---------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
async def test_a_pydantic_field_bound_is_enforced(mode: str) -> None:
    async with connect(server, mode=mode) as client:
        ok = await client.call_tool("rate", {"stars": 4})
        bad = await client.call_tool("rate", {"stars": 99})
    assert ok["content"] == [{"type": "text", "text": "4 stars"}]
    assert bad["isError"] is True
    assert "stars: 99 is greater than the maximum of 5" in bad["content"][0]["text"]


@pytest.mark.parametrize("mode", MODES)
async def test_annotated_types_bounds_are_enforced(mode: str) -> None:
    async with connect(server, mode=mode) as client:
        zero = await client.call_tool("span", {"width": 0})
        long = await client.call_tool("span", {"width": 1, "label": "toolong"})
        ok = await client.call_tool("span", {"width": 9.5, "label": "abc", "tags": ["x"]})
    assert "less than or equal to the minimum of 0" in zero["content"][0]["text"]
    assert "label: 'toolong' is too long" in long["content"][0]["text"]
    assert ok["content"][0]["text"] == "9.5 abc ['x']"


@pytest.mark.parametrize("mode", MODES)
async def test_a_pydantic_model_arrives_as_an_instance_and_returns_structured(mode: str) -> None:
    person = {"name": "Ada", "age": 36, "address": {"street": "1 Main", "city": "London"}}
    async with connect(server, mode=mode) as client:
        result = await client.call_tool("greet", {"person": person})
    older = {**person, "age": 37}
    assert _plain(result)["structuredContent"] == older
    assert result["content"] == [
        {"type": "text", "text": '{"name":"Ada","age":37,"address":{"street":"1 Main","city":"London"}}'}
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_dataclass_datetime_uuid_and_enum_arguments_are_converted(mode: str) -> None:
    args = {
        "booking": {"room": 7, "day": "2026-03-01"},
        "at_": "2026-03-01T09:30:00Z",
        "ident": str(uuid.uuid4()),
        "color": "green",
    }
    async with connect(server, mode=mode) as client:
        result = await client.call_tool("book", args)
    assert _plain(result) == {
        "content": [{"type": "text", "text": '{"room":7,"day":"2026-03-02","notes":"green"}'}],
        "structuredContent": {"room": 7, "day": "2026-03-02", "notes": "green"},
    }


@pytest.mark.parametrize("mode", MODES)
async def test_path_decimal_date_and_time_arguments_are_converted(mode: str) -> None:
    args = {"path": "/tmp/a/report.txt", "amount": "1.10", "when": "2026-01-02", "hour": "08:15:00"}
    async with connect(server, mode=mode) as client:
        result = await client.call_tool("where", args)
    assert result["content"] == [{"type": "text", "text": "report.txt 2.10 2026-01-02 08:15:00"}]


@pytest.mark.parametrize("mode", MODES)
async def test_a_value_the_type_refuses_is_an_invalid_argument(mode: str) -> None:
    args = {
        "booking": {"room": 7, "day": "2026-02-30"},
        "at_": "2026-03-01T09:30:00Z",
        "ident": str(uuid.uuid4()),
        "color": "red",
    }
    async with connect(server, mode=mode) as client:
        bad_day = await client.call_tool("book", args)
        bad_time = await client.call_tool(
            "book", {**args, "booking": {"room": 1, "day": "2026-01-01"}, "at_": "yesterday"}
        )
        bad_model = await client.call_tool("greet", {"person": {"name": "Ada", "age": -1}})
    assert bad_day["isError"] is True
    assert (
        "Invalid arguments for tool 'book': booking.day: '2026-02-30' is not a 'date'"
        in (bad_day["content"][0]["text"])
    )
    assert "at_:" in bad_time["content"][0]["text"] and "yesterday" in bad_time["content"][0]["text"]
    assert bad_model["isError"] is True
    assert "age" in bad_model["content"][0]["text"]


async def test_before_2025_11_25_a_refused_value_is_invalid_params() -> None:
    from jsonrpc_mcp import JsonRpcError

    async with connect(server, protocol_version="2025-06-18") as client:
        with pytest.raises(JsonRpcError) as info:
            await client.call_tool(
                "where", {"path": "p", "amount": "lots", "when": "2026-01-01", "hour": "08:00"}
            )
    assert info.value.code == -32602
    assert "amount: 'lots' is not a decimal number" in info.value.message


# -- types out ------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
async def test_return_annotations_give_output_schemas(mode: str) -> None:
    tools = await _tools(mode)
    assert tools["weather"]["outputSchema"] == {
        "type": "object",
        "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
        "required": ["celsius", "city"],
    }
    assert tools["count"]["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    assert tools["names"]["outputSchema"]["properties"]["result"] == {
        "type": "array",
        "items": {"type": "string"},
    }
    assert tools["book"]["outputSchema"]["required"] == ["room", "day", "notes"]
    assert tools["greet"]["outputSchema"]["properties"]["age"]["maximum"] == 150
    assert "outputSchema" not in tools["plain"] and "outputSchema" not in tools["unannotated"]


@pytest.mark.parametrize("mode", MODES)
async def test_objects_are_structured_and_other_values_wrapped_in_result(mode: str) -> None:
    async with connect(server, mode=mode) as client:
        weather = _plain(await client.call_tool("weather", {"city": "Oslo"}))
        count = _plain(await client.call_tool("count", {"n": 21}))
        names = _plain(await client.call_tool("names", {}))
        found = _plain(await client.call_tool("maybe", {"found": True}))
        missing = _plain(await client.call_tool("maybe", {"found": False}))
        plain = _plain(await client.call_tool("plain", {"text": "hi"}))
    assert weather == {
        "content": [{"type": "text", "text": '{"city":"Oslo","celsius":21.5}'}],
        "structuredContent": {"city": "Oslo", "celsius": 21.5},
    }
    # a wrapped value's text block is the JSON of the structured content itself (the spec's "serialized
    # JSON" of it), so a client reading only the text reads what structuredContent says
    assert count == {
        "content": [{"type": "text", "text": '{"result":42}'}],
        "structuredContent": {"result": 42},
    }
    assert names["structuredContent"] == {"result": ["ada", "grace"]}
    assert names["content"] == [{"type": "text", "text": '{"result":["ada","grace"]}'}]
    assert found["structuredContent"] == {"result": {"name": "Ada", "age": 36, "address": None}}
    assert missing == {
        "content": [{"type": "text", "text": '{"result":null}'}],
        "structuredContent": {"result": None},
    }
    assert plain == {"content": [{"type": "text", "text": "HI"}]}


@pytest.mark.parametrize("mode", MODES)
async def test_a_returned_model_without_annotation_is_json_text(mode: str) -> None:
    async with connect(server, mode=mode) as client:
        result = _plain(await client.call_tool("unannotated", {}))
    assert result == {"content": [{"type": "text", "text": '{"name":"Grace","age":85,"address":null}'}]}


@pytest.mark.parametrize("mode", MODES)
async def test_a_value_breaking_the_inferred_schema_is_a_tool_error(mode: str) -> None:
    async with connect(server, mode=mode) as client:
        broken = _plain(await client.call_tool("broken", {}))
        refuses = _plain(await client.call_tool("refuses", {}))
    assert broken == {
        "content": [
            {
                "type": "text",
                "text": "Tool 'broken' returned a value that does not match its outputSchema: "
                "celsius: 'warm' is not of type 'number'",
            }
        ],
        "isError": True,
    }
    assert refuses == {"content": [{"type": "text", "text": "no weather today"}], "isError": True}


async def test_revisions_without_structured_output_get_the_text_only() -> None:
    async with connect(server, protocol_version="2025-03-26") as client:
        tools = {t["name"]: t for t in await client.list_tools()}
        result = await client.call_tool("weather", {"city": "Oslo"})
    assert "outputSchema" not in tools["weather"]
    assert result == {"content": [{"type": "text", "text": '{"city":"Oslo","celsius":21.5}'}]}


async def test_an_explicit_output_schema_wins_over_the_annotation() -> None:
    explicit = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    s = Server("explicit")

    @s.tool(output_schema=explicit)
    def n() -> dict[str, int]:
        return {"n": 1}

    async with connect(s) as client:
        tool = (await client.list_tools())[0]
        result = await client.call_tool("n", {})
    assert tool["outputSchema"] == explicit
    assert result["structuredContent"] == {"n": 1}


def test_loose_annotations_give_no_output_schema() -> None:
    for annotation in (str, None, Any, dict, dict[str, Any], list[dict[str, Any]], list, bytes, str | None):
        assert infer_output(annotation, "t") is None, annotation


async def test_a_content_block_returned_under_a_loose_annotation_stays_content() -> None:
    s = Server("blocks")

    @s.tool()
    def image() -> dict[str, Any]:
        return {"type": "image", "data": "AAAA", "mimeType": "image/png"}

    async with connect(s) as client:
        result = await client.call_tool("image", {})
    assert result == {"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]}


def test_annotated_types_constraints_without_pydantic() -> None:
    assert schema_for_type(Annotated[int, at.Ge(1), at.Lt(9), at.MultipleOf(2)]) == {
        "type": "integer",
        "minimum": 1,
        "exclusiveMaximum": 9,
        "multipleOf": 2,
    }
    assert schema_for_type(Annotated[dict[str, int], at.MinLen(1)])["minProperties"] == 1


def _length_of_a_number(n: Annotated[int, at.MaxLen(3)]) -> str:
    return str(n)


def test_a_length_constraint_on_a_number_is_a_registration_error() -> None:
    with pytest.raises(RegistrationError, match="MaxLen constrains a length"):
        Server("x").add_tool("t", _length_of_a_number)


def test_the_package_never_imports_pydantic() -> None:
    code = (
        "import sys, datetime\n"
        "from typing import Annotated\n"
        "import annotated_types as at\n"
        "from jsonrpc_mcp import Server\n"
        "s = Server('p')\n"
        "@s.tool()\n"
        "def f(n: Annotated[int, at.Ge(1)], when: datetime.date) -> dict[str, int]:\n"
        "    return {'n': n}\n"
        "assert s.tools.get('f').output_schema is not None\n"
        "print('pydantic' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeouts.RUN, check=True
    )
    assert out.stdout.strip() == "False"


@dataclasses.dataclass
class _Timed:
    at: dt.datetime


async def test_a_returned_datetime_is_iso_text() -> None:
    s = Server("timed")

    @s.tool()
    def stamp() -> _Timed:
        return _Timed(dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc))

    async with connect(s) as client:
        result = await client.call_tool("stamp", {})
    assert result["structuredContent"] == {"at": "2026-01-02T03:04:05+00:00"}


# -- over real stdio -------------------------------------------------------------------------------
async def test_types_in_and_out_over_stdio() -> None:
    command = [sys.executable, str(HERE / "servers" / "typed_server.py")]
    async with Client.stdio(command, cwd=REPO, request_timeout=20, stderr=subprocess.DEVNULL) as client:
        tools = {t["name"]: t for t in await client.list_tools()}
        greeted = await client.call_tool("greet", {"person": {"name": "Ada", "age": 36}})
        refused = await client.call_tool("rate", {"stars": 0})
    assert tools["rate"]["inputSchema"]["properties"]["stars"]["minimum"] == 1
    assert greeted["structuredContent"] == {"name": "Ada", "age": 37, "address": None}
    assert refused["isError"] is True and "minimum of 1" in refused["content"][0]["text"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_resource_template_variable_is_converted_and_a_bad_one_is_invalid_params(mode: str) -> None:
    from jsonrpc_mcp import JsonRpcError

    s = Server("days")

    @s.resource("days://{day}")
    def weekday(day: dt.date) -> str:
        return day.strftime("%A")

    async with connect(s, mode=mode) as client:
        read = await client.read_resource("days://2026-07-28")
        with pytest.raises(JsonRpcError) as info:
            await client.read_resource("days://someday")
    assert read["contents"][0]["text"] == "Tuesday"
    assert info.value.code == -32602
    assert "resource 'days://{day}': day:" in info.value.message


class _Node(BaseModel):
    name: str
    children: list[_Node] = []


def _first(root: _Node, more: list[_Node] | None = None) -> list[_Node]:
    return [root, *(more or [])]


async def test_a_recursive_model_resolves_through_the_root_defs() -> None:
    s = Server("tree")
    s.add_tool("first", _first)
    async with connect(s) as client:
        tool = (await client.list_tools())[0]
        ok = await client.call_tool("first", {"root": {"name": "a", "children": [{"name": "b"}]}})
        bad = await client.call_tool("first", {"root": {"name": "a", "children": [{"nam": "b"}]}})
    assert tool["inputSchema"]["properties"]["root"] == {"$ref": "#/$defs/_Node"}
    assert tool["outputSchema"]["properties"]["result"]["items"] == {"$ref": "#/$defs/_Node"}
    assert ok["structuredContent"] == {"result": [{"name": "a", "children": [{"name": "b", "children": []}]}]}
    assert "root.children[0]: 'name' is a required property" in bad["content"][0]["text"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_resource_returning_a_model_or_dataclass_is_json_text(mode: str) -> None:
    s = Server("res")

    @s.resource("people://ada")
    def ada() -> BaseModel:
        return _Node(name="ada")

    @s.resource("times://start")
    def start() -> _Timed:
        return _Timed(dt.datetime(2026, 7, 28, tzinfo=dt.timezone.utc))

    async with connect(s, mode=mode) as client:
        person = await client.read_resource("people://ada")
        stamp = await client.read_resource("times://start")
    assert person["contents"][0]["text"] == '{"name":"ada","children":[]}'
    assert person["contents"][0]["mimeType"] == "application/json"
    assert stamp["contents"][0]["text"] == '{"at":"2026-07-28T00:00:00+00:00"}'
