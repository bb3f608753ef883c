"""``Server.run(transport=...)``: the same server run over stdio or Streamable HTTP from a script,
as a FastMCP or SDK user writes it (``if __name__ == "__main__": server.run(transport="http")``)."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from jsonrpc_mcp import Client, Server
from tests import timeouts
from tests.proxy.support import served_http

pytestmark = pytest.mark.anyio

CALL_TIMEOUT = timeouts.STARTUP
SCRIPT = """
import sys
from jsonrpc_mcp import Server

server = Server("scripted")

@server.tool()
def add(a: int, b: int) -> int:
    return a + b

if __name__ == "__main__":
    server.run(transport=sys.argv[1], **({"port": 0, "json_response": True} if sys.argv[1] == "http" else {}))
"""


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "scripted.py"
    path.write_text(SCRIPT, encoding="utf-8")
    return path


async def test_run_over_http_serves_at_the_port_it_got(script: Path) -> None:
    async with served_http([sys.executable, str(script), "http"]) as served:
        assert served.url.startswith("http://127.0.0.1:") and served.url.endswith("/mcp")
        with anyio.fail_after(CALL_TIMEOUT):
            async with Client.http(served.url) as client:
                result = await client.call_tool("add", {"a": 2, "b": 3})
    assert result["structuredContent"] == {"result": 5}


async def test_run_over_stdio_is_the_default(script: Path) -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        async with Client.stdio([sys.executable, str(script), "stdio"]) as client:
            result = await client.call_tool("add", {"a": 1, "b": 1})
    assert result["structuredContent"] == {"result": 2}


def test_an_unknown_transport_or_option_is_refused_at_once() -> None:
    server = Server("s")
    with pytest.raises(ValueError, match="transport must be 'stdio' or 'http', not 'sse'"):
        server.run(transport="sse")
    with pytest.raises(TypeError, match="not an option of transport='http': colour"):
        server.run(transport="http", colour="blue")
    with pytest.raises(TypeError, match="given with stdio: port"):
        server.run(port=8000)
