"""The everything example's skills on the wire: ``jsonrpc-mcp serve`` over real HTTP on 127.0.0.1
(handshake and 2026-07-28) and over stdio, read back and verified by the project's client."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import anyio
import httpx
import pytest

from jsonrpc_mcp import Client, JsonRpcError
from jsonrpc_mcp.skills import EXTENSION_ID, digest_of

from ..examples.test_everything import PROCESS_TIMEOUT, REPO_ROOT, SERVER_PATH, TIMEOUT, served_over_http

pytestmark = pytest.mark.anyio

SKILL_DIR = REPO_ROOT / "examples" / "everything" / "skills" / "pdf-processing"
PDF = "skill://pdf-processing/SKILL.md"


async def check_skills(client: Client) -> None:
    entries = {e["uri"]: e for e in await client.list_skills()}
    assert set(entries) == {PDF, "skill://release-notes/SKILL.md"}
    entry = await client.get_skill(PDF)
    assert entry == entries[PDF]
    on_disk = {
        f"skill://pdf-processing/{p.relative_to(SKILL_DIR).as_posix()}": p.read_bytes()
        for p in SKILL_DIR.rglob("*")
        if p.is_file()
    }
    assert {r["uri"]: (r["digest"], r["size"]) for r in entry["resources"]} == {
        uri: (digest_of(data), len(data)) for uri, data in on_disk.items()
    }
    for uri, data in on_disk.items():
        assert await client.read_skill_file(entry, uri) == data
    with pytest.raises(JsonRpcError) as caught:
        await client.get_skill("skill://mcp-conformance-nonexistent/SKILL.md")
    assert caught.value.code == -32602
    assert client.server_capabilities["extensions"][EXTENSION_ID] == {"directoryRead": True}


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_skills_over_http(mode: str) -> None:
    async with served_over_http() as url:
        with anyio.fail_after(PROCESS_TIMEOUT):
            async with Client.http(url, mode=mode, timeout=TIMEOUT, request_timeout=TIMEOUT) as client:
                await check_skills(client)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_skills_over_stdio(mode: str) -> None:
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(SERVER_PATH)]
    with anyio.fail_after(PROCESS_TIMEOUT):
        async with Client.stdio(
            command, mode=mode, cwd=REPO_ROOT, stderr=subprocess.DEVNULL, request_timeout=TIMEOUT
        ) as client:
            await check_skills(client)


async def test_a_raw_2026_post_of_skills_list_is_answered_with_the_caching_hints() -> None:
    envelope: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "skills/list", "params": {"_meta": envelope}}
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "skills/list",
    }
    async with served_over_http() as url:
        with anyio.fail_after(PROCESS_TIMEOUT):
            async with httpx.AsyncClient(timeout=TIMEOUT) as http:
                response = await http.post(url, json=body, headers=headers)
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert [e["uri"] for e in result["skills"]] == [PDF, "skill://release-notes/SKILL.md"]
    assert {"ttlMs", "cacheScope"} <= set(result) and result["resultType"] == "complete"
