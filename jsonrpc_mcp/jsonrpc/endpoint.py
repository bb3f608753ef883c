"""The JSON-RPC endpoint: the only place in the JSON-RPC layer with concurrency.

Theory of operation
-------------------
One reader loop (:meth:`Endpoint.run`) takes framed messages from the transport and decodes them.

* A **response** is matched to the outgoing request that waits for it (unknown or duplicate ids are
  logged and dropped).
* A **notification** is handed to the dispatcher inline, in arrival order, so that e.g. an
  "initialized" notification is processed before the requests that follow it. The cancellation
  notification (its method name is configuration; this layer knows no MCP) is handled here.
* A **request** gets its own cancel scope, registered in the sans-IO :class:`Peer` before the
  handler starts, so a cancellation that arrives before the handler runs still wins. On asyncio the
  handler starts *inline*, in the reading task (in a copy of its context, as a task would): most
  handlers finish without ever waiting, and are answered there and then, with no task to create,
  schedule and reap. A handler that does wait keeps the task it started in (its cancel scope
  belongs to that task) and a new task takes over reading. So at most one request runs in a reading
  task, and reading never waits for a handler. To stay fair, the reader yields to the event loop
  after a run of requests answered inline. On other backends every request gets a task of its own.
  A stream that can (stdio, see ``FdStream.serve_inline``) goes one step further: while the reading
  task waits for input, the stream's read callback offers it each new line, running as that task,
  and a request is started there (:meth:`Endpoint._offered`), with no wake-up of the reading task
  at all. A request that waits there is handed to the reading task (the host of its cancel scope)
  by making its ``receive()`` raise :class:`_Adopt`, and a new reading task reads on.
* A **batch** is split: notifications and responses inline, then one task runs its requests
  concurrently and writes a single array with their answers.

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

import asyncio
import contextlib
import contextvars
import logging
import math
import types
from collections.abc import Callable, Coroutine, Generator
from typing import Any, Protocol

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from ..transports.base import FrameTooLarge, MessageStream
from . import codec
from .errors import ConnectionClosed, InternalError, InvalidRequest, JsonRpcError, RequestTimeout
from .messages import ErrorResponse, Incoming, Invalid, Notification, Request, RequestId, Response
from .peer import Peer

__all__ = ["Channel", "Dispatcher", "Endpoint", "Processed", "RequestContext"]

logger = logging.getLogger("jsonrpc_mcp.jsonrpc")

_USE_DEFAULT: Any = object()

# Requests answered inline in a row before the reader lets the rest of the event loop run.
_INLINE_BURST = 32


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
        return self.request.id

    @property
    def method(self) -> str:
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
        await self.outbound.notify(method, params)

    async def send_request(
        self, method: str, params: Any = None, *, timeout: float | None = _USE_DEFAULT
    ) -> Any:
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

    async def handle_notification(self, notification: Notification) -> None: ...


class _Slot:
    """Where the response to one outgoing request lands."""

    __slots__ = ("error", "event", "result")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.result: Any = None
        self.error: BaseException | None = None


class _Tasks:
    """Where reading and request tasks run, all tracked so that they can be cancelled when the
    endpoint stops.

    On asyncio these are plain asyncio tasks (a reading task becomes the task of a request that
    started inline in it and then waited; batches get one): anyio's task-group spawn costs several
    times more, and each request already has its own anyio cancel scope, which works the same in any
    task. On other backends the endpoint's anyio task group is used, one task per request.
    """

    __slots__ = ("_live", "_loop", "_tg")

    def __init__(self, tg: TaskGroup) -> None:
        self._tg = tg
        self._live: set[asyncio.Task[None]] = set()
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None

    @property
    def inline(self) -> bool:
        """Whether requests may start inline in the reading task (asyncio: see :func:`_resume`)."""
        return self._loop is not None

    def spawn(self, fn: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> None:
        if self._loop is None:
            self._tg.start_soon(fn, *args)
            return
        task = self._loop.create_task(fn(*args))
        self._live.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._live.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("request task failed", exc_info=task.exception())

    async def cancel_all(self) -> None:
        """Cancel every task still running and wait (shielded, bounded) for them to finish."""
        if not self._live:
            return
        for task in self._live:
            task.cancel()
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            await asyncio.wait(list(self._live))


@types.coroutine
def _resume(
    coro: Coroutine[Any, Any, None], ctx: contextvars.Context, first: Any
) -> Generator[Any, Any, None]:
    """Carry on running ``coro``, which suspended on ``first``, in the current task and in ``ctx``.

    What ``await coro`` would have done had it started here: every suspension is passed up to the
    task, and whatever the task is woken with (a value, or an exception such as a cancellation) is
    passed down.
    """
    pending = first
    while True:
        try:
            value = yield pending
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:
            try:
                pending = ctx.run(coro.throw, exc)
            except StopIteration:
                return
        else:
            try:
                pending = ctx.run(coro.send, value)
            except StopIteration:
                return


class _Adopt(Exception):
    """Raised in a reading task's ``receive()``: go on running this request that started inline."""

    def __init__(self, coro: Coroutine[Any, Any, None], ctx: contextvars.Context, first: Any) -> None:
        super().__init__()
        self.coro = coro
        self.ctx = ctx
        self.first = first

    def abandon(self) -> None:
        """The reading task was cancelled before it took the request over: cancel the request too."""
        with contextlib.suppress(BaseException):
            self.ctx.run(self.coro.throw, asyncio.CancelledError())
        with contextlib.suppress(BaseException):
            self.coro.close()


