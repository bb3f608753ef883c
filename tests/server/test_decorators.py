"""The decorators: schemas from type hints and docstrings, Context injection, resources and prompts."""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Any, Literal, Optional, TypedDict

import pytest

from jsonrpc_mcp import Arg, Context, RegistrationError, Server
from jsonrpc_mcp.server._introspect import parse_docstring
from jsonrpc_mcp.testing import connect

pytestmark = pytest.mark.anyio


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(TypedDict):
    x: int
    y: int


@dataclasses.dataclass
class Window:
    width: int
    title: str = "untitled"
    color: Color = Color.RED


def _schema(server: Server, name: str) -> dict[str, Any]:
    tool = server.tools.get(name)
    assert tool is not None
    return tool.input_schema


# -- schemas from type hints ------------------------------------------------------------------------
def test_scalars_and_defaults() -> None:
    server = Server("d")

    @server.tool()
    def f(text: str, count: int, ratio: float = 0.5, flag: bool = False) -> str:
        return ""

    assert _schema(server, "f") == {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "count": {"type": "integer"},
            "ratio": {"type": "number", "default": 0.5},
            "flag": {"type": "boolean", "default": False},
        },
        "required": ["text", "count"],
    }


def test_optional_and_union() -> None:
    server = Server("d")

    @server.tool()
    def f(a: Optional[str], b: int | None = None, c: int | str = 1) -> str:  # noqa: UP045
        return ""

    props = _schema(server, "f")["properties"]
    assert props["a"] == {"type": ["string", "null"]}
    assert props["b"] == {"type": ["integer", "null"], "default": None}
    assert props["c"] == {"type": ["integer", "string"], "default": 1}
    assert _schema(server, "f")["required"] == ["a"]


def test_literal_and_enum() -> None:
    server = Server("d")

    @server.tool()
    def f(mode: Literal["fast", "slow"], color: Color = Color.BLUE) -> str:
        return ""

    props = _schema(server, "f")["properties"]
    assert props["mode"] == {"enum": ["fast", "slow"], "type": "string"}
    assert props["color"]["enum"] == ["red", "blue"]


def test_containers() -> None:
    server = Server("d")

    @server.tool()
    def f(tags: list[str], scores: dict[str, float], unique: set[int], pair: tuple[int, str]) -> str:
        return ""

    props = _schema(server, "f")["properties"]
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["scores"] == {"type": "object", "additionalProperties": {"type": "number"}}
    assert props["unique"] == {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}
    assert props["pair"] == {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "minItems": 2,
        "maxItems": 2,
    }


def test_typeddict_and_dataclass() -> None:
    server = Server("d")

    @server.tool()
    def f(point: Point, window: Window) -> str:
        return ""

    props = _schema(server, "f")["properties"]
    assert props["point"] == {
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
        "required": ["x", "y"],
    }
    assert props["window"]["required"] == ["width"]
    assert props["window"]["properties"]["width"] == {"type": "integer"}
    assert props["window"]["properties"]["color"]["enum"] == ["red", "blue"]


def test_annotated_arg_adds_description_and_keywords() -> None:
    server = Server("d")

    @server.tool()
    def f(
        limit: Annotated[int, Arg("How many", minimum=1, maximum=50)] = 10,
        note: Annotated[str, "A note"] = "",
    ) -> str:
        return ""

    props = _schema(server, "f")["properties"]
    assert props["limit"] == {
        "type": "integer",
        "description": "How many",
        "minimum": 1,
        "maximum": 50,
        "default": 10,
    }
    assert props["note"] == {"type": "string", "description": "A note", "default": ""}


def test_an_inexpressible_annotation_is_a_registration_error_naming_the_parameter() -> None:
    server = Server("d")
    with pytest.raises(RegistrationError, match="when"):

        @server.tool()
        def f(when: complex) -> str:
            return ""


def test_dict_with_non_string_keys_is_a_registration_error() -> None:
    def f(m: dict[int, str]) -> str:
        return ""

    with pytest.raises(RegistrationError, match="keys are strings"):
        Server("d").add_tool("f", f)


def test_positional_only_parameters_are_a_registration_error() -> None:
    def f(a: int, /) -> str:
        return ""

    with pytest.raises(RegistrationError, match="keyword"):
        Server("d").add_tool("f", f)


# -- docstrings ---------------------------------------------------------------------------------------
GOOGLE = """Search the notes.

    A longer explanation that is not the description.

    Args:
        query: What to look for.
        limit (int): How many
            results at most.

    Returns:
        The notes.
    """

