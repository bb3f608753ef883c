"""Several ``serve --http --redis`` processes on one real Redis: a list change or a resource update
made on one instance reaches the ``subscriptions/listen`` stream held by another; a multi round-trip
retry sealed by one is verified by another; readiness follows Redis; Redis down at start is one line."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx
import orjson
import pytest

from tests import timeouts

from ..http.modern.support import MODERN, headers_for, modern_request, send, valid
from ..http.support import REPO, START_TIMEOUT, TIMEOUT, Spawned, SseReader, refused_port, spawned
from .servers import shared
from .support import RedisServer

pytestmark = pytest.mark.anyio

TARGET = shared.__file__
LISTEN = "subscriptions/listen"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


@contextlib.contextmanager
def instances(count: int, *options: str) -> Iterator[list[Spawned]]:
    """``count`` instances, each started: an instance says where it listens before its lifespan
    (Redis pinged, the bus subscribed) has run, and a test that stops Redis at once would stop it
    under that startup (the instance exits). One readiness probe each: uvicorn answers it once the
    startup is complete."""
    with contextlib.ExitStack() as stack:
        started = [stack.enter_context(spawned(TARGET, *options)) for _ in range(count)]
        for instance in started:
            ready = httpx.get(instance.url + "/readyz", timeout=START_TIMEOUT)
            assert ready.status_code == 200, (ready.text, instance.stderr())
        yield started


@contextlib.asynccontextmanager
async def listening(http: httpx.AsyncClient, url: str, rid: Any, **wanted: Any) -> AsyncIterator[SseReader]:
    body = modern_request(rid, LISTEN, {"notifications": wanted})
    async with http.stream("POST", url, content=orjson.dumps(body), headers=headers_for(body)) as response:
        assert response.status_code == 200, await response.aread()
        reader = SseReader(response)
        _, ack = await reader.message()
        assert valid(ack)["method"] == "notifications/subscriptions/acknowledged"
        yield reader


async def call_tool(
    http: httpx.AsyncClient, url: str, name: str, arguments: dict[str, Any], **extra: Any
) -> Any:
    body = modern_request(900, "tools/call", {"name": name, "arguments": arguments, **extra})
    body["params"]["_meta"] = ENVELOPE
    response = await send(http, url, body)
    assert response.status_code == 200, response.text
    return response.json()["result"]


async def test_a_change_on_one_instance_reaches_a_listen_stream_on_another(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    with instances(2, "--redis", redis_server.url) as (a, b):
        with anyio.fail_after(TIMEOUT * 2):
            async with (
                listening(http, b.url + "/mcp", "tools", toolsListChanged=True) as tools,
                listening(http, b.url + "/mcp", "doc", resourceSubscriptions=["res://doc"]) as doc,
            ):
                grown = await call_tool(http, a.url + "/mcp", "grow", {"name": "extra"})
                _, changed = await tools.message()
                touched = await call_tool(http, a.url + "/mcp", "touch", {"uri": "res://doc"})
                _, updated = await doc.message()
    assert grown["content"][0]["text"] == "grew extra"
    assert changed["method"] == "notifications/tools/list_changed"
    assert changed["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "tools"}
    assert touched["content"][0]["text"] == "told 0"  # nobody listens on A itself
    assert updated["method"] == "notifications/resources/updated"
    assert updated["params"]["uri"] == "res://doc"


async def test_without_redis_a_change_stays_on_its_instance(http: httpx.AsyncClient) -> None:
    with instances(2) as (a, b):
        with anyio.fail_after(TIMEOUT * 2):
            async with listening(http, b.url + "/mcp", "tools", toolsListChanged=True) as tools:
                await call_tool(http, a.url + "/mcp", "grow", {"name": "extra"})
                with pytest.raises(TimeoutError):
                    await tools.next(timeout=1.0)  # (the control: what Redis carries above)


@pytest.mark.parametrize("with_redis", [True, False])
async def test_a_retry_sealed_by_one_instance_is_verified_by_another(
    http: httpx.AsyncClient, redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch, with_redis: bool
) -> None:
    monkeypatch.delenv("JSONRPC_MCP_STATE_KEY", raising=False)
    monkeypatch.setenv("JSONRPC_MCP_STATE_FILE", "")  # no per-user key file: a key per process
    options = ("--redis", redis_server.url) if with_redis else ()
    with instances(2, *options) as (a, b), anyio.fail_after(TIMEOUT * 2):
        first = await call_tool(http, a.url + "/mcp", "confirm", {"item": "x"})
        assert first["resultType"] == "input_required"
        [key] = first["inputRequests"]
        retry = {"inputResponses": {key: {"action": "accept", "content": {"ok": True}}}}
        body = modern_request(901, "tools/call", {"name": "confirm", "arguments": {"item": "x"}, **retry})
        body["params"]["_meta"] = ENVELOPE
        body["params"]["requestState"] = first["requestState"]
        answered = (await send(http, b.url + "/mcp", body)).json()
    if with_redis:
        assert answered["result"]["resultType"] == "complete", answered
        assert answered["result"]["content"][0]["text"] == f"x: accept (answered by {b.process.pid})"
    else:
        assert answered["error"]["code"] == -32602  # another key: refused


async def test_readiness_follows_redis(http: httpx.AsyncClient, redis_server: RedisServer) -> None:
    with spawned(TARGET, "--redis", redis_server.url) as server:
        ready = server.url + "/readyz"
        with anyio.fail_after(TIMEOUT):
            up = await http.get(ready)
            redis_server.stop()
            down = await http.get(ready)
            live = await http.get(server.url + "/healthz")
            redis_server.start()
            again = await http.get(ready)
            grown = await call_tool(http, server.url + "/mcp", "grow", {"name": "after"})
    assert up.status_code == 200
    assert down.status_code == 503 and f"Redis at {redis_server.url} is unreachable" in down.json()["reason"]
    assert live.status_code == 200  # alive all along: only not ready
    assert again.status_code == 200
    assert grown["content"][0]["text"] == "grew after"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_an_instance_on_redis_stops_cleanly(
    http: httpx.AsyncClient, redis_server: RedisServer, signum: signal.Signals
) -> None:
    with spawned(TARGET, "--redis", redis_server.url) as server:
        with anyio.fail_after(TIMEOUT):
            async with listening(http, server.url + "/mcp", "tools", toolsListChanged=True) as tools:
                server.process.send_signal(signum)
                rest = await tools.rest()  # the listen request's final result
        status = server.process.wait(TIMEOUT)
        stderr = server.stderr()
    assert rest and rest[-1].data and orjson.loads(rest[-1].data)["result"]["resultType"] == "complete"
    assert status == 0, stderr
    assert b"Traceback" not in stderr and b"ERROR" not in stderr, stderr.decode()


def test_an_unreachable_redis_at_start_is_one_line_and_exit_1() -> None:
    pytest.importorskip("redis")
    with refused_port() as port:
        url = f"redis://127.0.0.1:{port}/0"  # nothing listens there
        command = [sys.executable, "-m", "jsonrpc_mcp", "serve", TARGET, "--http", "--port", "0"]
        command += ["--redis", url]
        done = subprocess.run(command, cwd=REPO, capture_output=True, timeout=timeouts.STARTUP, check=False)
    assert done.returncode == 1
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"jsonrpc-mcp: cannot use --redis: Redis at {url}"), lines


async def test_handshake_sessions_are_served_by_every_worker_on_redis(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    from ..http.support import open_session, post, request, session_headers

    with spawned(TARGET, "--workers", "2", "--redis", redis_server.url) as server:
        url = server.url + "/mcp"
        session_id = await open_session(http, url)
        headers = {**session_headers(session_id), "connection": "close"}  # either worker, each time
        pids: set[str] = set()
        with anyio.fail_after(TIMEOUT * 3):
            async with httpx.AsyncClient(timeout=TIMEOUT) as fresh:
                while len(pids) < 2:  # the kernel spreads the connections: until both answered
                    answer = await post(
                        fresh,
                        url,
                        request(len(pids) + 1, "tools/call", {"name": "whoami", "arguments": {}}),
                        headers,
                    )
                    assert answer.status_code == 200, answer.text
                    pids.add(answer.json()["result"]["content"][0]["text"])
            deleted = await http.delete(url, headers=session_headers(session_id))
    assert len(pids) == 2 and str(server.process.pid) not in pids  # two workers, one session
    assert deleted.status_code == 200


async def test_stateless_workers_on_redis_tell_every_listener(
    http: httpx.AsyncClient, redis_server: RedisServer
) -> None:
    with spawned(TARGET, "--stateless", "--workers", "2", "--redis", redis_server.url) as server:
        url = server.url + "/mcp"
        # fresh connections: either worker may take each call, and the listener hears of all
        fresh = httpx.AsyncClient(timeout=TIMEOUT, headers={"connection": "close"})
        with anyio.fail_after(TIMEOUT * 3):
            async with listening(http, url, "tools", toolsListChanged=True) as tools, fresh:
                for n in range(4):
                    await call_tool(fresh, url, "grow", {"name": f"tool_{n}"})
                    _, changed = await tools.message()
                    assert changed["method"] == "notifications/tools/list_changed"