class CancelSpec:
    """How cancellation is spelled on this connection: the notification's method and id key."""

    __slots__ = ("id_key", "method")

    def __init__(self, method: str, id_key: str) -> None:
        self.method = method
        self.id_key = id_key


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
        self._peer: Peer[_Slot, anyio.CancelScope] = Peer()
        self._tasks: _Tasks | None = None
        self._closed = False
        self._started: anyio.Event | None = None  # made when someone waits (clients do; HTTP never)
        self._running = False
        self._read_done: anyio.Event | None = None  # set when reading ended (the stream or an error)
        self._read_error: BaseException | None = None
        self._scope_type: type[anyio.CancelScope] | None = None
        self._inline_stream: Any = None  # a stream that offers lines from its read callback
        self._adopting: dict[asyncio.Task[Any], _Adopt] = {}  # requests handed to a parked reader

    # -- public API -------------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._closed

    async def wait_started(self) -> None:
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
                self._tasks = tasks = _Tasks(tg)
                self._running = True
                if self._started is not None:
                    self._started.set()
                try:
                    if tasks.inline:
                        # reading moves from task to task (see the module docstring): wait for its end
                        done = self._read_done = anyio.Event()
                        serve_inline = getattr(self._stream, "serve_inline", None)
                        if serve_inline is not None and serve_inline(self._offered):
                            self._inline_stream = self._stream
                        tasks.spawn(self._reader)
                        await done.wait()
                        if self._read_error is not None:
                            raise self._read_error
                    else:
                        await self._read_loop()
                finally:
                    if self._inline_stream is not None:
                        self._inline_stream.serve_inline(None)
                        self._inline_stream = None
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
        message = codec.decode(data) if isinstance(data, bytes) else data
        if type(message) is list:
            if not self.dispatcher.accepts_batches:
                error = InvalidRequest("Invalid Request: batches are not supported here")
                return Processed(self._encode_error(None, error), False, True)
            items: list[Incoming] = message
            has_requests = any(type(item) is Request for item in items)
            answers: list[bytes] = []
            requests = await self._sort_batch(items, answers)
            if requests:
                async with anyio.create_task_group() as tg:
                    for batched, scope in requests:
                        tg.start_soon(self._answer_into, batched, scope, _Via(self, via), answers)
            answer = b"[" + b",".join(answers) + b"]" if answers else None
            return Processed(answer, has_requests, False)
        t = type(message)
        if t is Request:
            request: Request = message  # type: ignore[assignment]
            scope = self._new_scope()
            if not self._peer.start_incoming(request.id, scope):
                duplicate = InvalidRequest("Invalid Request: duplicate id in flight")
                return Processed(self._encode_error(request.id, duplicate), True, False)
            return Processed(await self._run_request(request, scope, _Via(self, via)), True, False)
        if t is Notification:
            await self._handle_notification(message)  # type: ignore[arg-type]
        elif t is Response or t is ErrorResponse:
            self._handle_response(message)  # type: ignore[arg-type]
        else:
            invalid: Invalid = message  # type: ignore[assignment]
            return Processed(self._encode_error(invalid.id, invalid.error), False, True)
        return Processed(None, False, False)

    async def _answer_into(
        self, request: Request, scope: anyio.CancelScope, outbound: Outbound, answers: list[bytes]
    ) -> None:
        data = await self._run_request(request, scope, outbound)
        if data is not None:
            answers.append(data)

    # -- reading ----------------------------------------------------------------------------------
    async def _reader(self) -> None:
        """A reading task (asyncio): reads until the stream ends, or until a request adopts it."""
        try:
            ended = await self._read_loop()
        except asyncio.CancelledError:  # only run() cancels a reader natively, when it is ending anyway
            raise
        except BaseException as exc:  # run() raises it
            self._read_error = exc
            ended = True
        if ended and self._read_done is not None:
            self._read_done.set()

    async def _read_loop(self) -> bool:
        """Read and serve messages: True when the stream ended; False when a request that started
        inline suspended, and this task went on serving it (another task reads on)."""
        stream = self._stream
        assert stream is not None
        inline = self._tasks is not None and self._tasks.inline
        ordered = self.dispatcher.ordered_methods
        burst = _INLINE_BURST
        while True:
            try:
                data = await stream.receive()
            except FrameTooLarge as exc:
                await self._send_error(None, InvalidRequest(f"Invalid Request: {exc}"))
                continue
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                return True
            except _Adopt as adopt:  # a request that started in the read callback waits: serve it on
                self._adopting.pop(asyncio.current_task(), None)  # type: ignore[arg-type]
                await self._serve_adopted(adopt)
                return False
            except asyncio.CancelledError:
                if self._adopting:
                    orphan = self._adopting.pop(asyncio.current_task(), None)  # type: ignore[arg-type]
                    if orphan is not None:
                        orphan.abandon()
                raise
            message = codec.decode(data)
            t = type(message)
            if t is Request and inline and message.method not in ordered:  # type: ignore[union-attr]
                request: Request = message  # type: ignore[assignment]
                scope = self._new_scope()
                if not self._peer.start_incoming(request.id, scope):
                    self._refuse_duplicate(request)
                    continue
                waiting = self._start_inline(request, scope)
                if waiting is None:  # done without waiting
                    burst -= 1
                    if not burst:
                        burst = _INLINE_BURST
                        await anyio.lowlevel.checkpoint()
                    continue
                # The handler waits: this task stays with it (its cancel scope belongs to this task).
                assert self._tasks is not None
                self._tasks.spawn(self._reader)
                await self._serve_adopted(waiting)
                return False
            if t is list:
                await self._handle_batch(message)  # type: ignore[arg-type]
            else:
                await self._handle(message)  # type: ignore[arg-type]

    def _offered(self, line: bytes) -> bool:
        """A line offered from the stream's read callback, as the parked reading task: start it
        if it is a request that may start inline (see the module docstring); False leaves it to
        the reading task."""
        message = codec.decode(line)
        if type(message) is not Request or message.method in self.dispatcher.ordered_methods:
            return False
        request: Request = message
        scope = self._new_scope()
        if not self._peer.start_incoming(request.id, scope):
            return False  # the reading task refuses it
        adopt = self._start_inline(request, scope)
        if adopt is None:  # done without waiting
            return True
        # The handler waits: the parked reading task takes it over, a new one reads on.
        task = asyncio.current_task()
        assert task is not None and self._tasks is not None
        self._adopting[task] = adopt
        self._tasks.spawn(self._reader)
        self._inline_stream.interrupt(adopt)
        return True

    def _start_inline(self, request: Request, scope: anyio.CancelScope) -> _Adopt | None:
        """Start serving ``request`` in the current task, in a copy of its context (as a task of
        its own would run): None when it finished without waiting (answered, or died as a request
        task would); otherwise where it waits, for the task that goes on serving it."""
        coro = self._serve_one(request, scope)
        ctx = contextvars.copy_context()
        try:
            suspended_on = ctx.run(coro.send, None)
        except StopIteration:
            return None
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # what a request task would have died of
            if not isinstance(exc, asyncio.CancelledError):
                logger.error("request task failed", exc_info=exc)
            return None
        return _Adopt(coro, ctx, suspended_on)

    @staticmethod
    async def _serve_adopted(adopt: _Adopt) -> None:
        """Go on serving a request that started inline and waited, in the current task."""
        try:
            await _resume(adopt.coro, adopt.ctx, adopt.first)
        except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # what a request task would have died of
            logger.error("request task failed", exc_info=exc)

    async def _handle(self, message: Incoming) -> None:
        t = type(message)
        if t is Request:
            if message.method in self.dispatcher.ordered_methods:  # type: ignore[union-attr]
                await self._serve_ordered(message)  # type: ignore[arg-type]
            else:
                self._start_request(message)  # type: ignore[arg-type]
        elif t is Notification:
            await self._handle_notification(message)  # type: ignore[arg-type]
        elif t is Response or t is ErrorResponse:
            self._handle_response(message)  # type: ignore[arg-type]
        else:
            invalid: Invalid = message  # type: ignore[assignment]
            await self._send_error(invalid.id, invalid.error)

    def _start_request(self, request: Request) -> None:
        assert self._tasks is not None
        scope = self._new_scope()
        if not self._peer.start_incoming(request.id, scope):
            self._refuse_duplicate(request)
            return
        self._tasks.spawn(self._serve_one, request, scope)

    def _refuse_duplicate(self, request: Request) -> None:
        assert self._tasks is not None
        duplicate = InvalidRequest("Invalid Request: duplicate id in flight")
        self._tasks.spawn(self._send_error, request.id, duplicate)

    async def _serve_ordered(self, request: Request) -> None:
        scope = self._new_scope()
        if not self._peer.start_incoming(request.id, scope):
            await self._send_error(request.id, InvalidRequest("Invalid Request: duplicate id in flight"))
            return
        await self._serve_one(request, scope)

    async def _serve_one(self, request: Request, scope: anyio.CancelScope) -> None:
        data = await self._run_request(request, scope)
        if data is not None:
            await self._send_quietly(data)

    async def _run_request(
        self, request: Request, scope: anyio.CancelScope, outbound: Outbound | None = None
    ) -> bytes | None:
        """Run the handler; return the encoded answer, or None when the request was cancelled."""
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

    async def _handle_notification(self, notification: Notification) -> None:
        cancel = self._cancel
        if cancel is not None and notification.method == cancel.method:
            params = notification.params
            rid = params.get(cancel.id_key) if type(params) is dict else None
            if type(rid) is not str and type(rid) is not int:  # not an id (a bool would alias 1)
                logger.debug("cancellation without a usable request id ignored: %r", rid)
            elif not self.cancel_incoming(rid):
                logger.debug("cancellation for unknown or finished request %r ignored", rid)
            # fall through: the dispatcher may want to see it too (e.g. to log the reason)
        try:
            await self.dispatcher.handle_notification(notification)
        except Exception:
            logger.exception("unhandled error in notification handler for %r", notification.method)

    def _handle_response(self, response: Response | ErrorResponse) -> None:
        rid = response.id
        slot = self._peer.finish_outgoing(rid) if rid is not None else None
        if slot is None:
            logger.warning("dropping a response with unknown or already answered id %r", rid)
            return
        if type(response) is Response:
            slot.result = response.result
        else:
            slot.error = JsonRpcError.from_dict(response.error)  # type: ignore[union-attr]
        slot.event.set()

    async def _handle_batch(self, items: list[Incoming]) -> None:
        assert self._tasks is not None
        if not self.dispatcher.accepts_batches:
            await self._send_error(None, InvalidRequest("Invalid Request: batches are not supported here"))
            return
        answers: list[bytes] = []
        requests = await self._sort_batch(items, answers)
        if requests:
            self._tasks.spawn(self._serve_batch, requests, answers)
        elif answers:
            await self._send_quietly(b"[" + b",".join(answers) + b"]")

    async def _sort_batch(
        self, items: list[Incoming], answers: list[bytes]
    ) -> list[tuple[Request, anyio.CancelScope]]:
        """Handle a batch's notifications and responses, answer its invalid items, register its requests."""
        requests: list[tuple[Request, anyio.CancelScope]] = []
        for item in items:
            t = type(item)
            if t is Request:
                request: Request = item  # type: ignore[assignment]
                scope = self._new_scope()
                if self._peer.start_incoming(request.id, scope):
                    requests.append((request, scope))
                else:
                    duplicate = InvalidRequest("Invalid Request: duplicate id in flight")
                    answers.append(self._encode_error(request.id, duplicate))
            elif t is Notification:
                await self._handle_notification(item)  # type: ignore[arg-type]
            elif t is Invalid:
                answers.append(self._encode_error(item.id, item.error))  # type: ignore[union-attr, arg-type]
            else:
                self._handle_response(item)  # type: ignore[arg-type]
        return requests

    async def _serve_batch(
        self, requests: list[tuple[Request, anyio.CancelScope]], answers: list[bytes]
    ) -> None:
        async with anyio.create_task_group() as tg:
            for request, scope in requests:
                tg.start_soon(self._answer_into, request, scope, self, answers)
        if answers:
            await self._send_quietly(b"[" + b",".join(answers) + b"]")

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
