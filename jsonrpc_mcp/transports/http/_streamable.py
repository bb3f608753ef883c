"""MCP over HTTP, client side: Streamable HTTP (2025-03-26 and later), with fallback to the
deprecated HTTP+SSE transport (2024-11-05, :mod:`._legacy`).

The transport is a :class:`~jsonrpc_mcp.transports.base.MessageStream`, so :class:`Client` runs over
it unchanged (open it with :func:`~jsonrpc_mcp.transports.http.connect_http`).

Theory of operation
-------------------
``send(message)`` POSTs the message. Every JSON-RPC message that comes back (a JSON body, possibly a
batch array, split into its messages; the ``message`` events of a POST's event stream; the events of
the standalone GET stream) is queued for ``receive()``. A POST that carries requests runs in a
background task (``send`` returns once its bytes are written, so several requests can be in flight,
one keep-alive connection each); a POST of notifications or responses is awaited to its ``202``.

HTTP is kept below the JSON-RPC layer: whatever goes wrong with a POST that carried requests (an
error status, a dropped connection, a timeout) is turned into a JSON-RPC error response for each
request still unanswered, so the caller's ``request`` raises :class:`JsonRpcError` instead of hanging.
A JSON-RPC error body is delivered as is (given the request's id when it had none); anything else
becomes ``-32600`` (4xx) or ``-32603`` naming the HTTP status.

Sessions: the ``Mcp-Session-Id`` of the initialize response is sent on every later request, and the
negotiated revision (read from the initialize result as it passes through) as ``MCP-Protocol-Version``.
A ``404`` to a request carrying the session id means the session is gone: the stored ``initialize``
request and ``notifications/initialized`` are replayed (without the old id), and the failed message is
sent again in the new session. After the handshake the standalone GET stream is opened (``405``: the
server offers none). Closing sends ``DELETE`` with the session id.

Resumability: each event stream's last event id and ``retry`` are tracked; a stream that drops before
it delivered what it owes (a POST stream: its responses; the GET stream: always) is resumed with a
GET carrying ``Last-Event-ID`` after ``retry`` ms.

Fallback: when ``fallback`` is on and the initialize POST is answered ``400``, ``404`` or ``405``,
the URL is fetched with GET expecting the legacy ``endpoint`` event; from then on messages are POSTed
to that endpoint and every reply arrives on the event stream.

The stateless revisions (2026-07-28): a request whose ``params._meta`` names a protocol version is
*modern* and stands alone: it is POSTed without a session id, with ``MCP-Protocol-Version`` (the
version in its envelope), ``Mcp-Method``, ``Mcp-Name`` (``params.name`` of ``tools/call`` and
``prompts/get``, ``params.uri`` of ``resources/read``) and, for ``tools/call``, an ``Mcp-Param-{Name}``
header per argument whose property schema says ``"x-mcp-header": "{Name}"`` (known from the
``tools/list`` results that passed through this transport). Values that are not plain visible
ASCII, have surrounding whitespace or look like the sentinel are sent as ``=?base64?...?=``. A
modern request is cancelled by closing its response stream: ``notifications/cancelled`` for it is
not POSTed. The server's 4xx answers (``-32020``, ``-32021``, ``-32022``, ``-32601`` ...) reach the
caller as the JSON-RPC errors in their bodies.

HTTP/1.1 is spoken by :mod:`._pool` (h11 over anyio sockets, TLS for ``https://``); the ``Mcp-*``
headers are built by :mod:`._mcp_headers`; the state, delivery and event-stream reading shared with
the legacy transport are in :mod:`._core`.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import orjson

from ... import wire
from ._authz import AuthorizationError
from ._core import ACCEPT_BOTH, BROKEN, BROKEN_OR_REFUSED, JSON, SSE, StreamCore, read_quietly, why
from ._legacy import fall_back, post_legacy
from ._mcp_headers import HeaderParameter, modern_headers
from ._messages import (
    INTERNAL_ERROR,
    Outgoing,
    RequestId,
    StreamState,
    TransportFailure,
    cancelled_id,
    inspect,
    sleep_ms,
    valid_session_id,
)
from ._pool import Response

__all__ = ["HttpClientStream"]

logger = logging.getLogger("jsonrpc_mcp.transports.http")

_LAST_EVENT_ID = wire.LAST_EVENT_ID.encode("ascii")


_GET_HEAD_GRACE = 2.0  # seconds aclose waits for the head of a GET already sent


class HttpClientStream(StreamCore):
    """A :class:`MessageStream` over Streamable HTTP (or legacy HTTP+SSE). Open it with
    :func:`connect_http` (or :func:`streamable_http` / :func:`legacy_sse`), which own its tasks."""

    # -- MessageStream --------------------------------------------------------------------------
    async def send(self, message: bytes) -> None:
        """POST one message (to the legacy message endpoint after a fallback); its answers, and
        the server's messages on any stream, come out of :meth:`receive`."""
        if self._closed:
            raise anyio.ClosedResourceError("the HTTP transport is closed")
        out = inspect(message)
        if out.method == wire.CANCELLED and self._modern_ids:
            rid = cancelled_id(out.parsed)
            if rid is not None and rid in self._modern_ids:
                # a stateless request is cancelled by closing its response stream, nothing is POSTed
                self._abandon(out.data)
                return
        out.modern = self._modern_headers(out)
        if out.modern is not None:
            self._modern_ids.update(out.ids)
        if out.method == wire.TOOLS_LIST:
            self._listings.update(out.ids)
        if out.is_initialize:
            self._init_message = out
            self._init_result_pending = True
            if self.mode == "streamable":
                await self._wait_gate()
                self._gate = anyio.Event()  # until the server answered the initialize POST
        elif out.method == wire.INITIALIZED:
            self._initialized_message = message
        if not out.is_initialize and not await self._wait_gate():
            await self._fail(out, TransportFailure("timed out waiting for the session to be established"))
            return
        if self.mode == "legacy":
            await post_legacy(self, out)
            return
        if out.ids:
            written = anyio.Event()
            assert self._bg is not None
            self._bg.start_soon(self._post_task, out, written)
            await written.wait()
            return
        await self._post_task(out, None)
        if out.method == wire.CANCELLED:
            self._abandon(out.data)

    def _abandon(self, data: bytes) -> None:
        """After ``notifications/cancelled`` went out: stop waiting for the cancelled request's answer."""
        try:
            rid = cancelled_id(orjson.loads(data))
        except orjson.JSONDecodeError:
            return
        scope = self._inflight.get(rid) if rid is not None else None
        if scope is not None:
            scope.cancel()

    def _modern_headers(self, out: Outgoing) -> list[tuple[bytes, bytes]] | None:
        parsed = out.parsed
        parameters: list[HeaderParameter] = []
        if out.method == wire.TOOLS_CALL and isinstance(parsed, dict):
            params = parsed.get("params")
            name = params.get("name") if isinstance(params, dict) else None
            if isinstance(name, str):
                parameters = self.tool_headers.get(name, [])
        return modern_headers(parsed, parameters)

    async def aclose(self) -> None:
        """End the streams, then the session (a DELETE, with ``terminate_on_close``), then the
        connections; a second call does nothing."""
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            if self._bg is not None:
                # The GET stream and the POSTs end first: nothing of this session may reach the
                # server after its DELETE (a GET racing it would meet a deleted session). A GET whose
                # request is already out is let reach the server first: its bytes may still sit in
                # the socket, and the server reads each connection in its own order.
                unanswered = self._get_unanswered
                if unanswered is not None:
                    with anyio.move_on_after(min(self._timeout, _GET_HEAD_GRACE)):
                        await unanswered.wait()
                self._bg.cancel_scope.cancel()
                with anyio.move_on_after(self._timeout):
                    await self._bg_done.wait()
            if self.mode == "streamable" and self.session_id is not None and self._terminate_on_close:
                await self._delete_session()
            if self._legacy_response is not None:
                await self._legacy_response.release()
            await self._pool.aclose()
            await self._incoming_send.aclose()
            await self._incoming.aclose()

    # -- Streamable HTTP: POST --------------------------------------------------------------------
    async def _post_task(self, out: Outgoing, written: anyio.Event | None) -> None:
        pending = set(out.ids)
        scope = anyio.CancelScope()
        for rid in out.ids:
            self._inflight[rid] = scope
        try:
            with scope:
                await self._post(out, pending, written, may_reinitialize=True)
            if scope.cancelled_caught:
                pending.clear()  # the caller cancelled the request: nobody waits for an answer
        except AuthorizationError as refused:
            await self._fail_auth(out, refused, sorted(pending, key=str))
            pending.clear()
        except TransportFailure as refused:
            await self._fail(out, refused, sorted(pending, key=str))
            if not out.ids and not out.is_response and not self._closed:
                raise anyio.BrokenResourceError(refused.message) from None
        except BROKEN as exc:
            if self._closed:
                return
            broken = TransportFailure(f"HTTP transport error: {why(exc)}")
            await self._fail(out, broken, sorted(pending, key=str))
            if not out.ids and not out.is_response:
                raise anyio.BrokenResourceError(broken.message) from None
        except Exception:
            logger.exception("unexpected error while POSTing a message")
            await self._fail(
                out, TransportFailure("internal error in the HTTP transport"), sorted(pending, key=str)
            )
        else:
            if pending and not self._closed:
                ended = TransportFailure("the HTTP response ended before the JSON-RPC response arrived")
                await self._fail(out, ended, sorted(pending, key=str))
        finally:
            for rid in out.ids:
                self._modern_ids.discard(rid)
                self._listings.discard(rid)
                if self._inflight.get(rid) is scope:
                    del self._inflight[rid]
            if written is not None:
                written.set()
            if out.is_initialize:
                self._gate.set()

    async def _post(
        self, out: Outgoing, pending: set[RequestId], written: anyio.Event | None, *, may_reinitialize: bool
    ) -> None:
        if out.modern is not None:  # stands alone: no session, its own version and routing headers
            session = None
            headers = self._headers(accept=ACCEPT_BOTH, json_body=True, version=False, extra=out.modern)
        else:
            session = None if out.is_initialize else self.session_id
            headers = self._headers(
                accept=ACCEPT_BOTH, json_body=True, session=session, version=not out.is_initialize
            )
        head_timeout = self._read_timeout if out.ids else self._timeout
        response = await self._request(
            b"POST", self._post_target, headers, out.data, head_timeout=head_timeout, written=written
        )
        try:
            status = response.status
            if out.is_initialize and 200 <= status < 300:
                new_session = response.header(wire.SESSION_HEADER)
                if new_session is not None and not valid_session_id(new_session):
                    raise TransportFailure(f"the server sent an invalid Mcp-Session-Id: {new_session!r}")
                self.session_id = new_session
                self._established = True
                self._gate.set()
            if status == 404 and session is not None and may_reinitialize and not out.is_response:
                body = await read_quietly(response, self._timeout)
                await response.release()
                if await self._reinitialize(session):
                    await self._post(out, pending, None, may_reinitialize=False)
                    return
                await self._fail_from_body(out, pending, status, response.reason, body)
                return
            if out.is_initialize and status in (400, 404, 405) and self._fallback and not self._established:
                body = await read_quietly(response, self._timeout)
                await response.release()
                if await fall_back(self, out, pending):
                    return
                await self._fail_from_body(out, pending, status, response.reason, body)
                return
            if not 200 <= status < 300:
                body = await read_quietly(response, self._timeout)
                await self._fail_from_body(out, pending, status, response.reason, body)
                return
            if out.method == wire.INITIALIZED:
                self._start_get_stream()
            await self._read_answer(response, out, pending)
        finally:
            await response.release()

    async def _read_answer(self, response: Response, out: Outgoing, pending: set[RequestId]) -> None:
        ctype = response.content_type
        if ctype == SSE:
            await self._follow_post_stream(response, pending)
            return
        body = await self._read_body(response, self._read_timeout if pending else self._timeout)
        if not body.strip():
            if pending:
                raise TransportFailure(
                    f"HTTP {response.status} without a body in answer to a request",
                    INTERNAL_ERROR,
                    {"httpStatus": response.status},
                )
            return
        if ctype == JSON or ctype == "" or ctype.endswith("+json"):
            await self._deliver(body, pending)
            return
        raise TransportFailure(f"unexpected Content-Type {ctype!r} in an HTTP answer", INTERNAL_ERROR)

    # -- Streamable HTTP: the standalone GET stream ------------------------------------------------
    def _start_get_stream(self) -> None:
        if (
            self._want_get_stream
            and not self._get_running
            and self._get_supported is not False
            and self.mode == "streamable"
            and self._bg is not None
            and not self._closed
        ):
            self._get_running = True
            self._bg.start_soon(self._get_stream)

    async def _get_stream(self) -> None:
        state = StreamState()
        failures = 0
        try:
            while not self._closed:
                extra = [(_LAST_EVENT_ID, state.last_event_id.encode())] if state.last_event_id else []
                headers = self._headers(accept=SSE.encode(), session=self.session_id, extra=extra)
                self._get_unanswered = unanswered = anyio.Event()
                try:
                    response = await self._request(
                        b"GET", self._target, headers, None, head_timeout=self._timeout
                    )
                except BROKEN as exc:
                    logger.debug("the GET stream could not be opened: %s", why(exc))
                    response = None
                except AuthorizationError as exc:
                    logger.info("no GET stream: %s", exc)
                    return
                finally:
                    unanswered.set()
                    self._get_unanswered = None
                if response is not None:
                    if response.status == 405:
                        self._get_supported = False
                    if not 200 <= response.status < 300 or response.content_type != SSE:
                        logger.debug("no GET stream: HTTP %d", response.status)
                        await response.drain(self._timeout)
                        await response.release()
                        return  # 405: not offered; 404: session gone (re-initialization reopens it)
                    self._get_supported = True
                    progress = await self._consume_events(response, state, None)
                    await response.release()
                    failures = 0 if progress else failures + 1
                else:
                    failures += 1
                if failures > self._max_reconnects:
                    logger.info("giving up on the GET stream after %d failed attempts", failures)
                    return
                await sleep_ms(state.retry_ms)
        except Exception:
            if not self._closed:
                logger.exception("the GET stream failed")
        finally:
            self._get_running = False

    # -- sessions ---------------------------------------------------------------------------------
    async def _reinitialize(self, expired: str) -> bool:
        """Replay the handshake after ``expired`` got a 404. True when a session is established."""
        async with self._reinit_lock:
            if self.session_id != expired:
                return self.session_id is not None  # another task already did it
            init = self._init_message
            if init is None:
                return False
            logger.info("session %s expired; re-initializing", expired)
            self._gate = gate = anyio.Event()
            try:
                return await self._replay_handshake(init)
            except BROKEN_OR_REFUSED as exc:
                logger.warning("re-initialization failed: %s", why(exc))
                return False
            finally:
                gate.set()

    async def _replay_handshake(self, init: Outgoing) -> bool:
        """POST the stored initialize (no session id), then notifications/initialized in the new
        session. Until it succeeds the expired id stays, so a later request tries again."""
        headers = self._headers(accept=ACCEPT_BOTH, json_body=True, version=False)
        response = await self._request(
            b"POST", self._post_target, headers, init.data, head_timeout=self._timeout
        )
        try:
            if not 200 <= response.status < 300:
                logger.warning("re-initialization refused: HTTP %d", response.status)
                return False
            new_session = response.header(wire.SESSION_HEADER)
            if new_session is None or not valid_session_id(new_session):
                return False
            rid = init.ids[0]
            capture: dict[RequestId, dict[str, Any]] = {rid: {}}
            pending = {rid}
            if response.content_type == SSE:
                await self._follow_post_stream(response, pending, capture)
            else:
                await self._deliver(await self._read_body(response, self._timeout), pending, capture)
        finally:
            await response.release()
        result = capture[rid].get("result")
        if not isinstance(result, dict):
            logger.warning("re-initialization failed: %r", capture[rid].get("error"))
            return False
        version = result.get("protocolVersion")
        if isinstance(version, str):
            self.protocol_version = version
        self.session_id = new_session
        if self._initialized_message is not None:
            headers = self._headers(accept=ACCEPT_BOTH, json_body=True, session=new_session)
            response = await self._request(
                b"POST", self._post_target, headers, self._initialized_message, head_timeout=self._timeout
            )
            await response.drain(self._timeout)
            await response.release()
            if not 200 <= response.status < 300:
                logger.warning(
                    "notifications/initialized refused on re-initialization: HTTP %d", response.status
                )
                return False
        self._start_get_stream()
        return True

    async def _delete_session(self) -> None:
        headers = self._headers(accept=ACCEPT_BOTH, session=self.session_id)
        with anyio.move_on_after(self._timeout):
            try:
                response = await self._request(
                    b"DELETE", self._target, headers, None, head_timeout=self._timeout
                )
                await response.drain(self._timeout)
                await response.release()
                if response.status >= 400 and response.status != 405:
                    logger.info("DELETE of the session answered HTTP %d", response.status)
            except BROKEN as exc:
                logger.debug("DELETE of the session failed: %s", why(exc))
            except AuthorizationError as exc:
                logger.info("DELETE of the session refused: %s", exc)
