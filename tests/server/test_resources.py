"""resources/list, resources/templates/list and resources/read."""

from __future__ import annotations

import base64
import logging
from typing import Any

import pytest

from jsonrpc_mcp import Context, ResourceContent, ResourceNotFound, Server
from jsonrpc_mcp.jsonrpc import JsonRpcError
from jsonrpc_mcp.testing import connect

pytestmark = pytest.mark.anyio


async def _read(server: Server, uri: str) -> dict[str, Any]:
    async with connect(server) as client:
        return await client.read_resource(uri)


async def test_text_resource() -> None:
    server = Server("r")
    server.add_resource("res://t", lambda: "hello", mime_type="text/plain")
    assert await _read(server, "res://t") == {
        "contents": [{"uri": "res://t", "mimeType": "text/plain", "text": "hello"}]
    }


async def test_bytes_are_a_base64_blob() -> None:
    server = Server("r")
    server.add_resource("res://b", lambda: b"\x00\xffdata")
    (content,) = (await _read(server, "res://b"))["contents"]
    assert content == {
        "uri": "res://b",
        "mimeType": "application/octet-stream",
        "blob": base64.b64encode(b"\x00\xffdata").decode(),
    }


async def test_json_data_is_json_text() -> None:
    server = Server("r")
    server.add_resource("res://j", lambda: {"k": [1]})
    (content,) = (await _read(server, "res://j"))["contents"]
    assert content == {"uri": "res://j", "mimeType": "application/json", "text": '{"k":[1]}'}


async def test_several_contents() -> None:
    server = Server("r")
    server.add_resource(
        "res://many",
        lambda: [ResourceContent(text="a", uri="res://many/a"), ResourceContent(blob=b"b", mime_type="x/y")],
    )
    assert (await _read(server, "res://many"))["contents"] == [
        {"uri": "res://many/a", "text": "a"},
        {"uri": "res://many", "mimeType": "x/y", "blob": "Yg=="},
    ]


async def test_resources_list_shows_the_metadata() -> None:
    server = Server("r")
    server.add_resource(
        "res://a", lambda: "a", name="alpha", description="First", mime_type="text/plain", size=1
    )
    async with connect(server) as client:
        resources = await client.list_resources()
    assert resources == [
        {"uri": "res://a", "name": "alpha", "description": "First", "mimeType": "text/plain", "size": 1}
    ]


async def test_a_template_is_read_through_its_variables() -> None:
    server = Server("r")
    seen: list[tuple[str, str]] = []

    @server.resource("users://{user}/notes/{note}", mime_type="text/plain")
    def note(user: str, note: str) -> str:
        seen.append((user, note))
        return f"{user}:{note}"

    result = await _read(server, "users://ada/notes/7")
    assert result == {"contents": [{"uri": "users://ada/notes/7", "mimeType": "text/plain", "text": "ada:7"}]}
    assert seen == [("ada", "7")]


async def test_template_variables_are_percent_decoded() -> None:
    server = Server("r")
    server.add_resource("files://{name}", lambda name: name)
    assert (await _read(server, "files://a%20b"))["contents"][0]["text"] == "a b"


async def test_a_fixed_uri_wins_over_a_template() -> None:
    server = Server("r")
    server.add_resource("items://{id}", lambda id: f"template {id}")
    server.add_resource("items://special", lambda: "fixed")
    assert (await _read(server, "items://special"))["contents"][0]["text"] == "fixed"
    assert (await _read(server, "items://other"))["contents"][0]["text"] == "template other"


async def test_a_template_does_not_match_across_path_segments() -> None:
    server = Server("r")
    server.add_resource("items://{id}", lambda id: id)
    async with connect(server) as client:
        with pytest.raises(JsonRpcError) as info:
            await client.read_resource("items://a/b")
    assert info.value.code == -32002


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_an_unknown_resource_is_32002_with_the_uri(version: str) -> None:
    server = Server("r")
    server.add_resource("res://a", lambda: "a")
    async with connect(server, protocol_version=version) as client:
        with pytest.raises(JsonRpcError) as info:
            await client.read_resource("res://missing")
    assert info.value.code == -32002
    assert info.value.data == {"uri": "res://missing"}


