"""The HTTP rules of a revision are its fields: a revision handed to ``Server(revisions=...)``
whose fields differ changes what the app requires (``has_protocol_version_header``), and what a
header-less handshake-era request is taken to speak follows ``has_streamable_http`` and
``has_protocol_version_header`` (2025-03-26 among the published ones)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import anyio
import httpx
import orjson
import pytest

from jsonrpc_mcp import Server
from jsonrpc_mcp.http import McpHttpApp
from jsonrpc_mcp.revisions import ALL_REVISIONS, REVISIONS

from ..support import JSON_HEADERS, TIMEOUT, serving

pytestmark = pytest.mark.anyio

# 2026-07-28 without the MCP-Protocol-Version header (the body alone names the revision)
NO_VERSION_HEADER = replace(REVISIONS["2026-07-28"], version="2099-02-02", has_protocol_version_header=False)


def _server(revisions: tuple[Any, ...]) -> Server:
    server = Server("rules", revisions=revisions)

    @server.tool(title="Echo")
    def echo(text: str) -> str:
        return text

    return server


def _body(method: str, version: str | None = None, rid: int = 1) -> bytes:
    params: dict[str, Any] = {}
    if version is not None:
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    return orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})


async def _post(http: httpx.AsyncClient, url: str, body: bytes, **headers: str) -> httpx.Response:
    with anyio.fail_after(TIMEOUT):
        return await http.post(url, content=body, headers={**JSON_HEADERS, **headers})


async def test_a_revision_without_the_version_header_does_not_require_it() -> None:
    app = McpHttpApp(_server((*ALL_REVISIONS, NO_VERSION_HEADER)))
    async with serving(app) as base, httpx.AsyncClient() as http:
        url = f"{base}/mcp"
        for version, status in (("2026-07-28", 400), ("2099-02-02", 200)):
            response = await _post(http, url, _body("tools/list", version), **{"Mcp-Method": "tools/list"})
            answer = orjson.loads(response.content)
            assert response.status_code == status, answer
            if status == 400:
                assert answer["error"]["code"] == -32020
                assert "MCP-Protocol-Version" in answer["error"]["message"]
            else:
                assert [tool["name"] for tool in answer["result"]["tools"]] == ["echo"]
        # nor reads it: a header naming another revision is not a mismatch there
        response = await _post(
            http,
            url,
            _body("tools/list", "2099-02-02"),
            **{"Mcp-Method": "tools/list", "MCP-Protocol-Version": "2026-07-28"},
        )
        assert response.status_code == 200, response.content


async def _titles_without_the_header(revisions: tuple[Any, ...]) -> list[str | None]:
    """The titles a stateless app lists to a header-less tools/list (no title before 2025-06-18)."""
    app = McpHttpApp(_server(revisions), stateless=True)
    async with serving(app) as base, httpx.AsyncClient() as http:
        response = await _post(http, f"{base}/mcp", _body("tools/list"))
        assert response.status_code == 200, response.content
        return [tool.get("title") for tool in orjson.loads(response.content)["result"]["tools"]]


async def test_a_request_without_the_header_speaks_the_last_revision_before_it() -> None:
    handshake = tuple(r for r in ALL_REVISIONS if r.has_handshake)
    assert await _titles_without_the_header(handshake) == [None]  # 2025-03-26: no titles
    # the same revisions, but 2025-03-26 without Streamable HTTP: none is left to assume but the latest
    changed = tuple(
        replace(r, has_streamable_http=False) if r.version == "2025-03-26" else r for r in handshake
    )
    assert await _titles_without_the_header(changed) == ["Echo"]
