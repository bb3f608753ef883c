"""The per-request :class:`Context` a handler can ask for by annotating a parameter with it.

Theory of operation
-------------------
Everything a handler sends about its request (log messages, progress, notifications) goes through
one ordered outbox: a thread-safe queue drained by whoever holds the context's send lock. Async
calls (``await ctx.log(...)``) queue and drain at once. Records of ``ctx.logger`` may come from the
event loop (queued, and drained by a task started for it) or from a worker thread (queued, and the
thread waits until the loop has drained them), so the client sees them in the order they were made.

When the handler finishes, the session drains the outbox before the answer is sent and then
closes the context: whatever is logged, reported or sent after that (a background task, an
abandoned thread) is dropped. A cancelled request's outbox is dropped unsent. So every message
about a request comes before its answer, and nothing comes after it.

Requests to the client (sampling, elicitation, roots; see :mod:`jsonrpc_mcp.server._asking`, one
at a time or several under chosen keys) are checked against the capabilities the
client declared and the negotiated revision first (:class:`CapabilityError`), drain the outbox,
and wait at most ``Server.request_timeout`` for the answer.

In a modern (2026-07-28) request the same calls are *asks* of a multi round-trip request (see
:mod:`jsonrpc_mcp.server._mrtr`): the answer comes from the client's retry, and the handler runs
again from the start on every round, so what it does before an ask may happen more than once. A
capability missing from the request's ``clientCapabilities`` raises
:class:`~jsonrpc_mcp.errors.MissingClientCapability` (a :class:`CapabilityError`, answered
-32021 if let escape); only ``tools/call``, ``prompts/get`` and ``resources/read`` can ask.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import anyio

from .. import wire
from ..jsonrpc.endpoint import RequestContext
from ..revisions import Revision
from ._asking import Asking
from ._clientlog import PREFIX, ClientLogger, ClientLogHandler, level_index
from ._extensions import client_extensions
from ._mrtr import Exchange, current_exchange
from ._pipeline import current_access_token

if TYPE_CHECKING:
    from ..http._auth import AccessToken
    from ._session import ServerSession

__all__ = ["Context", "Deferred", "current_context", "get_context"]

logger = logging.getLogger("jsonrpc_mcp.server")

_DEFAULT: Any = object()

# Guards every context's outbox and closed flag (held for a few bytecodes; shared, so that a
# Context costs no lock of its own).
_OUTBOX_LOCK = threading.Lock()


class Deferred:
    """The Context of a request whose handler takes none (most tools): made only if
    :func:`get_context` asks for it, then finished by the request like any other."""

    __slots__ = ("loop_thread", "made", "rc", "session")

    def __init__(self, session: ServerSession, rc: RequestContext) -> None:
        self.session, self.rc = session, rc
        self.loop_thread = threading.get_ident()
        self.made: Context | None = None

    def context(self) -> Context:
        with _OUTBOX_LOCK:  # (a handler's worker thread may ask while the loop looks)
            if self.made is None:
                made = Context(self.session, self.rc)
                made._loop_thread = self.loop_thread  # made in a worker thread, maybe: the loop's
                self.made = made
            return self.made


# The Context of the request whose handler runs (its worker thread too: anyio copies the context).
current_context: ContextVar[Context | Deferred | None] = ContextVar("jsonrpc_mcp_context", default=None)


def get_context() -> Context:
    """The :class:`Context` of the request being served, for code that was not handed one (a
    helper a tool calls, a function deep in a library); RuntimeError outside a request handler."""
    ctx = current_context.get()
    if ctx is None:
        raise RuntimeError("get_context() was called outside a request handler (a tool, resource or prompt)")
    return ctx if isinstance(ctx, Context) else ctx.context()


class Context(Asking):
    """What a handler knows about the request it serves, and how it talks to the client.

    Declare a parameter annotated ``Context`` in a tool, resource, prompt or completion function to
    receive it; it never appears in the generated input schema. One Context serves one request.
    """

    __slots__ = (
        "_closed",
        "_exchange",
        "_flushers",
        "_last_progress",
        "_logger",
        "_loop_thread",
        "_outbox",
        "_rc",
        "_send_lock",
        "session",
    )

    def __init__(self, session: ServerSession, rc: RequestContext) -> None:
        self.session = session
        self._rc = rc
        self._last_progress: float | None = None
        self._outbox: deque[tuple[str, Any]] | None = None  # made on first use
        self._send_lock: anyio.Lock | None = None
        self._closed = False
        self._loop_thread = threading.get_ident()
        self._logger: logging.Logger | None = None
        self._flushers: set[asyncio.Task[None]] | None = None
        # a modern request's multi round-trip exchange (None: a handshake session, or cannot ask)
        self._exchange: Exchange | None = current_exchange.get()
        self._asked = None
        self._asks = 0

    # -- about the request ------------------------------------------------------------------------
    @property
    def access_token(self) -> AccessToken | None:
        """The bearer token the server's verifier accepted for the HTTP request that carried this
        request (``client_id``, ``scopes``, ``claims``); None without token checks, or when no HTTP
        request carried it (stdio, in memory)."""
        return current_access_token.get()

    @property
    def request_id(self) -> Any:
        """The JSON-RPC id of the request being served."""
        return self._rc.id

    @property
    def method(self) -> str:
        """The method of the request being served."""
        return self._rc.method

    @property
    def revision(self) -> Revision:
        """The protocol revision in force for this request."""
        revision = self.session.revision
        assert revision is not None
        return revision

    @property
    def client_info(self) -> dict[str, Any]:
        """The ``clientInfo`` the client sent (empty when it sent none)."""
        return self.session.client_info

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """The capabilities the client declared."""
        return self.session.client_capabilities

    @property
    def client_extensions(self) -> dict[str, dict[str, Any]]:
        """The extensions the client declared (id -> settings): in this request's envelope
        (2026-07-28), or in ``initialize`` (the handshake era)."""
        return client_extensions(self.session.client_capabilities)

    def client_supports(self, extension_id: str) -> bool:
        """Whether the client declared the extension ``extension_id``."""
        return extension_id in self.client_extensions

    @property
    def cancelled(self) -> bool:
        """True once the client cancelled this request (the handler is being cancelled too; a sync
        handler, which runs on in its thread, can poll this to stop early)."""
        return self._rc.cancelled

    @property
    def lifespan(self) -> Any:
        """What the server's lifespan yielded (a database pool, a client...): shared by every
        request; None when the server has no lifespan."""
        return self.session.server.lifespan_state

    @property
    def meta(self) -> dict[str, Any]:
        """The request's ``params._meta`` (empty if none)."""
        params = self._rc.request.params
        meta = params.get("_meta") if isinstance(params, dict) else None
        return meta if isinstance(meta, dict) else {}

    @property
    def progress_token(self) -> str | int | None:
        """The request's ``progressToken``, if the client asked for progress."""
        token = self.meta.get("progressToken")
        return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None

    # -- logging ----------------------------------------------------------------------------------
    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """Send ``notifications/message`` if the client's level (``logging/setLevel``) lets it through.

        ``level`` is an RFC 5424 name (debug, info, notice, warning, error, critical, alert,
        emergency; anything else is a ValueError); ``data`` any JSON value; ``logger`` names the
        source. Nothing is sent when the server does not advertise ``logging``.
        """
        try:
            rank = level_index(level)
        except KeyError:
            raise ValueError(f"unknown log level {level!r}; use one of debug ... emergency") from None
        if not self.session.wants_log(rank):
            return
        params: dict[str, Any] = {"level": level}
        if logger is not None:
            params["logger"] = logger
        params["data"] = data
        await self._send(wire.MESSAGE, params)

    async def debug(self, data: Any, *, logger: str | None = None) -> None:
        """``log`` at level ``debug``."""
        await self.log("debug", data, logger=logger)

    async def info(self, data: Any, *, logger: str | None = None) -> None:
        """``log`` at level ``info``."""
        await self.log("info", data, logger=logger)

    async def warning(self, data: Any, *, logger: str | None = None) -> None:
        """``log`` at level ``warning``."""
        await self.log("warning", data, logger=logger)

    async def error(self, data: Any, *, logger: str | None = None) -> None:
        """``log`` at level ``error``."""
        await self.log("error", data, logger=logger)

    @property
    def logger(self) -> logging.Logger:
        """A ``logging.Logger`` whose records go to this request's client as ``notifications/message``
        (and nowhere else), from the handler's task or thread alike.

        Levels map DEBUG -> debug, INFO -> info, 25 -> notice, WARNING -> warning, ERROR -> error,
        CRITICAL -> critical, 55 -> alert, 60 -> emergency. The notification's ``logger`` is the
        server's name (``ctx.logger.getChild("db")``: ``<name>.db``). The logger belongs to this
        request: records made after the request finished are dropped.
        """
        if self._logger is None:
            bound = ClientLogger(f"{PREFIX}.{self.session.server.name}")
            bound.propagate = False
            bound.addHandler(ClientLogHandler(self))
            self._logger = bound
        return self._logger

    def _log_from_record(self, level: str, data: Any, name: str) -> None:
        """A record from ``ctx.logger``, on any thread: queue it, and get it sent in order."""
        if not self.session.wants_log(level_index(level)):
            return
        if not self._queue(wire.MESSAGE, {"level": level, "logger": name, "data": data}):
            return
        if threading.get_ident() == self._loop_thread:
            self._schedule_flush()
        else:
            self._flush_from_thread()

    # -- progress and notifications ---------------------------------------------------------------
    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` if the client asked for progress (a ``progressToken``).

        ``progress`` must increase on every call; a value that does not is a developer error
        (ValueError). ``message`` is sent where the revision has it (2025-03-26+).
        """
        token = self.progress_token
        if token is None:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            raise ValueError(f"progress must increase: {progress} after {self._last_progress}")
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and self.revision.has_progress_message:
            params["message"] = message
        await self._send(wire.PROGRESS, params)

    async def close_sse_stream(self) -> None:
        """Streamable HTTP: end this request's SSE connection now (SSE polling, SEP-1699).

        The request goes on; the client reconnects with GET + ``Last-Event-ID`` and receives what
        follows, the result included. On other transports this does nothing.
        """
        close = getattr(getattr(self._rc.outbound, "channel", None), "close_connection", None)
        if close is not None:
            await close()

    async def send_notification(self, method: str, params: Any = None) -> None:
        """Send a notification to the client, related to this request (in order with the logs)."""
        await self._send(method, params)

    # -- the outbox -------------------------------------------------------------------------------
    def _queue(self, method: str, params: Any) -> bool:
        with _OUTBOX_LOCK:
            if self._closed:
                logger.debug("%s after the %s request finished: dropped", method, self.method)
                return False
            if self._outbox is None:
                self._outbox = deque()
            self._outbox.append((method, params))
            return True

    async def _send(self, method: str, params: Any) -> None:
        if self._queue(method, params):
            await self._flush()

    async def _flush(self) -> None:
        """Send what is queued, in order (one drainer at a time; also waits for a send under way)."""
        lock = self._send_lock
        if not self._outbox and (lock is None or not lock.locked()):
            return
        if self._send_lock is None:
            self._send_lock = anyio.Lock()
        async with self._send_lock:
            while True:
                with _OUTBOX_LOCK:
                    if not self._outbox:
                        return
                    method, params = self._outbox.popleft()
                if self._rc.cancelled:
                    continue  # a cancelled request says nothing more
                try:
                    await self._rc.notify(method, params)
                except Exception as exc:
                    logger.warning("could not send %s for the %s request: %s", method, self.method, exc)

    def _schedule_flush(self) -> None:
        """On the loop, outside a coroutine's await: drain in a task of its own (asyncio); otherwise
        the next send, or the end of the request, drains it."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._flushers is None:
            self._flushers = set()
        task = loop.create_task(self._flush())
        self._flushers.add(task)
        task.add_done_callback(self._flushers.discard)

    def _flush_from_thread(self) -> None:
        """From a worker thread: have the loop drain the outbox, and wait for it (keeps the order)."""
        import anyio.from_thread  # here: only threads need it (it is not on the serving path)

        try:
            try:
                anyio.from_thread.run(self._flush)
            except RuntimeError:  # not an anyio worker thread: reach the loop through its token
                token = self.session.loop_token
                if token is not None:
                    anyio.from_thread.run(self._flush, token=token)
                # else: it stays queued until the next send or the end of the request
        except BaseException as exc:  # a logging call never raises into the handler
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            logger.debug("could not send a log record from a thread: %r", exc)

    async def _finish(self) -> None:
        """The handler is done: send what is queued, then close (later messages are dropped)."""
        while True:
            lock = self._send_lock
            if self._outbox or (lock is not None and lock.locked()):
                await self._flush()
            with _OUTBOX_LOCK:
                if not self._outbox:
                    self._closed = True
                    return

    def _abandon(self) -> None:
        """The request was cancelled: drop what is queued and close."""
        with _OUTBOX_LOCK:
            self._closed = True
            self._outbox = None
