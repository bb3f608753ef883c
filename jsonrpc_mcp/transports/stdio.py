"""stdio framing: newline-delimited JSON over pipes, for both sides.

Server side (:func:`stdio_server`): the protocol gets a private duplicate of fd 1 and fd 1 itself is
pointed at stderr for as long as the server runs, so a handler's ``print`` or a C extension writing to
fd 1 can never corrupt the protocol stream. Pipes are read and written non-blocking on the event loop
(no thread hop per message); anything that is not a pipe or socket (a file, a tty) falls back to a
worker thread.

Writes are coalesced while more input waits: a message sent while lines already read wait in the
buffer (a client keeping several requests in flight) is held back, and the messages held back go
out in one write when the reader has worked through the buffer (before it waits for input), or at
the latest on the event loop's next turn. A message sent while nothing waits is written at once.

Serving from the read callback (asyncio; ``FdStream`` is an
:class:`~jsonrpc_mcp.transports.base.InlineCapableStream`, which the endpoint's fast path checks
for): a consumer registered with :meth:`FdStream.serve_inline` is offered each complete line
straight from the event loop's read callback while a ``receive()`` waits, running as the waiting
task (see :meth:`FdStream._offer`). A consumer that takes the line answers it there and then, so a
sequential request costs one event-loop turn rather than two (the callback, then the waiting task's
wake-up) and no future.

Client side (:func:`spawn_stdio`): starts the server as a subprocess and on exit shuts it down the
way the MCP specification says: close its stdin, wait, SIGTERM, wait, SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import IO, Any

import anyio
import anyio.lowlevel
import anyio.to_thread
from anyio.abc import Process

from .base import FrameTooLarge
from .framing import DEFAULT_MAX_LINE, LineBuffer

__all__ = ["FdStream", "ProcessStream", "protected_stdout", "shutdown_process", "spawn_stdio", "stdio_server"]

logger = logging.getLogger("jsonrpc_mcp.transports")

_CHUNK = 256 * 1024
_MAX_PENDING = 1024  # lines read ahead before reading pauses
_HOLD_LIMIT = 64 * 1024  # bytes of output held back for one write, at most
_OFFER_BURST = 32  # lines offered to the consumer per read callback before the waiting task takes over

# What makes a callback run "as" a task (asyncio.current_task() answers it, so anyio cancel scopes
# work): private asyncio API, present since 3.7. Without it, lines are not served from the callback.
_enter_task: Callable[[asyncio.AbstractEventLoop, asyncio.Task[Any]], None] | None = getattr(
    asyncio.tasks, "_enter_task", None
)
_leave_task: Callable[[asyncio.AbstractEventLoop, asyncio.Task[Any]], None] | None = getattr(
    asyncio.tasks, "_leave_task", None
)


def _pollable(fd: int) -> bool:
    """Pipes and sockets can be waited on by the event loop; files and ttys cannot (reliably)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class FdStream:
    """A message stream over two file descriptors (read side, write side)."""

    def __init__(self, read_fd: int, write_fd: int, *, max_line: int = DEFAULT_MAX_LINE) -> None:
        self._rfd = read_fd
        self._wfd = write_fd
        self._lines = LineBuffer(max_line)
        self._eof = False
        self._closed = False
        self._lock = anyio.Lock(fast_acquire=True)
        self._restore: list[tuple[int, bool]] = []
        self._r_async = self._make_nonblocking(read_fd)
        self._loop = _asyncio_loop()
        self._reading = False
        self._waiter: asyncio.Future[None] | None = None
        self._parked: asyncio.Task[Any] | None = None  # the task waiting in receive()
        self._consumer: Callable[[bytes], bool] | None = None
        self._buffer = bytearray(_CHUNK)
        self._view = memoryview(self._buffer)
        self._w_async = self._make_nonblocking(write_fd)
        self._held: list[bytes] | None = None  # output held back for one write (see the module doc)
        self._held_size = 0
        self._broken = False  # a write found the pipe closed
        self._flushers: set[asyncio.Task[None]] = set()

    def _make_nonblocking(self, fd: int) -> bool:
        if not _pollable(fd) or sys.platform == "win32":
            return False
        was_blocking = os.get_blocking(fd)
        os.set_blocking(fd, False)
        self._restore.append((fd, was_blocking))
        return True

    def serve_inline(self, consumer: Callable[[bytes], bool] | None) -> bool:
        """Offer lines to ``consumer`` from the read callback while a ``receive()`` waits.

        ``consumer(line)`` runs as the task waiting in ``receive()`` and returns True when it took
        the line, False to leave it (and what follows) to ``receive()``; it must not wait. It may
        call :meth:`interrupt`. Returns False (and does nothing) where this is not possible. None
        stops the offers.
        """
        if consumer is None:
            self._consumer = None
            return True
        if self._loop is None or not self._r_async or _enter_task is None or _leave_task is None:
            return False
        self._consumer = consumer
        return True

    def interrupt(self, exc: BaseException) -> None:
        """Make the ``receive()`` that waits raise ``exc`` (from a consumer, see :meth:`serve_inline`)."""
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)

    async def receive(self) -> bytes:
        """The next line read from stdin (without its newline); raises ``anyio.EndOfStream`` at
        the end of input, :class:`FrameTooLarge` for a discarded oversized line,
        ``anyio.BrokenResourceError`` once stdout was found closed."""
        lines = self._lines
        while True:
            if self._broken:
                raise anyio.BrokenResourceError("the output was closed")
            line = lines.pop()  # raises FrameTooLarge for a discarded line
            if line is not None:
                return line
            if self._held is not None:  # the answers to what was read go out before we wait
                await self._flush_quietly()
                continue
            if self._eof or self._closed:
                # Checkpoint first, as every async receive should: after an unterminated last line
                # came out of the buffer, its request's task gets to start before the caller reacts
                # to the end of input (a terminated last line gets that chance while we read EOF).
                await anyio.lowlevel.checkpoint()
                raise anyio.EndOfStream
            if self._loop is not None and self._r_async:
                await self._fill_from_loop(self._loop)
                continue
            data = await self._read()
            if data:
                lines.feed(data)
            else:
                self._eof = True
                lines.feed_eof()

    # asyncio: the fd stays registered with the loop while input is wanted, and the loop's callback
    # reads straight into the line buffer. Registering and unregistering around every read (what
    # anyio.wait_readable does) costs two epoll_ctl calls and selector bookkeeping per message. When
    # too many lines wait unread, the callback unregisters (backpressure); receive registers again.
    async def _fill_from_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        if not self._reading:
            loop.add_reader(self._rfd, self._on_readable)
            self._reading = True
        waiter = self._waiter = loop.create_future()
        if self._consumer is not None:
            self._parked = asyncio.current_task()
        try:
            await waiter
        finally:
            if self._waiter is waiter:
                self._waiter = None
                self._parked = None

    def _on_readable(self) -> None:
        try:
            n = os.readv(self._rfd, (self._buffer,))
        except BlockingIOError:
            return
        except OSError as exc:
            logger.warning("reading the input failed: %s", exc)
            n = 0
        if n:
            self._lines.feed(bytes(self._view[:n]))
        else:
            self._eof = True
            self._lines.feed_eof()
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            parked = self._parked
            if parked is not None and n and self._lines.pending:
                self._offer(waiter, parked)  # may interrupt the waiter
            if not waiter.done() and (self._lines.pending or self._eof):
                waiter.set_result(None)
        if not n or self._lines.pending > _MAX_PENDING:
            self._stop_reading()

    def _offer(self, waiter: asyncio.Future[None], parked: asyncio.Task[Any]) -> None:
        """Offer complete lines to the consumer, as the task ``parked`` waiting in receive().

        The task is suspended on ``waiter``, so nothing else runs as it: entering it for the length
        of a synchronous call is what asyncio itself does around each step of a task. A consumer that
        declines a line (or a size error) leaves it first in the buffer, for receive() to return.
        """
        consumer = self._consumer
        loop = self._loop
        assert consumer is not None and loop is not None
        assert _enter_task is not None and _leave_task is not None
        lines = self._lines
        _enter_task(loop, parked)
        try:
            for _ in range(_OFFER_BURST):
                try:
                    line = lines.pop()
                except FrameTooLarge as exc:
                    lines.unpop(exc)
                    break
                if line is None:
                    break
                if not consumer(line):
                    lines.unpop(line)
                    break
                if waiter.done():
                    break
        finally:
            _leave_task(loop, parked)
        if self._held is not None and not self._lock.locked():
            self._flush_now()

    def _flush_now(self) -> None:
        """Write what is held back without waiting; a remainder stays held for the flush already due."""
        held = self._held
        assert held is not None
        data = b"".join(held) if len(held) > 1 else held[0]
        try:
            written = os.write(self._wfd, data)
        except BlockingIOError:
            written = 0
        except OSError as exc:  # the pipe is gone: the next send reports it
            if isinstance(exc, BrokenPipeError):
                self._output_gone()
            logger.debug("writing held-back output failed: %r", exc)
            self._held = None
            self._held_size = 0
            return
        if written == len(data):
            self._held = None
            self._held_size = 0
        else:
            self._held = [data[written:]]
            self._held_size = len(data) - written

    def _output_gone(self) -> None:
        """A write found stdout closed: nobody can read an answer any more, so stop serving (the
        waiting receive() ends) rather than read requests that could never be answered."""
        if self._broken:
            return
        self._broken = True
        logger.warning("the output (stdout) was closed by the other side: stopping")
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _stop_reading(self) -> None:
        if self._reading and self._loop is not None:
            self._reading = False
            with contextlib.suppress(Exception):  # the loop may already be closed
                self._loop.remove_reader(self._rfd)

    async def _read(self) -> bytes:
        """Other event loops (and files, ttys): wait for the fd, or read in a worker thread."""
        fd = self._rfd
        if not self._r_async:
            return await anyio.to_thread.run_sync(os.read, fd, _CHUNK, abandon_on_cancel=True)
        while True:
            await anyio.wait_readable(fd)
            try:
                n = os.readv(fd, (self._buffer,))
            except BlockingIOError:
                continue
            return bytes(self._view[:n])

    async def send(self, message: bytes) -> None:
        """Write the message and a newline to the protocol's stdout."""
        if self._closed:
            raise anyio.ClosedResourceError
        if self._broken:
            raise anyio.BrokenResourceError
        line = message + b"\n"
        held = self._held
        if held is not None:  # join what is held back (in order)
            held.append(line)
            self._held_size += len(line)
            if self._held_size > _HOLD_LIMIT:
                await self._flush()
            return
        if self._lines.pending and self._loop is not None and self._w_async and not self._lock.locked():
            # More input is already here: its answers are likely to follow in this same turn of the
            # event loop. Hold this one back, and make sure it goes out on the next turn at the latest.
            self._held = [line]
            self._held_size = len(line)
            self._loop.call_soon(self._flush_due)
            return
        await self._write(line)

    def _flush_due(self) -> None:
        """The loop's next turn: what is still held back (the reader went elsewhere) goes out now."""
        if self._held is not None and self._loop is not None:
            task = self._loop.create_task(self._flush_quietly())
            self._flushers.add(task)
            task.add_done_callback(self._flushers.discard)

    async def _flush(self) -> None:
        held = self._held
        if held is None:
            return
        self._held = None
        self._held_size = 0
        await self._write(b"".join(held))

    async def _flush_quietly(self) -> None:
        """Flush for nobody in particular: a failure is for the next send to report."""
        try:
            await self._flush()
        except (anyio.BrokenResourceError, OSError) as exc:
            logger.debug("writing held-back output failed: %r", exc)

    async def _write(self, line: bytes) -> None:
        data = memoryview(line)
        if not self._lock.locked():
            # Fast path: nobody is part-way through a message, and a pipe write either fits or is
            # partial; no await until the lock is held, so messages never interleave.
            try:
                data = data[os.write(self._wfd, data) :]
            except BlockingIOError:
                pass
            except BrokenPipeError:
                self._output_gone()
                raise anyio.BrokenResourceError from None
            if not data:
                return
        async with self._lock:
            while data:
                try:
                    written = os.write(self._wfd, data)
                except BlockingIOError:
                    await anyio.wait_writable(self._wfd)
                    continue
                except BrokenPipeError:
                    self._output_gone()
                    raise anyio.BrokenResourceError from None
                data = data[written:]

    async def aclose(self) -> None:
        """Flush what is held back, close the stream and restore the process's stdout."""
        if not self._closed:
            await self._flush_quietly()
        self._closed = True
        self.restore()

    def restore(self) -> None:
        """Stop watching the input and put the descriptors' blocking mode back as it was."""
        self._stop_reading()
        held, self._held = self._held, None
        if held and not self._broken:  # last chance for output still held back (best effort)
            with contextlib.suppress(OSError):
                os.write(self._wfd, b"".join(held))
        for fd, was_blocking in self._restore:
            with contextlib.suppress(OSError):
                os.set_blocking(fd, was_blocking)
        self._restore.clear()


