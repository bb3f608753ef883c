"""The MCP client: the same JSON-RPC endpoint the server uses, driven from the other side.

Results are returned as plain JSON values (dicts), exactly as the server sent them: this client is
also the conformance harness's probe, so it must not hide what was on the wire.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import IO, Any

import anyio
from anyio.abc import TaskGroup

from .. import __version__
from ..jsonrpc.endpoint import CancelSpec, Endpoint, RequestContext
from ..jsonrpc.errors import MethodNotFound
from ..jsonrpc.messages import Notification, Request
from ..revisions import HANDSHAKE_REVISIONS, LATEST_HANDSHAKE, Revision, get_revision
from ..transports.base import MessageStream
from ..transports.framing import DEFAULT_MAX_LINE

__all__ = ["Client", "UnsupportedProtocolVersion"]

logger = logging.getLogger("jsonrpc_mcp.client")

NotificationCallback = Callable[[str, Any], Awaitable[None] | None]
RequestHandler = Callable[[Any], Awaitable[Any]]
_DEFAULT: Any = object()


class UnsupportedProtocolVersion(Exception):
    """The server answered ``initialize`` with a revision this client does not speak."""


class _ClientDispatcher:
    """Serves the server's requests (ping, and whatever handlers the application gave)."""

    accepts_batches = False
    omits_unknown_ids = False
    ordered_methods: frozenset[str] = frozenset()

    def __init__(
        self, handlers: Mapping[str, RequestHandler], on_notification: NotificationCallback | None
    ) -> None:
        self._handlers = dict(handlers)
        self._on_notification = on_notification

    async def handle_request(self, request: Request, context: RequestContext) -> Any:
        if request.method == "ping":
            return {}
        handler = self._handlers.get(request.method)
        if handler is None:
            raise MethodNotFound(f"Method not found: {request.method}")
        return await handler(request.params)

    async def handle_notification(self, notification: Notification) -> None:
        if self._on_notification is None:
            return
        outcome = self._on_notification(notification.method, notification.params)
        if inspect.isawaitable(outcome):
            await outcome