NUMPY = """Search the notes.

    Parameters
    ----------
    query : str
        What to look for.
    limit : int
        How many
        results at most.

    Returns
    -------
    str
    """

REST = """Search the notes.

    :param query: What to look for.
    :param int limit: How many
        results at most.
    :returns: The notes.
    """


@pytest.mark.parametrize("doc", [GOOGLE, NUMPY, REST], ids=["google", "numpy", "rest"])
def test_docstring_styles_give_summary_and_parameter_descriptions(doc: str) -> None:
    summary, params = parse_docstring(doc)
    assert summary == "Search the notes."
    assert params == {"query": "What to look for.", "limit": "How many results at most."}


@pytest.mark.parametrize("doc", [GOOGLE, NUMPY, REST], ids=["google", "numpy", "rest"])
def test_the_tool_schema_carries_docstring_descriptions(doc: str) -> None:
    def search(query: str, limit: int = 5) -> str:
        return ""

    search.__doc__ = doc
    server = Server("d")
    server.add_tool("search", search)
    tool = server.tools.get("search")
    assert tool is not None
    assert tool.description == "Search the notes."
    assert tool.input_schema["properties"]["query"]["description"] == "What to look for."
    assert tool.input_schema["properties"]["limit"]["description"] == "How many results at most."


def test_an_arg_description_wins_over_the_docstring() -> None:
    server = Server("d")

    @server.tool()
    def f(limit: Annotated[int, Arg("From Arg")]) -> str:
        """Do it.

        Args:
            limit: From the docstring.
        """
        return ""

    assert _schema(server, "f")["properties"]["limit"]["description"] == "From Arg"


def test_explicit_description_and_schema_win() -> None:
    server = Server("d")
    schema = {"type": "object", "properties": {"z": {"type": "string"}}}

    @server.tool(name="renamed", description="Explicit.", input_schema=schema)
    def f(**kwargs: Any) -> str:
        """Docstring."""
        return ""

    tool = server.tools.get("renamed")
    assert tool is not None
    assert (tool.description, tool.input_schema) == ("Explicit.", schema)


# -- annotations and Context ---------------------------------------------------------------------------
async def test_tool_annotations_are_passed_through() -> None:
    server = Server("d")
    annotations = {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }

    @server.tool(annotations=annotations, title="Nice")
    def f() -> str:
        return ""

    async with connect(server) as client:
        (tool,) = await client.list_tools()
    assert tool["annotations"] == annotations
    assert tool["title"] == "Nice"


@pytest.mark.parametrize("style", ["plain", "optional", "annotated"])
async def test_context_is_injected_and_excluded_from_the_schema(style: str) -> None:
    server = Server("d")

    async def plain(text: str, ctx: Context) -> str:
        return f"{text} {ctx.request_id} {ctx.method}"

    async def optional(text: str, ctx: Context | None = None) -> str:
        assert ctx is not None
        return f"{text} {ctx.request_id} {ctx.method}"

    async def annotated(text: str, ctx: Annotated[Context, "the context"]) -> str:
        return f"{text} {ctx.request_id} {ctx.method}"

    server.add_tool("f", {"plain": plain, "optional": optional, "annotated": annotated}[style])
    assert _schema(server, "f") == {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }
    async with connect(server) as client:
        result = await client.call_tool("f", {"text": "hi"})
    assert result["content"][0]["text"] == "hi 2 tools/call"


async def test_a_sync_handler_gets_the_context_too() -> None:
    server = Server("d")

    @server.tool()
    def f(ctx: Context) -> str:
        return str(ctx.client_info["name"])

    async with connect(server, client_info={"name": "tester", "version": "9"}) as client:
        result = await client.call_tool("f")
    assert result["content"][0]["text"] == "tester"


# -- arguments arrive as the annotated types -----------------------------------------------------------
async def test_enum_dataclass_tuple_and_set_arguments_are_converted() -> None:
    server = Server("d")
    seen: dict[str, Any] = {}

    @server.tool()
    def f(
        color: Color, window: Window, pair: tuple[int, str], tags: set[str], colors: list[Color] | None = None
    ) -> str:
        seen.update(color=color, window=window, pair=pair, tags=tags, colors=colors)
        return "ok"

    arguments = {
        "color": "blue",
        "window": {"width": 3, "color": "blue"},
        "pair": [1, "a"],
        "tags": ["x", "y"],
        "colors": ["red"],
    }
    async with connect(server) as client:
        result = await client.call_tool("f", arguments)
    assert result == {"content": [{"type": "text", "text": "ok"}]}
    assert seen == {
        "color": Color.BLUE,
        "window": Window(width=3, title="untitled", color=Color.BLUE),
        "pair": (1, "a"),
        "tags": {"x", "y"},
        "colors": [Color.RED],
    }


