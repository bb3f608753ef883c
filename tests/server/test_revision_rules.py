"""The negotiated revision's rules are the ones applied: fields, error planes, batches, error ids.

Expectations are written out per revision (from the published schemas), not derived from the
revision flags, so a wrong flag fails here.
"""

from __future__ import annotations

from typing import Any

import pytest

from jsonrpc_mcp import Context, Server, ToolResult
from jsonrpc_mcp.revisions import HANDSHAKE_REVISIONS
from jsonrpc_mcp.testing import connect, connect_raw

pytestmark = pytest.mark.anyio

V1, V2, V3, V4 = "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"
ALL = [V1, V2, V3, V4]
ICON = {"src": "https://example.com/icon.png", "mimeType": "image/png"}
OUTPUT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def _server() -> Server:
    server = Server(
        "rules",
        "1.0",
        title="Rules Server",
        description="Shows what each revision allows",
        website_url="https://example.com",
        icons=[ICON],
    )

    @server.tool(
        title="Counter",
        output_schema=OUTPUT,
        annotations={"readOnlyHint": True},
        icons=[ICON],
        meta={"com.example/x": 1},
    )
    def count() -> dict[str, int]:
        """Count."""
        return {"n": 3}

    @server.tool()
    async def progress(ctx: Context) -> str:
        await ctx.report_progress(1, 2, "halfway")
        return "done"

    @server.tool()
    def limited(limit: int) -> str:
        return str(limit)

    @server.tool()
    def structured_by_hand() -> ToolResult:
        return ToolResult(content=[{"type": "text", "text": "{}"}], structured_content={"k": "v"})

    server.add_resource(
        "res://one",
        lambda: "one",
        title="One",
        icons=[ICON],
        meta={"com.example/y": 2},
        annotations={"priority": 0.5},
    )
    server.add_resource("tpl://{id}", lambda id: id, title="Template", icons=[ICON])
    server.add_prompt(
        "greet",
        lambda name: f"hi {name}",
        title="Greeting",
        icons=[ICON],
        arguments=[{"name": "name", "title": "Name", "required": True}],
    )
    return server


@pytest.mark.parametrize("version", ALL)
async def test_tool_fields_follow_the_revision(version: str) -> None:
    expected = {
        V1: {"name", "description", "inputSchema"},
        V2: {"name", "description", "inputSchema", "annotations"},
        V3: {"name", "description", "inputSchema", "annotations", "title", "outputSchema", "_meta"},
        V4: {"name", "description", "inputSchema", "annotations", "title", "outputSchema", "_meta", "icons"},
    }[version]
    async with connect(_server(), protocol_version=version) as client:
        tools = {t["name"]: t for t in await client.list_tools()}
    assert set(tools["count"]) == expected


@pytest.mark.parametrize("version", ALL)
async def test_structured_content_only_from_2025_06_18(version: str) -> None:
    async with connect(_server(), protocol_version=version) as client:
        result = await client.call_tool("count")
    assert result["content"] == [{"type": "text", "text": '{"n":3}'}]
    if version in (V3, V4):
        assert result["structuredContent"] == {"n": 3}
    else:
        assert "structuredContent" not in result


@pytest.mark.parametrize("version", ALL)
async def test_hand_built_structured_content_only_from_2025_06_18(version: str) -> None:
    async with connect(_server(), protocol_version=version) as client:
        result = await client.call_tool("structured_by_hand")
    assert ("structuredContent" in result) == (version in (V3, V4))


@pytest.mark.parametrize("version", ALL)
async def test_resource_fields_follow_the_revision(version: str) -> None:
    expected = {
        V1: {"uri", "name", "annotations"},
        V2: {"uri", "name", "annotations"},
        V3: {"uri", "name", "annotations", "title", "_meta"},
        V4: {"uri", "name", "annotations", "title", "_meta", "icons"},
    }[version]
    async with connect(_server(), protocol_version=version) as client:
        (resource,) = await client.list_resources()
        (template,) = await client.list_resource_templates()
    assert set(resource) == expected
    assert set(template) == {"uriTemplate", "name"} | ({"title"} if version in (V3, V4) else set()) | (
        {"icons"} if version == V4 else set()
    )


@pytest.mark.parametrize("version", ALL)
async def test_prompt_fields_follow_the_revision(version: str) -> None:
    async with connect(_server(), protocol_version=version) as client:
        (prompt,) = await client.list_prompts()
    expected = {"name", "arguments"} | ({"title"} if version in (V3, V4) else set())
    expected |= {"icons"} if version == V4 else set()
    assert set(prompt) == expected
    argument = prompt["arguments"][0]
    assert ("title" in argument) == (version in (V3, V4))


@pytest.mark.parametrize("version", ALL)
async def test_server_info_fields_follow_the_revision(version: str) -> None:
    async with connect(_server(), protocol_version=version) as client:
        info = client.initialize_result["serverInfo"]
    expected = {"name", "version"}
    if version in (V3, V4):
        expected.add("title")
    if version == V4:
        expected |= {"icons", "description", "websiteUrl"}
    assert set(info) == expected


