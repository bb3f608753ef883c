"""Serve an ASGI app with uvicorn on 127.0.0.1 for HTTP tests: in a thread of this process, or in a
subprocess (``subprocess_command``), always on a listening socket the test made first.

Binding and listening before the server starts means there is nothing to poll for: connections
made before uvicorn is ready wait in the socket's backlog. Keeping that socket across servers lets a
test "restart" a server on the same port.
"""

from __future__ import annotations

import socket
import threading
from types import TracebackType
from typing import Any

import uvicorn

from tests import timeouts

STOP_TIMEOUT = timeouts.STARTUP


def listening_socket() -> socket.socket:
    """A TCP socket listening on a free port of 127.0.0.1.

    The protocol is spelled out: asyncio sets TCP_NODELAY only on accepted sockets whose ``proto`` is
    IPPROTO_TCP, and with the default 0 every response waits ~40 ms for a delayed ACK (Nagle).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


def url_of(sock: socket.socket, path: str = "/mcp") -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{host}:{port}{path}"


class ThreadedServer:
    """``with ThreadedServer(app) as server:`` serves ``app`` (lifespan on) until the block ends;
    ``config`` overrides uvicorn settings.

    ``sock`` (default: a new listening socket) is used through a duplicate, so it stays open for
    the next server when this one stops.
    """

    def __init__(self, app: Any, sock: socket.socket | None = None, **config: Any) -> None:
        self.app = app
        self._own_socket = sock is None
        self.sock = sock if sock is not None else listening_socket()
        options: dict[str, Any] = {
            "log_level": "warning",
            "lifespan": "on",
            "timeout_graceful_shutdown": 2,
            "access_log": False,
        }
        options.update(config)
        self.server = uvicorn.Server(uvicorn.Config(app, **options))
        self._thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock.dup()]}, daemon=True, name="uvicorn"
        )

    def url(self, path: str = "/mcp") -> str:
        return url_of(self.sock, path)

    def __enter__(self) -> ThreadedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(STOP_TIMEOUT)
        if self._thread.is_alive():  # pragma: no cover - a hung server fails the test loudly
            self.server.force_exit = True
            self._thread.join(STOP_TIMEOUT)
            raise RuntimeError("uvicorn did not stop")

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            self.stop()
        finally:
            if self._own_socket:
                self.sock.close()
