"""A small round-robin HTTP proxy with no affinity, for testing instances that share Redis.

    python -m jsonrpc_mcp_conformance.official.proxy --port 8000 127.0.0.1:8001 127.0.0.1:8002

Theory of operation
-------------------
Each client connection carries one request: the proxy reads the request head, replaces the
hop-by-hop ``Connection`` headers with ``Connection: close``, connects to the next upstream in
turn (an upstream that refuses the connection is skipped, as a load balancer's passive health check
would), sends the head and then pipes bytes both ways until the upstream ends its response. Bodies
are never buffered, so a request body, a JSON answer and an SSE stream all flow as they are written;
the client sees ``connection: close`` in the answer and opens a new connection for its next request,
which goes to the next upstream: two requests of one session never count on landing together.

Nothing else is touched (``Host`` and ``Origin`` pass as the client sent them). It is a test tool:
no TLS, no pooling, no limits beyond a bounded request head.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Sequence

__all__ = ["RoundRobinProxy", "main"]

logger = logging.getLogger("jsonrpc_mcp_conformance.proxy")

_MAX_HEAD = 64 * 1024
_HOP_BY_HOP = {b"connection", b"keep-alive", b"proxy-connection"}
_CONNECT_TIMEOUT = 2.0
_BAD_GATEWAY = (
    b"HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\ncontent-length: 24\r\n"
    b"connection: close\r\n\r\nno upstream is reachable"
)


class RoundRobinProxy:
    """Listen on ``host:port`` (0: a free port) and spread requests over ``upstreams`` in turn."""

    def __init__(
        self, upstreams: Sequence[tuple[str, int]], *, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        if not upstreams:
            raise ValueError("a proxy needs at least one upstream")
        self.upstreams = list(upstreams)
        self.host = host
        self.port = port
        self.served = [0] * len(self.upstreams)  # requests sent to each upstream
        self._next = 0
        self._server: asyncio.Server | None = None
        self._pipes: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port)
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def aclose(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
            for task in list(self._pipes):
                task.cancel()
            with contextlib.suppress(Exception):
                await server.wait_closed()

    async def __aenter__(self) -> RoundRobinProxy:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._pipes.add(task)
        try:
            await self._relay(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
            logger.debug("a proxied connection ended: %s", exc)
        finally:
            if task is not None:
                self._pipes.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return  # the client connected and left
        if len(head) > _MAX_HEAD:
            return
        lines = head[:-4].split(b"\r\n")
        kept = [line for line in lines[1:] if line.split(b":", 1)[0].strip().lower() not in _HOP_BY_HOP]
        head = b"\r\n".join([lines[0], *kept, b"connection: close"]) + b"\r\n\r\n"
        upstream = await self._connect()
        if upstream is None:
            writer.write(_BAD_GATEWAY)
            await writer.drain()
            return
        up_reader, up_writer = upstream
        try:
            up_writer.write(head)
            await up_writer.drain()
            to_upstream = asyncio.ensure_future(_pipe(reader, up_writer))
            try:
                await _pipe(up_reader, writer)  # the response, until the upstream closes
            finally:
                to_upstream.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await to_upstream
        finally:
            up_writer.close()
            with contextlib.suppress(Exception):
                await up_writer.wait_closed()

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """A connection to the next upstream that accepts one (each tried once), or None."""
        for _ in range(len(self.upstreams)):
            index = self._next
            self._next = (self._next + 1) % len(self.upstreams)
            host, port = self.upstreams[index]
            try:
                connection = await asyncio.wait_for(asyncio.open_connection(host, port), _CONNECT_TIMEOUT)
            except (OSError, asyncio.TimeoutError) as exc:
                logger.info("upstream %s:%d is unreachable (%s): trying the next one", host, port, exc)
                continue
            self.served[index] += 1
            return connection
        return None


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """Copy bytes from ``source`` to ``sink`` as they come, until ``source`` ends."""
    while True:
        chunk = await source.read(65536)
        if not chunk:
            return
        sink.write(chunk)
        await sink.drain()


def _address(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"not HOST:PORT: {value!r}")
    return host, int(port)


async def _run(options: argparse.Namespace) -> None:
    proxy = RoundRobinProxy(options.upstream, host=options.host, port=options.port)
    await proxy.start()
    print(f"proxy: listening on {proxy.url}, upstreams {len(proxy.upstreams)}", file=sys.stderr, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await proxy.aclose()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A round-robin HTTP proxy with no affinity (a test tool).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("upstream", nargs="+", type=_address, help="HOST:PORT of an instance")
    asyncio.run(_run(parser.parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
