"""stdio, client side: spawn_stdio / ProcessStream against real server subprocesses.

Shutdown follows the MCP specification: close the server's stdin, wait, SIGTERM, wait, SIGKILL.
The helpers in tests/helpers/ ignore end of input and SIGTERM on request, so each step is seen.
"""

from __future__ import annotations

import logging
import signal
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp.jsonrpc import ConnectionClosed, Endpoint, MethodTable, Notification, Request, RequestContext
from jsonrpc_mcp.transports.base import FrameTooLarge
from jsonrpc_mcp.transports.stdio import spawn_stdio

from .proc import CHUNKY_HELPER, TIMEOUT, c_locale_env, child_env, plain_command

pytestmark = pytest.mark.anyio


class Recorder:
    """A client-side dispatcher that keeps the notifications it gets."""

    accepts_batches = False
    omits_unknown_ids = False
    ordered_methods: frozenset[str] = frozenset()

    def __init__(self) -> None:
        self.notifications: list[Notification] = []
        self.got_notification = anyio.Event()

    async def handle_request(self, request: Request, context: RequestContext) -> Any:
        raise NotImplementedError

    async def handle_notification(self, notification: Notification) -> None:
        self.notifications.append(notification)
        self.got_notification.set()


async def test_requests_and_responses_flow_and_a_well_behaved_server_exits_on_stdin_close() -> None:
    async with spawn_stdio(plain_command(), env=c_locale_env()) as stream:
        endpoint = Endpoint(stream, MethodTable(), request_timeout=TIMEOUT)
        async with anyio.create_task_group() as tg:
            tg.start_soon(endpoint.run)
            assert await endpoint.request("echo", ["héllo ✓"]) == "héllo ✓"
            assert await endpoint.request("echo", {"value": [1, {"a": None}]}) == [1, {"a": None}]
            tg.cancel_scope.cancel()
    assert stream.process.returncode == 0  # it left on its own: no signal was needed


async def test_awkwardly_framed_output_is_read_whole() -> None:
    # the peer splits a response across writes, uses CRLF and packs several messages in one write
    recorder = Recorder()
    async with spawn_stdio([sys.executable, str(CHUNKY_HELPER)], env=c_locale_env()) as stream:
        endpoint = Endpoint(stream, recorder, request_timeout=TIMEOUT)
        results: dict[str, Any] = {}
        async with anyio.create_task_group() as tg:
            tg.start_soon(endpoint.run)

            async def ask(method: str) -> None:
                results[method] = await endpoint.request(method)

            async with anyio.create_task_group() as asks:
                asks.start_soon(ask, "first")
                asks.start_soon(ask, "second")
            with anyio.fail_after(TIMEOUT):
                await recorder.got_notification.wait()
            tg.cancel_scope.cancel()
    assert results == {
        "first": {"echo": "first", "text": "héllo ✓"},
        "second": {"echo": "second", "text": "héllo ✓"},
    }
    assert recorder.notifications == [Notification("note", {"text": "日本"})]


async def test_a_line_over_the_client_limit_is_reported_and_the_next_one_is_read() -> None:
    async with spawn_stdio(plain_command(), env=child_env(), max_line=1000) as stream:
        await stream.send(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":["' + b"x" * 5000 + b'"]}')
        await stream.send(b'{"jsonrpc":"2.0","id":2,"method":"echo","params":["small"]}')
        with anyio.fail_after(TIMEOUT):
            with pytest.raises(FrameTooLarge):
                await stream.receive()
            assert await stream.receive() == b'{"jsonrpc":"2.0","id":2,"result":"small"}'


async def test_when_the_server_dies_pending_requests_fail_with_connection_closed() -> None:
    async with spawn_stdio(plain_command(), env=child_env()) as stream:
        endpoint = Endpoint(stream, MethodTable(), request_timeout=TIMEOUT)
        async with anyio.create_task_group() as tg:
            tg.start_soon(endpoint.run)
            with anyio.fail_after(TIMEOUT), pytest.raises(ConnectionClosed):
                await endpoint.request("die", [3])
            with pytest.raises(ConnectionClosed):
                await endpoint.request("echo", ["too late"])
    assert stream.process.returncode == 3


async def _ready(stream: Any) -> None:
    """One exchange: the helper is up and its signal handlers are installed."""
    await stream.send(b'{"jsonrpc":"2.0","id":"r","method":"ready"}')
    with anyio.fail_after(TIMEOUT):
        assert await stream.receive() == b'{"jsonrpc":"2.0","id":"r","result":"ready"}'


async def test_a_server_ignoring_stdin_close_gets_sigterm_after_the_grace_period(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "jsonrpc_mcp.transports")
    stderr_path = tmp_path / "stderr.txt"
    with stderr_path.open("wb") as stderr:
        async with spawn_stdio(
            plain_command("--ignore-eof"), env=child_env(), stderr=stderr, grace=0.3, term_grace=5
        ) as stream:
            await _ready(stream)
            closing = time.monotonic()
    elapsed = time.monotonic() - closing
    assert stream.process.returncode == -signal.SIGTERM
    assert b"eof ignored" in stderr_path.read_bytes()  # it saw stdin close first, then SIGTERM
    assert "sending SIGTERM" in caplog.text and "SIGKILL" not in caplog.text
    assert elapsed >= 0.3  # the grace was waited (a busy machine makes it later, never earlier)


async def test_a_server_ignoring_sigterm_too_gets_sigkill_after_both_grace_periods(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "jsonrpc_mcp.transports")
    stderr_path = tmp_path / "stderr.txt"
    with stderr_path.open("wb") as stderr:
        async with spawn_stdio(
            plain_command("--ignore-eof", "--ignore-sigterm"),
            env=child_env(),
            stderr=stderr,
            grace=0.3,
            term_grace=0.3,
        ) as stream:
            await _ready(stream)
            closing = time.monotonic()
    elapsed = time.monotonic() - closing
    assert stream.process.returncode == -signal.SIGKILL
    assert stderr_path.read_bytes().splitlines()[-2:] == [b"eof ignored", b"sigterm ignored"]
    assert caplog.text.index("sending SIGTERM") < caplog.text.index("sending SIGKILL")
    assert elapsed >= 0.6  # the grace was waited (a busy machine makes it later, never earlier)


async def test_default_shutdown_waits_two_seconds_before_sigterm() -> None:
    async with spawn_stdio(plain_command("--ignore-eof"), env=child_env()) as stream:
        await _ready(stream)
        closing = time.monotonic()
    elapsed = time.monotonic() - closing
    assert stream.process.returncode == -signal.SIGTERM
    assert elapsed >= 2.0  # the grace was waited (a busy machine makes it later, never earlier)


async def test_shutdown_is_bounded_even_when_the_caller_is_cancelled() -> None:
    # the shutdown sequence is shielded: cancelling the block does not leave the process behind
    with anyio.move_on_after(TIMEOUT) as outer:
        async with spawn_stdio(
            plain_command("--ignore-eof", "--ignore-sigterm"), env=child_env(), grace=0.2, term_grace=0.2
        ) as stream:
            await _ready(stream)
            outer.cancel()
            await anyio.sleep_forever()  # cancelled at once: the context exits through cancellation
    assert stream.process.returncode == -signal.SIGKILL


async def test_an_empty_command_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        async with spawn_stdio([]):
            pass
