"""Helpers for the HTTP tests: real uvicorn on 127.0.0.1, raw httpx requests, SSE reading.

Two ways to run a server, both on a free port of 127.0.0.1:

* :func:`serving` runs an :class:`McpHttpApp` under an in-process ``uvicorn.Server`` on the test's
  event loop, on a socket bound beforehand (so the port is known); startup and shutdown (lifespan
  included) are awaited, each bounded.
* :func:`spawned` runs ``python -m jsonrpc_mcp serve ... --http --port N`` and polls the port
  (bounded) until it accepts connections.
"""

from __future__ import annotations

import contextlib
import re
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import orjson
import uvicorn

from jsonrpc_mcp.http import McpHttpApp
from jsonrpc_mcp.transports.sse import SseEvent, SseParser
from tests import timeouts
from tests.announced import SERVE_LINE, Output, base_url

REPO = Path(__file__).resolve().parents[2]
SERVERS = Path(__file__).resolve().parent / "servers"
TOOLBOX = SERVERS / "toolbox.py"

LATEST = "2025-11-25"
ACCEPT_BOTH = "application/json, text/event-stream"
JSON_HEADERS = {"content-type": "application/json", "accept": ACCEPT_BOTH}

START_TIMEOUT = timeouts.STARTUP  # a subprocess server importing everything and binding its port
STOP_TIMEOUT = timeouts.STARTUP
TIMEOUT = timeouts.STEP  # one exchange


# -- running servers ------------------------------------------------------------------------------
@contextlib.asynccontextmanager
async def serving(
    app: Any, *, mcp_app: McpHttpApp | None = None, **uvicorn_options: Any
) -> AsyncIterator[str]:
    """Serve ``app`` with uvicorn on a free port; yield its base URL (``http://127.0.0.1:N``).

    ``app`` is an :class:`McpHttpApp` or any ASGI app wrapping ``mcp_app``; on the way out the
    McpHttpApp's long-lived streams are ended first (as ``serve --http`` does on a signal).
    """
    if mcp_app is None:
        assert isinstance(app, McpHttpApp)
        mcp_app = app
    # IPPROTO_TCP spelled out: asyncio sets TCP_NODELAY on accepted connections only when the
    # listening socket says so, and without it every response waits out a 40 ms delayed ACK
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    options: dict[str, Any] = {
        "lifespan": "on",
        "log_config": None,
        "log_level": "warning",
        "access_log": False,
        "timeout_graceful_shutdown": 3,
    }
    options.update(uvicorn_options)
    config = uvicorn.Config(app, **options)
    config.load()
    server = uvicorn.Server(config)
    # uvicorn's serve() minus its main loop, which only polls should_exit every 0.1 s
    server.lifespan = config.lifespan_class(config)
    with anyio.fail_after(START_TIMEOUT):
        await server.startup(sockets=[sock])
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        mcp_app.begin_shutdown()
        with anyio.fail_after(STOP_TIMEOUT):
            await server.shutdown(sockets=[sock])


@contextlib.contextmanager
def refused_port() -> Iterator[int]:
    """A port of 127.0.0.1 that refuses connections for as long as the block runs, for a test of an
    unreachable address: a socket bound to it and never listening holds it, so nothing else can
    take it meanwhile (a port found free and closed again could be). Never to start a server on:
    a subprocess server binds port 0 itself and says which port it got (tests/announced.py)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


@dataclass
class Spawned:
    """A ``serve --http`` subprocess: its base URL, the process, and its stderr so far."""

    url: str
    process: subprocess.Popen[bytes]
    _output: Output

    def stderr(self) -> bytes:
        """Its stderr so far; all of it once the process has exited. A line it writes while running
        reaches here a moment later (a thread reads the pipe): wait for it with :meth:`wait_for`."""
        if self.process.poll() is not None:
            return self._output.rest()
        return self._output.text()

    def wait_for(self, pattern: re.Pattern[bytes]) -> re.Match[bytes]:
        """The first stderr line matching ``pattern`` (bounded by ``timeouts.STEP``)."""
        return self._output.wait_for(pattern, self.process, timeout=timeouts.STEP)


@contextlib.contextmanager
def spawned(target: Path | str, *options: str, before_target: Sequence[str] = ()) -> Iterator[Spawned]:
    """Run ``jsonrpc-mcp serve [before_target] TARGET --http --port 0 [options]``: the server binds a
    free port itself and says which (yields once it listens).

    stderr is read by a thread as it comes (a pipe nobody reads could fill up and stall the server).
    On the way out: SIGINT, bounded wait, then SIGKILL.
    """
    command = [
        sys.executable,
        "-m",
        "jsonrpc_mcp",
        "serve",
        *before_target,
        str(target),
        "--http",
        "--port",
        "0",
        *options,
    ]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    output = Output(process.stderr)
    try:
        url = output.wait_for(SERVE_LINE, process, START_TIMEOUT).group("url")
        yield Spawned(base_url(url), process, output)
    finally:
        stop(process)
        output.close()


def stop(process: subprocess.Popen[bytes]) -> int:
    """SIGINT, a bounded wait, SIGKILL if need be; the exit status."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(STOP_TIMEOUT)
    return process.returncode


