"""The server under test of ``conformance-official``: started, found listening, stopped.

Every process here binds its own address and says which it got; nothing is chosen free first and
handed over (a port found free and closed again may be taken by anything before the child binds
it). ``serve --http --port 0`` and the round-robin proxy (``--port 0``) print their URL on stderr
once they listen: :func:`start_announced` reads that line (the rest of stderr goes on to the log
file). ``redis-server`` has no "port 0": it listens on a Unix socket in its own temporary
directory, and the instances reach it by a ``unix://`` URL.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = ["START_TIMEOUT", "STOP_TIMEOUT", "served", "start_announced", "stop_server"]

START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0
REPO = Path(__file__).resolve().parents[3]

SERVE_LINE = re.compile(rb"jsonrpc-mcp: serving .* at (?P<url>https?://\S+)")
PROXY_LINE = re.compile(rb"proxy: listening on (?P<url>http://[^\s,]+)")


class _Announcement:
    """Copies a child's stderr to its log, line by line (a thread: the pipe never fills up), and
    keeps the first match of ``pattern``'s ``url`` group."""

    def __init__(self, stream: IO[bytes], sink_path: Path, pattern: re.Pattern[bytes]) -> None:
        self.url: str | None = None
        self._found = threading.Event()
        self._pattern = pattern
        self._thread = threading.Thread(target=self._copy, args=(stream, sink_path), daemon=True)
        self._thread.start()

    def _copy(self, stream: IO[bytes], sink_path: Path) -> None:
        try:
            with sink_path.open("ab") as sink:
                for line in iter(stream.readline, b""):
                    sink.write(line)
                    sink.flush()
                    if self.url is None and (found := self._pattern.search(line)):
                        self.url = found.group("url").decode()
                        self._found.set()
        finally:
            self._found.set()

    def wait(self, timeout: float) -> str | None:
        self._found.wait(timeout)
        return self.url


def start_announced(
    command: list[str], log_file: Path, pattern: re.Pattern[bytes], what: str
) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``command`` (stdout and stderr to ``log_file``) and wait, at most
    :data:`START_TIMEOUT`, for the stderr line that says where it listens; its URL. A process that
    exits or stays silent first is stopped and the run ends with one line saying so."""
    log_file.write_bytes(b"")
    with log_file.open("ab") as sink:
        process = subprocess.Popen(
            command, cwd=REPO, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.PIPE
        )
    assert process.stderr is not None  # a pipe, asked for above
    announcement = _Announcement(process.stderr, log_file, pattern)
    url = announcement.wait(START_TIMEOUT)
    if url is None:
        stop_server(process)
        status = process.returncode
        raise SystemExit(
            f"conformance-official: {what} did not say where it listens within {START_TIMEOUT:.0f} s"
            f" (exit status {status}; see {log_file})"
        )
    return process, url


def _serve(target: str, log_file: Path, extra: tuple[str, ...] = ()) -> tuple[subprocess.Popen[bytes], str]:
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", target, "--http", "--host", "127.0.0.1"]
    command += ["--port", "0", *extra]
    return start_announced(command, log_file, SERVE_LINE, "the server")


def stop_server(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after :data:`STOP_TIMEOUT`."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=STOP_TIMEOUT)


def _redis_answers(path: Path) -> bool:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.5)
            sock.connect(str(path))
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _start_redis(executable: str, directory: Path, log_file: Path) -> tuple[subprocess.Popen[bytes], str]:
    path = directory / "redis.sock"
    command = [executable, "--port", "0", "--unixsocket", str(path), "--unixsocketperm", "700"]
    command += ["--save", "", "--appendonly", "no", "--dir", str(directory)]
    with log_file.open("wb") as sink:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink)
    deadline = time.monotonic() + START_TIMEOUT
    while not _redis_answers(path):
        if process.poll() is not None or time.monotonic() > deadline:
            stop_server(process)
            raise SystemExit(f"conformance-official: redis-server did not answer PING (see {log_file})")
        time.sleep(0.05)  # polling a socket the child creates: there is no event to wait on
    return process, f"unix://{path}?db=0"


@contextlib.contextmanager
def served(target: str, run_dir: Path, instances: int) -> Iterator[str]:
    """Serve ``target``; yield the MCP URL. One instance: ``serve --http``. More: a ``redis-server``
    of their own, that many ``serve --http --redis`` instances, and the round-robin proxy in front
    of them (the URL is the proxy's)."""
    processes: list[subprocess.Popen[bytes]] = []
    with contextlib.ExitStack() as stack:

        def stop_all() -> None:
            for process in reversed(processes):
                stop_server(process)

        stack.callback(stop_all)
        if instances <= 1:
            process, url = _serve(target, run_dir / "server.log")
            processes.append(process)
            yield url
            return
        redis_server = shutil.which("redis-server")
        if redis_server is None:
            raise SystemExit("conformance-official: --scale-out needs redis-server on PATH")
        # a short directory: a Unix socket's path must fit in 108 bytes
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="redis-")))
        process, redis_url = _start_redis(redis_server, directory, run_dir / "redis.log")
        processes.append(process)
        upstreams = []
        for n in range(1, instances + 1):
            process, url = _serve(target, run_dir / f"server-{n}.log", ("--redis", redis_url))
            processes.append(process)
            upstreams.append(url.split("//", 1)[1].split("/", 1)[0])
        proxy = [sys.executable, "-m", "jsonrpc_mcp_conformance.official.proxy", "--port", "0", *upstreams]
        process, proxy_url = start_announced(proxy, run_dir / "proxy.log", PROXY_LINE, "the proxy")
        processes.append(process)
        yield f"{proxy_url}/mcp"
