"""The JSON-RPC 2.0 message model: four message kinds, plus the marker for input we cannot use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

RequestId = str | int
"""A request id: a string or an integer (never a boolean, a fraction or null)."""

Params = dict[str, Any] | list[Any] | None


@dataclass(slots=True)
class Request:
    """A call that expects exactly one response with the same id."""

    id: RequestId
    method: str
    params: Params = None


@dataclass(slots=True)
class Notification:
    """A call that is never answered."""

    method: str
    params: Params = None


@dataclass(slots=True)
class Response:
    """A successful answer to the request with the same id."""

    id: RequestId
    result: Any


@dataclass(slots=True)
class ErrorResponse:
    """A failed answer; ``id`` is None when the request's id could not be read."""

    id: RequestId | None
    error: dict[str, Any]


@dataclass(slots=True)
class Invalid:
    """Input that is not a usable message. ``error`` is what to answer; ``id`` echoes a readable id."""

    id: RequestId | None
    error: Any  # a JsonRpcError; typed loosely to keep this module free of the errors module


Message = Request | Notification | Response | ErrorResponse
Incoming = Request | Notification | Response | ErrorResponse | Invalid
