"""The JSON-RPC endpoint: the only place in the JSON-RPC layer with concurrency.

Theory of operation
-------------------
The endpoint runs what its sans-IO :class:`~jsonrpc_mcp.jsonrpc.peer.Peer` tells it. Every
incoming message, whatever the entry (the reader loop :meth:`Endpoint.run`, a stdio read callback,
an HTTP body given to :meth:`Endpoint.process`), is decoded and classified in one place,
:meth:`Peer.next_event`, into an event (see the table in the peer's docstring), and:

* **Start**: the request is already registered in the peer under its own cancel scope, so a
  cancellation that arrives before the handler runs still wins. Every request, from any entry,
  runs in :meth:`Endpoint._run_request`; only *where* differs. From the reader: in the reader
  itself for the dispatcher's ``ordered_methods`` (e.g. ``initialize``, before any later message is
  read); otherwise on asyncio inline in the reading task (the fast path, ``_fastpath.py``), on
  other backends in a task of its own. From :meth:`Endpoint.process`: in the caller's task, the
  answer returned rather than sent. To stay fair, the reader yields to the event loop after a run
  of requests started (``INLINE_BURST``).
* **Batch**: its notifications and responses are handled in order, its requests run concurrently
  (one task), and one array carries their answers.
* Everything else (:meth:`Endpoint._settle`): a **notification** goes to the dispatcher inline,
  in arrival order (so that e.g. an "initialized" notification is handled before the requests that
  follow it); a **cancel** cancels the request's scope and then goes to the dispatcher too; a
  **response** wakes the outgoing request that waits for it (an unknown one is logged and dropped);
  a **duplicate** id or an **invalid** message is answered with the error the peer chose. That is
  the one place a duplicate id is refused.

Answering at most once: a request's answer is written only by whoever claims its id from the peer
first. The handler claims it when it finishes (with its own scope as the token, so a handler that
outlived its cancellation cannot claim a newer request reusing the id); a cancellation claims it and
cancels the scope. The loser does nothing, so a cancelled request is never answered and no request
is answered twice.

Outgoing requests wait on a slot with a timeout; on timeout (or when the caller is cancelled) the peer
is sent the cancellation notification and the slot is forgotten, so a late response is just dropped.

When the transport ends, every request in flight is cancelled and every outgoing request waiting
for a response fails with :class:`ConnectionClosed`.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from ..transports.base import FrameTooLarge, InlineCapableStream, MessageStream
from . import codec
from ._fastpath import INLINE_BURST, Adopt, Inline, Tasks, threaded_requests
from .errors import ConnectionClosed, InternalError, InvalidRequest, JsonRpcError, RequestTimeout
from .messages import ErrorResponse, Incoming, Notification, Request, RequestId, Response
from .peer import (
    Batch,
    Cancel,
    Duplicate,
    Event,
    InvalidMessage,
    NotificationArrived,
    Peer,
    ResponseArrived,
    Start,
)
from .peer import CancelSpec as CancelSpec  # (re-exported: its home was this module)

__all__ = ["Channel", "Dispatcher", "Endpoint", "Processed", "RequestContext"]

logger = logging.getLogger("jsonrpc_mcp.jsonrpc")

_USE_DEFAULT: Any = object()


class Outbound(Protocol):
    """Anything that can talk to the peer: the endpoint itself, or an HTTP per-request stream."""

    async def notify(self, method: str, params: Any = None) -> None: ...

    async def request(self, method: str, params: Any = None, *, timeout: float | None = ...) -> Any: ...


class Channel(Protocol):
    """Where messages to the peer go: the transport stream, or one HTTP response's event stream."""

    async def send(self, message: bytes) -> None: ...


class _NoChannel:
    async def send(self, message: bytes) -> None:
        raise anyio.BrokenResourceError("there is no channel to the peer for this message")


class _Via:
    """An Outbound that talks to the peer through a given channel (e.g. the request's HTTP response)."""

    __slots__ = ("channel", "endpoint")

    def __init__(self, endpoint: Endpoint, channel: Channel) -> None:
        self.endpoint = endpoint
        self.channel = channel

    async def notify(self, method: str, params: Any = None) -> None:
        await self.endpoint.notify(method, params, via=self.channel)

    async def request(self, method: str, params: Any = None, *, timeout: float | None = _USE_DEFAULT) -> Any:
        return await self.endpoint.request(method, params, timeout=timeout, via=self.channel)


