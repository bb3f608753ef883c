"""A real ``redis-server`` for the tests: on a Unix socket of its own (no TCP port: nothing to find free
and race for), in a temporary directory, with nothing saved; started and stopped by the test (skipped,
with the reason, when not installed)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from ..http.support import START_TIMEOUT, STOP_TIMEOUT


def redis_server_or_skip() -> str:
    """The ``redis-server`` executable, and the ``redis`` package importable; else skip the test."""
    found = shutil.which("redis-server")
    if found is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    pytest.importorskip(
        "redis", reason="the redis package is not installed (pip install 'jsonrpc-mcp[redis]')"
    )
    return found


class RedisServer:
    """One ``redis-server`` process; :meth:`stop` and :meth:`start` again on the same socket.

    It listens on a Unix socket only (``--port 0`` turns TCP off), in a short directory of its own
    (a socket's path must fit in 108 bytes; pytest's ``tmp_path`` may not), so no other process can
    take its address between two starts; :attr:`url` is a ``unix://`` URL every Redis client reads."""

    def __init__(self, executable: str, directory: Path) -> None:
        self.executable = executable
        self.directory = directory
        self._socket_dir = tempfile.TemporaryDirectory(prefix="redis-")
        self.socket = Path(self._socket_dir.name) / "redis.sock"
        self.url = f"unix://{self.socket}?db=0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [
            self.executable,
            "--port",
            "0",
            "--unixsocket",
            str(self.socket),
            "--unixsocketperm",
            "700",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.directory),
        ]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT
        while not self.answers():
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.process.returncode}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"redis-server does not answer PING after {START_TIMEOUT} s")
            time.sleep(0.02)  # polling a port the child binds: there is no event to wait on

    def answers(self) -> bool:
        """Whether it answers a PING now."""
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(0.5)
                sock.connect(str(self.socket))
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(STOP_TIMEOUT)

    def close(self) -> None:
        """Stop it and remove its socket's directory."""
        self.stop()
        self._socket_dir.cleanup()


async def teller_gone(redis_server: RedisServer, session_id: str) -> None:
    """Until the heartbeat of the instance that was the session's teller has expired (it was
    killed; written by other processes: polled, bounded by the caller's ``fail_after``)."""
    import redis.asyncio

    client: Any = redis.asyncio.from_url(redis_server.url)
    try:
        teller = await client.get(f"jsonrpc-mcp:teller:{session_id}")
        assert teller is not None
        while await client.exists(b"jsonrpc-mcp:alive:" + teller):  # noqa: ASYNC110
            await anyio.sleep(0.05)
    finally:
        await client.aclose()
