"""Scale-out: a stateless server under ``serve --http --stateless --workers 2`` answers every request
of a client that uses a fresh connection each time, multi round-trip retries included (the workers
share the requestState key, so a retry may land on either)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import orjson
import pytest

from ..servers import scaleout
from ..support import TIMEOUT, Spawned, spawned

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
TARGET = scaleout.__file__
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


@pytest.fixture(scope="module")
def workers() -> Iterator[Spawned]:
    with spawned(TARGET, "--stateless", "--workers", "2") as server:
        yield server


async def _call(base: str, rid: int, tool: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": ENVELOPE, **extra},
    }
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": tool,
        "connection": "close",  # a fresh connection for every request: any worker may take it
    }
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:
        response = await http.post(base + "/mcp", content=orjson.dumps(body), headers=headers)
    assert response.status_code == 200, response.text
    assert "mcp-session-id" not in response.headers
    message: dict[str, Any] = response.json()
    assert message["id"] == rid
    result: dict[str, Any] = message["result"]
    return result


async def test_every_request_is_answered_by_whichever_worker_takes_it(workers: Spawned) -> None:
    pids: set[str] = set()
    with anyio.fail_after(TIMEOUT * 3):
        for rid in range(40):
            result = await _call(workers.url, rid, "whoami", {})
            assert result["resultType"] == "complete"
            pids.add(result["content"][0]["text"])
    assert pids  # every one answered; which worker took which is the kernel's choice


async def test_multi_round_trip_retries_succeed_on_any_worker(workers: Spawned) -> None:
    with anyio.fail_after(TIMEOUT * 3):
        for n in range(20):
            first = await _call(workers.url, 1000 + 2 * n, "confirm", {"item": f"order-{n}"})
            assert first["resultType"] == "input_required"
            [(key, ask)] = first["inputRequests"].items()
            assert ask["method"] == "elicitation/create"
            answer = {"action": "accept", "content": {"ok": True}}
            final = await _call(
                workers.url,
                1001 + 2 * n,
                "confirm",
                {"item": f"order-{n}"},
                inputResponses={key: answer},
                requestState=first["requestState"],
            )
            assert final["resultType"] == "complete", final
            assert final["content"][0]["text"].startswith(f"order-{n}: accept {{'ok': True}}")
