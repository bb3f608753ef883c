"""The client's methods for the server features: what each puts on the wire, and what it returns."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from jsonrpc_mcp.jsonrpc import JsonRpcError
from jsonrpc_mcp.testing import connect

from ..server.features.feature_server import build_server

pytestmark = pytest.mark.anyio


def _last_request(client: Any, method: str) -> dict[str, Any]:
    frames = [orjson.loads(f) for f in client.wire.sent]
    frame: dict[str, Any] = [f for f in frames if f.get("method") == method][-1]
    return frame


async def test_set_logging_level_sends_the_level() -> None:
    async with connect(build_server(), recorder=True) as client:
        await client.set_logging_level("warning")
        assert _last_request(client, "logging/setLevel")["params"] == {"level": "warning"}


async def test_set_logging_level_raises_the_servers_error() -> None:
    async with connect(build_server()) as client:
        with pytest.raises(JsonRpcError) as raised:
            await client.set_logging_level("loud")
    assert raised.value.code == -32602


async def test_complete_sends_ref_argument_and_context_and_returns_the_raw_result() -> None:
    async with connect(build_server(), recorder=True) as client:
        result = await client.complete(
            {"type": "ref/prompt", "name": "greet"},
            {"name": "name", "value": "b"},
            context_arguments={"style": "plain"},
        )
        params = _last_request(client, "completion/complete")["params"]
    assert params == {
        "ref": {"type": "ref/prompt", "name": "greet"},
        "argument": {"name": "name", "value": "b"},
        "context": {"arguments": {"style": "plain"}},
    }
    assert result == {"completion": {"values": ["bob"]}}


async def test_complete_without_context_sends_no_context() -> None:
    async with connect(build_server(), recorder=True) as client:
        await client.complete(
            {"type": "ref/resource", "uri": "res://items/{id}"}, {"name": "id", "value": "7"}
        )
        assert "context" not in _last_request(client, "completion/complete")["params"]


async def test_subscribe_and_unsubscribe_send_the_uri() -> None:
    async with connect(build_server(), recorder=True) as client:
        await client.subscribe_resource("res://watched")
        await client.unsubscribe_resource("res://watched")
        assert _last_request(client, "resources/subscribe")["params"] == {"uri": "res://watched"}
        assert _last_request(client, "resources/unsubscribe")["params"] == {"uri": "res://watched"}
