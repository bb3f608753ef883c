"""JSON-RPC batches: served only when 2025-03-26 was negotiated; initialize never in a batch."""

from __future__ import annotations

import pytest

from jsonrpc_mcp import Server
from jsonrpc_mcp.revisions import HANDSHAKE_REVISIONS
from jsonrpc_mcp.testing import connect_raw

pytestmark = pytest.mark.anyio

NO_BATCH = [r.version for r in HANDSHAKE_REVISIONS if not r.allows_batch]


def _server() -> Server:
    server = Server("batch")

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


def _batch(*ids: int) -> list[dict[str, object]]:
    return [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in ids]


async def test_a_batch_is_served_under_2025_03_26() -> None:
    async with connect_raw(_server()) as raw:
        await raw.initialize("2025-03-26")
        await raw.send(
            [
                {"jsonrpc": "2.0", "id": 10, "method": "ping"},
                {
                    "jsonrpc": "2.0",
                    "id": 11,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": "hi"}},
                },
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}},
            ]
        )
        answer = await raw.receive()
    assert isinstance(answer, list)
    by_id = {item["id"]: item for item in answer}
    assert set(by_id) == {10, 11}
    assert by_id[10]["result"] == {}
    assert by_id[11]["result"] == {"content": [{"type": "text", "text": "hi"}]}


async def test_a_batch_of_only_notifications_gets_no_answer_under_2025_03_26() -> None:
    async with connect_raw(_server()) as raw:
        await raw.initialize("2025-03-26")
        await raw.send([{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}])
        pong = await raw.request("ping")
    assert pong["result"] == {}
    assert not any(isinstance(frame, list) for frame in raw.frames)


async def test_initialize_inside_a_batch_is_refused_after_2025_03_26_negotiation() -> None:
    async with connect_raw(_server()) as raw:
        await raw.initialize("2025-03-26")
        init = {
            "jsonrpc": "2.0",
            "id": 20,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "x", "version": "1"},
            },
        }
        await raw.send([init, {"jsonrpc": "2.0", "id": 21, "method": "ping"}])
        answer = await raw.receive()
    by_id = {item["id"]: item for item in answer}
    assert by_id[20]["error"]["code"] == -32600
    assert by_id[21]["result"] == {}


async def test_initialize_inside_a_batch_before_the_handshake_is_refused() -> None:
    async with connect_raw(_server()) as raw:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "x", "version": "1"},
            },
        }
        await raw.send([init])
        answer = await raw.receive()
        # the session is still NEW: a proper initialize works afterwards
        after = await raw.initialize("2025-03-26")
    assert isinstance(answer, dict)
    assert answer["error"]["code"] == -32600
    assert "id" not in answer  # nothing negotiated on a server that also speaks 2026-07-28
    assert after["result"]["protocolVersion"] == "2025-03-26"


@pytest.mark.parametrize("version", NO_BATCH)
async def test_a_batch_is_one_invalid_request_error_in_other_revisions(version: str) -> None:
    async with connect_raw(_server()) as raw:
        await raw.initialize(version)
        await raw.send(_batch(101, 102, 103))
        answer = await raw.receive()
        pong = await raw.request("ping")  # nothing else was answered, and the session lives
    assert isinstance(answer, dict)
    assert answer["error"]["code"] == -32600
    assert pong["result"] == {}
    assert [f for f in raw.frames if isinstance(f, dict) and f.get("id") in (101, 102, 103)] == []


@pytest.mark.parametrize("version", NO_BATCH)
async def test_batch_refusal_id_follows_the_revision(version: str) -> None:
    async with connect_raw(_server()) as raw:
        await raw.initialize(version)
        await raw.send(_batch(1))
        answer = await raw.receive()
    if version == "2025-11-25":
        assert "id" not in answer
    else:
        assert answer["id"] is None


async def test_a_batch_before_any_handshake_is_refused_without_an_id() -> None:
    # Nothing negotiated yet on a server that speaks 2026-07-28 (which has no handshake): the
    # refusal follows that revision's schema, where an error's unknown id is omitted, never null.
    async with connect_raw(_server()) as raw:
        await raw.send(_batch(1, 2))
        answer = await raw.receive()
    assert answer["error"]["code"] == -32600
    assert "id" not in answer


async def test_a_handshake_only_server_refuses_an_early_batch_with_a_null_id() -> None:
    server = Server("batch", revisions=HANDSHAKE_REVISIONS)
    async with connect_raw(server) as raw:
        await raw.send(_batch(1, 2))
        answer = await raw.receive()
    assert answer["error"]["code"] == -32600
    assert answer["id"] is None
