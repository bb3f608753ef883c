"""Everything our server sends validates against the official schema of the negotiated revision.

A session per revision exercises every method and several error paths; every frame the server sent
(results, notifications, errors, server-to-client requests) is then checked against the revision's
``schema.json`` from ../shared/spec/schema/ (skipped when that checkout is absent).
"""

from __future__ import annotations

import contextlib
import json
from functools import cache
from pathlib import Path
from typing import Annotated, Any

import orjson
import pytest
from jsonschema import Draft7Validator, Draft202012Validator

from jsonrpc_mcp import Arg, Context, ResourceContent, Server, ToolError, ToolResult
from jsonrpc_mcp.jsonrpc import JsonRpcError
from jsonrpc_mcp.revisions import HANDSHAKE_REVISIONS
from jsonrpc_mcp.testing import connect

pytestmark = pytest.mark.anyio

SCHEMAS = Path(__file__).resolve().parents[3] / "shared" / "spec" / "schema"
ICON = {"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}

RESULT_TYPES = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
}
NOTIFICATION_TYPES = {
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/progress": "ProgressNotification",
}
REQUEST_TYPES = {"ping": "PingRequest"}


@cache
def _document(version: str) -> dict[str, Any]:
    path = SCHEMAS / version / "schema.json"
    if not path.is_file():
        pytest.skip(f"official schema not available: {path}")
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def _validator(version: str, name: str) -> Any:
    document = _document(version)
    if "$defs" in document:
        return Draft202012Validator({**document, "$ref": f"#/$defs/{name}"})
    # draft-07: a $ref replaces its siblings, so the root document acts as the named definition
    return Draft7Validator({**document, "$ref": f"#/definitions/{name}"})


def _error_type(version: str) -> str:
    document = _document(version)
    definitions = document.get("$defs") or document["definitions"]
    return "JSONRPCErrorResponse" if "JSONRPCErrorResponse" in definitions else "JSONRPCError"


def _check(version: str, name: str, instance: Any) -> None:
    errors = sorted(_validator(version, name).iter_errors(instance), key=lambda e: list(e.absolute_path))
    assert not errors, f"{version} {name}: " + "; ".join(
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:5]
    )


def _server() -> Server:
    server = Server(
        "schema-check",
        "2.0.0",
        title="Schema Check",
        description="Every feature once",
        website_url="https://example.com",
        icons=[ICON],
        instructions="Call anything.",
        page_size=2,
    )

    @server.tool(annotations={"readOnlyHint": True, "title": "Recall"}, title="Recall", icons=[ICON])
    def recall(keyword: str | None = None, limit: Annotated[int, Arg("How many", maximum=20)] = 5) -> str:
        """Recall memories.

        Args:
            keyword: Filter word.
        """
        return f"{keyword}:{limit}"

    @server.tool(
        output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    )
    def count() -> dict[str, int]:
        return {"n": 1}

    @server.tool()
    def nothing() -> None:
        return None

    @server.tool()
    def fails() -> str:
        raise ToolError("this tool always fails")

    @server.tool()
    def crashes() -> str:
        raise RuntimeError("boom")

    @server.tool()
    def full() -> ToolResult:
        return ToolResult(
            content=[
                {"type": "text", "text": "a"},
                {"type": "image", "data": "aGk=", "mimeType": "image/png"},
            ],
            meta={"com.example/trace": "1"},
        )

    @server.tool()
    async def progress(ctx: Context) -> str:
        await ctx.report_progress(0.5, 1.0, "half")
        await ctx.session.ping()
        return "ok"

    @server.tool()
    def add_things() -> str:
        server.add_tool("added", lambda: "x", replace=True)
        server.add_resource("res://added", lambda: "x", replace=True)
        server.add_prompt("added", lambda: "x", replace=True)
        return "added"

    server.add_resource(
        "res://text", lambda: "hello", title="Text", description="Some text", mime_type="text/plain"
    )
    server.add_resource("res://blob", lambda: b"\x00\x01", meta={"com.example/m": 1}, icons=[ICON], size=2)
    server.add_resource(
        "res://json", lambda: {"a": [1, 2]}, annotations={"audience": ["user"], "priority": 1}
    )
    server.add_resource(
        "res://many",
        lambda: [ResourceContent(text="one"), ResourceContent(blob=b"two", mime_type="application/x-two")],
    )
    server.add_resource("tpl://{id}", lambda id: f"item {id}", title="Item", mime_type="text/plain")
    server.add_resource("tpl2://{a}/{b}", lambda a, b: a + b)

    @server.prompt(title="Recap")
    def recap(date: str, style: str = "short") -> str:
        """Recap a day.

        Args:
            date: The day.
        """
        return f"{date} {style}"

    @server.prompt()
    def chat() -> list[Any]:
        return ["hello", {"role": "assistant", "content": {"type": "text", "text": "hi"}}]

    return server


