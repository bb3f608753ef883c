"""JSON-RPC 2.0, knowing nothing of MCP: messages, codec, sans-IO peer, endpoint, method table.

The names are loaded on first use (PEP 562): ``jsonrpc_mcp.jsonrpc.errors`` alone does not bring in
the endpoint (and with it asyncio and anyio).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .endpoint import Dispatcher, Endpoint, RequestContext
    from .errors import (
        INTERNAL_ERROR,
        INVALID_PARAMS,
        INVALID_REQUEST,
        METHOD_NOT_FOUND,
        PARSE_ERROR,
        ConnectionClosed,
        InternalError,
        InvalidParams,
        InvalidRequest,
        JsonRpcError,
        MethodNotFound,
        ParseError,
        RequestTimeout,
    )
    from .messages import ErrorResponse, Invalid, Message, Notification, Request, RequestId, Response
    from .methods import MethodTable
    from .peer import CancelSpec, Peer

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "CancelSpec",
    "ConnectionClosed",
    "Dispatcher",
    "Endpoint",
    "ErrorResponse",
    "InternalError",
    "Invalid",
    "InvalidParams",
    "InvalidRequest",
    "JsonRpcError",
    "Message",
    "MethodNotFound",
    "MethodTable",
    "Notification",
    "ParseError",
    "Peer",
    "Request",
    "RequestContext",
    "RequestId",
    "RequestTimeout",
    "Response",
]

if not TYPE_CHECKING:  # hidden from type checkers, which would take any unknown name for Any
    # the TYPE_CHECKING block as data, so no source is read (tests/test_lazy.py: they agree)
    __getattr__, __dir__ = lazy_names(
        globals(),
        {
            ".endpoint": ("Dispatcher", "Endpoint", "RequestContext"),
            ".errors": (
                "INTERNAL_ERROR",
                "INVALID_PARAMS",
                "INVALID_REQUEST",
                "METHOD_NOT_FOUND",
                "PARSE_ERROR",
                "ConnectionClosed",
                "InternalError",
                "InvalidParams",
                "InvalidRequest",
                "JsonRpcError",
                "MethodNotFound",
                "ParseError",
                "RequestTimeout",
            ),
            ".messages": (
                "ErrorResponse",
                "Invalid",
                "Message",
                "Notification",
                "Request",
                "RequestId",
                "Response",
            ),
            ".methods": ("MethodTable",),
            ".peer": ("CancelSpec", "Peer"),
        },
    )