def rss_kib(pid: int) -> int:
    """The resident set size of a process (Linux ``/proc``), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


# -- messages -------------------------------------------------------------------------------------
def initialize(rid: int | str = 0, version: str = LATEST) -> dict[str, Any]:
    return request(
        rid,
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "http-tests", "version": "0"},
        },
    )


def request(rid: int | str, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def call(rid: int | str, tool: str, arguments: dict[str, Any], progress_token: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if progress_token is not None:
        params["_meta"] = {"progressToken": progress_token}
    return request(rid, "tools/call", params)


INITIALIZED = notification("notifications/initialized")


def session_headers(session_id: str | None, version: str | None = LATEST, **extra: str) -> dict[str, str]:
    headers = dict(JSON_HEADERS)
    if session_id is not None:
        headers["mcp-session-id"] = session_id
    if version is not None:
        headers["mcp-protocol-version"] = version
    headers.update(extra)
    return headers


async def post(client: httpx.AsyncClient, url: str, body: Any, headers: dict[str, str]) -> httpx.Response:
    """POST a JSON body (anything not bytes is encoded) and read the whole answer (bounded)."""
    content = body if isinstance(body, bytes) else orjson.dumps(body)
    with anyio.fail_after(TIMEOUT):
        return await client.post(url, content=content, headers=headers)


async def open_session(client: httpx.AsyncClient, url: str, version: str = LATEST) -> str:
    """initialize + notifications/initialized; the session id."""
    response = await post(client, url, initialize(0, version), JSON_HEADERS)
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    ready = await post(client, url, INITIALIZED, session_headers(session_id, version))
    assert ready.status_code == 202, ready.text
    return session_id


async def delete_session(client: httpx.AsyncClient, url: str, session_id: str) -> httpx.Response:
    with anyio.fail_after(TIMEOUT):
        return await client.delete(url, headers={"mcp-session-id": session_id})


def assert_error_body(response: httpx.Response, status: int) -> dict[str, Any]:
    """The answer has ``status`` and a JSON-RPC error body with a non-zero integer code; its error."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json"), response.headers
    body = response.json()
    assert body["jsonrpc"] == "2.0"
    error = body["error"]
    assert type(error["code"]) is int and error["code"] != 0, body
    assert isinstance(error["message"], str) and "Traceback" not in error["message"], body
    return error  # type: ignore[no-any-return]


# -- SSE ------------------------------------------------------------------------------------------
class SseReader:
    """Events of a streamed httpx response, one at a time (each wait bounded)."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._parser = SseParser()
        self._chunks = response.aiter_raw()
        self._pending: list[SseEvent] = []
        self.ended = False

    async def next(self, timeout: float = TIMEOUT) -> SseEvent | None:
        """The next event, or None when the stream ended."""
        with anyio.fail_after(timeout):
            while not self._pending:
                try:
                    chunk = await self._chunks.__anext__()
                except StopAsyncIteration:
                    self.ended = True
                    return None
                self._pending.extend(self._parser.feed(chunk))
        return self._pending.pop(0)

    async def message(self, timeout: float = TIMEOUT) -> tuple[SseEvent, dict[str, Any]]:
        """The next event that carries a JSON-RPC message (priming events are skipped)."""
        while True:
            event = await self.next(timeout)
            assert event is not None, "the stream ended"
            if event.data:
                return event, orjson.loads(event.data)

    async def rest(self, timeout: float = TIMEOUT) -> list[SseEvent]:
        """Every remaining event, until the server ends the stream."""
        events: list[SseEvent] = []
        with anyio.fail_after(timeout):
            while (event := await self.next()) is not None:
                events.append(event)
        return events


def messages(events: Sequence[SseEvent]) -> list[dict[str, Any]]:
    return [orjson.loads(event.data) for event in events if event.data]
