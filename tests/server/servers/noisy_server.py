"""A target that prints while it loads: the output must not reach the protocol stream."""

import os

from jsonrpc_mcp import Server

print("banner printed at import")
os.write(1, b"raw bytes written to fd 1 at import\n")

server = Server("noisy")


@server.tool()
def quiet() -> str:
    return "ok"
