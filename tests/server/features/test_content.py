"""Content blocks: the helpers, what tools and prompts may return, and fitting blocks to a revision."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from jsonrpc_mcp import RegistrationError, Server, ToolResult, content
from jsonrpc_mcp.revisions import REVISIONS
from jsonrpc_mcp.testing import connect

from .feature_server import PNG, build_server
from .support import LATEST, VERSIONS, check_schema, frames

pytestmark = pytest.mark.anyio

PNG_B64 = "iVBORw0KGgo="


# -- helpers --------------------------------------------------------------------------------------
def test_text_block() -> None:
    notes = content.annotations(audience=["user"], priority=1, last_modified="2026-01-01T00:00:00Z")
    assert content.text("hi", annotations=notes, meta={"com.example/k": 1}) == {
        "type": "text",
        "text": "hi",
        "annotations": {"audience": ["user"], "priority": 1, "lastModified": "2026-01-01T00:00:00Z"},
        "_meta": {"com.example/k": 1},
    }


def test_image_and_audio_blocks_encode_bytes_and_keep_base64_strings() -> None:
    assert content.image(PNG) == {"type": "image", "data": PNG_B64, "mimeType": "image/png"}
    assert content.image(PNG_B64, "image/jpeg") == {
        "type": "image",
        "data": PNG_B64,
        "mimeType": "image/jpeg",
    }
    assert content.audio(b"RIFF") == {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}


def test_embedded_resource_blocks_hold_text_or_a_blob() -> None:
    assert content.embedded_resource("res://a", text="hello", mime_type="text/plain") == {
        "type": "resource",
        "resource": {"uri": "res://a", "mimeType": "text/plain", "text": "hello"},
    }
    assert content.embedded_resource("res://b", blob=b"\x00\x01") == {
        "type": "resource",
        "resource": {"uri": "res://b", "blob": "AAE="},
    }
    with pytest.raises(ValueError, match="not both"):
        content.embedded_resource("res://c", text="x", blob=b"y")


def test_resource_link_block() -> None:
    assert content.resource_link("res://a", "a", mime_type="text/plain", description="An a", title="A") == {
        "type": "resource_link",
        "uri": "res://a",
        "name": "a",
        "title": "A",
        "description": "An a",
        "mimeType": "text/plain",
    }


def test_priority_must_be_between_0_and_1() -> None:
    with pytest.raises(ValueError, match="priority"):
        content.annotations(priority=1.5)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"type": "text", "text": "x"}, True),
        ({"type": "image", "data": "", "mimeType": "image/png"}, True),
        ({"type": "text"}, False),  # no text: data that happens to have a "type"
        ({"type": "cat", "name": "Tom"}, False),
        ("text", False),
    ],
)
def test_is_content_block(value: Any, expected: bool) -> None:
    assert content.is_content_block(value) is expected


# -- tools ----------------------------------------------------------------------------------------
async def test_a_tool_returning_blocks_sends_them_as_its_content() -> None:
    async with connect(build_server()) as client:
        result = await client.call_tool("rich")
    assert [block["type"] for block in result["content"]] == [
        "text",
        "image",
        "audio",
        "resource",
        "resource_link",
    ]
    assert result["content"][1] == {"type": "image", "data": PNG_B64, "mimeType": "image/png"}


async def test_a_tool_returning_one_block_sends_it() -> None:
    server = Server("one")
    server.add_tool("pic", lambda: content.image(PNG))
    async with connect(server) as client:
        result = await client.call_tool("pic")
    assert result == {"content": [{"type": "image", "data": PNG_B64, "mimeType": "image/png"}]}


async def test_a_dict_that_only_looks_like_a_block_is_json_text() -> None:
    server = Server("data")
    server.add_tool("pet", lambda: {"type": "cat", "name": "Tom"})
    async with connect(server) as client:
        result = await client.call_tool("pet")
    assert result["content"] == [{"type": "text", "text": '{"type":"cat","name":"Tom"}'}]


async def test_a_tool_with_an_output_schema_returning_a_block_shaped_dict_is_structured() -> None:
    server = Server("structured")
    schema = {"type": "object", "properties": {"type": {"type": "string"}, "text": {"type": "string"}}}
    server.add_tool("s", lambda: {"type": "text", "text": "data"}, output_schema=schema)
    async with connect(server) as client:
        result = await client.call_tool("s")
    assert result["structuredContent"] == {"type": "text", "text": "data"}
    assert result["content"] == [{"type": "text", "text": '{"type":"text","text":"data"}'}]


@pytest.mark.parametrize("version", VERSIONS)
async def test_blocks_a_revision_lacks_become_text(version: str) -> None:
    revision = REVISIONS[version]
    async with connect(build_server(), protocol_version=version) as client:
        result = await client.call_tool("rich")
    kinds = [block["type"] for block in result["content"]]
    assert kinds == [
        "text",
        "image",
        "audio" if revision.has_audio_content else "text",
        "resource",
        "resource_link" if revision.has_resource_links else "text",
    ]
    if not revision.has_audio_content:
        assert "cannot carry audio" in result["content"][2]["text"]
    if not revision.has_resource_links:
        assert result["content"][4]["text"] == "Resource link: Item 1 <res://items/1> (text/plain)"


@pytest.mark.parametrize("version", VERSIONS)
async def test_fields_a_revision_lacks_are_left_out_of_blocks(version: str) -> None:
    revision = REVISIONS[version]
    notes = content.annotations(audience=["user"], last_modified="2026-01-01T00:00:00Z")
    icons = [{"src": "https://example.com/i.png"}]
    server = Server("fields")
    server.add_tool(
        "fields",
        lambda: ToolResult(
            content=[
                content.text("t", annotations=notes, meta={"com.example/k": 1}),
                content.embedded_resource("res://a", text="x", resource_meta={"com.example/r": 2}),
                content.resource_link("res://a", "a", title="A", icons=icons),
            ]
        ),
    )
    async with connect(server, protocol_version=version) as client:
        text, embedded, link = (await client.call_tool("fields"))["content"]
    assert ("_meta" in text) is revision.has_content_meta
    assert ("lastModified" in text["annotations"]) is revision.has_annotation_last_modified
    assert ("_meta" in embedded["resource"]) is revision.has_definition_meta
    if revision.has_resource_links:
        assert ("title" in link) is revision.has_titles
        assert ("icons" in link) is revision.has_icons


@pytest.mark.parametrize("version", VERSIONS)
async def test_tool_results_with_every_kind_of_block_validate_against_the_official_schema(
    version: str,
) -> None:
    async with connect(build_server(), protocol_version=version, recorder=True) as client:
        await client.call_tool("rich")
        sent, received = frames(client)
    call_id = next(f["id"] for f in sent if f.get("method") == "tools/call")
    answer = next(f for f in received if f.get("id") == call_id)
    check_schema(version, "CallToolResult", answer["result"])


# -- prompts --------------------------------------------------------------------------------------
def _prompt_server() -> Server:
    server = Server("prompts")

    @server.prompt()
    def show() -> list[Any]:
        return [
            "Look at these:",
            content.image(PNG),
            {"role": "assistant", "content": content.audio(b"RIFF")},
            content.embedded_resource("res://a", text="embedded"),
            content.resource_link("res://a", "a"),
        ]

    return server


@pytest.mark.parametrize("version", VERSIONS)
async def test_prompts_carry_content_blocks_fitted_to_the_revision(version: str) -> None:
    revision = REVISIONS[version]
    async with connect(_prompt_server(), protocol_version=version, recorder=True) as client:
        result = await client.get_prompt("show")
        sent, received = frames(client)
    messages = result["messages"]
    assert [m["role"] for m in messages] == ["user", "user", "assistant", "user", "user"]
    assert [m["content"]["type"] for m in messages] == [
        "text",
        "image",
        "audio" if revision.has_audio_content else "text",
        "resource",
        "resource_link" if revision.has_resource_links else "text",
    ]
    get_id = next(f["id"] for f in sent if f.get("method") == "prompts/get")
    check_schema(version, "GetPromptResult", next(f for f in received if f.get("id") == get_id)["result"])


# -- tool names -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["has space", "comma,name", "x" * 129, "ünï"])
def test_a_tool_name_outside_the_rules_is_refused_by_a_strict_server(name: str) -> None:
    server = Server("strict", strict_tool_names=True)
    with pytest.raises(RegistrationError, match=f"tool-name rules of protocol revision {LATEST}"):
        server.add_tool(name, lambda: "x")


@pytest.mark.parametrize("name", ["a", "get_weather", "db.query-v2", "X" * 128])
def test_a_tool_name_inside_the_rules_is_accepted_by_a_strict_server(name: str) -> None:
    server = Server("strict", strict_tool_names=True)
    server.add_tool(name, lambda: "x")
    assert name in server.tools


def test_a_server_speaking_only_older_revisions_does_not_check_tool_names(
    caplog: pytest.LogCaptureFixture,
) -> None:
    older = tuple(r for r in REVISIONS.values() if not r.tool_name_rules)
    server = Server("old", revisions=older, strict_tool_names=True)
    caplog.set_level(logging.WARNING, logger="jsonrpc_mcp.server")
    server.add_tool("has space", lambda: "x")
    assert "has space" in server.tools
    assert not caplog.records
