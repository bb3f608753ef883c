"""FdStream over real pipes, in-process: read-ahead pauses when too much waits unread, then resumes."""

from __future__ import annotations

import os

import anyio
import pytest

from jsonrpc_mcp.transports import stdio
from jsonrpc_mcp.transports.base import InlineCapableStream
from tests import timeouts

pytestmark = pytest.mark.anyio


async def test_a_flood_of_lines_pauses_reading_and_every_line_still_arrives_in_order() -> None:
    read_in, write_in = os.pipe()
    read_out, write_out = os.pipe()
    total = stdio._MAX_PENDING * 3
    payload = b"".join(b'{"n":%d}\n' % i for i in range(total))
    stream = stdio.FdStream(read_in, write_out)
    paused_seen = False
    received: list[bytes] = []
    try:
        with anyio.fail_after(timeouts.STEP):
            async with anyio.create_task_group() as tg:

                async def writer() -> None:
                    view = memoryview(payload)
                    os.set_blocking(write_in, False)
                    while view:
                        try:
                            view = view[os.write(write_in, view) :]
                        except BlockingIOError:
                            await anyio.wait_writable(write_in)
                    os.close(write_in)

                tg.start_soon(writer)
                while len(received) < total:
                    received.append(await stream.receive())
                    paused_seen = paused_seen or (not stream._reading and not stream._eof)
                with pytest.raises(anyio.EndOfStream):
                    await stream.receive()
    finally:
        await stream.aclose()
        for fd in (read_in, read_out, write_out):
            os.close(fd)
    assert received == [b'{"n":%d}' % i for i in range(total)]
    assert paused_seen, "reading never paused although more than the read-ahead limit was waiting"


def test_the_fd_stream_declares_the_read_callback_seam() -> None:
    r, w = os.pipe()
    try:
        stream = stdio.FdStream(r, w)
        assert isinstance(stream, InlineCapableStream)  # the endpoint's fast path checks this
        stream.restore()
    finally:
        os.close(r)
        os.close(w)
