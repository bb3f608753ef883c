"""A server's lifespan: what runs once around all its serving (a pool, a client, a cache).

``Server(lifespan=fn)``: ``fn(server)`` returns an async context manager. :class:`LifespanScope`
enters it on the first :meth:`running` and exits it when that one ends; whoever enters meanwhile
(another connection, the legacy HTTP+SSE transport inside the HTTP app) shares it. Entering and
exiting happen in the same task, as anyio requires of task groups and cancel scopes inside the
lifespan.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from ._server import Server

__all__ = ["Lifespan", "LifespanScope"]

# Server(lifespan=fn): fn(server) gives an async context manager, entered once while serving
Lifespan = Callable[["Server"], AbstractAsyncContextManager[Any]]
_NOT_RUNNING: Any = object()


class LifespanScope:
    """Runs one server's lifespan, once, for whoever serves it."""

    __slots__ = ("_fn", "_lock", "_server", "_state")

    def __init__(self, server: Server, fn: Lifespan | None) -> None:
        self._server = server
        self._fn = fn
        self._state: Any = _NOT_RUNNING  # what the lifespan yielded, while it runs
        self._lock: anyio.Lock | None = None

    @property
    def state(self) -> Any:
        if self._fn is None:
            return None
        if self._state is _NOT_RUNNING:
            name = self._server.name
            raise RuntimeError(
                f"the lifespan of server {name!r} is not running: serve it, or enter running()"
            )
        return self._state

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Any]:
        fn = self._fn
        if fn is None or self._state is not _NOT_RUNNING:
            yield None if fn is None else self._state
            return
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            owner = self._state is _NOT_RUNNING  # (another may have entered while we waited)
            if owner:
                stack = contextlib.AsyncExitStack()
                await stack.__aenter__()
                try:
                    self._state = await stack.enter_async_context(fn(self._server))
                except BaseException:
                    await stack.__aexit__(*sys.exc_info())
                    raise
        if not owner:
            yield self._state
            return
        try:
            yield self._state
        except BaseException:
            self._state = _NOT_RUNNING
            if not await stack.__aexit__(*sys.exc_info()):
                raise
        else:
            self._state = _NOT_RUNNING
            await stack.__aexit__(None, None, None)
