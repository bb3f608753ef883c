"""Run by test_new_revision.py: serve a server in-process and print, as JSON, how it answers the
same requests under 2026-07-28 and under the test-only 2099-01-01. With ``--given`` the revision is
passed to ``Server(revisions=...)``; without, it must have been found in the package."""

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
    return out


def main() -> None:
    if "--given" in sys.argv:
        from tests.revisions.rev_2099_01_01 import REVISION

        revisions = (*ALL_REVISIONS, REVISION)
    else:
        revisions = ALL_REVISIONS
    sys.stdout.write(orjson.dumps(anyio.run(probe, build(revisions))).decode() + "\n")


if __name__ == "__main__":
    main()
