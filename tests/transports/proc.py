"""Drive a stdio server subprocess byte for byte (no library code on the test's side of the pipe).

Frames coming out of the server are split on b"\\n" here, independently of the library's framing,
so a test sees exactly what the server wrote. stderr is collected in the background.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import orjson
from anyio.abc import Process

from tests import timeouts

TIMEOUT = timeouts.STEP
HELPERS = Path(__file__).resolve().parents[1] / "helpers"
MCP_HELPER = HELPERS / "mcp_stdio_server.py"
PLAIN_HELPER = HELPERS / "plain_stdio_server.py"
CHUNKY_HELPER = HELPERS / "chunky_stdio_server.py"


def serve_command(target: Path, *options: str) -> list[str]:
    """``python -m jsonrpc_mcp serve [options] target``."""
    return [sys.executable, "-m", "jsonrpc_mcp", "serve", *options, str(target)]


def plain_command(*options: str) -> list[str]:
    return [sys.executable, str(PLAIN_HELPER), *options]


def child_env(**overrides: str) -> dict[str, str]:
    """Our environment, minus what would hide bugs: forced encodings and unbuffered C stdio."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONIOENCODING", "PYTHONUNBUFFERED"}}
    env.update(overrides)
    return env


def c_locale_env() -> dict[str, str]:
    """The C locale with Python's UTF-8 rescue disabled: the locale encoding really is ASCII."""
    env = child_env(LC_ALL="C", LANG="C", PYTHONUTF8="0", PYTHONCOERCECLOCALE="0")
    env.pop("LC_CTYPE", None)
    return env


class RawServer:
    """A running server process and raw access to its pipes."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self.stderr = bytearray()
        self._stderr_changed = anyio.Event()
        self._out = bytearray()

    async def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        with anyio.fail_after(TIMEOUT):
            await self.process.stdin.send(data)

    async def send(self, message: Any) -> None:
        await self.write(orjson.dumps(message) + b"\n")

    async def receive_line(self) -> bytes:
        """The next line the server wrote to stdout, without its b"\\n"."""
        assert self.process.stdout is not None
        with anyio.fail_after(TIMEOUT):
            while b"\n" not in self._out:
                self._out += await self.process.stdout.receive()
        line, _, rest = bytes(self._out).partition(b"\n")
        self._out = bytearray(rest)
        return line

    async def receive(self) -> Any:
        return orjson.loads(await self.receive_line())

    async def call(self, message: dict[str, Any]) -> Any:
        await self.send(message)
        return await self.receive()

    async def wait_stderr(self, marker: bytes) -> None:
        with anyio.fail_after(TIMEOUT):
            while marker not in self.stderr:
                await self._stderr_changed.wait()

    async def collect_stderr(self) -> None:
        assert self.process.stderr is not None
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            while True:
                self.stderr += await self.process.stderr.receive()
                self._stderr_changed.set()
                self._stderr_changed = anyio.Event()

    async def close_stdin(self) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.aclose()

    async def rest_of_stdout(self) -> bytes:
        """Everything the server still writes until it closes stdout (bounded)."""
        assert self.process.stdout is not None
        with anyio.fail_after(TIMEOUT):
            with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError):
                while True:
                    self._out += await self.process.stdout.receive()
        rest = bytes(self._out)
        self._out.clear()
        return rest


@contextlib.asynccontextmanager
async def raw_server(
    command: Sequence[str], *, env: Mapping[str, str] | None = None
) -> AsyncIterator[RawServer]:
    """Start ``command``; on exit make sure it is gone (kill if needed) and stderr is collected."""
    process = await anyio.open_process(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env) if env is not None else child_env(),
    )
    server = RawServer(process)
    async with process, anyio.create_task_group() as tg:
        tg.start_soon(server.collect_stderr)
        try:
            yield server
        finally:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
            with anyio.fail_after(TIMEOUT, shield=True):
                await process.wait()


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "stdio-tests", "version": "1.0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


async def handshake(server: RawServer) -> None:
    answer = await server.call(INITIALIZE)
    assert answer["id"] == "init" and "result" in answer, answer
    await server.send(INITIALIZED)


def call_tool(rid: Any, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments or {}},
    }
