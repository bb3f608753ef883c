"""ASGI plumbing of the HTTP app: the ASGI types, responses, request headers and body, negotiation.

Pure helpers over ASGI ``scope``/``receive``/``send``: nothing here knows sessions or MCP eras.
Header names and media types are the byte forms of :mod:`jsonrpc_mcp.wire`'s names, made once here.
"""

from __future__ import annotations

import time
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator, Iterable, MutableMapping
from typing import Any

import anyio
import orjson

from .. import wire
from ..jsonrpc import codec
from ..jsonrpc.errors import JsonRpcError
from . import _security as security

__all__ = [
    "EVENT_STREAM",
    "JSON",
    "LAST_EVENT_ID",
    "SESSION_HEADER",
    "VERSION_HEADER",
    "Message",
    "Receive",
    "Scope",
    "Send",
    "error_body",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

# the wire names as ASGI carries them (bytes; header names in lower case)
JSON = wire.JSON_MEDIA.encode("latin-1")
EVENT_STREAM = wire.EVENT_STREAM_MEDIA.encode("latin-1")
SESSION_HEADER = wire.SESSION_HEADER.encode("latin-1")
VERSION_HEADER = wire.VERSION_HEADER.encode("latin-1")
LAST_EVENT_ID = wire.LAST_EVENT_ID.encode("latin-1")


class _Disconnected(Exception):
    """The client went away while the body was being read."""


class _BodyTimeout(Exception):
    """The request body did not arrive in time (a client dripping it, or stalled mid-body)."""

    def __init__(self, timeout: float) -> None:
        super().__init__(f"the request body did not arrive within {timeout:g} s")
        self.timeout = timeout


def error_body(code: int, message: str) -> bytes:
    """An id-less JSON-RPC error object (the form HTTP errors without a readable request use)."""
    return orjson.dumps({"jsonrpc": "2.0", "error": {"code": code, "message": message}})


_HEADERS_KEY = "jsonrpc_mcp.headers"


def _headers(scope: Scope) -> dict[bytes, bytes]:
    """The request headers by name (the last value of a repeated one), indexed once per request."""
    index: dict[bytes, bytes] | None = scope.get(_HEADERS_KEY)
    if index is None:
        index = scope[_HEADERS_KEY] = dict(scope["headers"])
    return index


def _header(scope: Scope, name: bytes) -> bytes | None:
    """A request header's value (the last one, if repeated)."""
    index: dict[bytes, bytes] | None = scope.get(_HEADERS_KEY)
    value = (_headers(scope) if index is None else index).get(name)
    return value if value is None or type(value) is bytes else bytes(value)


async def _respond(
    send: Send,
    status: int,
    body: bytes = b"",
    headers: Iterable[tuple[bytes, bytes]] = (),
    *,
    json: bool = True,
) -> None:
    out = [(b"content-type", JSON)] if body and json else []
    out.extend(headers)
    out.append((b"content-length", b"%d" % len(body)))
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": body})


async def _respond_json(send: Send, status: int, body: bytes) -> None:
    """:func:`_respond` of a JSON body with no other header (an answer: the hot path's response)."""
    headers = [(b"content-type", JSON), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _error(
    send: Send, status: int, code: int, message: str, headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    await _respond(send, status, error_body(code, message), headers)


async def _reject(send: Send, status: int, rid: Any, error: JsonRpcError) -> None:
    """A JSON-RPC error answering request ``rid`` (id-less when None) with an HTTP error status."""
    await _respond(send, status, codec.encode_error(rid, error, omit_null_id=True))


async def _read_body(
    scope: Scope, receive: Receive, limit: int, timeout: float | None = None
) -> bytes | None:
    """The request body, or None when it is over ``limit`` bytes; :class:`_BodyTimeout` when the
    whole of it has not arrived ``timeout`` seconds after reading began (None: no limit).

    The deadline covers the whole body, not each chunk: a client dripping a byte a second must not
    hold its connection (and the memory of a half-read request) for as long as it likes.
    """
    declared = _header(scope, b"content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None
    deadline: float | None = None
    chunks: list[bytes] = []
    size = 0
    while True:
        if timeout is None:
            message = await receive()
        else:
            # (see below: the first step taken here; a timer only when receive() has to wait)
            pending = receive()
            if type(pending) is types.CoroutineType:
                try:
                    yielded = pending.send(None)
                except StopIteration as done:
                    message = done.value
                else:
                    if deadline is None:
                        deadline = time.monotonic() + timeout
                    message = await _wait_by(_Resumed(pending, yielded), deadline, timeout)
            else:  # some other awaitable: no first step to take
                if deadline is None:
                    deadline = time.monotonic() + timeout
                message = await _wait_by(pending, deadline, timeout)
        if message["type"] == "http.disconnect":
            raise _Disconnected
        chunk = message.get("body", b"")
        if not message.get("more_body", False) and not chunks:  # the whole body in one message
            return chunk if len(chunk) <= limit else None
        if deadline is None and timeout is not None:  # reading began just now, as far as time tells
            deadline = time.monotonic() + timeout
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


# Theory of operation of the deadline. A cancel scope costs several microseconds to set up and tear
# down, on every POST, while nearly every body is already in the server's buffer when the app asks
# for it (it came in the segment that carried the headers), so receive() answers without waiting.
# _read_body therefore takes the first step of receive()'s coroutine itself: finished at once, it
# is the message, no timer was ever armed and the clock was not even read (the deadline counts
# from the first wait, microseconds after reading began). Only when receive() has to wait (it
# yielded to the event loop) is the rest of it awaited under a cancel scope ending at the
# deadline; _Resumed forwards the event loop's sends and throws (a cancellation included) to that
# coroutine, which is exactly what an ``await`` of it would have done from its second step on.
async def _wait_by(pending: Awaitable[Message], deadline: float, timeout: float) -> Message:
    """``await pending`` (the rest of a ``receive()``), or :class:`_BodyTimeout` if it has not
    answered by ``deadline``."""
    with anyio.move_on_after(deadline - time.monotonic()):
        return await pending
    raise _BodyTimeout(timeout)


class _Resumed:
    """The rest of a coroutine whose first step was taken by hand (it yielded ``yielded``)."""

    __slots__ = ("_coro", "_yielded")

    def __init__(self, coro: Coroutine[Any, Any, Any], yielded: Any) -> None:
        self._coro, self._yielded = coro, yielded

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, yielded = self._coro, self._yielded
        while True:
            try:
                sent = yield yielded
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # a cancellation, above all: the coroutine handles it
                try:
                    yielded = coro.throw(exc)
                except StopIteration as done:
                    return done.value
            else:
                try:
                    yielded = coro.send(sent)
                except StopIteration as done:
                    return done.value


_ACCEPTS: dict[tuple[bytes, bytes], bool] = {}


def _accepts(scope: Scope, media: bytes) -> bool:
    accept = _header(scope, b"accept")
    if accept is None:
        return False
    key = (accept, media)
    verdict = _ACCEPTS.get(key)
    if verdict is None:
        verdict = security.accepts([(b"accept", accept)], media.decode())  # q-values and ranges
        if len(_ACCEPTS) < 256:  # clients send few distinct Accept headers; a flood is not cached
            _ACCEPTS[key] = verdict
    return verdict


_JSON_CONTENT: dict[bytes, bool] = {}


def _is_json_content(scope: Scope) -> bool:
    content_type = _header(scope, b"content-type")
    if content_type is None:
        return False
    verdict = _JSON_CONTENT.get(content_type)
    if verdict is None:
        verdict = security.content_type_is_json([(b"content-type", content_type)])
        if len(_JSON_CONTENT) < 256:
            _JSON_CONTENT[content_type] = verdict
    return verdict
