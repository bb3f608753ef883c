"""The HTTP client transport's shared core: state, request headers, delivery, failures, and the
reading of event streams (with resumption). See :mod:`._streamable` for the theory of operation."""

from __future__ import annotations

import contextlib
import logging
import math
import secrets
import ssl
from collections.abc import Iterable, Mapping
from typing import Any

import anyio
import anyio.abc
import orjson
from anyio.abc import TaskGroup

from ... import wire
from ..._version import __version__
from ..sse import SseParser
from ._authz import AUTH_FAILURE_KEY, AuthorizationError, HttpAuth, is_challenge
from ._mcp_headers import VERSION_HEADER, HeaderParameter, header_parameters
from ._messages import (
    DEFAULT_MAX_MESSAGE,
    DEFAULT_READ_TIMEOUT,
    DEFAULT_TIMEOUT,
    INVALID_REQUEST,
    MAX_ERROR_BODY,
    Mode,
    Outgoing,
    RequestId,
    StreamState,
    TransportFailure,
    error_bytes,
    sleep_ms,
    status_failure,
)
from ._pool import HttpTransportError, Pool, Response, ResponseTooLarge, TimeoutException, describe, split_url

__all__ = ["StreamCore", "read_quietly"]

logger = logging.getLogger("jsonrpc_mcp.transports.http")

JSON = wire.JSON_MEDIA
SSE = wire.EVENT_STREAM_MEDIA
ACCEPT_BOTH = f"{JSON}, {SSE}".encode("ascii")
_VERSION_HEADER = VERSION_HEADER.encode("ascii")
_LAST_EVENT_ID = wire.LAST_EVENT_ID.encode("ascii")
_SESSION_HEADER = wire.SESSION_HEADER.encode("ascii")

# What ends an exchange without being a bug: the network failed (the pool maps every low-level error
# to an HttpTransportError), or our own queue of incoming messages was closed under us (aclose).
BROKEN: tuple[type[BaseException], ...] = (
    HttpTransportError,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
)
BROKEN_OR_REFUSED: tuple[type[BaseException], ...] = (*BROKEN, TransportFailure)
BROKEN_OR_BAD_EVENT: tuple[type[BaseException], ...] = (*BROKEN, ValueError)  # (an oversized event)
_UNREADABLE: tuple[type[BaseException], ...] = (*BROKEN_OR_REFUSED, ResponseTooLarge)


MAX_AUTH_ROUNDS = 2  # challenges one request may answer: a 401, then one step-up


def why(exc: BaseException) -> str:
    """What went wrong, for messages and logs (a mapped network error already reads ``Type: text``)."""
    return str(exc) if isinstance(exc, HttpTransportError) else describe(exc)


async def read_quietly(response: Response, timeout: float) -> bytes:
    """A (bounded) body for an error message; b"" if it cannot be read."""
    try:
        return await response.read(timeout, MAX_ERROR_BODY)
    except _UNREADABLE:
        return b""


