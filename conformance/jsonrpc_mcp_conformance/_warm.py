"""Server processes started ahead of need and shut down in the background (stdio targets).

Theory of operation. Over stdio every new connection is a new server process, and on a busy machine
two waits per process dominated a run: its start (imports, often a second of CPU; many seconds of
wall time beside CPU burners) and its shutdown (stdin closed, then up to the grace periods until it
exits), both spent while nothing else happened. :class:`Warm` wraps the target for one run:

- *shutdown in the background*: a connection given back is closed by a task of its own, so the next
  fixture starts at once; the run ends only once every process is gone (the task group waits).
- *started ahead*: ``ahead`` processes are kept starting beyond those asked for, so a fixture that
  asks for one gets a process that has already started (concurrent starts also get their share of a
  loaded machine's CPU, where one start at a time waited its turn). A process started ahead has
  received nothing: it is as new as one started on demand. What is started ahead and never asked
  for is shut down at the end (``ahead`` processes more than the run needed).

Neither changes what any fixture sees: the frames, their order and the timeouts are the same.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.abc

from .targets import Connection, Target

__all__ = ["Warm"]


class Warm:
    """``target`` (a stdio one) for the duration of one run inside ``tasks``: see the module's text."""

    def __init__(self, target: Target, tasks: anyio.abc.TaskGroup, ahead: int = 1) -> None:
        self.inner = target
        self.transport = target.transport
        self.description = target.description
        self.ahead = ahead
        self._tasks = tasks
        self._send, self._ready = anyio.create_memory_object_stream[tuple[Any, anyio.Event | None]](math.inf)
        self._starting = 0  # processes started (or starting) that nobody has taken yet
        self._wanted = 0  # connections asked for and not handed over yet
        self._closed = False

    def __getattr__(self, name: str) -> Any:  # stderr_tail and whatever else the target offers
        return getattr(self.inner, name)

    def _start(self) -> None:
        self._starting += 1
        self._tasks.start_soon(self._hold)

    async def _hold(self) -> None:
        """One process: started, handed over (or an exception when it could not start), and shut
        down once given back (or at the end of the run, when nobody took it)."""
        release = anyio.Event()
        try:
            async with self.inner.connect() as conn:
                if self._closed:
                    return
                self._send.send_nowait((conn, release))
                await release.wait()
        except Exception as exc:  # (cannot start): the fixture that takes it is told
            if not self._closed:
                self._send.send_nowait((exc, None))

    def _top_up(self) -> None:
        while self._starting < self._wanted + self.ahead and not self._closed:
            self._start()

    @contextlib.asynccontextmanager
    async def connect(self) -> AsyncIterator[Connection]:
        """A new process (one started ahead when there is one); given back, it is shut down by a
        task of its own."""
        self._wanted += 1
        self._top_up()
        try:
            item, release = await self._ready.receive()
        finally:
            self._wanted -= 1
        self._starting -= 1
        if release is None:
            raise item
        try:
            yield item
        finally:
            release.set()

    async def aclose(self) -> None:
        """No more connections: whatever was started ahead and not taken is shut down."""
        self._closed = True
        self._send.close()
        async for _conn, release in self._ready:
            if release is not None:
                release.set()
        self._ready.close()


@contextlib.asynccontextmanager
async def warmed(target: Target, ahead: int) -> AsyncIterator[Target]:
    """``target`` behind :class:`Warm` when it is a stdio one (else as it is), for one run."""
    if target.transport != "stdio":
        yield target
        return
    async with anyio.create_task_group() as tasks:
        warm = Warm(target, tasks, ahead)
        try:
            yield warm
        finally:
            await warm.aclose()
