"""The in-memory transport: a connected pair of message streams."""

from __future__ import annotations

import anyio
import pytest

from jsonrpc_mcp.transports.base import InlineCapableStream
from jsonrpc_mcp.transports.memory import memory_pair
from tests import timeouts

pytestmark = pytest.mark.anyio


async def test_what_one_end_sends_the_other_receives_in_order() -> None:
    a, b = memory_pair()
    with anyio.fail_after(timeouts.STEP):
        await a.send(b"1")
        await a.send(b"2")
        await b.send(b"back")
        assert [await b.receive(), await b.receive()] == [b"1", b"2"]
        assert await a.receive() == b"back"


async def test_closing_one_end_ends_the_other_ends_input() -> None:
    a, b = memory_pair()
    await a.send(b"last")
    await a.aclose()
    with anyio.fail_after(timeouts.STEP):
        assert await b.receive() == b"last"
        with pytest.raises(anyio.EndOfStream):
            await b.receive()


async def test_sending_to_a_closed_peer_fails() -> None:
    a, b = memory_pair()
    await b.aclose()
    with anyio.fail_after(timeouts.STEP), pytest.raises(anyio.BrokenResourceError):
        await a.send(b"nobody")


def test_a_memory_stream_is_a_message_stream_without_the_read_callback_seam() -> None:
    a, _ = memory_pair()
    assert not isinstance(a, InlineCapableStream)  # the endpoint reads it in its reader loop
