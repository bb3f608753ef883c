"""The raw limit: a minimal MCP echo server over stdio, no framework at all.

One blocking loop: ``sys.stdin.buffer.readline`` -> ``orjson.loads`` -> dispatch ->
``orjson.dumps`` -> ``sys.stdout.buffer.write`` + ``flush``. Answers ``initialize``,
``ping``, ``tools/list`` and ``tools/call``; ignores notifications. ``MCPBENCH_TOOLS``
(default 0) adds dummy tools ``tool_0001`` ... to ``tools/list``.

The 2026-07-28 era, as little of it as a client can tell: ``server/discover`` is answered, and a
request whose ``params._meta`` names a protocol version gets ``resultType: "complete"`` in its result
(nothing is checked: no envelope validation, no server info, no caching hints).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import orjson

SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = "2025-06-18"
MODERN_VERSIONS = ["2026-07-28"]
PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
DISCOVER_RESULT: dict[str, Any] = {
    "resultType": "complete",
    "supportedVersions": MODERN_VERSIONS,
    "capabilities": {"tools": {}},
    "ttlMs": 0,
    "cacheScope": "public",
}

ECHO_TOOL: dict[str, Any] = {
    "name": "echo",
    "description": "Echo the message back.",
    "inputSchema": {
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
    },
}


def build_tools(extra: int) -> list[dict[str, Any]]:
    tools = [ECHO_TOOL]
    for i in range(1, extra + 1):
        tools.append(
            {
                "name": f"tool_{i:04d}",
                "description": f"Dummy tool number {i}.",
                "inputSchema": {"type": "object", "properties": {"x": {"type": "integer"}}},
            }
        )
    if os.environ.get("MCPBENCH_COMPLEX") == "1":  # listed and answered, never validated (the limit)
        schema = json.loads((Path(__file__).parent / "complex_schema.json").read_text())
        tools.append(
            {"name": "complex", "description": "A tool with a complex schema.", "inputSchema": schema}
        )
    return tools


def main() -> None:
    tools = build_tools(int(os.environ.get("MCPBENCH_TOOLS", "0") or 0))
    tool_names = {tool["name"] for tool in tools}
    readline = sys.stdin.buffer.readline
    out = sys.stdout.buffer
    loads = orjson.loads
    dumps = orjson.dumps
    while True:
        line = readline()
        if not line:
            return
        if line.isspace():
            continue
        msg_id: Any = None
        try:
            msg = loads(line)
            if "id" not in msg:
                continue  # notification (or a response): nothing to answer
            msg_id = msg["id"]
            method = msg.get("method")
            params = msg.get("params") or {}
            if method == "tools/call":
                name = params.get("name")
                arguments = params.get("arguments") or {}
                if name == "echo":
                    reply: dict[str, Any] = {
                        "jsonrpc": "2.0",
                        "id": msg_id,
                        "result": {"content": [{"type": "text", "text": arguments.get("message", "")}]},
                    }
                elif name in tool_names:
                    text = str(arguments.get("x", 0))
                    reply = {
                        "jsonrpc": "2.0",
                        "id": msg_id,
                        "result": {"content": [{"type": "text", "text": text}]},
                    }
                else:
                    error = {"code": -32602, "message": f"Unknown tool: {name}"}
                    reply = {"jsonrpc": "2.0", "id": msg_id, "error": error}
            elif method == "initialize":
                requested = params.get("protocolVersion")
                version = requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION
                result: dict[str, Any] = {
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "bench-raw-echo", "version": "0.1.0"},
                }
                reply = {"jsonrpc": "2.0", "id": msg_id, "result": result}
            elif method == "tools/list":
                reply = {"jsonrpc": "2.0", "id": msg_id, "result": {"tools": tools}}
            elif method == "ping":
                reply = {"jsonrpc": "2.0", "id": msg_id, "result": {}}
            elif method == "server/discover":
                reply = {"jsonrpc": "2.0", "id": msg_id, "result": DISCOVER_RESULT}
            else:
                error = {"code": -32601, "message": f"Method not found: {method}"}
                reply = {"jsonrpc": "2.0", "id": msg_id, "error": error}
            meta = params.get("_meta")
            if "result" in reply and meta and PROTOCOL_VERSION_META in meta:
                reply["result"]["resultType"] = "complete"
        except (orjson.JSONDecodeError, AttributeError, TypeError) as exc:
            reply = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32700, "message": str(exc)}}
        out.write(dumps(reply) + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
