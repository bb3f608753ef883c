"""The raw limit over HTTP: a minimal ASGI 3 MCP echo app under uvicorn, no framework at all.

Every POST body is one JSON-RPC message, parsed with ``orjson``. Requests (``initialize``,
``ping``, ``tools/list``, ``tools/call``) are answered with ``200 application/json``;
notifications and responses with ``202`` and no body. No sessions, no header checks, no SSE:
only what any MCP server over Streamable HTTP must at least do, so it bounds what uvicorn and
this Python allow. ``MCPBENCH_TOOLS`` (default 0) adds dummy tools ``tool_0001`` ...

The 2026-07-28 era, as little of it as a client can tell: ``server/discover`` is answered, and a
request whose ``params._meta`` names a protocol version gets ``resultType: "complete"`` in its result
(the ``Mcp-*`` headers and the envelope are not checked).

Usage: ``python bench/servers/raw_asgi.py [PORT]`` (else ``MCPBENCH_PORT``, else 8000), served
on 127.0.0.1 with the same ``uvicorn.run`` options as ``jsonrpc-mcp serve --http``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import orjson

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_EMPTY_START: Message = {"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]}
_EMPTY_BODY: Message = {"type": "http.response.body", "body": b""}

SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = "2025-06-18"
PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
DISCOVER_RESULT: dict[str, Any] = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}},
    "ttlMs": 0,
    "cacheScope": "public",
}


def build_tools(extra: int) -> list[dict[str, Any]]:
    echo = {
        "name": "echo",
        "description": "Echo the message back.",
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
    }
    dummy_schema = {"type": "object", "properties": {"x": {"type": "integer"}}}
    dummies = [
        {"name": f"tool_{i:04d}", "description": f"Dummy tool number {i}.", "inputSchema": dummy_schema}
        for i in range(1, extra + 1)
    ]
    if os.environ.get("MCPBENCH_COMPLEX") == "1":  # listed and answered, never validated (the limit)
        schema = json.loads((Path(__file__).parent / "complex_schema.json").read_text())
        dummies.append(
            {"name": "complex", "description": "A tool with a complex schema.", "inputSchema": schema}
        )
    return [echo, *dummies]


TOOLS = build_tools(int(os.environ.get("MCPBENCH_TOOLS", "0") or 0))
TOOL_NAMES = frozenset(tool["name"] for tool in TOOLS)


def _answer(msg: dict[str, Any]) -> dict[str, Any]:
    reply = _reply(msg)
    meta = (msg.get("params") or {}).get("_meta")
    if "result" in reply and meta and PROTOCOL_VERSION_META in meta:
        reply["result"]["resultType"] = "complete"
    return reply


def _reply(msg: dict[str, Any]) -> dict[str, Any]:
    msg_id = msg["id"]
    method = msg.get("method")
    params = msg.get("params") or {}
    if method == "tools/call":
        name = params.get("name")
        arguments = params.get("arguments") or {}
        if name == "echo":
            text = arguments.get("message", "")
        elif name in TOOL_NAMES:
            text = str(arguments.get("x", 0))
        else:
            return {
                "jsonrpc": "2.0",
                "id": msg_id,
                "error": {"code": -32602, "message": f"Unknown tool: {name}"},
            }
        return {"jsonrpc": "2.0", "id": msg_id, "result": {"content": [{"type": "text", "text": text}]}}
    if method == "initialize":
        requested = params.get("protocolVersion")
        result: dict[str, Any] = {
            "protocolVersion": requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench-raw-asgi", "version": "0.1.0"},
        }
        return {"jsonrpc": "2.0", "id": msg_id, "result": result}
    if method == "tools/list":
        return {"jsonrpc": "2.0", "id": msg_id, "result": {"tools": TOOLS}}
    if method == "ping":
        return {"jsonrpc": "2.0", "id": msg_id, "result": {}}
    if method == "server/discover":
        return {"jsonrpc": "2.0", "id": msg_id, "result": DISCOVER_RESULT}
    error = {"code": -32601, "message": f"Method not found: {method}"}
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _respond(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        await _lifespan(receive, send)
        return
    if scope["type"] != "http":
        return
    message = await receive()
    body: bytes = message.get("body", b"")
    while message.get("more_body", False):
        message = await receive()
        body += message.get("body", b"")
    if scope["method"] != "POST":
        error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "POST only"}}
        await _respond(send, 405, orjson.dumps(error))
        return
    try:
        msg = orjson.loads(body)
        if not isinstance(msg, dict):
            raise TypeError("not a JSON object")
        if "id" not in msg or "method" not in msg:  # a notification or a response
            await send(_EMPTY_START)
            await send(_EMPTY_BODY)
            return
        reply = _answer(msg)
    except (orjson.JSONDecodeError, AttributeError, TypeError) as exc:
        reply = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": str(exc)}}
        await _respond(send, 400, orjson.dumps(reply))
        return
    await _respond(send, 200, orjson.dumps(reply))


def stack() -> dict[str, Any]:
    """uvicorn's event loop and HTTP parser: ``$MCPBENCH_UVICORN_LOOP`` / ``$MCPBENCH_UVICORN_HTTP``,
    else the default stack (asyncio, h11), pinned so that an installed uvloop changes nothing."""
    return {
        "loop": os.environ.get("MCPBENCH_UVICORN_LOOP", "asyncio"),
        "http": os.environ.get("MCPBENCH_UVICORN_HTTP", "h11"),
    }


def main() -> None:
    import uvicorn

    port = int(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("MCPBENCH_PORT", "8000"))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False, **stack())


if __name__ == "__main__":
    main()
