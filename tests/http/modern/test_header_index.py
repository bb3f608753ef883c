"""``mcp_headers`` with the request's header index (the app's fast path) decides exactly as its
loop over the raw headers does, whatever the spelling, repetition or kind of the names."""

from __future__ import annotations

import pytest

from jsonrpc_mcp.http._headers import mcp_headers

COMMON = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json")]
ROUTING = [
    (b"mcp-protocol-version", b"2026-07-28"),
    (b"mcp-method", b"tools/call"),
    (b"mcp-name", b"echo"),
]

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
