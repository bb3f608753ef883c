"""An MCP server for the stdio subprocess tests (served with ``python -m jsonrpc_mcp serve``).

Its tools misbehave on purpose (write to stdout in every way a handler can) or never finish, so the
tests can check what reaches the protocol stream and how the server ends.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import subprocess
import sys

import anyio

from jsonrpc_mcp import Server

server = Server("stdio-helper", "1.0.0")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def shout(text: str) -> str:
    """Write the text to stdout in four ways, then return it."""
    print(f"print:{text}")  # Python-level stdout
    sys.stdout.flush()
    os.write(1, f"os.write:{text}\n".encode())  # raw fd 1
    libc_name = ctypes.util.find_library("c")
    if libc_name:
        libc = ctypes.CDLL(libc_name)
        libc.puts(f"puts:{text}".encode())  # C stdio: buffered, never flushed by us
    # a child process inheriting fd 1 (argv as bytes: the locale may be ASCII)
    subprocess.run([b"sh", b"-c", b'echo "child:$0"', text.encode()], check=True)
    return text


@server.tool()
async def sleep_forever() -> str:
    """Announce itself on stderr, then never finish; report cancellation on stderr."""
    print("sleep_forever: started", file=sys.stderr, flush=True)
    try:
        await anyio.sleep_forever()
    finally:
        print("sleep_forever: cancelled", file=sys.stderr, flush=True)
    return "unreachable"