class StreamCore:
    """The state of one HTTP client transport and what both of its eras share: the pool, the headers
    of every request, the queue of incoming messages, failures turned into JSON-RPC errors, and the
    reading (and resuming) of event streams. :class:`HttpClientStream` adds the sending."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        ssl_context: ssl.SSLContext | None = None,
        fallback: bool = True,
        mode: Mode = "streamable",
        session_id: str | None = None,
        get_stream: bool = True,
        terminate_on_close: bool = True,
        max_message_size: int = DEFAULT_MAX_MESSAGE,
        max_idle_connections: int = 8,
        max_reconnects: int = 3,
        auth: HttpAuth | None = None,
    ) -> None:
        self.url = url
        self._auth = auth
        # requests refused for want of authorization, by the key their JSON-RPC error carries
        # (the Client raises the AuthorizationError itself: see claim_auth_failure)
        self.auth_failures: dict[str, AuthorizationError] = {}
        self._origin, self._target = split_url(url)
        self._post_target = self._target
        self._user_headers = [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in (headers or {}).items()
        ]
        self._user_header_names = {name for name, _ in self._user_headers}
        self._timeout = timeout
        self._read_timeout = read_timeout
        self._fallback = fallback
        self.mode: Mode = mode
        self.session_id: str | None = session_id
        self.protocol_version: str | None = None
        self._want_get_stream = get_stream
        self._terminate_on_close = terminate_on_close
        self._max_message = max_message_size
        self._max_reconnects = max_reconnects
        self._pool = Pool(self._origin, ssl_context, timeout, max_idle_connections)
        self._incoming_send, self._incoming = anyio.create_memory_object_stream[bytes](math.inf)
        self._bg: TaskGroup | None = None
        self._bg_done = anyio.Event()  # set once the background tasks (GET stream, POSTs) have ended
        self._closed = False
        # the handshake, kept for re-initialization
        self._init_message: Outgoing | None = None
        self._initialized_message: bytes | None = None
        self._init_result_pending = False
        self._reinit_lock = anyio.Lock()
        self._gate = anyio.Event()  # closed (unset) while the handshake decides the mode/session
        self._gate.set()
        self._get_running = False
        # set while a GET stream's request is out and its response head has not come back (aclose
        # waits for it, briefly, so that the server sees the GET before the session's DELETE)
        self._get_unanswered: anyio.Event | None = None
        self._get_supported: bool | None = None
        self._legacy_response: Response | None = None
        self._established = False  # an initialize POST succeeded (no more fallback)
        self._inflight: dict[RequestId, anyio.CancelScope] = {}
        self._modern_ids: set[RequestId] = set()  # stateless requests in flight
        self._listings: set[RequestId] = set()  # tools/list requests in flight
        self.tool_headers: dict[str, list[HeaderParameter]] = {}  # from tools/list results

    # -- MessageStream --------------------------------------------------------------------------
    async def receive(self) -> bytes:
        try:
            return await self._incoming.receive()
        except anyio.ClosedResourceError:
            raise anyio.EndOfStream from None

    def _learn_tools(self, result: Any) -> None:
        """Note the ``x-mcp-header`` parameters of each tool a ``tools/list`` result describes."""
        tools = result.get("tools") if isinstance(result, dict) else None
        for tool in tools if isinstance(tools, list) else []:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                self.tool_headers[tool["name"]] = header_parameters(tool.get("inputSchema"))

    # -- plumbing ---------------------------------------------------------------------------------
    async def _run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Host the background tasks until :meth:`aclose` cancels them."""
        try:
            async with anyio.create_task_group() as bg:
                self._bg = bg
                task_status.started()
                await anyio.sleep_forever()
        finally:
            self._bg_done.set()

    async def _wait_gate(self) -> bool:
        with anyio.move_on_after(self._timeout):
            await self._gate.wait()
            return True
        return False

    def _headers(
        self,
        *,
        accept: bytes,
        json_body: bool = False,
        session: str | None = None,
        version: bool = True,
        extra: Iterable[tuple[bytes, bytes]] = (),
    ) -> list[tuple[bytes, bytes]]:
        headers: list[tuple[bytes, bytes]] = []
        own = [
            (b"host", self._origin.host_header),
            (b"user-agent", b"jsonrpc-mcp/" + __version__.encode()),
            (b"accept", accept),
        ]
        if json_body:
            own.append((b"content-type", JSON.encode("ascii")))
        if session is not None:
            own.append((_SESSION_HEADER, session.encode("latin-1")))
        if version and self.protocol_version is not None and self.mode == "streamable":
            own.append((_VERSION_HEADER, self.protocol_version.encode("latin-1")))
        own.extend(extra)
        headers.extend(item for item in own if item[0] not in self._user_header_names)
        headers.extend(self._user_headers)
        return headers

    async def _request(
        self,
        method: bytes,
        target: bytes,
        headers: list[tuple[bytes, bytes]],
        body: bytes | None,
        *,
        head_timeout: float,
        written: anyio.Event | None = None,
    ) -> Response:
        """One request, up to the head of its response (see :meth:`Pool.request`).

        Authorization: with an auth object, its ``Authorization`` value goes on the request, and a
        challenge (401, or 403 ``insufficient_scope``) runs its flow and sends the request again, at
        most :data:`MAX_AUTH_ROUNDS` times. A challenge that stands raises
        :class:`AuthorizationError` (with no auth object, at once)."""
        auth = self._auth
        for attempt in range(MAX_AUTH_ROUNDS + 1):
            sent = None
            if auth is not None and b"authorization" not in self._user_header_names:
                sent = await auth.authorization(self.url)
            response = await self._pool.request(
                method,
                target,
                headers if sent is None else [*headers, (b"authorization", sent.encode("latin-1"))],
                body,
                write_timeout=self._timeout,
                head_timeout=head_timeout,
                written=written,
            )
            status = response.status
            if status != 401 and status != 403:  # (every answer but these: no challenge to read)
                if sent is not None and auth is not None and status < 400:
                    auth.succeeded(self.url)
                return response
            challenge = response.header("www-authenticate")
            if not is_challenge(status, challenge):
                return response  # a 403 that authorization cannot change
            await response.drain(self._timeout)
            await response.release()
            if auth is None or attempt == MAX_AUTH_ROUNDS:
                raise AuthorizationError.from_response(response.status, challenge)
            if not await auth.challenged(self.url, response.status, challenge, sent):
                raise AuthorizationError.from_response(response.status, challenge)
        raise AssertionError("unreachable")

    async def _fail_auth(self, out: Outgoing, failure: AuthorizationError, ids: Iterable[RequestId]) -> None:
        """Answer the requests with an error the Client turns back into ``failure``."""
        targets = list(ids)
        if not targets:
            logger.warning("%s was refused: %s", out.method or "a message", failure.message)
            return
        while len(self.auth_failures) >= 64:  # unclaimed ones (their callers gave up) are dropped
            self.auth_failures.pop(next(iter(self.auth_failures)))
        for rid in targets:
            key = secrets.token_hex(8)
            self.auth_failures[key] = failure
            data = {"httpStatus": failure.status, AUTH_FAILURE_KEY: key}
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self._incoming_send.send(error_bytes(rid, INVALID_REQUEST, failure.message, data))

    async def _read_body(self, response: Response, timeout: float) -> bytes:
        """A whole body of at most the maximum message size (more: a :class:`TransportFailure`)."""
        try:
            return await response.read(timeout, self._max_message)
        except ResponseTooLarge as exc:
            raise TransportFailure(str(exc)) from None

    async def _deliver(
        self,
        data: bytes,
        pending: set[RequestId] | None = None,
        capture: dict[RequestId, dict[str, Any]] | None = None,
    ) -> None:
        """Queue the message(s) in ``data`` for receive(); note which responses arrived.

        A response whose id is a key of ``capture`` is kept there instead of being delivered.
        """
        try:
            parsed = orjson.loads(data)
        except orjson.JSONDecodeError:
            await self._incoming_send.send(data)  # let the endpoint answer the parse error
            return
        items = parsed if isinstance(parsed, list) else None
        for item in items if items is not None else [parsed]:
            raw = orjson.dumps(item) if items is not None else data
            if isinstance(item, dict) and "method" not in item and "id" in item:
                rid = item["id"]
                if isinstance(rid, (str, int)) and not isinstance(rid, bool):
                    if rid in self._listings:
                        self._listings.discard(rid)
                        self._learn_tools(item.get("result"))
                    if pending is not None:
                        pending.discard(rid)
                    if capture is not None and rid in capture:
                        capture[rid] = item
                        continue
                    self._sniff_initialize(rid, item)
            await self._incoming_send.send(raw)

    def _sniff_initialize(self, rid: RequestId, item: dict[str, Any]) -> None:
        init = self._init_message
        if not self._init_result_pending or init is None or rid != init.ids[0]:
            return
        self._init_result_pending = False
        result = item.get("result")
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if isinstance(version, str):
            self.protocol_version = version

    async def _fail(self, out: Outgoing, failure: TransportFailure, ids: Iterable[RequestId] = ()) -> None:
        """Answer the given (default: all) requests of ``out`` with ``failure``; log it otherwise."""
        targets = list(ids) or out.ids
        if not targets:
            logger.warning("%s could not be delivered: %s", out.method or "a message", failure.message)
            return
        for rid in targets:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self._incoming_send.send(error_bytes(rid, failure.code, failure.message, failure.data))

    async def _fail_from_body(
        self, out: Outgoing, pending: set[RequestId], status: int, reason: str, body: bytes
    ) -> None:
        """Pass a JSON-RPC error body on for the pending requests, or synthesise one from the status."""
        if not pending:
            failure = status_failure(status, reason, body)
            logger.warning("%s was refused: %s", out.method or "a message", failure.message)
            return
        try:
            parsed = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            rid = parsed.get("id")
            if rid in pending:
                pending.discard(rid)
                await self._incoming_send.send(body)
                return
            for rid in sorted(pending, key=str):
                await self._incoming_send.send(orjson.dumps({**parsed, "jsonrpc": "2.0", "id": rid}))
            pending.clear()
            return
        await self._fail(out, status_failure(status, reason, body), sorted(pending, key=str))
        pending.clear()

    async def _follow_post_stream(
        self,
        response: Response,
        pending: set[RequestId],
        capture: dict[RequestId, dict[str, Any]] | None = None,
    ) -> None:
        """Read a POST's event stream until the responses it owes arrived, resuming it when it drops."""
        state = StreamState()
        progress = await self._consume_events(response, state, pending, capture)
        await response.release()
        failures = 0 if progress else 1
        while pending and not self._closed:
            if not state.last_event_id:
                return  # nothing to resume from: the caller reports the missing responses
            if failures > self._max_reconnects:
                raise TransportFailure("the event stream kept dropping before the response arrived")
            await sleep_ms(state.retry_ms)
            try:
                resumed = await self._resume(state)
            except BROKEN as exc:
                logger.info("could not resume an event stream: %s", why(exc))
                failures += 1
                continue
            if resumed is None:
                raise TransportFailure("the event stream dropped and the server would not resume it")
            progress = await self._consume_events(resumed, state, pending, capture)
            await resumed.release()
            failures = 0 if progress else failures + 1

    async def _resume(self, state: StreamState) -> Response | None:
        """GET with Last-Event-ID; the response if it is an event stream (None otherwise)."""
        assert state.last_event_id is not None
        headers = self._headers(
            accept=SSE.encode(),
            session=self.session_id,
            extra=[(_LAST_EVENT_ID, state.last_event_id.encode("utf-8"))],
        )
        response = await self._request(b"GET", self._target, headers, None, head_timeout=self._timeout)
        if 200 <= response.status < 300 and response.content_type == SSE:
            return response
        logger.info("the server refused to resume an event stream: HTTP %d", response.status)
        await response.drain(self._timeout)
        await response.release()
        return None

    async def _consume_events(
        self,
        response: Response,
        state: StreamState,
        pending: set[RequestId] | None,
        capture: dict[RequestId, dict[str, Any]] | None = None,
    ) -> bool:
        """Deliver a stream's message events until it ends, drops, goes silent for ``read_timeout``,
        or (when ``pending`` is given) every pending response arrived.

        True if the stream was worth having: an event arrived, or it was healthy but silent.
        """
        parser = SseParser(self._max_message)
        progress = False
        try:
            while not (pending is not None and not pending):
                chunk = await response.next_chunk(self._read_timeout)
                for event in parser.feed(chunk) if chunk is not None else parser.end():
                    progress = True
                    if event.retry is not None:
                        state.retry_ms = event.retry
                    if event.id is not None:
                        state.last_event_id = event.id
                    if event.event == "message" and event.data:
                        await self._deliver(event.data.encode("utf-8"), pending, capture)
                if chunk is None:
                    break
        except TimeoutException:
            logger.debug("an event stream was silent for %s s; reconnecting", self._read_timeout)
            return True
        except BROKEN as exc:
            if not self._closed:
                logger.debug("an event stream dropped: %s", why(exc))
            return progress
        except ValueError as exc:  # an oversized event
            logger.warning("abandoning an event stream: %s", exc)
            return progress
        if pending is not None and not pending:
            await response.drain(min(self._timeout, 1.0))  # the server ends the stream right after
        return progress