class Client:
    """An MCP client over any message stream. Use as ``async with Client(stream) as client:``.

    ``request_handlers`` maps server-to-client methods (``roots/list``, ``sampling/createMessage``,
    ...) to async functions of the request params; ``on_notification(method, params)`` sees every
    notification from the server.
    """

    def __init__(
        self,
        stream: MessageStream,
        *,
        client_info: dict[str, Any] | None = None,
        capabilities: dict[str, Any] | None = None,
        protocol_version: str = LATEST_HANDSHAKE.version,
        request_timeout: float | None = 30.0,
        on_notification: NotificationCallback | None = None,
        request_handlers: Mapping[str, RequestHandler] | None = None,
    ) -> None:
        self.client_info = client_info or {"name": "jsonrpc-mcp", "version": __version__}
        self.capabilities = capabilities if capabilities is not None else {}
        self.requested_version = protocol_version
        self._dispatcher = _ClientDispatcher(request_handlers or {}, on_notification)
        self.endpoint = Endpoint(
            stream,
            self._dispatcher,
            request_timeout=request_timeout,
            cancel=CancelSpec("notifications/cancelled", "requestId"),
        )
        self._stream = stream
        self._tg: TaskGroup | None = None
        self._exit: contextlib.AsyncExitStack | None = None
        self.initialize_result: dict[str, Any] = {}
        self.revision: Revision | None = None

    async def __aenter__(self) -> Client:
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        try:
            self._tg = await stack.enter_async_context(anyio.create_task_group())
            self._tg.start_soon(self.endpoint.run)
            await self.endpoint.wait_started()
        except BaseException:
            await stack.__aexit__(None, None, None)
            raise
        self._exit = stack
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._exit is not None and self._tg is not None
        try:
            # shielded: closing must complete even when the caller is being cancelled
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await self._stream.aclose()
        finally:
            self._tg.cancel_scope.cancel()
            # The body's exception is not thrown into the task group: it propagates as itself instead
            # of wrapped in an ExceptionGroup (the endpoint task is cancelled either way).
            await self._exit.__aexit__(None, None, None)

    # -- session ----------------------------------------------------------------------------------
    @property
    def protocol_version(self) -> str | None:
        return self.revision.version if self.revision else None

    @property
    def server_info(self) -> dict[str, Any]:
        info: dict[str, Any] = self.initialize_result.get("serverInfo", {})
        return info

    @property
    def server_capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = self.initialize_result.get("capabilities", {})
        return caps

    @property
    def instructions(self) -> str | None:
        return self.initialize_result.get("instructions")

    async def initialize(self) -> dict[str, Any]:
        """The handshake: ``initialize``, check the revision, then ``notifications/initialized``."""
        result = await self.request(
            "initialize",
            {
                "protocolVersion": self.requested_version,
                "capabilities": self.capabilities,
                "clientInfo": self.client_info,
            },
        )
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        revision = get_revision(version) if isinstance(version, str) else None
        if revision is None or revision not in HANDSHAKE_REVISIONS:
            raise UnsupportedProtocolVersion(
                f"the server chose protocol revision {version!r}, which we do not speak"
            )
        self.revision = revision
        self.initialize_result = result
        await self.notify("notifications/initialized")
        return self.initialize_result

    # -- raw JSON-RPC -----------------------------------------------------------------------------
    async def request(self, method: str, params: Any = None, *, timeout: float | None = _DEFAULT) -> Any:
        """Send any request; returns the raw result or raises JsonRpcError / RequestTimeout."""
        if timeout is _DEFAULT:
            return await self.endpoint.request(method, params)
        return await self.endpoint.request(method, params, timeout=timeout)

    async def notify(self, method: str, params: Any = None) -> None:
        await self.endpoint.notify(method, params)

    # -- MCP methods ------------------------------------------------------------------------------
    async def ping(self) -> None:
        await self.request("ping")

    async def _list_all(self, method: str, key: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            result = await self.request(method, {"cursor": cursor} if cursor is not None else None)
            items.extend(result.get(key, []))
            cursor = result.get("nextCursor")
            if cursor is None:
                return items
            if cursor in seen:
                raise RuntimeError(f"{method}: the server repeated cursor {cursor!r}")
            seen.add(cursor)

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool (following ``nextCursor`` to the end)."""
        return await self._list_all("tools/list", "tools")

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = _DEFAULT
    ) -> dict[str, Any]:
        """The raw ``CallToolResult`` (check ``isError``); protocol errors raise JsonRpcError."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        result: dict[str, Any] = await self.request("tools/call", params, timeout=timeout)
        return result

    async def list_resources(self) -> list[dict[str, Any]]:
        return await self._list_all("resources/list", "resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        return await self._list_all("resources/templates/list", "resourceTemplates")

    async def read_resource(self, uri: str) -> dict[str, Any]:
        result: dict[str, Any] = await self.request("resources/read", {"uri": uri})
        return result

    async def list_prompts(self) -> list[dict[str, Any]]:
        return await self._list_all("prompts/list", "prompts")

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        result: dict[str, Any] = await self.request("prompts/get", params)
        return result

    async def set_logging_level(self, level: str) -> None:
        """``logging/setLevel``: the server sends ``notifications/message`` of ``level`` and above."""
        await self.request("logging/setLevel", {"level": level})

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, str],
        *,
        context_arguments: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """``completion/complete``; returns the raw result (``{"completion": {"values", ...}}``).

        ``ref`` is ``{"type": "ref/prompt", "name": ...}`` or ``{"type": "ref/resource", "uri": ...}``;
        ``argument`` is ``{"name": ..., "value": ...}``; ``context_arguments`` the arguments already
        filled (sent as ``context.arguments``, which servers read from 2025-06-18 on).
        """
        params: dict[str, Any] = {"ref": dict(ref), "argument": dict(argument)}
        if context_arguments is not None:
            params["context"] = {"arguments": dict(context_arguments)}
        result: dict[str, Any] = await self.request("completion/complete", params)
        return result

    async def subscribe_resource(self, uri: str) -> None:
        """``resources/subscribe``: the server then sends ``notifications/resources/updated``."""
        await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        await self.request("resources/unsubscribe", {"uri": uri})

    # -- connecting -------------------------------------------------------------------------------
    @classmethod
    @contextlib.asynccontextmanager
    async def stdio(
        cls,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: int | IO[Any] | None = None,
        initialize: bool = True,
        max_line: int = DEFAULT_MAX_LINE,
        grace: float = 2.0,
        term_grace: float = 2.0,
        **options: Any,
    ) -> AsyncIterator[Client]:
        """Spawn ``command`` as a stdio server, connect (and initialize), and shut it down on exit.

        Shutdown: close the server's stdin, wait ``grace`` s, SIGTERM, wait ``term_grace`` s, SIGKILL.
        """
        from ..transports.stdio import spawn_stdio

        spawn = spawn_stdio(
            command, env=env, cwd=cwd, stderr=stderr, max_line=max_line, grace=grace, term_grace=term_grace
        )
        async with (
            spawn as stream,
            cls(stream, **options) as client,
        ):
            if initialize:
                await client.initialize()
            yield client

    @classmethod
    @contextlib.asynccontextmanager
    async def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        read_timeout: float = 300.0,
        fallback: bool = True,
        legacy: bool = False,
        initialize: bool = True,
        transport_options: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> AsyncIterator[Client]:
        """Connect to an MCP server over HTTP (and initialize); the session is ended on exit.

        Streamable HTTP, falling back to the legacy HTTP+SSE transport when the server refuses the
        initialize POST with 400/404/405 (``fallback``); ``legacy=True`` speaks HTTP+SSE from the start
        (``url`` is then the event stream's URL). ``headers`` go on every HTTP request; ``timeout``
        bounds connecting and short exchanges, ``read_timeout`` the wait for an answer. More transport
        settings: ``transport_options`` (see :func:`jsonrpc_mcp.transports.http_client.connect_http`).
        """
        from ..transports.http_client import connect_http

        connect = connect_http(
            url,
            headers=headers,
            timeout=timeout,
            read_timeout=read_timeout,
            fallback=fallback,
            legacy=legacy,
            **(transport_options or {}),
        )
        async with connect as stream, cls(stream, **options) as client:
            if initialize:
                await client.initialize()
            yield client
