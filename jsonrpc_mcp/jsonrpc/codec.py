"""Bytes <-> messages, on orjson.

``decode`` never raises: what cannot be used comes back as :class:`Invalid` carrying the error to
answer with. ``encode_*`` produce compact JSON on one line; orjson escapes control characters inside
strings, so an encoded message never contains a raw newline and stdio framing stays intact.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson

from .errors import InternalError, InvalidRequest, JsonRpcError, ParseError
from .messages import ErrorResponse, Incoming, Invalid, Message, Notification, Request, RequestId, Response

__all__ = [
    "decode",
    "encode",
    "encode_answer",
    "encode_error",
    "encode_notification",
    "encode_request",
    "encode_response",
    "parse_message",
]

_dumps = orjson.dumps
logger = logging.getLogger("jsonrpc_mcp.jsonrpc")


_ABSENT: Any = object()  # a member not in the message (None would be a JSON null)


def _id_ok(value: object) -> bool:
    # bool is a subclass of int; JSON-RPC ids are strings or whole numbers, never true/false.
    t = type(value)
    return t is str or t is int


def _readable_id(obj: dict[str, Any]) -> RequestId | None:
    value = obj.get("id")
    return value if _id_ok(value) else None


def decode(data: bytes | str) -> Incoming | list[Incoming]:
    """Decode one framed message: a single message, a batch (a list), or :class:`Invalid`."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return Invalid(None, ParseError(f"Parse error: {_short(str(exc))}"))
    if type(obj) is list:
        if not obj:
            return Invalid(None, InvalidRequest("Invalid Request: empty batch"))
        return [parse_message(item) for item in obj]
    return parse_message(obj)


def parse_message(obj: Any) -> Incoming:
    """Classify one decoded JSON value, checking its shape strictly."""
    if type(obj) is not dict:
        return Invalid(None, InvalidRequest("Invalid Request: a message must be a JSON object"))
    if obj.get("jsonrpc") != "2.0":
        return Invalid(_readable_id(obj), InvalidRequest('Invalid Request: "jsonrpc" must be exactly "2.0"'))
    method = obj.get("method", _ABSENT)
    if method is not _ABSENT:
        if type(method) is not str:
            return Invalid(_readable_id(obj), InvalidRequest('Invalid Request: "method" must be a string'))
        params = obj.get("params", _ABSENT)
        if params is _ABSENT:
            params = None
        elif type(params) is not dict and type(params) is not list:  # (null included)
            return Invalid(
                _readable_id(obj), InvalidRequest('Invalid Request: "params" must be an object or an array')
            )
        rid = obj.get("id", _ABSENT)
        if rid is _ABSENT:
            return Notification(method, params)
        t = type(rid)
        if t is not str and t is not int:  # (_id_ok, inline: this is every request's path)
            return Invalid(
                None, InvalidRequest('Invalid Request: "id" must be a string or an integer (not null/bool)')
            )
        return Request(rid, method, params)
    has_result = "result" in obj
    has_error = "error" in obj
    if has_result == has_error:
        return Invalid(
            _readable_id(obj),
            InvalidRequest('Invalid Request: a message needs "method", or exactly one of "result"/"error"'),
        )
    rid = obj.get("id")
    if has_result:
        if not _id_ok(rid):
            return Invalid(
                None, InvalidRequest('Invalid Request: a response "id" must be a string or an integer')
            )
        return Response(rid, obj["result"])  # type: ignore[arg-type]
    error = obj["error"]
    if (
        type(error) is not dict
        or type(error.get("code")) is not int
        or type(error.get("message")) is not str
        or (rid is not None and not _id_ok(rid))
    ):
        return Invalid(
            _readable_id(obj), InvalidRequest("Invalid Request: malformed error object in a response")
        )
    return ErrorResponse(rid, error)


def encode_request(rid: RequestId, method: str, params: Any = None) -> bytes:
    """The bytes of a request (``params`` left out when None)."""
    if params is None:
        return _dumps({"jsonrpc": "2.0", "id": rid, "method": method})
    return _dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})


def encode_notification(method: str, params: Any = None) -> bytes:
    """The bytes of a notification (``params`` left out when None)."""
    if params is None:
        return _dumps({"jsonrpc": "2.0", "method": method})
    return _dumps({"jsonrpc": "2.0", "method": method, "params": params})


def encode_response(rid: RequestId, result: Any) -> bytes:
    """Encode a result; raises ``TypeError`` when the result is not JSON (see :func:`encode_answer`)."""
    return _dumps({"jsonrpc": "2.0", "id": rid, "result": result})


def encode_answer(request: Request, result: Any) -> bytes:
    """The response carrying ``result``, or -32603 (logged) when the result is not JSON."""
    try:
        return _dumps({"jsonrpc": "2.0", "id": request.id, "result": result})
    except TypeError as exc:  # orjson raises a TypeError subclass for what is not JSON
        logger.error("result of %r is not JSON-serialisable: %s", request.method, exc)
        return encode_error(request.id, InternalError("Internal error: result is not JSON"))


def encode_error(rid: RequestId | None, error: JsonRpcError, *, omit_null_id: bool = False) -> bytes:
    """Encode an error response. With ``omit_null_id`` an unknown id is left out instead of ``null``."""
    try:
        body = error.to_dict()
        if rid is None and omit_null_id:
            return _dumps({"jsonrpc": "2.0", "error": body})
        return _dumps({"jsonrpc": "2.0", "id": rid, "error": body})
    except TypeError:  # error.data was not JSON: drop it rather than lose the error
        body = {"code": error.code, "message": error.message}
        return _dumps({"jsonrpc": "2.0", "id": rid, "error": body})


def encode(message: Message) -> bytes:
    """Encode any message object (convenience; the endpoint uses the specific encoders)."""
    if isinstance(message, Request):
        return encode_request(message.id, message.method, message.params)
    if isinstance(message, Notification):
        return encode_notification(message.method, message.params)
    if isinstance(message, Response):
        return encode_response(message.id, message.result)
    body = {"jsonrpc": "2.0", "id": message.id, "error": message.error}
    return _dumps(body)


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