@pytest.mark.parametrize("version", ALL)
async def test_progress_message_only_from_2025_03_26(version: str) -> None:
    notes: list[dict[str, Any]] = []

    def on_notification(method: str, params: Any) -> None:
        if method == "notifications/progress":
            notes.append(params)

    async with connect(_server(), protocol_version=version, on_notification=on_notification) as client:
        result = await client.request("tools/call", {"name": "progress", "_meta": {"progressToken": "tok"}})
    assert result["content"][0]["text"] == "done"
    expected: dict[str, Any] = {"progressToken": "tok", "progress": 1, "total": 2}
    if version != V1:
        expected["message"] = "halfway"
    assert notes == [expected]


@pytest.mark.parametrize("version", [V1, V2, V3])
async def test_invalid_arguments_are_invalid_params_before_2025_11_25(version: str) -> None:
    async with connect_raw(_server()) as raw:
        await raw.initialize(version)
        response = await raw.request("tools/call", {"name": "limited", "arguments": {"limit": "many"}})
    assert response["error"]["code"] == -32602
    assert (
        response["error"]["message"]
        == "Invalid arguments for tool 'limited': limit: 'many' is not of type 'integer'"
    )
    assert response["error"]["data"] == {"errors": ["limit: 'many' is not of type 'integer'"]}


async def test_invalid_arguments_are_an_error_result_in_2025_11_25() -> None:
    async with connect_raw(_server()) as raw:
        await raw.initialize(V4)
        response = await raw.request("tools/call", {"name": "limited", "arguments": {"limit": "many"}})
    assert response["result"] == {
        "content": [
            {
                "type": "text",
                "text": "Invalid arguments for tool 'limited': limit: 'many' is not of type 'integer'",
            }
        ],
        "isError": True,
    }


@pytest.mark.parametrize("version", ALL)
async def test_batches_only_in_2025_03_26(version: str) -> None:
    async with connect_raw(_server()) as raw:
        await raw.initialize(version)
        await raw.send([{"jsonrpc": "2.0", "id": 50, "method": "ping"}])
        answer = await raw.receive()
    if version == V2:
        assert answer == [{"jsonrpc": "2.0", "id": 50, "result": {}}]
    else:
        assert isinstance(answer, dict)
        assert answer["error"]["code"] == -32600


async def test_unreadable_request_error_omits_the_id_before_negotiation() -> None:
    # The server also speaks 2026-07-28, which never negotiates and whose schema has no null id.
    async with connect_raw(_server()) as raw:
        await raw.send(b"{oops")
        answer = await raw.receive()
    assert answer["error"]["code"] == -32700
    assert "id" not in answer


async def test_unreadable_request_error_has_a_null_id_before_negotiation_on_a_handshake_server() -> None:
    async with connect_raw(Server("handshake-only", revisions=HANDSHAKE_REVISIONS)) as raw:
        await raw.send(b"{oops")
        answer = await raw.receive()
    assert answer["error"]["code"] == -32700
    assert "id" in answer
    assert answer["id"] is None


@pytest.mark.parametrize("version", [V1, V2, V3])
async def test_unreadable_request_error_has_a_null_id_after_older_negotiation(version: str) -> None:
    async with connect_raw(_server()) as raw:
        await raw.initialize(version)
        await raw.send(b"{oops")
        answer = await raw.receive()
    assert answer["error"]["code"] == -32700
    assert answer["id"] is None


async def test_unreadable_request_error_omits_the_id_after_2025_11_25_negotiation() -> None:
    async with connect_raw(_server()) as raw:
        await raw.initialize(V4)
        await raw.send(b"{oops")
        parse_error = await raw.receive()
        await raw.send(b'{"jsonrpc": "2.0", "id": null, "method": "ping"}')
        bad_id = await raw.receive()
    assert parse_error == {"jsonrpc": "2.0", "error": parse_error["error"]}
    assert parse_error["error"]["code"] == -32700
    assert "id" not in bad_id
    assert bad_id["error"]["code"] == -32600


@pytest.mark.parametrize("version", ALL)
async def test_resource_not_found_is_32002_with_the_uri(version: str) -> None:
    async with connect_raw(_server()) as raw:
        await raw.initialize(version)
        response = await raw.request("resources/read", {"uri": "nope://missing"})
    assert response["error"]["code"] == -32002
    assert response["error"]["data"] == {"uri": "nope://missing"}


@pytest.mark.parametrize("version", ALL)
async def test_the_context_reports_the_negotiated_revision(version: str) -> None:
    server = Server("ctx")

    @server.tool()
    async def which(ctx: Context) -> str:
        return ctx.revision.version

    async with connect(server, protocol_version=version) as client:
        result = await client.call_tool("which")
    assert result["content"][0]["text"] == version
