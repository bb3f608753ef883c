"""JSON-RPC 2.0, knowing nothing of MCP: messages, codec, sans-IO peer, endpoint, method table."""

from .endpoint import CancelSpec, Dispatcher, Endpoint, RequestContext
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
from .peer import Peer

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
