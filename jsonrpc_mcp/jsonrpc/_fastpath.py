"""The asyncio fast path of the endpoint: requests start in the task that read them.

Theory of operation
-------------------
Most handlers finish without ever waiting. On asyncio, :class:`Inline` starts a request *inline*,
in the reading task (in a copy of its context, as a task of its own would run): one that finishes
without waiting is answered there and then, with no task to create, schedule and reap. A handler
that does wait keeps the task it started in (its anyio cancel scope belongs to that task), and a
new task takes over reading (:meth:`Inline.carry_on`, :func:`resume`). So at most one request runs
in a reading task, and reading never waits for a handler. To stay fair the reader yields to the
event loop after a run of requests (``INLINE_BURST``; the endpoint does that on every backend).

A stream that can (an :class:`~jsonrpc_mcp.transports.base.InlineCapableStream`: stdio, see
``FdStream.serve_inline``) goes one step further: while the reading task waits for input, the
stream's read callback offers it each new line, running as that parked task, and a request is
started there (:meth:`Inline.offer_from`), with no wake-up of the reading task at all. A request that
waits there is handed to the parked reading task (the host of its cancel scope) by making that
task's ``receive()`` raise :class:`Adopt`; a new reading task reads on.

A request known to wait before it starts (the dispatcher's ``threaded_requests``: in MCP, a call
of a plain ``def`` tool, which always waits for its worker thread) is not started inline at all:
it gets a task of its own at once, from the read callback or the reading task alike, so that its
path is no more intricate than an ``async def`` tool's (no adoption, no interruption of the parked
reader, no resuming through :func:`resume`, no new reading task).

Tasks here are plain asyncio tasks (:class:`Tasks`): anyio's task-group spawn costs several times
more, and each request already has its own anyio cancel scope, which works the same in any task.
On other backends (trio) the endpoint starts every request in a task of its anyio task group.

Measured gain (bench/RESULTS.md, server CPU µs per call over stdio, handshake era, sequential / 32
in flight): starting inline in the reading task took 38.0 / 22.5 to 28.0 / 18.0 (2026-07-28 era:
50.0 / 35.0 to 38.7 / 27.5); starting from the read callback took a sequential call from 25.0 to
20.5 µs (pinned to one core; 2026-07-28: 30.5 to 25.5), one ``epoll_wait`` per call instead of two,
sequential calls/s from 58-68% to 68% of the raw readline loop, and 32 in flight from 74-82k to
88-89k calls/s.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import types
from collections.abc import Awaitable, Callable, Container, Coroutine, Generator
from typing import TYPE_CHECKING, Any, TypeAlias

import anyio

from ..transports.base import InlineCapableStream
from .codec import decode
from .messages import Incoming, Request
from .peer import Event, Start

if TYPE_CHECKING:
    from .endpoint import Dispatcher

__all__ = ["INLINE_BURST", "Adopt", "Inline", "Tasks", "resume", "threaded_requests", "waits"]

logger = logging.getLogger("jsonrpc_mcp.jsonrpc")

# Requests started in a row before the reader lets the rest of the event loop run.
INLINE_BURST = 32

Serve: TypeAlias = "Callable[[Request, anyio.CancelScope], Coroutine[Any, Any, None]]"
# (method, the params key naming what serves it, the names of those that run in a worker thread)
Threaded: TypeAlias = "tuple[str, str, Container[str]]"


def threaded_requests(dispatcher: object) -> Threaded | None:
    """The dispatcher's ``threaded_requests`` (the requests that surely wait), if it says."""
    found: Threaded | None = getattr(dispatcher, "threaded_requests", None)
    return found


def waits(threaded: Threaded | None, request: Request) -> bool:
    """Whether ``request`` is one of the ``threaded`` requests (they wait: see the module doc).
    Written out where requests are read, for no call per request; this is its definition."""
    if threaded is None or request.method != threaded[0]:
        return False
    params = request.params
    return type(params) is dict and params.get(threaded[1]) in threaded[2]


