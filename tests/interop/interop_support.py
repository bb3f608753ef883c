"""Helpers shared by the interop test modules (imported as ``interop_support``; pytest puts this
directory on ``sys.path`` because tests/interop has no ``__init__.py``)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp import StdioServerParameters

from tests import timeouts

REPO = Path(__file__).resolve().parents[2]

# Bounds for every wait in these tests: starting a subprocess and connecting (the SDK is slow to
# import), one request/response exchange, and shutting a server down (stdin EOF, then signals).
CONNECT_TIMEOUT = timeouts.STARTUP
CALL_TIMEOUT = timeouts.STEP
CLOSE_TIMEOUT = timeouts.STARTUP

T = TypeVar("T")


def sdk_params(command: Sequence[str], env: dict[str, str] | None = None) -> StdioServerParameters:
    """The official SDK's description of a stdio server command, run from the repository root."""
    return StdioServerParameters(command=command[0], args=list(command[1:]), env=env, cwd=REPO)


@contextlib.asynccontextmanager
async def held_open(cm: AbstractAsyncContextManager[T]) -> AsyncIterator[T]:
    """Enter ``cm`` in a background task and yield what it gives; exit it on the way out.

    Both the entering and the exiting are bounded. Running the context manager in a task of its
    own keeps its cancel scopes (clients own task groups) out of the caller's, so the caller can
    bound the connect with ``fail_after`` and share the connection across a module's tests.
    """
    value: list[T] = []
    ready = anyio.Event()
    release = anyio.Event()
    finished = anyio.Event()

    async def hold() -> None:
        try:
            async with cm as entered:
                value.append(entered)
                ready.set()
                await release.wait()
        finally:
            finished.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(hold)
        with anyio.fail_after(CONNECT_TIMEOUT):
            # If hold() fails while connecting, the task group cancels this wait and raises it.
            await ready.wait()
        try:
            yield value[0]
        finally:
            release.set()
            with anyio.fail_after(CLOSE_TIMEOUT):
                await finished.wait()


def text_blocks(content: Sequence[Any]) -> list[str]:
    """The texts of the text blocks in an SDK result's ``content``."""
    return [block.text for block in content if getattr(block, "type", None) == "text"]
