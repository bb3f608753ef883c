"""What the harness talks to: a command over stdio, an in-process server, or an HTTP endpoint.

A target opens *connections*. A connection carries raw frames (one JSON-RPC message or batch per
frame) so fixtures can send exact bytes, and it records everything the server sends.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

import anyio
import anyio.abc

__all__ = ["Connection", "InProcessTarget", "StdioTarget", "Target"]


class Connection(Protocol):
    transport: str

    async def send(self, frame: bytes) -> None: ...

    async def receive(self, timeout: float) -> bytes | None:
        """The next frame, ``None`` on timeout; raises ``EOFError`` once the server closed its end."""

    async def close_input(self) -> None:
        """Tell the server the client is done (stdio: close its stdin)."""

    async def wait_exit(self, timeout: float) -> bool:
        """Whether the server ended by itself within ``timeout`` seconds after :meth:`close_input`."""


class Target(Protocol):
    """A server to check: how to connect to it (``connect()`` yields a fresh connection), the
    transport's name and a description for the report."""

    transport: str
    description: str

    def connect(self) -> contextlib.AbstractAsyncContextManager[Connection]:
        """An async context manager yielding a new connection to the server, closed on exit."""
        ...


class _StdioConnection:
    transport = "stdio"

    def __init__(self, stream: Any, process: anyio.abc.Process, errors: Any = None) -> None:
        self._stream = stream
        self._process = process
        self._errors = errors  # the file the server's stderr goes to
        self._closed_at: float | None = None  # the server's CPU time when its stdin was closed

    def stderr_tail(self, lines: int = 5) -> list[str]:
        """The last lines the server wrote to its stderr so far (read without moving the file's
        offset, which the server's writes share)."""
        if self._errors is None:
            return []
        fd = self._errors.fileno()
        size = os.fstat(fd).st_size
        start = max(0, size - 2000)
        text = os.pread(fd, size - start, start).decode("utf-8", "replace").strip()
        return text.splitlines()[-lines:] if text else []

    def diagnosis(self) -> str:
        """The server's exit status once it ended, and the end of its stderr."""
        parts = []
        if self._process.returncode is not None:
            parts.append(f"the server exited with status {self._process.returncode}")
        tail = self.stderr_tail()
        if tail:
            parts.append("its stderr ends: " + " | ".join(tail))
        return "; ".join(parts)

    async def send(self, frame: bytes) -> None:
        try:
            await self._stream.send(frame)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError) as exc:
            with anyio.move_on_after(1.0):  # a crash (e.g. of a process started ahead): its exit status
                await self._process.wait()
            said = self.diagnosis()
            raise EOFError("the server's stdin is closed" + (f" ({said})" if said else "")) from exc

    async def receive(self, timeout: float) -> bytes | None:
        with anyio.move_on_after(timeout):
            try:
                return bytes(await self._stream.receive())
            except anyio.EndOfStream:
                with anyio.move_on_after(min(timeout, 1.0)):  # a crash: its exit status says why
                    await self._process.wait()
                said = self.diagnosis()
                raise EOFError("the server closed its stdout" + (f" ({said})" if said else "")) from None
        return None

    async def write_raw(self, data: bytes) -> None:
        """Bytes as they are, no newline added (to split a message across writes)."""
        assert self._process.stdin is not None
        await self._process.stdin.send(data)

    async def close_input(self) -> None:
        from ._exit import cpu_seconds

        self._closed_at = cpu_seconds(self._process.pid)
        await self._stream.aclose()

    async def wait_exit(self, timeout: float) -> bool:
        """Whether the server exited within ``timeout`` s, or (once its input is closed) later while
        it is still being given CPU on its way out (see ``_exit``)."""
        from ._exit import wait_for_exit

        return await wait_for_exit(self._process, timeout, self._closed_at)


class StdioTarget:
    """A server command started afresh for each connection; its stderr is kept, never judged."""

    transport = "stdio"

    def __init__(
        self, command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None
    ) -> None:
        if not command:
            raise ValueError("an empty server command")
        self.command = list(command)
        self.env = {**os.environ, **env} if env is not None else None
        self.cwd = cwd
        self.description = " ".join(self.command)
        self.stderr_tail: list[str] = []

    @contextlib.asynccontextmanager
    async def connect(self) -> AsyncIterator[Connection]:
        """Spawn the command and yield its stdio as the connection; on exit shut it down, keeping
        the end of its stderr."""
        from jsonrpc_mcp.transports.stdio import spawn_stdio

        with tempfile.TemporaryFile() as errors:
            async with spawn_stdio(
                self.command, env=self.env, cwd=self.cwd, stderr=errors, grace=0.5, term_grace=1.0
            ) as stream:
                yield _StdioConnection(stream, stream.process, errors)
            errors.seek(0)
            tail = errors.read()[-2000:].decode("utf-8", "replace").strip()
            if tail:
                self.stderr_tail = tail.splitlines()[-10:]


class _MemoryConnection:
    transport = "inprocess"

    def __init__(self, stream: Any, done: anyio.Event) -> None:
        self._stream = stream
        self._done = done
        self._closed = False

    async def send(self, frame: bytes) -> None:
        if self._closed:
            raise EOFError("input already closed")
        try:
            await self._stream.send(frame)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise EOFError("the server is gone") from exc

    async def receive(self, timeout: float) -> bytes | None:
        with anyio.move_on_after(timeout):
            try:
                return bytes(await self._stream.receive())
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                raise EOFError("the server closed the connection") from None
        return None

    async def close_input(self) -> None:
        self._closed = True
        await self._stream._send.aclose()

    async def wait_exit(self, timeout: float) -> bool:
        with anyio.move_on_after(timeout):
            await self._done.wait()
            return True
        return False


ServeFn = Callable[[Any], Awaitable[None]]


class InProcessTarget:
    """A server in this process, one in-memory connection each (``serve(stream)`` serves one).

    ``serve`` is e.g. ``server.serve`` of a :class:`jsonrpc_mcp.Server`, or any coroutine function
    serving a :class:`jsonrpc_mcp.transports.base.MessageStream` until it closes.
    """

    transport = "inprocess"

    def __init__(self, serve: ServeFn, description: str = "in-process server") -> None:
        self.serve = serve
        self.description = description

    @classmethod
    def from_server(cls, server: Any) -> InProcessTarget:
        """The target serving ``server`` (a :class:`jsonrpc_mcp.Server`) in this process."""
        return cls(server.serve, f"in-process {getattr(server, 'name', 'server')}")

    @contextlib.asynccontextmanager
    async def connect(self) -> AsyncIterator[Connection]:
        """Serve the server over an in-memory pair; yield the client's end (the server stops on exit)."""
        from jsonrpc_mcp.transports.memory import memory_pair

        client_end, server_end = memory_pair()
        done = anyio.Event()

        async def run() -> None:
            try:
                await self.serve(server_end)
            except Exception:  # a crashing server is what the fixtures then report
                pass
            finally:
                done.set()
                with contextlib.suppress(Exception):
                    await server_end.aclose()

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            try:
                yield _MemoryConnection(client_end, done)
            finally:
                with contextlib.suppress(Exception):
                    await client_end.aclose()
                with anyio.move_on_after(2):
                    await done.wait()
                tg.cancel_scope.cancel()