async def _exercise(client: Any) -> None:
    await client.ping()
    await client.list_tools()
    await client.list_resources()
    await client.list_resource_templates()
    await client.list_prompts()
    for name, args in [
        ("recall", {"keyword": "x"}),
        ("recall", {"limit": 100}),  # invalid: an error result or -32602, per revision
        ("count", None),
        ("nothing", None),
        ("fails", None),
        ("crashes", None),
        ("full", None),
        ("add_things", None),
        ("no-such-tool", None),
    ]:
        with contextlib.suppress(JsonRpcError):  # unknown tool, or invalid arguments before 2025-11-25
            await client.call_tool(name, args)
    await client.request("tools/call", {"name": "progress", "_meta": {"progressToken": 7}})
    for uri in ["res://text", "res://blob", "res://json", "res://many", "tpl://42", "tpl2://x/y"]:
        await client.read_resource(uri)
    for uri in ["res://missing"]:
        with pytest.raises(JsonRpcError):
            await client.read_resource(uri)
    await client.get_prompt("recap", {"date": "2026-01-01"})
    await client.get_prompt("chat")
    prompt_calls: list[tuple[str, dict[str, str]]] = [("recap", {}), ("nope", {})]
    for name, prompt_args in prompt_calls:
        with pytest.raises(JsonRpcError):
            await client.get_prompt(name, prompt_args)
    with pytest.raises(JsonRpcError):
        await client.request("tools/list", {"cursor": "bogus"})
    with pytest.raises(JsonRpcError):
        await client.request("no/such/method")
    await client.ping()  # a last round trip: notifications caused above have been delivered


def _frames(client: Any) -> tuple[list[Any], list[Any]]:
    wire = client.wire
    return [orjson.loads(f) for f in wire.sent], [orjson.loads(f) for f in wire.received]


@pytest.mark.parametrize("version", [r.version for r in HANDSHAKE_REVISIONS])
async def test_every_frame_the_server_sends_validates_against_the_official_schema(version: str) -> None:
    _document(version)  # skip early when the schemas are absent
    async with connect(_server(), protocol_version=version, recorder=True) as client:
        await _exercise(client)
        sent, received = _frames(client)
    methods = {f["id"]: f["method"] for f in sent if "method" in f and "id" in f}
    seen_types: set[str] = set()
    for frame in received:
        if "method" in frame and "id" in frame:
            _check(version, "JSONRPCRequest", frame)
            _check(version, REQUEST_TYPES[frame["method"]], frame)
            seen_types.add(REQUEST_TYPES[frame["method"]])
        elif "method" in frame:
            _check(version, "JSONRPCNotification", frame)
            _check(version, NOTIFICATION_TYPES[frame["method"]], frame)
            seen_types.add(NOTIFICATION_TYPES[frame["method"]])
        elif "error" in frame:
            _check(version, _error_type(version), frame)
            seen_types.add("error")
        else:
            _check(version, "JSONRPCResponse", frame)
            result_type = RESULT_TYPES[methods[frame["id"]]]
            _check(version, result_type, frame["result"])
            seen_types.add(result_type)
    # the session really produced every kind we mean to check
    assert (
        set(RESULT_TYPES.values()) | set(NOTIFICATION_TYPES.values()) | {"PingRequest", "error"} <= seen_types
    )


@pytest.mark.parametrize("version", [r.version for r in HANDSHAKE_REVISIONS])
async def test_the_client_frames_validate_against_the_official_schema(version: str) -> None:
    _document(version)
    async with connect(_server(), protocol_version=version, recorder=True) as client:
        await client.request("tools/call", {"name": "progress", "_meta": {"progressToken": 7}})
        sent, _ = _frames(client)
    _check(version, "InitializeRequest", sent[0])
    _check(version, "InitializedNotification", sent[1])
    for frame in sent[2:]:
        if "method" in frame:
            _check(version, "JSONRPCRequest" if "id" in frame else "JSONRPCNotification", frame)
        else:
            _check(version, "JSONRPCResponse", frame)  # the answer to the server's ping


@pytest.mark.parametrize("version", [r.version for r in HANDSHAKE_REVISIONS])
def test_the_schema_check_rejects_a_malformed_result(version: str) -> None:
    with pytest.raises(AssertionError, match="inputSchema"):
        _check(version, "ListToolsResult", {"tools": [{"name": "no-input-schema"}]})


@pytest.mark.parametrize("version", [r.version for r in HANDSHAKE_REVISIONS])
def test_the_schema_check_rejects_an_error_without_a_code(version: str) -> None:
    with pytest.raises(AssertionError, match="code"):
        _check(version, _error_type(version), {"jsonrpc": "2.0", "id": 1, "error": {"message": "x"}})
