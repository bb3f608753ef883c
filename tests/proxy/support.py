"""Helpers for the bridge tests: HTTP servers on port 0 whose URL is read from their stderr."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

import anyio
import anyio.abc

from tests import timeouts

REPO = Path(__file__).resolve().parents[2]
SERVERS = Path(__file__).resolve().parent / "servers"
UPSTREAM = SERVERS / "upstream.py"
EVERYTHING = "examples/everything/server.py"

START_TIMEOUT = (
    timeouts.STARTUP
)  # a subprocess importing everything (and, for a bridge, reaching its upstream)
STOP_TIMEOUT = timeouts.STARTUP
CALL_TIMEOUT = timeouts.STARTUP

# "jsonrpc-mcp: serving NAME at URL": how serve --http (and bridge --http) report where they listen
_SERVING = re.compile(r"^jsonrpc-mcp: serving .* at (https?://\S+)$")


def jsonrpc_mcp(*args: str) -> list[str]:
    """The command line running ``jsonrpc-mcp ARGS`` with this Python."""
    return [sys.executable, "-m", "jsonrpc_mcp", *args]


def environment(**extra: str) -> dict[str, str]:
    """This process's environment (PYTHONPATH with it: the worktree wins), plus ``extra``."""
    return {**os.environ, **extra}


@dataclass
class Served:
    """A ``--http --port 0`` subprocess: its URL (from its stderr) and every line of its stderr."""

    url: str
    process: anyio.abc.Process
    lines: list[str] = field(default_factory=list)


async def _wait_listening(url: str) -> None:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    while True:  # polling a port the child binds (uvicorn listens once its lifespan started)
        try:
            stream = await anyio.connect_tcp(parts.hostname, parts.port)
        except OSError:
            await anyio.sleep(0.05)
        else:
            await stream.aclose()
            return


@contextlib.asynccontextmanager
async def served_http(command: Sequence[str], env: Mapping[str, str] | None = None) -> AsyncIterator[Served]:
    """Run ``command`` (a ``serve --http --port 0`` or ``bridge --http --port 0``); yield once it
    said where it serves and listens there. On the way out: SIGINT, a bounded wait, SIGKILL."""
    process = await anyio.open_process(
        list(command),
        cwd=REPO,
        env=dict(env) if env is not None else environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    served = Served("", process)
    reported = anyio.Event()

    async def drain() -> None:  # read stderr to its end (a pipe nobody reads could stall the child)
        assert process.stderr is not None
        pending = b""
        async for chunk in process.stderr:
            pending += chunk
            while b"\n" in pending:
                raw, pending = pending.split(b"\n", 1)
                line = raw.decode("utf-8", "replace")
                served.lines.append(line)
                found = _SERVING.match(line)
                if found and not served.url:
                    served.url = found.group(1)
                    reported.set()
        reported.set()  # the process ended (without saying where it serves, if url is empty)

    async with process, anyio.create_task_group() as tg:
        tg.start_soon(drain)
        try:
            with anyio.fail_after(START_TIMEOUT):
                await reported.wait()
                if not served.url:
                    raise RuntimeError("the server exited before serving:\n" + "\n".join(served.lines))
                await _wait_listening(served.url)
            yield served
        finally:
            if process.returncode is None:
                process.send_signal(signal.SIGINT)
            with anyio.move_on_after(STOP_TIMEOUT) as waiting:
                await process.wait()
            if waiting.cancelled_caught:
                process.kill()
                with anyio.fail_after(STOP_TIMEOUT):
                    await process.wait()
            tg.cancel_scope.cancel()


T = TypeVar("T")


@contextlib.asynccontextmanager
async def held_open(cm: AbstractAsyncContextManager[T]) -> AsyncIterator[T]:
    """Enter ``cm`` in a task of its own and yield what it gives; exit it on the way out (each
    bounded). Its cancel scopes (clients own task groups) stay out of the caller's."""
    value: list[T] = []
    ready, release, finished = anyio.Event(), anyio.Event(), anyio.Event()

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
        with anyio.fail_after(START_TIMEOUT):
            await ready.wait()  # (if hold() fails, the task group cancels this wait and raises)
        try:
            yield value[0]
        finally:
            release.set()
            with anyio.fail_after(STOP_TIMEOUT):
                await finished.wait()