async def test_a_whole_float_reaches_an_int_parameter_as_an_int() -> None:
    server = Server("d")

    @server.tool()
    def kind(n: int, more: list[int] | None = None) -> str:
        return " ".join(type(v).__name__ for v in [n, *(more or [])])

    async with connect(server) as client:
        result = await client.call_tool("kind", {"n": 2.0, "more": [3.0, 4]})
    assert result == {"content": [{"type": "text", "text": "int int int"}]}


async def test_defaults_fill_omitted_arguments() -> None:
    server = Server("d")

    @server.tool()
    def f(a: int, b: int = 7, color: Color = Color.RED) -> str:
        return f"{a} {b} {color.value}"

    async with connect(server) as client:
        result = await client.call_tool("f", {"a": 1})
    assert result["content"][0]["text"] == "1 7 red"


# -- resources ------------------------------------------------------------------------------------------
async def test_resource_decorator_registers_a_fixed_uri() -> None:
    server = Server("d")

    @server.resource("memory://all", mime_type="application/json", description="Everything")
    def all_memories() -> list[int]:
        return [1, 2]

    async with connect(server) as client:
        (resource,) = await client.list_resources()
        read = await client.read_resource("memory://all")
    assert resource == {
        "uri": "memory://all",
        "name": "all_memories",
        "description": "Everything",
        "mimeType": "application/json",
    }
    assert read == {"contents": [{"uri": "memory://all", "mimeType": "application/json", "text": "[1,2]"}]}


async def test_resource_decorator_with_braces_registers_a_template() -> None:
    server = Server("d")

    @server.resource("memory://{id}")
    def one(id: str) -> str:
        """One memory."""
        return f"memory {id}"

    async with connect(server) as client:
        assert await client.list_resources() == []
        (template,) = await client.list_resource_templates()
        read = await client.read_resource("memory://42")
    assert template == {"uriTemplate": "memory://{id}", "name": "one", "description": "One memory."}
    assert read == {"contents": [{"uri": "memory://42", "text": "memory 42"}]}


def test_a_template_variable_without_a_parameter_is_a_registration_error() -> None:
    with pytest.raises(RegistrationError, match="no parameter"):
        Server("d").add_resource("x://{id}/{other}", lambda id: id)


def test_a_fixed_uri_with_a_required_parameter_is_a_registration_error() -> None:
    with pytest.raises(RegistrationError, match="required parameter"):
        Server("d").add_resource("x://fixed", lambda id: id)


def test_a_malformed_template_is_a_registration_error() -> None:
    with pytest.raises(RegistrationError):
        Server("d").add_resource("x://{id", lambda id: id)


# -- prompts -----------------------------------------------------------------------------------------------
async def test_prompt_arguments_come_from_the_signature() -> None:
    server = Server("d")

    @server.prompt("daily-recap", description="Recap one day")
    def recap(date: str, tone: str = "neutral", ctx: Context | None = None) -> str:
        """Ignored summary.

        Args:
            date: The day, as YYYY-MM-DD.
        """
        return f"Recap {date} ({tone})"

    async with connect(server) as client:
        (prompt,) = await client.list_prompts()
        got = await client.get_prompt("daily-recap", {"date": "2026-11-29"})
    assert prompt == {
        "name": "daily-recap",
        "description": "Recap one day",
        "arguments": [
            {"name": "date", "description": "The day, as YYYY-MM-DD.", "required": True},
            {"name": "tone", "required": False},
        ],
    }
    assert got == {
        "description": "Recap one day",
        "messages": [{"role": "user", "content": {"type": "text", "text": "Recap 2026-11-29 (neutral)"}}],
    }


def test_duplicate_registration_is_an_error_unless_replacing() -> None:
    server = Server("d")
    server.add_tool("t", lambda: "1")
    with pytest.raises(RegistrationError, match="already registered"):
        server.add_tool("t", lambda: "2")
    server.add_tool("t", lambda: "3", replace=True)
    assert len(server.tools) == 1


def test_decorators_return_the_function_unchanged() -> None:
    server = Server("d")

    def f() -> str:
        return "x"

    assert server.tool()(f) is f
    assert server.resource("x://a")(f) is f
    assert server.prompt()(f) is f
