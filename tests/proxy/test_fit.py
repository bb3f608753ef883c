"""What crosses the proxy is fitted to the revision the downstream client speaks."""

from __future__ import annotations

from jsonrpc_mcp.proxy._fit import fit_items, fit_result, handshake_result
from jsonrpc_mcp.revisions import REVISIONS

OLDEST = REVISIONS["2024-11-05"]
LATEST = REVISIONS["2025-11-25"]

TOOL = {
    "name": "t",
    "title": "T",
    "icons": [{"src": "https://example.com/i.png"}],
    "inputSchema": {"type": "object"},
    "outputSchema": {"type": "object"},
    "annotations": {"readOnlyHint": True},
    "_meta": {"k": 1},
}


def test_definitions_lose_what_an_older_revision_does_not_define() -> None:
    assert fit_items([TOOL], OLDEST) == [{"name": "t", "inputSchema": {"type": "object"}}]
    assert fit_items([TOOL], LATEST) == [TOOL]
    prompt = {"name": "p", "arguments": [{"name": "a", "title": "A"}]}
    assert fit_items([prompt], OLDEST) == [{"name": "p", "arguments": [{"name": "a"}]}]


def test_results_lose_what_an_older_revision_cannot_carry() -> None:
    result = {
        "content": [{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}],
        "structuredContent": {"x": 1},
    }
    fitted = fit_result("tools/call", result, OLDEST)
    assert fitted["content"][0]["type"] == "text" and "structuredContent" not in fitted
    assert fit_result("tools/call", result, LATEST) is result
    read = {"contents": [{"uri": "u", "text": "x", "_meta": {"k": 1}}]}
    assert fit_result("resources/read", read, OLDEST) == {"contents": [{"uri": "u", "text": "x"}]}


def test_a_handshake_client_gets_no_stateless_result_fields() -> None:
    modern = {
        "tools": [],
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "public",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s"}, "mine": 1},
    }
    assert handshake_result(modern) == {"tools": [], "_meta": {"mine": 1}}
    assert (
        handshake_result({"resultType": "complete", "_meta": {"io.modelcontextprotocol/serverInfo": {}}})
        == {}
    )
