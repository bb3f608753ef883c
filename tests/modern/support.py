"""Helpers for the 2026-07-28 tests: a scripted peer, envelopes, and the official schema/examples."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import cache
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from jsonrpc_mcp.transports.memory import MemoryStream, memory_pair

MODERN = "2026-07-28"
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

SPEC = Path(__file__).resolve().parents[3] / "shared" / "spec"
SCHEMA = SPEC / "schema" / MODERN / "schema.json"
EXAMPLES = SPEC / "examples" / MODERN

Send = Callable[[dict[str, Any]], Awaitable[None]]
Responder = Callable[[dict[str, Any], Send], Awaitable[Any]]


@contextlib.asynccontextmanager
async def scripted_server(respond: Responder) -> AsyncIterator[tuple[MemoryStream, list[dict[str, Any]]]]:
    """A hand-written peer over an in-memory pair: ``respond(frame, send)`` returns the frame to
    answer with (or None) and may ``send`` others first. Yields the client's end and every frame the
    peer received, in order."""
    client_end, server_end = memory_pair()
    received: list[dict[str, Any]] = []

    async def send(frame: dict[str, Any]) -> None:
        await server_end.send(orjson.dumps(frame))

    async def run() -> None:
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            while True:
                frame = orjson.loads(await server_end.receive())
                received.append(frame)
                answer = await respond(frame, send)
                if answer is not None:
                    await send(answer)

    failure: Exception | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        try:
            yield client_end, received
        except Exception as exc:  # re-raised below as itself, not wrapped in an ExceptionGroup
            failure = exc
        finally:
            await server_end.aclose()
            tg.cancel_scope.cancel()
    if failure is not None:
        raise failure


def result(frame: dict[str, Any], value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": frame["id"], "result": value}


def error(frame: dict[str, Any], code: int, message: str = "no", data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": frame["id"], "error": body}


def discover_result(versions: list[str] | None = None) -> dict[str, Any]:
    return {
        "resultType": "complete",
        "supportedVersions": versions if versions is not None else [MODERN],
        "capabilities": {"tools": {}},
        "instructions": "Scripted.",
        "ttlMs": 0,
        "cacheScope": "public",
        "_meta": {SERVER_INFO: {"name": "scripted", "version": "1"}},
    }


def initialize_result(version: str = "2025-11-25") -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": {"prompts": {}},
        "serverInfo": {"name": "handshake", "version": "2"},
    }


def meta_of(frame: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = frame["params"]["_meta"]
    return meta


def sent_frames(client: Any) -> list[dict[str, Any]]:
    """What a client made by ``testing.connect(..., recorder=True)`` sent, decoded."""
    return [orjson.loads(frame) for frame in client.wire.sent]


def received_frames(client: Any) -> list[dict[str, Any]]:
    return [orjson.loads(frame) for frame in client.wire.received]


# -- the official schema --------------------------------------------------------------------------
@cache
def schema_document() -> dict[str, Any]:
    if not SCHEMA.is_file():
        pytest.skip(f"official schema not available: {SCHEMA}")
    document: dict[str, Any] = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return document


@cache
def _validator(name: str) -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator({**schema_document(), "$ref": f"#/$defs/{name}"})


def schema_errors(name: str, instance: Any) -> list[str]:
    """Where ``instance`` breaks the official 2026-07-28 definition ``name`` (empty: it is valid)."""
    errors = sorted(_validator(name).iter_errors(instance), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors]
