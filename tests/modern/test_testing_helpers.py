"""jsonrpc_mcp.testing's helpers for the 2026-07-28 era: the envelope and RawConnection.modern_request."""

from __future__ import annotations

import pytest

from jsonrpc_mcp import Server
from jsonrpc_mcp.testing import MODERN_VERSION, connect_raw, envelope

from .support import CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION

pytestmark = pytest.mark.anyio


def _server() -> Server:
    server = Server("raw-modern", "1.0")
    server.add_tool("echo", lambda text: text, input_schema={"type": "object"})
    return server


def test_the_envelope_names_version_capabilities_and_client_info() -> None:
    assert envelope(capabilities={"roots": {}}, log_level="info") == {
        PROTOCOL_VERSION: MODERN_VERSION,
        CLIENT_CAPABILITIES: {"roots": {}},
        CLIENT_INFO: {"name": "raw", "version": "0"},
        LOG_LEVEL: "info",
    }


async def test_modern_request_is_served_in_the_modern_era() -> None:
    async with connect_raw(_server()) as raw:
        response = await raw.modern_request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    assert response["result"]["resultType"] == "complete"
    assert response["result"]["content"] == [{"type": "text", "text": "hi"}]


async def test_modern_request_keeps_the_callers_meta() -> None:
    async with connect_raw(_server()) as raw:
        response = await raw.modern_request("tools/list", {"_meta": {PROTOCOL_VERSION: "1900-01-01"}})
    assert response["error"]["code"] == -32022
    assert response["error"]["data"]["requested"] == "1900-01-01"
