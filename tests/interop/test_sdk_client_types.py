"""The official MCP Python SDK's client calls the typed tools (tests/server/servers/typed_server.py)
over stdio: it validates each ``structuredContent`` against the ``outputSchema`` inferred from the
return annotation, so these prove the inferred schemas and the values agree for an SDK user."""

from __future__ import annotations

import sys

import anyio
import pytest
from mcp import Client

from .interop_support import CALL_TIMEOUT, CONNECT_TIMEOUT, REPO, sdk_params, text_blocks

pytestmark = pytest.mark.anyio

TYPED_SERVER = REPO / "tests" / "server" / "servers" / "typed_server.py"


async def test_the_sdk_client_accepts_the_structured_results_of_typed_tools() -> None:
    person = {"name": "Ada", "age": 36, "address": {"street": "1 Main", "city": "London"}}
    booking = {"room": 7, "day": "2026-03-01"}
    ident = "12345678-1234-5678-1234-567812345678"
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with Client(
            sdk_params([sys.executable, str(TYPED_SERVER)]), read_timeout_seconds=CALL_TIMEOUT
        ) as sdk:
            await sdk.list_tools()  # the client learns the output schemas here
            greeted = await sdk.call_tool("greet", {"person": person})
            booked = await sdk.call_tool(
                "book", {"booking": booking, "at_": "2026-03-01T09:30:00Z", "ident": ident, "color": "red"}
            )
            counted = await sdk.call_tool("count", {"n": 4})
            maybe = await sdk.call_tool("maybe", {"found": False})
            refused = await sdk.call_tool("rate", {"stars": 6})
    assert greeted.is_error is False and greeted.structured_content == {**person, "age": 37}
    assert booked.structured_content == {"room": 7, "day": "2026-03-02", "notes": "red"}
    assert counted.structured_content == {"result": 8}
    assert maybe.structured_content == {"result": None}
    assert refused.is_error is True
    assert "greater than the maximum of 5" in text_blocks(refused.content)[0]