class Tasks:
    """Reading and request tasks as plain asyncio tasks, tracked so that they can be cancelled when
    the endpoint stops (a reading task becomes the task of a request that started inline in it and
    then waited; batches get one)."""

    __slots__ = ("_live", "_loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._live: set[asyncio.Task[None]] = set()

    def spawn(self, fn: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> None:
        task = self._loop.create_task(fn(*args))
        self._live.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._live.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("request task failed", exc_info=task.exception())

    async def cancel_all(self) -> None:
        """Cancel every task still running and wait (shielded, bounded) for them to finish."""
        if not self._live:
            return
        for task in self._live:
            task.cancel()
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            await asyncio.wait(list(self._live))


@types.coroutine
def resume(
    coro: Coroutine[Any, Any, None], ctx: contextvars.Context, first: Any
) -> Generator[Any, Any, None]:
    """Carry on running ``coro``, which suspended on ``first``, in the current task and in ``ctx``.

    What ``await coro`` would have done had it started here: every suspension is passed up to the
    task, and whatever the task is woken with (a value, or an exception such as a cancellation) is
    passed down.
    """
    pending = first
    while True:
        try:
            value = yield pending
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:
            try:
                pending = ctx.run(coro.throw, exc)
            except StopIteration:
                return
        else:
            try:
                pending = ctx.run(coro.send, value)
            except StopIteration:
                return


class Adopt(Exception):
    """A request that started inline and waits; raised in a parked reading task's ``receive()``:
    go on running it there."""

    def __init__(self, coro: Coroutine[Any, Any, None], ctx: contextvars.Context, first: Any) -> None:
        super().__init__()
        self.coro = coro
        self.ctx = ctx
        self.first = first

    def abandon(self) -> None:
        """The reading task was cancelled before it took the request over: cancel the request too."""
        with contextlib.suppress(BaseException):
            self.ctx.run(self.coro.throw, asyncio.CancelledError())
        with contextlib.suppress(BaseException):
            self.coro.close()


async def _serve_adopted(adopt: Adopt) -> None:
    """Go on serving a request that started inline and waited, in the current task."""
    try:
        await resume(adopt.coro, adopt.ctx, adopt.first)
    except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # what a request task would have died of
        logger.error("request task failed", exc_info=exc)


class Inline:
    """Reading and starting requests on asyncio (see the module docstring).

    ``serve(request, scope)`` is the endpoint's coroutine that serves one request; ``read_loop()``
    reads and handles messages in the current task until the stream ends (True) or until a request
    took the task over (False).
    """

    __slots__ = ("_adopting", "_done", "_error", "_read_loop", "_serve", "_stream", "tasks")

    def __init__(self, loop: asyncio.AbstractEventLoop, serve: Serve) -> None:
        self.tasks = Tasks(loop)
        self._serve = serve
        self._read_loop: Callable[[], Awaitable[bool]] | None = None
        self._done: anyio.Event | None = None
        self._error: BaseException | None = None
        self._stream: InlineCapableStream | None = None
        self._adopting: dict[asyncio.Task[Any], Adopt] = {}  # requests handed to a parked reader

    @staticmethod
    def running_loop() -> asyncio.AbstractEventLoop | None:
        """The running asyncio loop, or None on any other backend (no fast path there)."""
        try:
            return asyncio.get_running_loop()
        except RuntimeError:
            return None

    # -- reading ----------------------------------------------------------------------------------
    async def read(self, read_loop: Callable[[], Awaitable[bool]]) -> None:
        """Read until the stream ends, reading moving from task to task; raise what reading raised."""
        self._read_loop = read_loop
        done = self._done = anyio.Event()
        self.tasks.spawn(self._reader)
        await done.wait()
        if self._error is not None:
            raise self._error

    async def _reader(self) -> None:
        """A reading task: reads until the stream ends, or until a request adopts it."""
        assert self._read_loop is not None and self._done is not None
        try:
            ended = await self._read_loop()
        except asyncio.CancelledError:  # only the endpoint cancels a reader, when it is ending anyway
            raise
        except BaseException as exc:  # read() raises it
            self._error = exc
            ended = True
        if ended:
            self._done.set()

    # -- starting ---------------------------------------------------------------------------------
    def start(self, request: Request, scope: anyio.CancelScope) -> Adopt | None:
        """Start serving ``request`` in the current task, in a copy of its context (as a task of
        its own would run): None when it finished without waiting (answered, or died as a request
        task would); otherwise where it waits, for the task that goes on serving it."""
        coro = self._serve(request, scope)
        ctx = contextvars.copy_context()
        try:
            suspended_on = ctx.run(coro.send, None)
        except StopIteration:
            return None
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # what a request task would have died of
            if not isinstance(exc, asyncio.CancelledError):
                logger.error("request task failed", exc_info=exc)
            return None
        return Adopt(coro, ctx, suspended_on)

    async def carry_on(self, adopt: Adopt) -> None:
        """The request that started in this reading task waits: this task stays with it (its
        cancel scope belongs here) and a new reading task reads on."""
        self.tasks.spawn(self._reader)
        await _serve_adopted(adopt)

    async def adopted(self, adopt: Adopt) -> None:
        """This parked reading task's ``receive()`` raised ``adopt``: serve the request to its end."""
        self._adopting.pop(asyncio.current_task(), None)  # type: ignore[arg-type]
        await _serve_adopted(adopt)

    def reader_failed(self) -> None:
        """This reading task ends before it took over a request handed to it: cancel that request."""
        if self._adopting:
            orphan = self._adopting.pop(asyncio.current_task(), None)  # type: ignore[arg-type]
            if orphan is not None:
                orphan.abandon()

    # -- the read callback ------------------------------------------------------------------------
    def offer_from(
        self,
        stream: InlineCapableStream,
        next_event: Callable[[Incoming | list[Incoming]], Event],
        dispatcher: Dispatcher,
    ) -> None:
        """Start requests from ``stream``'s read callback, where it can (see the module docstring).

        A line is taken when it is a request that may start there: not one of the dispatcher's
        ``ordered_methods``, and (``next_event``, the peer's classification) not a duplicate id.
        Anything else is left to the reading task, which reads it again and handles it.
        """

        threaded = threaded_requests(dispatcher)

        def offered(line: bytes) -> bool:
            message = decode(line)
            if type(message) is not Request or message.method in dispatcher.ordered_methods:
                return False
            start = next_event(message)
            if type(start) is not Start:  # a Duplicate: the reading task refuses it
                return False
            params = message.params  # (waits(threaded, message), written out)
            if (
                threaded is not None
                and message.method == threaded[0]
                and type(params) is dict
                and params.get(threaded[1]) in threaded[2]
            ):
                self.tasks.spawn(self._serve, start.request, start.token)  # it waits: a task of its own
                return True
            adopt = self.start(start.request, start.token)
            if adopt is None:  # done without waiting
                return True
            # The handler waits: the parked reading task takes it over, a new one reads on.
            task = asyncio.current_task()
            assert task is not None
            self._adopting[task] = adopt
            self.tasks.spawn(self._reader)
            stream.interrupt(adopt)
            return True

        if stream.serve_inline(offered):
            self._stream = stream

    def stop_offers(self) -> None:
        if self._stream is not None:
            self._stream.serve_inline(None)
            self._stream = None
