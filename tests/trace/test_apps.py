"""``trace`` and ``explain`` know MCP Apps (``io.modelcontextprotocol/ui``, issue 25): the capability,
tools linked to views, views listed and read, and the view-host methods, with the extension's rules
(its vendored JSON Schema) flagged."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp.apps import CLIENT_SETTINGS, EXTENSION_ID, MIME_TYPE
from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp.testing import connect
from jsonrpc_mcp_conformance.trace import Tracer, explain
from jsonrpc_mcp_conformance.trace.annotate import CLIENT, SERVER, Frame
from jsonrpc_mcp_conformance.trace.catalogue import APPS, CATALOGUE, EXTENSIONS, extension_method
from tests import timeouts

REPO = Path(__file__).resolve().parents[2]
EVERYTHING = REPO / "examples" / "everything" / "server.py"
VIEW = "ui://everything/structured-output"


def _feed(tracer: Tracer, sender: str, message: Any) -> Frame:
    (frame,) = tracer.feed(sender, json.dumps(message).encode(), 0.0)
    return frame


def _exchange(tracer: Tracer, rid: int, method: str, params: dict[str, Any], result: Any) -> Frame:
    _feed(tracer, CLIENT, {"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    return _feed(tracer, SERVER, {"jsonrpc": "2.0", "id": rid, "result": result})


async def _everything_answers() -> dict[str, Any]:
    """What examples/everything answers a host that declared the extension (2025-11-25)."""
    server = load_target(f"{EVERYTHING}:create_server")
    with anyio.fail_after(timeouts.STARTUP):
        async with connect(server, extensions={EXTENSION_ID: CLIENT_SETTINGS}) as client:
            return {
                "capabilities": client.server_capabilities,
                "tools": await client.request("tools/list", {}),
                "resources": await client.request("resources/list", {}),
                "read": await client.request("resources/read", {"uri": VIEW}),
            }


@pytest.mark.anyio
async def test_the_tracer_names_the_apps_fields_of_a_real_conversation() -> None:
    answers = await _everything_answers()
    tracer = Tracer()
    capabilities = {"extensions": {EXTENSION_ID: CLIENT_SETTINGS}}
    params = {"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "h"}}
    _feed(tracer, CLIENT, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
    opened = {"protocolVersion": "2025-11-25", "capabilities": answers["capabilities"], "serverInfo": {}}
    init = _feed(tracer, SERVER, {"jsonrpc": "2.0", "id": 0, "result": opened})
    assert "the server offers MCP Apps views (io.modelcontextprotocol/ui)" in init.meaning
    _feed(tracer, CLIENT, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = _exchange(tracer, 1, "tools/list", {}, answers["tools"])
    assert f"test_structured_output -> {VIEW}" in tools.meaning
    assert f"refresh_structured_output -> {VIEW} (only for the view)" in tools.meaning
    listed = _exchange(tracer, 2, "resources/list", {}, answers["resources"])
    assert f"MCP Apps views listed: {VIEW}" in listed.meaning
    read = _exchange(tracer, 3, "resources/read", {"uri": VIEW}, answers["read"])
    assert f"MCP Apps views read: {VIEW}" in read.meaning
    assert [f.violations for f in (init, tools, listed, read)] == [[], [], [], []]


def test_the_tracer_flags_what_breaks_the_extension() -> None:
    tracer = Tracer()
    tracer.revision = "2025-11-25"
    tracer.initialize_answered = tracer.initialized = True
    bad_tools = {
        "tools": [
            {"name": "a", "inputSchema": {"type": "object"}, "_meta": {"ui": {"resourceUri": "https://x/v"}}},
            {"name": "b", "inputSchema": {"type": "object"}, "_meta": {"ui": {"visibility": "app"}}},
        ]
    }
    tools = _exchange(tracer, 1, "tools/list", {}, bad_tools)
    assert any("'https://x/v': a view's URI MUST start with ui://" in v for v in tools.violations)
    assert any(
        "tools[1] (b) _meta.ui: visibility: 'app' is not of type 'array'" in v for v in tools.violations
    )
    item = {"uri": VIEW, "mimeType": "text/html", "text": "<!DOCTYPE html>", "_meta": {"ui": {"csp": []}}}
    read = _exchange(tracer, 2, "resources/read", {"uri": VIEW}, {"contents": [item]})
    assert any(f"MUST be {MIME_TYPE}, not 'text/html'" in v for v in read.violations)
    assert any("_meta.ui: csp: [] is not of type 'object'" in v for v in read.violations)
    declared = {"protocolVersion": "2025-11-25", "capabilities": {"extensions": {EXTENSION_ID: {}}}}
    request = _feed(tracer, CLIENT, {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": declared})
    assert any("mimeTypes it renders (REQUIRED)" in v for v in request.violations)


def test_a_view_host_method_on_the_mcp_connection_is_named_not_taken_for_mcp() -> None:
    tracer = Tracer()
    frame = _feed(tracer, CLIENT, {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {}})
    assert frame.meaning.startswith("MCP Apps (SEP-1865), io.modelcontextprotocol/ui: the view's handshake")
    assert "over postMessage: not a message of the MCP connection" in frame.meaning
    assert frame.spec == APPS.spec


def test_explain_a_view_host_method() -> None:
    text = explain('{"jsonrpc": "2.0", "method": "ui/notifications/tool-result", "params": {}}')
    assert text.startswith(
        "A notification ui/notifications/tool-result of the extension io.modelcontextprotocol/ui"
    )
    assert "Sent by: the host, to the view." in text
    assert "never on the MCP connection" in text
    assert f"Specification: {APPS.spec}" in text
    asked = explain('{"jsonrpc": "2.0", "id": 4, "method": "ui/open-link", "params": {"url": "https://a"}}')
    assert "Sent by: the view, to the host." in asked and "The answer: an empty result" in asked


def test_explain_names_the_apps_fields_of_a_message_and_what_they_break() -> None:
    link = {"resourceUri": "ui://w/board", "visibility": ["app"]}
    result = {"tools": [{"name": "refresh", "inputSchema": {"type": "object"}, "_meta": {"ui": link}}]}
    text = explain(json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}))
    assert "Extension: MCP Apps views: refresh -> ui://w/board (only for the view)." in text
    read = {"contents": [{"uri": "ui://w/board", "mimeType": "text/plain", "text": "x"}]}
    broken = explain(json.dumps({"jsonrpc": "2.0", "id": 1, "result": read}))
    assert f"! contents[0] (ui://w/board): a view's mimeType MUST be {MIME_TYPE}, not 'text/plain'" in broken
    declared = {
        "capabilities": {"extensions": {EXTENSION_ID: CLIENT_SETTINGS}},
        "protocolVersion": "2025-11-25",
    }
    init = explain(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": declared}), "2025-11-25"
    )
    assert "Extension: the client renders MCP Apps views (io.modelcontextprotocol/ui: mimeTypes" in init
    assert "Under 2025-11-25: nothing wrong with it on its own." in init


def test_the_catalogue_keeps_extension_methods_apart_from_the_revisions() -> None:
    assert EXTENSIONS == {EXTENSION_ID: APPS}
    assert not set(APPS.methods) & set(CATALOGUE)  # never taken for a method of a revision
    assert extension_method("ui/initialize") == (APPS, APPS.methods["ui/initialize"])
    assert extension_method("tools/list") is None
    assert {m.sender for m in APPS.methods.values()} <= {"view", "host", "sandbox proxy"}


def test_the_catalogue_has_every_method_of_the_ext_apps_schema() -> None:
    cache = Path(os.environ.get("APPS_HOST_CACHE", REPO / ".cache" / "apps-host"))
    schema = cache / "npm/node_modules/@modelcontextprotocol/ext-apps/dist/src/generated/schema.json"
    if not schema.is_file():
        pytest.skip(f"@modelcontextprotocol/ext-apps is not in {cache} (tests/apps/host.py install())")
    definitions = json.loads(schema.read_text("utf-8"))["$defs"].values()
    methods = {d["properties"]["method"]["const"] for d in definitions if "method" in d.get("properties", {})}
    assert methods == set(APPS.methods)
