"""Run by test_new_revision.py: serve a server in-process and print, as JSON, how it answers the
same requests under 2026-07-28 and under the test-only 2099-01-01, in memory and over HTTP (an
McpHttpApp under uvicorn on 127.0.0.1, the answers under ``"http"`` with their statuses). With
``--given`` the revision is passed to ``Server(revisions=...)``; without, it must have been found
in the package."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import orjson

import jsonrpc_mcp
from jsonrpc_mcp import Context, Server
from jsonrpc_mcp.revisions import ALL_REVISIONS, REVISIONS


def build(revisions: tuple[Any, ...]) -> Server:
    server = Server("probe", revisions=revisions)

    @server.tool()
    async def confirm(ctx: Context) -> str:
        """Ask the user (the client declares no elicitation capability)."""
        await ctx.elicit("Sure?", {"type": "object", "properties": {}})
        return "confirmed"

    @server.resource("notes://{name}")
    def note(name: str) -> str:
        return name

    return server


async def probe(server: Server) -> dict[str, Any]:
    from jsonrpc_mcp.testing import connect_raw

    def meta(version: str) -> dict[str, Any]:
        return {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {},
        }

    out: dict[str, Any] = {"package": jsonrpc_mcp.__file__, "known": sorted(REVISIONS)}
    async with connect_raw(server) as raw:
        for version in ("2026-07-28", "2099-01-01"):
            templates = await raw.request("resources/templates/list", {"_meta": meta(version)})
            elicit = await raw.request(
                "tools/call", {"name": "confirm", "arguments": {}, "_meta": meta(version)}
            )
            out[version] = {"templates": templates, "confirm": elicit}
        out["discover"] = await raw.request("server/discover", {"_meta": meta("2026-07-28")})
        out["unsupported"] = await raw.request("tools/list", {"_meta": meta("1999-01-01")})
    return out


async def probe_http(server: Server) -> dict[str, Any]:
    """The same requests POSTed to an McpHttpApp, each with the headers a 2026-07-28 client sends
    (MCP-Protocol-Version, Mcp-Method, Mcp-Name), plus the header rules: a request without routing
    headers, one whose MCP-Protocol-Version disagrees with its body, one naming no served revision."""
    import httpx

    from jsonrpc_mcp.http import McpHttpApp
    from tests.http.support import JSON_HEADERS, TIMEOUT, serving

    app = McpHttpApp(server)
    out: dict[str, Any] = {}
    ids = iter(range(1, 1000))

    async def post(
        http: httpx.AsyncClient, url: str, method: str, params: dict[str, Any], **headers: str
    ) -> Any:
        body = {"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}
        with anyio.fail_after(TIMEOUT):
            response = await http.post(url, content=orjson.dumps(body), headers={**JSON_HEADERS, **headers})
        answer = orjson.loads(response.content)
        answer["status"] = response.status_code
        return answer

    def params(version: str, **more: Any) -> dict[str, Any]:
        meta = {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        return {**more, "_meta": meta}

    async with serving(app) as base, httpx.AsyncClient(timeout=TIMEOUT) as http:
        url = f"{base}/mcp"
        for version in ("2026-07-28", "2099-01-01"):
            out[version] = {
                "templates": await post(
                    http,
                    url,
                    "resources/templates/list",
                    params(version),
                    **{"MCP-Protocol-Version": version, "Mcp-Method": "resources/templates/list"},
                ),
                "confirm": await post(
                    http,
                    url,
                    "tools/call",
                    params(version, name="confirm", arguments={}),
                    **{"MCP-Protocol-Version": version, "Mcp-Method": "tools/call", "Mcp-Name": "confirm"},
                ),
                # no Mcp-Method, Mcp-Name: required where the revision has routing headers
                "no_routing": await post(
                    http, url, "tools/list", params(version), **{"MCP-Protocol-Version": version}
                ),
                # the header names another revision than the body
                "version_mismatch": await post(
                    http,
                    url,
                    "tools/list",
                    params(version),
                    **{"MCP-Protocol-Version": "2025-11-25", "Mcp-Method": "tools/list"},
                ),
            }
        out["unsupported"] = await post(
            http,
            url,
            "tools/list",
            params("1999-01-01"),
            **{"MCP-Protocol-Version": "1999-01-01", "Mcp-Method": "tools/list"},
        )
    return out


async def probe_all(server: Server) -> dict[str, Any]:
    out = await probe(server)
    out["http"] = await probe_http(server)
    return out


def main() -> None:
    if "--given" in sys.argv:
        from tests.revisions.rev_2099_01_01 import REVISION

        revisions = (*ALL_REVISIONS, REVISION)
    else:
        revisions = ALL_REVISIONS
    sys.stdout.write(orjson.dumps(anyio.run(probe_all, build(revisions))).decode() + "\n")


if __name__ == "__main__":
    main()
