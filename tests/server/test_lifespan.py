"""``Server(lifespan=fn)``: entered once before the first request, exited at shutdown, its value
reaching handlers as ``ctx.lifespan``, over the in-memory pair, stdio and HTTP."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Client, Context, Server
from jsonrpc_mcp.testing import connect
from tests import timeouts

from ..http.support import spawned
from .servers import lifespan_server

pytestmark = pytest.mark.anyio

SERVER_FILE = Path(lifespan_server.__file__).resolve()
TIMEOUT = timeouts.STARTUP


def _server(events: list[str]) -> Server:
    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, Any]]:
        events.append(f"enter {server.name}")
        try:
            yield {"db": "pool"}
        finally:
            events.append("exit")

    server = Server("life", lifespan=lifespan)

    @server.tool()
    def which(ctx: Context) -> str:
        """The lifespan's value."""
        return str(ctx.lifespan["db"])

    return server


async def test_in_memory_the_lifespan_wraps_the_connection_and_reaches_handlers() -> None:
    events: list[str] = []
    server = _server(events)
    async with connect(server) as client:
        assert events == ["enter life"]  # before the first request was answered
        result = await client.call_tool("which", {})
        assert result["content"][0]["text"] == "pool"
    assert events == ["enter life", "exit"]


async def test_a_second_connection_meanwhile_shares_the_running_lifespan() -> None:
    events: list[str] = []
    server = _server(events)
    async with connect(server) as first, connect(server) as second:
        assert (await first.call_tool("which", {}))["content"][0]["text"] == "pool"
        assert (await second.call_tool("which", {}))["content"][0]["text"] == "pool"
    assert events == ["enter life", "exit"]


async def test_without_a_lifespan_ctx_lifespan_is_none_and_running_yields_none() -> None:
    server = Server("plain")

    @server.tool()
    def probe(ctx: Context) -> str:
        """Report ctx.lifespan."""
        return repr(ctx.lifespan)

    async with server.running() as state, connect(server) as client:
        assert state is None
        assert (await client.call_tool("probe", {}))["content"][0]["text"] == "None"


def test_a_lifespan_that_is_not_running_is_a_clear_error() -> None:
    server = _server([])
    with pytest.raises(RuntimeError, match="is not running"):
        server.lifespan_state  # noqa: B018


async def test_a_failing_lifespan_fails_the_serve_with_its_error() -> None:
    @contextlib.asynccontextmanager
    async def broken(server: Server) -> AsyncIterator[None]:
        if server.name == "broken":
            raise OSError("the database is down")
        yield

    server = Server("broken", lifespan=broken)
    with pytest.raises(OSError, match="database is down"):
        async with server.running():
            pass  # pragma: no cover
    with pytest.raises(RuntimeError, match="is not running"):
        server.lifespan_state  # noqa: B018


async def test_over_stdio_it_runs_once_per_process(tmp_path: Path) -> None:
    log = tmp_path / "lifespan.log"
    env = {**os.environ, "LIFESPAN_LOG": str(log)}
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(SERVER_FILE)]
    with anyio.fail_after(TIMEOUT):
        async with Client.stdio(command, env=env) as client:
            first = await client.call_tool("count", {})
            second = await client.call_tool("count", {})
    assert [first["content"][0]["text"], second["content"][0]["text"]] == ["1 of 1", "2 of 1"]
    lines = log.read_text(encoding="utf-8").split()
    assert lines[0::2] == ["enter", "exit"]  # entered once, exited at shutdown


@pytest.mark.asyncio_only  # uvicorn runs on asyncio only
async def test_over_http_it_runs_from_startup_to_shutdown(tmp_path: Path) -> None:
    import httpx

    log = tmp_path / "lifespan.log"
    os.environ["LIFESPAN_LOG"] = str(log)
    try:
        with spawned(SERVER_FILE) as served:
            async with Client.http(served.url + "/mcp") as client:
                first = await client.call_tool("count", {})
            async with Client.http(served.url + "/mcp", mode="2026-07-28") as client:
                second = await client.call_tool("count", {})
            assert log.read_text(encoding="utf-8").split()[0::2] == ["enter"]  # at startup, once
            async with httpx.AsyncClient() as http:  # still serving
                assert (await http.get(served.url + "/nowhere")).status_code == 404
    finally:
        os.environ.pop("LIFESPAN_LOG", None)
    assert [first["content"][0]["text"], second["content"][0]["text"]] == ["1 of 1", "2 of 1"]
    assert log.read_text(encoding="utf-8").split()[0::2] == ["enter", "exit"]  # exited at shutdown