class Processed:
    """What :meth:`Endpoint.process` did with one HTTP body."""

    __slots__ = ("answer", "has_requests", "invalid")

    def __init__(self, answer: bytes | None, has_requests: bool, invalid: bool) -> None:
        self.answer = answer  # the response (or batch array) to send back; None: nothing to send
        self.has_requests = has_requests
        self.invalid = invalid  # the body was not a usable message (answer is the error)


class RequestContext:
    """What a request handler knows about the request it serves, and how it talks back."""

    __slots__ = ("outbound", "request", "scope")

    def __init__(self, request: Request, outbound: Outbound, scope: anyio.CancelScope | None) -> None:
        self.request = request
        self.outbound = outbound
        self.scope = scope

    @property
    def id(self) -> RequestId:
        """The request's id."""
        return self.request.id

    @property
    def method(self) -> str:
        """The request's method."""
        return self.request.method

    @property
    def cancelled(self) -> bool:
        """True once the peer cancelled this request (readable from a handler's worker thread too)."""
        scope = self.scope
        if scope is None:
            return False
        try:
            return scope.cancel_called
        except RuntimeError:  # trio answers only in its event loop's thread: ask it there
            import anyio.from_thread  # only then (it costs cold-start time)

            return bool(anyio.from_thread.run_sync(lambda: scope.cancel_called))

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification to the peer while the request is served."""
        await self.outbound.notify(method, params)

    async def send_request(
        self, method: str, params: Any = None, *, timeout: float | None = _USE_DEFAULT
    ) -> Any:
        """Send a request to the peer while the request is served; its result (raises its
        :class:`JsonRpcError`, or :class:`RequestTimeout`)."""
        return await self.outbound.request(method, params, timeout=timeout)


class Dispatcher(Protocol):
    """The application side of an endpoint (an MCP session, or a plain JSON-RPC method table)."""

    @property
    def accepts_batches(self) -> bool:
        """Whether a JSON array of messages is served (False: answered with one -32600 error)."""
        ...

    @property
    def omits_unknown_ids(self) -> bool:
        """Whether an error for an unreadable request leaves ``id`` out (True) or sends ``null``."""
        ...

    @property
    def ordered_methods(self) -> frozenset[str]:
        """Requests served in the reader loop, in order, before any later message is read."""
        ...

    async def handle_request(self, request: Request, context: RequestContext) -> Any:
        """Return the result, or raise :class:`JsonRpcError`."""
        ...

    async def handle_notification(self, notification: Notification) -> None:
        """Handle a notification; nothing is answered, and what it raises is logged."""
        ...


class _Slot:
    """Where the response to one outgoing request lands."""

    __slots__ = ("error", "event", "result")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.result: Any = None
        self.error: BaseException | None = None


class _GroupTasks:
    """Other backends than asyncio: request and batch tasks in the endpoint's anyio task group."""

    __slots__ = ("_tg",)

    def __init__(self, tg: TaskGroup) -> None:
        self._tg = tg

    def spawn(self, fn: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> None:
        self._tg.start_soon(fn, *args)

    async def cancel_all(self) -> None:
        """Nothing of ours to wait for: cancelling the task group cancels them all."""


class Endpoint:
    """Serve a dispatcher over a message stream, and send requests and notifications to the peer."""

    def __init__(
        self,
        stream: MessageStream | None,
        dispatcher: Dispatcher,
        *,
        channel: Channel | None = None,
        request_timeout: float | None = 60.0,
        cancel: CancelSpec | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        """Serve ``dispatcher`` over ``stream`` (call :meth:`run`), or, without a stream, feed it
        bodies with :meth:`process` (HTTP). ``channel`` is where messages not tied to a request go
        (default: the stream)."""
        self._stream = stream
        if channel is None:
            channel = stream if stream is not None else _NoChannel()  # a stream is a channel
        self._channel: Channel = channel
        self.dispatcher = dispatcher
        self.request_timeout = request_timeout
        self._cancel = cancel
        self._on_close = on_close
        self._peer: Peer[_Slot, anyio.CancelScope] = Peer(
            self._new_scope, cancel=cancel, batches=self._accepts_batches
        )
        self._tasks: Tasks | _GroupTasks | None = None  # where request and batch tasks go
        self._fast: Inline | None = None  # asyncio: the fast path (see _fastpath.py)
        self._closed = False
        self._started: anyio.Event | None = None  # made when someone waits (clients do; HTTP never)
        self._running = False
        self._scope_type: type[anyio.CancelScope] | None = None
        # a response or cancellation this endpoint has no request for: given here first (True: taken,
        # e.g. forwarded to the instance that sent the request); see RedisBackend.bind in http/_redis.py
        self.unknown_response: Callable[[Response | ErrorResponse], bool] | None = None
        self.unknown_cancel: Callable[[RequestId, Notification], bool] | None = None

    def number_outgoing_from(self, base: int) -> None:
        """Number the next outgoing requests from ``base`` (see :meth:`Peer.number_outgoing_from`)."""
        self._peer.number_outgoing_from(base)

    # -- public API -------------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        """Whether the endpoint has closed (the stream ended or :meth:`aclose` was called)."""
        return self._closed

    async def wait_started(self) -> None:
        """Return once :meth:`run` is reading messages."""
        if self._running:
            return
        if self._started is None:
            self._started = anyio.Event()
        await self._started.wait()

    async def run(self) -> None:
        """Read and serve messages until the peer closes the stream; then cancel what is in flight."""
        if self._stream is None:
            raise RuntimeError("this endpoint has no stream to read; feed it with process()")
        try:
            async with anyio.create_task_group() as tg:
                loop = Inline.running_loop()
                fast = self._fast = Inline(loop, self._serve_one) if loop is not None else None
                tasks = self._tasks = fast.tasks if fast is not None else _GroupTasks(tg)
                self._running = True
                if self._started is not None:
                    self._started.set()
                try:
                    if fast is None:
                        await self._read_loop()
                    else:
                        if isinstance(self._stream, InlineCapableStream):
                            fast.offer_from(self._stream, self._peer.next_event, self.dispatcher)
                        await fast.read(self._read_loop)  # reading moves from task to task
                finally:
                    if fast is not None:
                        fast.stop_offers()
                    tg.cancel_scope.cancel()
                    await tasks.cancel_all()
        finally:
            self._close()

    async def notify(self, method: str, params: Any = None, *, via: Channel | None = None) -> None:
        """Send a notification (through ``via``, default the endpoint's channel)."""
        await self._send(codec.encode_notification(method, params), via)

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: float | None = _USE_DEFAULT,
        via: Channel | None = None,
    ) -> Any:
        """Send a request and wait for its result; raises JsonRpcError, RequestTimeout, ConnectionClosed.

        The response may arrive by any path (the stream, or any later HTTP body).
        """
        if self._closed:
            raise ConnectionClosed("the connection is closed")
        if timeout is _USE_DEFAULT:
            timeout = self.request_timeout
        slot = _Slot()
        rid = self._peer.start_outgoing(slot)
        try:
            await self._send(codec.encode_request(rid, method, params), via)
            with anyio.fail_after(math.inf if timeout is None else timeout):
                await slot.event.wait()
        except TimeoutError:
            if self._peer.finish_outgoing(rid) is not None:
                await self._send_cancel(rid, "timeout")
                raise RequestTimeout(f"no response to {method!r} within {timeout} s") from None
            # The slot was settled (a response matched, or the connection closed) in the same
            # instant the deadline passed: report that rather than lose it.
        except anyio.get_cancelled_exc_class():
            if self._peer.finish_outgoing(rid) is not None:
                with anyio.CancelScope(shield=True), anyio.move_on_after(1):
                    await self._send_cancel(rid, "cancelled by the caller")
            raise
        except BaseException:
            self._peer.finish_outgoing(rid)
            raise
        if slot.error is not None:
            raise slot.error
        return slot.result

    def cancel_all_incoming(self) -> None:
        """Cancel every incoming request in flight (the session is ending); none will be answered."""
        for scope in self._peer.take_all_incoming():
            scope.cancel()

    def cancel_incoming(self, rid: RequestId) -> bool:
        """Cancel an incoming request in flight; it will never be answered. False if unknown/finished."""
        scope = self._peer.finish_incoming(rid)
        if scope is None:
            return False
        scope.cancel()
        return True

    async def aclose(self) -> None:
        """Close the transport; the reader loop then ends."""
        if self._stream is not None:
            await self._stream.aclose()

    async def process(self, data: bytes | Incoming | list[Incoming], via: Channel) -> Processed:
        """Serve one body received out of band (an HTTP POST) in the caller's task.

        ``data`` is the body, or what :func:`codec.decode` made of it. Notifications and responses
        are handled at once; requests run here, each with its own cancel scope (a batch's
        concurrently), and their answer is returned rather than sent. Messages a handler sends while
        it runs (notifications, requests to the peer) go through ``via``.
        """
        event = self._peer.next_event(codec.decode(data) if isinstance(data, bytes) else data)
        t = type(event)
        if t is Start:
            start: Start = event  # type: ignore[assignment]
            answer = await self._run_request(start.request, start.token, _Via(self, via))
            return Processed(answer, True, False)
        if t is Batch:
            batch: Batch = event  # type: ignore[assignment]
            answers: list[bytes] = []
            requests = await self._sort_batch(batch, answers)
            if requests:
                outbound = _Via(self, via)
                async with anyio.create_task_group() as tg:
                    for request in requests:
                        tg.start_soon(self._answer_into, request, outbound, answers)
            return Processed(b"[" + b",".join(answers) + b"]" if answers else None, batch.has_requests, False)
        return Processed(await self._settle(event), t is Duplicate, t is InvalidMessage)

    # -- reading ----------------------------------------------------------------------------------
    async def _read_loop(self) -> bool:
        """Read and serve messages: True when the stream ended; False when a request that started
        inline waited, and this task went on serving it (another task reads on; asyncio only)."""
        stream = self._stream
        assert stream is not None and self._tasks is not None
        fast = self._fast
        spawn = self._tasks.spawn
        next_event = self._peer.next_event
        ordered = self.dispatcher.ordered_methods
        threaded = threaded_requests(self.dispatcher) if fast is not None else None
        burst = INLINE_BURST
        while True:
            try:
                data = await stream.receive()
            except FrameTooLarge as exc:
                await self._send_error(None, InvalidRequest(f"Invalid Request: {exc}"))
                continue
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                return True
            except Adopt as adopt:  # a request that started in the read callback waits: serve it on
                assert fast is not None
                await fast.adopted(adopt)
                return False
            except BaseException:
                if fast is not None:
                    fast.reader_failed()
                raise
            event = next_event(codec.decode(data))
            if type(event) is not Start:
                await self._take(event)
                continue
            request = event.request
            scope = event.token
            if request.method in ordered:
                await self._serve_one(request, scope)
                continue
            if fast is None:
                spawn(self._serve_one, request, scope)
            elif (
                threaded is not None
                and request.method == threaded[0]
                and type(request.params) is dict
                and request.params.get(threaded[1]) in threaded[2]
            ):  # (_fastpath.waits, written out) a request that surely waits: a task of its own
                spawn(self._serve_one, request, scope)
            else:
                waiting = fast.start(request, scope)
                if waiting is not None:  # the handler waits: this task stays with it
                    await fast.carry_on(waiting)
                    return False
            burst -= 1
            if not burst:
                burst = INLINE_BURST
                await anyio.lowlevel.checkpoint()

    async def _take(self, event: Event) -> None:
        """Act on an event from the stream that is not a Start, sending what it calls for."""
        if type(event) is Batch:
            await self._take_batch(event)
            return
        answer = await self._settle(event)
        if answer is not None:
            await self._send_quietly(answer)

    async def _settle(self, event: Event) -> bytes | None:
        """Act on an event that starts no request; return the error to answer with, if any."""
        t = type(event)
        if t is NotificationArrived:
            await self._notified(event.notification)  # type: ignore[union-attr]
            return None
        if t is ResponseArrived:
            arrived: ResponseArrived = event  # type: ignore[assignment]
            slot, response = arrived.token, arrived.response
            if type(response) is Response:
                slot.result = response.result
            else:
                slot.error = JsonRpcError.from_dict(response.error)  # type: ignore[union-attr]
            slot.event.set()
            return None
        if t is Cancel:
            cancel: Cancel = event  # type: ignore[assignment]
            if cancel.token is not None:
                cancel.token.cancel()
            elif cancel.request_id is None:
                logger.debug(
                    "cancellation without a usable request id ignored: %r", cancel.notification.params
                )
            else:
                forward = self.unknown_cancel
                if forward is None or not forward(cancel.request_id, cancel.notification):
                    logger.debug("cancellation for unknown or finished request %r ignored", cancel.request_id)
            # the dispatcher may want to see it too (e.g. to log the reason)
            await self._notified(cancel.notification)
            return None
        if t is Duplicate or t is InvalidMessage:  # the one place a duplicate id is refused
            refused: Duplicate | InvalidMessage = event  # type: ignore[assignment]
            return self._encode_error(refused.id, refused.error)
        unknown: Response | ErrorResponse = event.response  # type: ignore[union-attr]
        if self.unknown_response is not None and self.unknown_response(unknown):
            return None
        logger.warning("dropping a response with unknown or already answered id %r", unknown.id)
        return None

    async def _notified(self, notification: Notification) -> None:
        try:
            await self.dispatcher.handle_notification(notification)
        except Exception:
            logger.exception("unhandled error in notification handler for %r", notification.method)

    async def _take_batch(self, batch: Batch) -> None:
        assert self._tasks is not None
        answers: list[bytes] = []
        requests = await self._sort_batch(batch, answers)
        if requests:
            self._tasks.spawn(self._serve_batch, requests, answers)
        elif answers:
            await self._send_quietly(b"[" + b",".join(answers) + b"]")

    async def _sort_batch(self, batch: Batch, answers: list[bytes]) -> list[Start]:
        """Settle the batch's events that start nothing (errors go to ``answers``); return its requests."""
        requests: list[Start] = []
        for event in batch.events:
            if type(event) is Start:
                requests.append(event)
            else:
                answer = await self._settle(event)
                if answer is not None:
                    answers.append(answer)
        return requests

    async def _serve_batch(self, requests: list[Start], answers: list[bytes]) -> None:
        async with anyio.create_task_group() as tg:
            for request in requests:
                tg.start_soon(self._answer_into, request, self, answers)
        if answers:
            await self._send_quietly(b"[" + b",".join(answers) + b"]")

    # -- serving ----------------------------------------------------------------------------------
    async def _answer_into(self, start: Start, outbound: Outbound, answers: list[bytes]) -> None:
        data = await self._run_request(start.request, start.token, outbound)
        if data is not None:
            answers.append(data)

    async def _serve_one(self, request: Request, scope: anyio.CancelScope) -> None:
        data = await self._run_request(request, scope)
        if data is not None:
            await self._send_quietly(data)

    async def _run_request(
        self, request: Request, scope: anyio.CancelScope, outbound: Outbound | None = None
    ) -> bytes | None:
        """Run the handler (every request, from every entry, runs here); return the encoded answer,
        or None when the request was cancelled."""
        data: bytes | None = None
        context = RequestContext(request, outbound if outbound is not None else self, scope)
        with scope:
            try:
                result = await self.dispatcher.handle_request(request, context)
            except JsonRpcError as exc:
                data = self._encode_error(request.id, exc)
            except Exception:
                logger.exception("unhandled error while serving %r", request.method)
                data = self._encode_error(request.id, InternalError("Internal error"))
            else:
                data = codec.encode_answer(request, result)
        # Claim the id with our own scope: if a cancellation claimed it first (and the peer has since
        # reused the id for a new request), the entry is not ours and nothing may be sent.
        if self._peer.finish_incoming(request.id, scope) is None:
            return None
        return data

    def _accepts_batches(self) -> bool:
        return self.dispatcher.accepts_batches

    def _new_scope(self) -> anyio.CancelScope:
        """A cancel scope for one request: the running backend's class, made directly (what
        ``anyio.CancelScope()`` returns, without looking the backend up again for every request)."""
        scope_type = self._scope_type
        if scope_type is None:
            scope = anyio.CancelScope()
            self._scope_type = type(scope)
            return scope
        return scope_type()

    # -- writing ----------------------------------------------------------------------------------
    def _encode_error(self, rid: RequestId | None, error: JsonRpcError) -> bytes:
        return codec.encode_error(rid, error, omit_null_id=self.dispatcher.omits_unknown_ids)

    async def _send_error(self, rid: RequestId | None, error: JsonRpcError) -> None:
        await self._send_quietly(self._encode_error(rid, error))

    async def _send_quietly(self, data: bytes) -> None:
        """Send an answer; if the peer is gone there is nobody to tell, so just note it."""
        try:
            await self._send(data)
        except ConnectionClosed:
            logger.debug("peer gone; an answer was not delivered")

    async def _send_cancel(self, rid: RequestId, reason: str) -> None:
        if self._cancel is not None and not self._closed:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionClosed):
                await self.notify(self._cancel.method, {self._cancel.id_key: rid, "reason": reason})

    async def _send(self, data: bytes, via: Channel | None = None) -> None:
        if self._closed:
            raise ConnectionClosed("the connection is closed")
        try:
            await (via or self._channel).send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
            raise ConnectionClosed(f"the connection is closed: {exc}") from None

    def _close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for slot in self._peer.outgoing_tokens():
            slot.error = ConnectionClosed("the connection closed before the response arrived")
            slot.event.set()
        if self._on_close is not None:
            self._on_close()
