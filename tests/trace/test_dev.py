"""``jsonrpc-mcp dev FILE``: served over HTTP behind the trace, and restarted when the file changes
(a real subprocess, real HTTP on 127.0.0.1, the file edited on disk)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import anyio.abc
import pytest

from jsonrpc_mcp import Client
from tests import timeouts

pytestmark = pytest.mark.anyio

START_TIMEOUT = timeouts.RUN  # the dev process and its child server importing everything
CALL_TIMEOUT = timeouts.STARTUP
STOP_TIMEOUT = timeouts.STARTUP
_DEV = re.compile(r"^dev: serving .* at (http://\S+) ")

SERVER = """
from jsonrpc_mcp import Server

server = Server("dev-test")


@server.tool()
def version() -> str:
    return "{version}"
"""


async def _call_version(url: str) -> str | None:
    """The tool's answer, or None while the server is restarting (a refused or failed connection)."""
    try:
        with anyio.fail_after(CALL_TIMEOUT):
            async with Client.http(url) as client:
                result = await client.call_tool("version")
    except Exception:
        return None
    return str(result["content"][0]["text"])


async def test_dev_serves_traced_and_restarts_when_the_file_changes(tmp_path: Path) -> None:
    server_file = tmp_path / "server.py"
    server_file.write_text(SERVER.format(version="one"), encoding="utf-8")
    lines: list[str] = []
    url: list[str] = []
    announced = anyio.Event()
    process = await anyio.open_process(
        [sys.executable, "-m", "jsonrpc_mcp", "dev", str(server_file), "--port", "0"],
        cwd=tmp_path,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )

    async def read_stderr() -> None:
        assert process.stderr is not None
        pending = b""
        async for chunk in process.stderr:
            pending += chunk
            while b"\n" in pending:
                raw, pending = pending.split(b"\n", 1)
                line = raw.decode("utf-8", "replace")
                lines.append(line)
                found = _DEV.match(line)
                if found:
                    url.append(found.group(1))
                    announced.set()
        announced.set()

    async with process, anyio.create_task_group() as tg:
        tg.start_soon(read_stderr)
        try:
            with anyio.fail_after(START_TIMEOUT):
                await announced.wait()
            assert url, "\n".join(lines)
            assert await _call_version(url[0]) == "one"
            assert any("tools/call" in line for line in lines)  # the trace annotated the exchange

            server_file.write_text(SERVER.format(version="two"), encoding="utf-8")
            with anyio.fail_after(START_TIMEOUT):  # ends on evidence: the new answer
                while (answer := await _call_version(url[0])) != "two":
                    assert answer in (None, "one")
                    await anyio.sleep(0.2)
            assert any("dev: a file changed: restarting the server" in line for line in lines)
        finally:
            process.send_signal(signal.SIGINT)
            with anyio.fail_after(STOP_TIMEOUT):
                status = await process.wait()
            tg.cancel_scope.cancel()
    assert status == 0, "\n".join(lines)
    assert not any("Traceback" in line for line in lines), "\n".join(lines)
