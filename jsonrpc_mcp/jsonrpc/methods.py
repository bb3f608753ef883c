"""A method table: the dispatcher for a plain JSON-RPC 2.0 server (no MCP involved).

Parameters given by name become keyword arguments, by position positional ones; a call whose
parameters do not fit the function's signature is answered with -32602 before the function runs.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from .endpoint import RequestContext
from .errors import InvalidParams, MethodNotFound
from .messages import Notification, Params, Request

__all__ = ["MethodTable"]

F = TypeVar("F", bound=Callable[..., Any])
logger = logging.getLogger("jsonrpc_mcp.jsonrpc")


class _Method:
    __slots__ = ("fn", "is_async", "signature")

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.is_async = inspect.iscoroutinefunction(fn)
        self.signature = inspect.signature(fn)


class MethodTable:
    """Route requests and notifications to Python functions by method name."""

    accepts_batches = True
    omits_unknown_ids = False
    ordered_methods: frozenset[str] = frozenset()

    def __init__(self) -> None:
        self._methods: dict[str, _Method] = {}

    def add(self, name: str, fn: Callable[..., Any]) -> None:
        """Register ``fn`` (sync or async) under ``name``."""
        if name in self._methods:
            raise ValueError(f"method {name!r} is already registered")
        self._methods[name] = _Method(fn)

    def method(self, name: str | None = None) -> Callable[[F], F]:
        """Decorator form of :meth:`add`; the method name defaults to the function's name."""

        def register(fn: F) -> F:
            self.add(name or fn.__name__, fn)
            return fn

        return register

    async def handle_request(self, request: Request, context: RequestContext) -> Any:
        """Call the method's function with the request's params; raises :class:`MethodNotFound` or
        :class:`InvalidParams`."""
        entry = self._methods.get(request.method)
        if entry is None:
            raise MethodNotFound(f"Method not found: {request.method}")
        return await self._call(entry, request.params)

    async def handle_notification(self, notification: Notification) -> None:
        """Call the method's function; an unknown method or bad params are logged and ignored."""
        entry = self._methods.get(notification.method)
        if entry is None:
            logger.debug("notification for unknown method %r ignored", notification.method)
            return
        try:
            await self._call(entry, notification.params)
        except InvalidParams as exc:
            logger.debug("notification %r ignored: %s", notification.method, exc)

    async def _call(self, entry: _Method, params: Params) -> Any:
        args: list[Any] = params if isinstance(params, list) else []
        kwargs: dict[str, Any] = params if isinstance(params, dict) else {}
        try:
            entry.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise InvalidParams(f"Invalid params: {exc}") from None
        result = entry.fn(*args, **kwargs)
        if entry.is_async:
            result = await result
        return result
