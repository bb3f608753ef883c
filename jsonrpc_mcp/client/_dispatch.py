"""The client's side of the server's requests: ``ping``, and whatever handlers the application gave
(``roots/list``, ``sampling/createMessage``, ``elicitation/create`` ...); every notification is
routed (to a live subscription) and shown to the application's callback."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .. import wire
from ..jsonrpc.endpoint import RequestContext
from ..jsonrpc.errors import MethodNotFound
from ..jsonrpc.messages import Notification, Request

__all__ = ["ClientDispatcher", "NotificationCallback", "RequestHandler"]

NotificationCallback = Callable[[str, Any], Awaitable[None] | None]
RequestHandler = Callable[[Any], Awaitable[Any]]


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

    async def handle_request(self, request: Request, context: RequestContext) -> Any:
        if request.method == wire.PING:
            return {}
        handler = self.handlers.get(request.method)
        if handler is None:
            raise MethodNotFound(f"Method not found: {request.method}")
        return await handler(request.params)

    async def handle_notification(self, notification: Notification) -> None:
        self._route(notification)
        if self._on_notification is None:
            return
        outcome = self._on_notification(notification.method, notification.params)
        if inspect.isawaitable(outcome):
            await outcome