def _asyncio_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _c_output_possible() -> bool:
    """Whether C code other than the standard library's (and orjson's) may have written to stdout:
    ctypes or cffi is loaded, or an extension module from outside the standard library. Only then
    is the C library's buffer worth flushing (importing ctypes to do it costs ~2 ms of cold start).
    """
    modules = sys.modules
    if "_ctypes" in modules or "_cffi_backend" in modules:
        return True
    from importlib.machinery import ExtensionFileLoader

    stdlib = os.path.dirname(os.__file__)
    for name, module in list(modules.items()):
        spec = getattr(module, "__spec__", None)
        if isinstance(getattr(spec, "loader", None), ExtensionFileLoader) and name != "orjson.orjson":
            origin = getattr(spec, "origin", None) or ""
            if not origin.startswith(stdlib) or "-packages" in origin:  # (site- or dist-packages)
                return True
    return False


def _flush_c_stdio() -> None:
    """Flush the C library's stdio buffers (what a C extension wrote with ``printf``/``puts``).

    Such output is buffered inside libc when fd 1 is a pipe; left alone it would be written at
    process exit, after fd 1 points at the protocol pipe again.
    """
    if not _c_output_possible():
        return
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except Exception:  # no C library to reach (e.g. Windows): nothing buffered we could flush
        pass


