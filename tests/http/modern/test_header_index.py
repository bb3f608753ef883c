"""``mcp_headers`` with the request's header index (the app's fast path) decides exactly as its
loop over the raw headers does, whatever the spelling, repetition or kind of the names."""

from __future__ import annotations

import pytest

from jsonrpc_mcp import Server
from jsonrpc_mcp.http._headers import check_request, mcp_headers, routing_agrees
from jsonrpc_mcp.jsonrpc.messages import Request
from jsonrpc_mcp.revisions import Revision
from jsonrpc_mcp.server._registry import Tool

COMMON = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json")]
ROUTING = [
    (b"mcp-protocol-version", b"2026-07-28"),
    (b"mcp-method", b"tools/call"),
    (b"mcp-name", b"echo"),
]

MODERN = "2026-07-28"
REVISION: Revision = next(r for r in Server("r").revisions if r.version == MODERN)
WITH_PARAMETER = {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}

CASES: dict[str, list[tuple[bytes, bytes]]] = {
    "none": COMMON,
    "routing only": COMMON + ROUTING,
    "routing, one missing": COMMON + ROUTING[:2],
    "a parameter header": COMMON + ROUTING + [(b"mcp-param-region", b"eu")],
    "another mcp- header": COMMON + ROUTING + [(b"mcp-session-id", b"abc")],
    "capitalised name": [*COMMON, (b"MCP-Method", b"tools/call")],
    "capitalised twin": [*COMMON, *ROUTING, (b"MCP-METHOD", b"other")],
    "exact repeat": COMMON + ROUTING + [(b"mcp-name", b"again")],
    "repeated parameter": [*COMMON, (b"mcp-param-x", b"1"), (b"Mcp-Param-X", b"2")],
    "name with a newline": [*COMMON, (b"x\nmcp-method", b"v"), *ROUTING],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_index_gives_the_loops_answer(name: str) -> None:
    headers = CASES[name]
    expected = mcp_headers(headers)
    assert mcp_headers(headers, dict(headers)) == expected
    assert mcp_headers(tuple(headers), dict(headers)) == expected


def test_the_fast_path_finds_the_routing_headers() -> None:
    headers = COMMON + ROUTING
    found, repeated = mcp_headers(headers, dict(headers))
    assert repeated is None
    assert found == {"mcp-protocol-version": b"2026-07-28", "mcp-method": b"tools/call", "mcp-name": b"echo"}


def test_a_repeat_is_named_with_or_without_the_index() -> None:
    headers = COMMON + ROUTING + [(b"Mcp-Name", b"other")]
    assert mcp_headers(headers, dict(headers))[1] == "mcp-name"
    assert mcp_headers(headers)[1] == "mcp-name"


def test_bytearray_values_come_back_as_bytes() -> None:
    headers: list[tuple[bytes, bytes]] = [*COMMON, (b"mcp-method", bytearray(b"tools/call"))]  # type: ignore[list-item]
    found, _ = mcp_headers(headers, dict(headers))
    assert found == {"mcp-method": b"tools/call"}
    assert type(found["mcp-method"]) is bytes


# -- routing_agrees: the one look-up that stands for mcp_headers + check_request in the common case --
def _request(method: str = "tools/call", name: object = "echo") -> Request:
    return Request(1, method, {"name": name, "arguments": {}, "_meta": {}})


def _verdict(headers: list[tuple[bytes, bytes]], request: Request, tool: Tool | None = None) -> str | None:
    found, repeated = mcp_headers(headers, dict(headers))
    if repeated is not None:
        return f"repeated {repeated}"
    return check_request(request, MODERN, found, tool, REVISION)


def test_routing_agrees_once_check_request_has_agreed() -> None:
    headers = COMMON + ROUTING
    request = _request()
    assert _verdict(headers, request) is None  # (what makes the next answer one look-up)
    assert routing_agrees(headers, dict(headers), request, MODERN, None, REVISION)
    other = [*COMMON, *ROUTING[:2], (b"mcp-name", b"x")]
    assert not routing_agrees(other, dict(other), request, MODERN, None, REVISION)  # never seen


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("body_name", ["echo", "again", "other", 7])
def test_routing_agrees_only_where_check_request_finds_nothing(name: str, body_name: object) -> None:
    _verdict(COMMON + ROUTING, _request())  # (primed with the plain case)
    headers = CASES[name]
    request = _request(name=body_name)
    if routing_agrees(headers, dict(headers), request, MODERN, None, REVISION):
        assert _verdict(headers, request) is None


def test_a_tool_with_header_parameters_is_always_checked() -> None:
    tool = Tool("echo", lambda region="": region, input_schema=WITH_PARAMETER)
    headers = COMMON + ROUTING
    request = _request()
    assert _verdict(headers, request) is None
    assert not routing_agrees(headers, dict(headers), request, MODERN, tool, REVISION)
    missing = Request(1, "tools/call", {"name": "echo", "arguments": {"region": "eu"}, "_meta": {}})
    assert _verdict(headers, missing, tool) is not None  # Mcp-Param-Region is missing
