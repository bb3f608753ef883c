"""A plain JSON-RPC 2.0 server over stdio (Endpoint + MethodTable + stdio_server), for transport tests.

Usage: python plain_stdio_server.py [--max-line N] [--ignore-eof] [--ignore-sigterm]

Methods: ``echo(value)`` returns its argument; ``ready()`` returns "ready" (once it has answered,
any signal handlers are installed); ``die(code)`` ends the process at once with that exit code.
--ignore-eof: after stdin ends, keep running (prints "eof ignored" on stderr).
--ignore-sigterm: SIGTERM is caught and reported on stderr ("sigterm ignored") instead of ending us.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import Any

import anyio

from jsonrpc_mcp.jsonrpc import Endpoint, MethodTable
from jsonrpc_mcp.transports.stdio import stdio_server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-line", type=int, default=4 * 1024 * 1024)
    parser.add_argument("--ignore-eof", action="store_true")
    parser.add_argument("--ignore-sigterm", action="store_true")
    args = parser.parse_args()

    if args.ignore_sigterm:

        def on_sigterm(signum: int, frame: Any) -> None:
            sys.stderr.write("sigterm ignored\n")
            sys.stderr.flush()

        signal.signal(signal.SIGTERM, on_sigterm)

    table = MethodTable()

    @table.method()
    def echo(value: Any) -> Any:
        return value

    @table.method()
    def ready() -> str:
        return "ready"

    @table.method()
    def die(code: int) -> None:
        os._exit(code)

    async def serve() -> None:
        async with stdio_server(max_line=args.max_line) as stream:
            await Endpoint(stream, table).run()

    anyio.run(serve)
    if args.ignore_eof:
        sys.stderr.write("eof ignored\n")
        sys.stderr.flush()
        threading.Event().wait()  # hang like a server that does not notice its stdin closed


if __name__ == "__main__":
    main()
