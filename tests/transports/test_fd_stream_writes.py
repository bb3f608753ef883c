"""FdStream over real pipes, in-process: output is held back while read input waits, never lost."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import anyio
import pytest

from jsonrpc_mcp.transports import stdio
from tests import timeouts

pytestmark = pytest.mark.anyio

TIMEOUT = timeouts.STEP


class Pipes:
    """The stream's input (we write) and output (we read), as raw descriptors."""

    def __init__(self) -> None:
        self.read_in, self.write_in = os.pipe()
        self.read_out, self.write_out = os.pipe()
        os.set_blocking(self.read_out, False)
        self.stream = stdio.FdStream(self.read_in, self.write_out)

    def nothing_written(self) -> bool:
        try:
            os.read(self.read_out, 1 << 16)
        except BlockingIOError:
            return True
        return False

    async def output(self) -> bytes:
        with anyio.fail_after(TIMEOUT):
            await anyio.wait_readable(self.read_out)
        return os.read(self.read_out, 1 << 16)

    def close(self) -> None:
        self.stream.restore()
        for fd in (self.read_in, self.write_in, self.read_out, self.write_out):
            os.close(fd)


@pytest.fixture
async def pipes() -> AsyncIterator[Pipes]:
    p = Pipes()
    try:
        yield p
    finally:
        p.close()


async def test_a_message_sent_while_nothing_waits_is_written_at_once(pipes: Pipes) -> None:
    os.write(pipes.write_in, b"one\n")
    with anyio.fail_after(TIMEOUT):
        assert await pipes.stream.receive() == b"one"
    await pipes.stream.send(b"answer")
    assert os.read(pipes.read_out, 1 << 16) == b"answer\n"  # already there: no waiting


@pytest.mark.asyncio_only  # output is held back on asyncio only (call_soon flushes it)
async def test_answers_to_buffered_input_go_out_together_before_the_reader_waits(pipes: Pipes) -> None:
    os.write(pipes.write_in, b"one\ntwo\n")
    stream = pipes.stream
    with anyio.fail_after(TIMEOUT):
        assert await stream.receive() == b"one"
        await stream.send(b"a")  # "two" waits unread: held back
        assert pipes.nothing_written()
        assert await stream.receive() == b"two"
        await stream.send(b"b")
        assert pipes.nothing_written()
        async with anyio.create_task_group() as tg:
            tg.start_soon(stream.receive)  # nothing left to read: flushes, then waits for input
            assert await pipes.output() == b"a\nb\n"
            tg.cancel_scope.cancel()


@pytest.mark.asyncio_only  # output is held back on asyncio only (call_soon flushes it)
async def test_held_output_goes_out_on_the_next_turn_of_the_loop_without_the_reader(pipes: Pipes) -> None:
    os.write(pipes.write_in, b"one\ntwo\n")
    with anyio.fail_after(TIMEOUT):
        assert await pipes.stream.receive() == b"one"
    await pipes.stream.send(b"held")
    assert pipes.nothing_written()
    assert await pipes.output() == b"held\n"  # nobody read "two", and still it went out


async def test_a_large_message_pushes_out_what_is_held_first_and_order_is_kept(pipes: Pipes) -> None:
    os.write(pipes.write_in, b"one\ntwo\n")
    big = b"x" * (stdio._HOLD_LIMIT + 10)
    with anyio.fail_after(TIMEOUT):
        assert await pipes.stream.receive() == b"one"
        await pipes.stream.send(b"small")
        async with anyio.create_task_group() as tg:
            tg.start_soon(pipes.stream.send, big)  # more than the pipe holds: written as it drains
            received = b""
            while len(received) < len(b"small\n") + len(big) + 1:
                received += await pipes.output()
    assert received == b"small\n" + big + b"\n"


async def test_closing_the_stream_writes_what_is_held(pipes: Pipes) -> None:
    os.write(pipes.write_in, b"one\ntwo\n")
    with anyio.fail_after(TIMEOUT):
        assert await pipes.stream.receive() == b"one"
        await pipes.stream.send(b"last words")
        await pipes.stream.aclose()
    assert os.read(pipes.read_out, 1 << 16) == b"last words\n"
