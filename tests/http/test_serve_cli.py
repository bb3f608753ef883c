"""``python -m jsonrpc_mcp serve TARGET --http ...``: the options reach the app, shutdown is prompt."""

from __future__ import annotations

import signal
import subprocess
import sys

import anyio
import httpx
import orjson
import pytest

from tests import timeouts

from .support import (
    JSON_HEADERS,
    REPO,
    STOP_TIMEOUT,
    TIMEOUT,
    TOOLBOX,
    SseReader,
    call,
    initialize,
    open_session,
    post,
    session_headers,
    spawned,
)

pytestmark = pytest.mark.anyio


async def test_options_before_the_target_are_honoured(http: httpx.AsyncClient) -> None:
    with spawned(TOOLBOX, before_target=["--path", "/rpc", "--json-response"]) as server:
        base = server.url
        session_id = await open_session(http, base + "/rpc")
        body = call(1, "progress", {"steps": 2}, progress_token="t")
        answered = await post(http, base + "/rpc", body, session_headers(session_id))
        elsewhere = await post(http, base + "/mcp", initialize(), JSON_HEADERS)
    assert answered.headers["content-type"] == "application/json"  # --json-response: never SSE
    assert answered.json()["result"]["content"][0]["text"] == "done after 2 steps"
    assert elsewhere.status_code == 404


async def test_stateless_after_the_target_serves_without_sessions(http: httpx.AsyncClient) -> None:
    with spawned(TOOLBOX, "--stateless") as server:
        url = server.url + "/mcp"
        first = await post(http, url, initialize(), JSON_HEADERS)
        called = await post(http, url, call(2, "add", {"a": 2, "b": 2}), session_headers(None))
        with anyio.fail_after(TIMEOUT):
            listen = await http.get(url, headers={"accept": "text/event-stream"})
    assert first.status_code == 200 and "mcp-session-id" not in first.headers
    assert called.json()["result"]["content"][0]["text"] == "4"
    assert listen.status_code == 405


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_a_signal_ends_open_streams_and_exits_promptly_and_cleanly(
    http: httpx.AsyncClient, signum: signal.Signals
) -> None:
    with spawned(TOOLBOX) as server:
        url, process = server.url + "/mcp", server.process
        session_id = await open_session(http, url)
        headers = {"accept": "text/event-stream", "mcp-session-id": session_id}
        with anyio.fail_after(TIMEOUT):
            async with http.stream("GET", url, headers=headers) as listening:
                reader = SseReader(listening)
                await reader.next()  # priming: the stream is open
                process.send_signal(signum)
                final = await reader.rest()
                # one final event, no message: an id to resume from and the retry hint (reconnect)
                assert [(e.data, e.retry, bool(e.id)) for e in final] == [("", 1000, True)]
        status = process.wait(STOP_TIMEOUT)
        stderr = server.stderr()
    assert status == 0, stderr
    assert b"Traceback" not in stderr
    # the stream did not hold the shutdown up: uvicorn never had to cancel it at its graceful timeout
    assert b"graceful shutdown exceeded" not in stderr, stderr


def test_workers_need_stateless() -> None:
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(TOOLBOX), "--http", "--workers", "2"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, timeout=timeouts.STARTUP, check=False)
    assert done.returncode == 2
    assert b"--workers needs --stateless" in done.stderr


async def test_several_stateless_workers_serve(http: httpx.AsyncClient) -> None:
    with spawned(TOOLBOX, "--stateless", "--workers", "2") as server:
        url = server.url + "/mcp"
        answers = [
            await post(http, url, call(i, "add", {"a": i, "b": 1}), session_headers(None)) for i in range(4)
        ]
    assert [orjson.loads(a.content)["result"]["content"][0]["text"] for a in answers] == ["1", "2", "3", "4"]


@pytest.mark.parametrize("workers", [[], ["--stateless", "--workers", "2"]], ids=["one-process", "workers"])
def test_a_port_in_use_is_one_clear_line_and_exit_1(workers: list[str]) -> None:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(TOOLBOX), "--http", "--port", str(port)]
        done = subprocess.run(
            [*command, *workers], cwd=REPO, capture_output=True, timeout=timeouts.STARTUP, check=False
        )
    stderr = done.stderr.decode(errors="replace")
    assert done.returncode == 1, stderr
    assert f"cannot serve at http://127.0.0.1:{port}/mcp" in stderr
    assert "in use" in stderr.lower()
    assert "Traceback" not in stderr and "serving" not in stderr  # no banner, no lifespan traces
    assert len(stderr.strip().splitlines()) == 1


async def test_max_sessions_and_session_timeout_reach_the_app(http: httpx.AsyncClient) -> None:
    with spawned(TOOLBOX, "--max-sessions", "1", "--session-timeout", "600") as server:
        url = server.url + "/mcp"
        first = await post(http, url, initialize(), JSON_HEADERS)
        second = await post(http, url, initialize(), JSON_HEADERS)
    assert first.status_code == 200 and "mcp-session-id" in first.headers
    assert second.status_code == 503 and "max_sessions=1" in second.json()["error"]["message"]


def test_the_listening_socket_makes_asyncio_set_tcp_nodelay_on_each_connection() -> None:
    """``serve --http`` binds its socket itself (a port in use is one line): with ``proto`` 0 asyncio
    leaves Nagle on, and every small response waits out the client's delayed ACK."""
    import asyncio
    import socket as sockets

    from jsonrpc_mcp.http._serve import _bind

    async def accepted_nodelay() -> int:
        listening = _bind("127.0.0.1", 0)
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted = writer.get_extra_info("socket")
            seen.set_result(accepted.getsockopt(sockets.IPPROTO_TCP, sockets.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=listening)
        async with server:
            port = listening.getsockname()[1]
            _, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 10)
            value = await asyncio.wait_for(seen, 10)
            writer.close()
        return value

    assert asyncio.run(accepted_nodelay()) != 0