@contextlib.contextmanager
def protected_stdout() -> Iterator[int]:
    """Yield a private duplicate of fd 1 for the protocol while fd 1 itself points at stderr."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    protocol_fd = os.dup(1)  # not inheritable: child processes never see the protocol pipe
    os.dup2(2, 1)
    try:
        yield protocol_fd
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        _flush_c_stdio()  # while fd 1 still points at stderr
        os.dup2(protocol_fd, 1)
        os.close(protocol_fd)


@contextlib.asynccontextmanager
async def stdio_server(
    *, max_line: int = DEFAULT_MAX_LINE, protect_stdout: bool = True
) -> AsyncIterator[FdStream]:
    """The server's end of stdio: reads fd 0, writes the protocol to (a private copy of) fd 1."""
    if protect_stdout:
        with protected_stdout() as out_fd:
            stream = FdStream(0, out_fd, max_line=max_line)
            try:
                yield stream
            finally:
                stream.restore()
    else:
        stream = FdStream(0, 1, max_line=max_line)
        try:
            yield stream
        finally:
            stream.restore()


class ProcessStream:
    """The client's end of a server subprocess: its stdout in, its stdin out."""

    def __init__(self, process: Process, *, max_line: int = DEFAULT_MAX_LINE) -> None:
        self.process = process
        self._lines = LineBuffer(max_line)
        self._eof = False
        self._lock = anyio.Lock(fast_acquire=True)

    async def receive(self) -> bytes:
        """The next line the process wrote to its stdout; raises ``anyio.EndOfStream`` when it
        closed it."""
        assert self.process.stdout is not None
        lines = self._lines
        while True:
            line = lines.pop()
            if line is not None:
                return line
            if self._eof:
                await anyio.lowlevel.checkpoint()  # see FdStream.receive
                raise anyio.EndOfStream
            try:
                data = await self.process.stdout.receive(_CHUNK)
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                self._eof = True
                lines.feed_eof()
            else:
                lines.feed(data)

    async def send(self, message: bytes) -> None:
        """Write the message and a newline to the process's stdin."""
        assert self.process.stdin is not None
        async with self._lock:
            await self.process.stdin.send(message + b"\n")

    async def aclose(self) -> None:
        """Close the process's stdin (shutting the process down is :func:`spawn_stdio`'s)."""
        assert self.process.stdin is not None
        with contextlib.suppress(Exception):
            await self.process.stdin.aclose()


