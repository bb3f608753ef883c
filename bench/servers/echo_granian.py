"""Ours (``echo.py``'s server) as an ASGI app for granian, unchanged: ``McpHttpApp`` in JSON-response mode.

Usage (bench only; granian is not a dependency of the project)::

    granian --interface asgi --host 127.0.0.1 --port PORT --working-dir bench/servers echo_granian:app

``raw_asgi:app`` is the bare ASGI app under the same server.
"""

from __future__ import annotations

import importlib

from jsonrpc_mcp import Server
from jsonrpc_mcp.http import McpHttpApp

server: Server = importlib.import_module("echo").server  # granian's --working-dir puts it on the path
app = McpHttpApp(server, json_response=True)
