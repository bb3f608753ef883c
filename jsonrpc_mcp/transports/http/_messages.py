"""What the HTTP client transport knows about the messages it carries, and how a failed exchange
becomes the JSON-RPC error its caller receives."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import anyio
import orjson

from ... import wire

__all__ = [
    "DEFAULT_MAX_MESSAGE",
    "DEFAULT_READ_TIMEOUT",
    "DEFAULT_RETRY_MS",
    "DEFAULT_TIMEOUT",
    "MAX_ERROR_BODY",
    "Mode",
    "RequestId",
    "StreamState",
    "TransportFailure",
    "Outgoing",
    "cancelled_id",
    "error_bytes",
    "inspect",
    "sleep_ms",
    "status_failure",
    "valid_session_id",
]

DEFAULT_TIMEOUT = 30.0  # connecting, writing, status of notifications, error bodies, DELETE, endpoint event
DEFAULT_READ_TIMEOUT = 300.0  # waiting for the answer to a request; silence on an event stream
DEFAULT_MAX_MESSAGE = 64 * 1024 * 1024
DEFAULT_RETRY_MS = 1000  # reconnection delay when the server gave no ``retry``
MAX_ERROR_BODY = 64 * 1024

INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603

Mode = Literal["streamable", "legacy"]
RequestId = str | int


class TransportFailure(Exception):
    """Why a message could not be exchanged (carried to the caller as a JSON-RPC error)."""

    def __init__(self, message: str, code: int = INTERNAL_ERROR, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.data = data


@dataclass(slots=True)
class Outgoing:
    """What the transport needs to know about a message it sends."""

    data: bytes
    ids: list[RequestId]  # ids of the requests in it (answers are owed for these)
    method: str | None  # of a single request/notification
    is_initialize: bool
    is_response: bool  # only responses (no requests, no notifications)
    parsed: Any = None  # the message, decoded
    modern: list[tuple[bytes, bytes]] | None = None  # a stateless-revision request: its headers


def inspect(data: bytes) -> Outgoing:
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError:
        return Outgoing(data, [], None, False, False)
    items = parsed if isinstance(parsed, list) else [parsed]
    ids: list[RequestId] = []
    only_responses = bool(items)
    for item in items:
        if not isinstance(item, dict):
            only_responses = False
            continue
        if "method" in item:
            only_responses = False
            rid = item.get("id")
            if isinstance(rid, (str, int)) and not isinstance(rid, bool):
                ids.append(rid)
        elif "id" not in item:
            only_responses = False
    method = parsed.get("method") if isinstance(parsed, dict) else None
    is_init = method == wire.INITIALIZE and bool(ids)
    return Outgoing(data, ids, method if isinstance(method, str) else None, is_init, only_responses, parsed)


def error_bytes(rid: RequestId | None, code: int, message: str, data: Any = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return orjson.dumps({"jsonrpc": "2.0", "id": rid, "error": error})


def status_failure(status: int, reason: str, body: bytes) -> TransportFailure:
    text = body[:200].decode("utf-8", errors="replace").strip()
    message = f"HTTP {status} {reason}".rstrip() + (f": {text}" if text else "")
    code = INVALID_REQUEST if 400 <= status < 500 else INTERNAL_ERROR
    return TransportFailure(message, code, {"httpStatus": status})


@dataclass(slots=True)
class StreamState:
    """A reader's cursor on one logical event stream, kept across reconnections."""

    last_event_id: str | None = None
    retry_ms: int | None = None


def cancelled_id(message: Any) -> RequestId | None:
    """The ``requestId`` a ``notifications/cancelled`` message names."""
    params = message.get("params") if isinstance(message, dict) else None
    rid = params.get(wire.CANCEL_ID_KEY) if isinstance(params, dict) else None
    return rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None


def valid_session_id(value: str) -> bool:
    return bool(value) and all(0x21 <= ord(ch) <= 0x7E for ch in value)


async def sleep_ms(retry_ms: int | None) -> None:
    await anyio.sleep((DEFAULT_RETRY_MS if retry_ms is None else retry_ms) / 1000)