async def shutdown_process(process: Process, *, grace: float = 2.0, term_grace: float = 2.0) -> int | None:
    """Close stdin, wait ``grace`` s, SIGTERM, wait ``term_grace`` s, SIGKILL. Returns the exit code."""
    with anyio.CancelScope(shield=True):
        if process.stdin is not None:
            with contextlib.suppress(Exception):
                await process.stdin.aclose()
        with anyio.move_on_after(grace):
            return await process.wait()
        logger.info("server did not exit after stdin closed; sending SIGTERM")
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        with anyio.move_on_after(term_grace):
            return await process.wait()
        logger.warning("server ignored SIGTERM; sending SIGKILL")
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        with anyio.move_on_after(5):
            return await process.wait()
    return None


@contextlib.asynccontextmanager
async def spawn_stdio(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stderr: int | IO[Any] | None = None,
    max_line: int = DEFAULT_MAX_LINE,
    grace: float = 2.0,
    term_grace: float = 2.0,
) -> AsyncIterator[ProcessStream]:
    """Start ``command`` as an MCP/JSON-RPC server over stdio; shut it down on exit.

    ``stderr`` is passed to the subprocess as is (default: inherit ours). Shutdown: close its stdin,
    wait ``grace`` s, SIGTERM, wait ``term_grace`` s, SIGKILL (see :func:`shutdown_process`).
    """
    if not command:
        raise ValueError("command must not be empty")
    process = await anyio.open_process(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=dict(env) if env is not None else None,
        cwd=cwd,
    )
    stream = ProcessStream(process, max_line=max_line)
    try:
        yield stream
    finally:
        await shutdown_process(process, grace=grace, term_grace=term_grace)
        with contextlib.suppress(Exception):
            await process.aclose()
