"""The body deadline's two paths (see the theory of operation in ``jsonrpc_mcp/http/_asgi.py``): a
message already there is taken without a timer; one that must be waited for is waited for under the
deadline, with cancellation passed through to ``receive``. On asyncio and trio alike."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from jsonrpc_mcp.http._asgi import _BodyTimeout, _read_body
from tests import timeouts

pytestmark = pytest.mark.anyio

SCOPE: dict[str, Any] = {"headers": []}


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Both backends: the helper under test is plain anyio (tests/http is asyncio only otherwise)."""
    backend: str = request.param
    return backend


class Receiver:
    """An ASGI receive whose messages arrive when the test sends them (or are there at once)."""

    def __init__(self, *ready: dict[str, Any]) -> None:
        self.ready = list(ready)
        self.send, self.stream = anyio.create_memory_object_stream[dict[str, Any]](10)
        self.waits = 0
        self.cancelled = 0

    async def __call__(self) -> dict[str, Any]:
        if self.ready:
            return self.ready.pop(0)
        self.waits += 1
        try:
            return await self.stream.receive()
        except anyio.get_cancelled_exc_class():
            self.cancelled += 1
            raise


def chunk(body: bytes, more: bool = False) -> dict[str, Any]:
    return {"type": "http.request", "body": body, "more_body": more}


async def test_a_body_already_there_is_read_without_waiting() -> None:
    receive = Receiver(chunk(b"ab", more=True), chunk(b"cd"))
    with anyio.fail_after(timeouts.STEP):
        assert await _read_body(SCOPE, receive, 100, timeout=30) == b"abcd"
    assert receive.waits == 0


async def test_a_body_that_comes_later_within_the_deadline_is_read() -> None:
    receive = Receiver(chunk(b"ab", more=True))
    async with anyio.create_task_group() as tasks:

        async def feed() -> None:
            await anyio.wait_all_tasks_blocked()  # the reader is waiting for the rest
            await receive.send.send(chunk(b"cd"))

        tasks.start_soon(feed)
        with anyio.fail_after(timeouts.STEP):
            assert await _read_body(SCOPE, receive, 100, timeout=30) == b"abcd"
    assert receive.waits == 1 and receive.cancelled == 0


async def test_a_body_that_never_comes_is_a_body_timeout_and_the_wait_is_cancelled() -> None:
    receive = Receiver(chunk(b"ab", more=True))
    with anyio.fail_after(timeouts.STEP), pytest.raises(_BodyTimeout, match=r"within 0\.05 s"):
        await _read_body(SCOPE, receive, 100, timeout=0.05)
    assert receive.waits == 1 and receive.cancelled == 1


async def test_a_cancellation_from_outside_is_not_a_timeout() -> None:
    receive = Receiver()
    with anyio.fail_after(timeouts.STEP):
        with anyio.CancelScope() as outer:

            async def cancel_soon() -> None:
                await anyio.wait_all_tasks_blocked()
                outer.cancel()

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(cancel_soon)
                await _read_body(SCOPE, receive, 100, timeout=30)
        assert outer.cancelled_caught
    assert receive.cancelled == 1


async def test_an_awaitable_that_is_not_a_coroutine_is_bounded_too() -> None:
    class Never:
        def __await__(self) -> Any:
            return anyio.sleep_forever().__await__()

    with anyio.fail_after(timeouts.STEP), pytest.raises(_BodyTimeout):
        await _read_body(SCOPE, Never, 100, timeout=0.05)


async def test_without_a_timeout_the_body_is_read_as_it_comes() -> None:
    receive = Receiver(chunk(b"x"))
    with anyio.fail_after(timeouts.STEP):
        assert await _read_body(SCOPE, receive, 100) == b"x"
