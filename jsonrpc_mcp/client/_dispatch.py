"""The client's side of the server's requests: ``ping``, and whatever handlers the application gave
(``roots/list``, ``sampling/createMessage``, ``elicitation/create`` ...); every notification is
routed (to a live subscription) and shown to the application's callback."""

from __future__ import annotations

import contextlib
import inspect
import itertools
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

from .. import wire
from ..jsonrpc.endpoint import RequestContext
from ..jsonrpc.errors import MethodNotFound
from ..jsonrpc.messages import Notification, Request

__all__ = ["ClientDispatcher", "NotificationCallback", "ProgressCallback", "RequestHandler"]

NotificationCallback = Callable[[str, Any], Awaitable[None] | None]
RequestHandler = Callable[[Any], Awaitable[Any]]
# progress, total (None: unknown), message (None: none), as a notifications/progress carries them
ProgressCallback = Callable[[float, "float | None", "str | None"], Awaitable[None] | None]

logger = logging.getLogger("jsonrpc_mcp.client")
_tokens = itertools.count(1)


class ClientDispatcher:
    """Serves the server's requests (ping, and whatever handlers the application gave)."""

    accepts_batches = False
    omits_unknown_ids = False
    ordered_methods: frozenset[str] = frozenset()

    def __init__(
        self,
        handlers: Mapping[str, RequestHandler],
        on_notification: NotificationCallback | None,
        route: Callable[[Notification], None],
    ) -> None:
        self.handlers = dict(handlers)
        self._on_notification = on_notification
        self._route = route
        self._progress: dict[Any, ProgressCallback] = {}

    @contextlib.contextmanager
    def progress(self, params: dict[str, Any], callback: ProgressCallback | None) -> Iterator[dict[str, Any]]:
        """``params`` with a fresh ``_meta.progressToken`` whose notifications go to ``callback``
        while the block runs (``params`` as they are without a callback)."""
        if callback is None:
            yield params
            return
        token = f"progress-{next(_tokens)}"
        self._progress[token] = callback
        try:
            yield {**params, "_meta": {**params.get("_meta", {}), wire.PROGRESS_TOKEN: token}}
        finally:
            del self._progress[token]

    async def handle_request(self, request: Request, context: RequestContext) -> Any:
        if request.method == wire.PING:
            return {}
        handler = self.handlers.get(request.method)
        if handler is None:
            raise MethodNotFound(f"Method not found: {request.method}")
        return await handler(request.params)

    async def handle_notification(self, notification: Notification) -> None:
        self._route(notification)
        if notification.method == wire.PROGRESS and self._progress:
            await self._report(notification.params)
        if self._on_notification is None:
            return
        outcome = self._on_notification(notification.method, notification.params)
        if inspect.isawaitable(outcome):
            await outcome

    async def _report(self, params: Any) -> None:
        callback = self._progress.get(params.get(wire.PROGRESS_TOKEN)) if isinstance(params, dict) else None
        if callback is None:
            return
        try:
            outcome = callback(params.get("progress", 0), params.get("total"), params.get("message"))
            if inspect.isawaitable(outcome):
                await outcome
        except Exception:  # the application's callback: its failure must not end the connection
            logger.exception("the progress callback raised")