async def test_a_handler_raising_resource_not_found_is_32002() -> None:
    server = Server("r")

    @server.resource("items://{id}")
    def item(id: str) -> str:
        raise ResourceNotFound(f"items://{id}")

    async with connect(server) as client:
        with pytest.raises(JsonRpcError) as info:
            await client.read_resource("items://9")
    assert (info.value.code, info.value.data) == (-32002, {"uri": "items://9"})


async def test_resources_read_without_a_uri_is_invalid_params() -> None:
    server = Server("r")
    server.add_resource("res://a", lambda: "a")
    async with connect(server) as client:
        with pytest.raises(JsonRpcError) as info:
            await client.request("resources/read", {})
    assert info.value.code == -32602


async def test_a_failing_handler_is_an_internal_error_with_a_clear_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken() -> str:
        raise TypeError("bad things")

    server = Server("r", mask_errors=False)
    server.add_resource("res://broken", broken)
    caplog.set_level(logging.ERROR, logger="jsonrpc_mcp.server")
    async with connect(server) as client:
        with pytest.raises(JsonRpcError) as info:
            await client.read_resource("res://broken")
    assert info.value.code == -32603
    assert "res://broken" in info.value.message
    assert "TypeError: bad things" in info.value.message
    assert any(r.exc_info for r in caplog.records)


async def test_a_handler_returning_something_unencodable_is_an_internal_error() -> None:
    server = Server("r")
    server.add_resource("res://odd", lambda: object())
    async with connect(server) as client:
        with pytest.raises(JsonRpcError) as info:
            await client.read_resource("res://odd")
    assert info.value.code == -32603
    assert "not text, bytes or JSON" in info.value.message


async def test_resource_handlers_get_the_context() -> None:
    server = Server("r")

    @server.resource("ctx://{id}")
    async def with_ctx(id: str, ctx: Context) -> str:
        return f"{id} via {ctx.method}"

    assert (await _read(server, "ctx://1"))["contents"][0]["text"] == "1 via resources/read"


async def test_removing_a_template() -> None:
    server = Server("r")
    server.add_resource("t://{id}", lambda id: id)
    assert server.remove_resource("t://{id}")
    assert len(server.templates) == 0


async def test_template_variables_arrive_as_their_annotated_types() -> None:
    server = Server("typed")
    seen: list[Any] = []

    @server.resource("items://{item_id}/{ratio}/{draft}")
    def item(item_id: int, ratio: float, draft: bool) -> str:
        seen.append((item_id, ratio, draft))
        return f"{item_id + 1} {ratio * 2} {not draft}"

    @server.resource("names://{name}")
    def named(name: str) -> str:
        return name

    async with connect(server) as client:
        read = await client.read_resource("items://42/0.5/true")
        assert read["contents"][0]["text"] == "43 1.0 False"
        assert seen == [(42, 0.5, True)] and type(seen[0][0]) is int
        assert (await client.read_resource("names://42"))["contents"][0]["text"] == "42"  # str stays str
        for wrong in (
            "items://abc/0.5/true",
            "items://4_2/0.5/true",
            "items://42/nan/true",
            "items://1/2/maybe",
        ):
            with pytest.raises(JsonRpcError) as info:
                await client.read_resource(wrong)
            assert info.value.code == -32002  # not this template's: nothing else matches either
    assert len(seen) == 1


async def test_an_optional_int_variable_is_an_int_too() -> None:
    server = Server("typed")

    @server.resource("pages://{number}")
    def page(number: int | None = None) -> str:
        return repr(number)

    async with connect(server) as client:
        assert (await client.read_resource("pages://7"))["contents"][0]["text"] == "7"
