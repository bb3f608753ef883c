"""The MCP client: the same JSON-RPC endpoint the server uses, driven from the other side.

Results are returned as plain JSON values (dicts), exactly as the server sent them: this client is
also the conformance harness's probe, so it must not hide what was on the wire. One exception, which
the revision requires: in a stateless revision over HTTP, :meth:`Client.list_tools` leaves out the
tools whose ``x-mcp-header`` declarations are invalid (a warning names each, with its reasons), and
:meth:`Client.call_tool` refuses to call them (:class:`RejectedToolError`, nothing is sent);
``raw_tools=True`` turns both off, for a harness that must see the server's answer as it was.

Eras
----
``mode`` says how the client opens a connection (:meth:`Client.connect`):

* ``"legacy"`` (the default): the ``initialize`` handshake (2024-11-05 .. 2025-11-25).
* a stateless revision (``2026-07-28``): no handshake. Every request carries the envelope in
  ``params._meta`` (protocol version, the client's capabilities and info, and the log level when
  one is set); ``connect`` calls ``server/discover`` to learn the server's capabilities.
* ``"auto"``: era detection as the official clients do it: probe ``server/discover`` (bounded by
  ``probe_timeout``). A ``DiscoverResult`` naming a revision we speak means the modern era; so does
  ``-32022`` whose ``data.supported`` names one (the probe is retried at it). Anything else (any
  other error, whatever its code, a result that is not a usable ``DiscoverResult``, a timeout)
  falls back to ``initialize``.

Multi round-trip requests (modern era): ``call_tool``, ``get_prompt`` and ``read_resource`` answer an
``InputRequiredResult`` whose every input request the application has a handler for (the same
``request_handlers`` that answer ``elicitation/create``, ``sampling/createMessage`` and
``roots/list`` in the handshake era), and retry the request (a new id, the same params plus
``inputResponses`` and the echoed ``requestState``) up to ``max_input_rounds`` times. A result
asking for input the application cannot give is returned as it came.

Authorization: over HTTP, ``Client.http(url, auth=OAuth(...))`` (:mod:`jsonrpc_mcp.client.auth`);
a request the server refuses for want of authorization raises ``AuthorizationError``.

Modules: this one is the :class:`Client`; :mod:`._modern` has the stateless revisions' pieces (the
input rounds, :class:`Subscription`, reading ``-32022``, era detection), :mod:`._tools` the tools
left out, :mod:`._dispatch` serves the server's requests and routes its notifications."""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from .. import wire
from .._version import __version__
from ..jsonrpc.endpoint import CancelSpec, Endpoint
from ..jsonrpc.errors import JsonRpcError, RequestTimeout
from ..jsonrpc.messages import Notification, RequestId
from ..revisions import HANDSHAKE_REVISIONS, LATEST_HANDSHAKE, MODERN_REVISIONS, Revision, get_revision
from ..telemetry import ClientTelemetry, client_telemetry
from ..transports.base import MessageStream
from ..transports.framing import DEFAULT_MAX_LINE
from ..transports.http._authz import claim_auth_failure
from ._apps import AppsMixin
from ._dispatch import ClientDispatcher, NotificationCallback, ProgressCallback, RequestHandler
from ._modern import (
    InputRequiredError,
    Subscription,
    discovered_revision,
    listen,
    modern_versions_named,
    route,
    with_input,
)
from ._skills import SkillsMixin
from ._tasks import ToolTask, with_tasks_declared
from ._tools import RejectedToolError, ToolScreen, mirrors_headers, named

if TYPE_CHECKING:
    from ..transports.http._authz import HttpAuth

__all__ = ["Client", "InputRequiredError", "NoCommonVersion", "RejectedToolError", "Subscription"]

logger = logging.getLogger("jsonrpc_mcp.client")

_DEFAULT: Any = object()

MODES = ("auto", "legacy", *(r.version for r in MODERN_REVISIONS))
LATEST_MODERN = MODERN_REVISIONS[-1]
DEFAULT_PROBE_TIMEOUT = 10.0  # what the official clients allow the server/discover probe
DEFAULT_MAX_INPUT_ROUNDS = 10


class NoCommonVersion(Exception):
    """The server answered ``initialize`` (or ``server/discover``) with no revision this client
    speaks: the two have no protocol version in common. (Not the server's
    :class:`~jsonrpc_mcp.errors.UnsupportedProtocolVersion`: that is the -32022 error a server
    answers a request naming a revision it does not serve, raised here as a ``JsonRpcError``.)"""


class Client(SkillsMixin, AppsMixin):
    """An MCP client over any message stream. Use as ``async with Client(stream) as client:``.

    ``mode`` is ``"legacy"`` (default), ``"auto"`` or the version of a stateless revision (2026-07-28)
    (see the module docs); :meth:`connect` opens the connection accordingly. ``protocol_version`` is
    what ``initialize`` asks for. ``request_handlers`` maps server-to-client methods (``roots/list``,
    ``sampling/createMessage``, ``elicitation/create``, ...) to async functions of the request params:
    they answer the server's requests in the handshake era and its input requests in the modern one.
    ``on_notification(method, params)`` sees every notification from the server. ``log_level`` (modern
    era) asks each request for ``notifications/message`` of that level and up. ``extensions`` (id ->
    settings) are the MCP extensions the client speaks, declared in ``capabilities.extensions``;
    :attr:`server_extensions` are the server's. ``raw_tools=True`` keeps every tool the server
    lists, and lets each be called, even those whose ``x-mcp-header`` declarations are invalid (see
    :meth:`list_tools`): for a harness or a tap that must see the server's answer as it was."""

    def __init__(
        self,
        stream: MessageStream,
        *,
        mode: str = "legacy",
        client_info: dict[str, Any] | None = None,
        capabilities: dict[str, Any] | None = None,
        protocol_version: str = LATEST_HANDSHAKE.version,
        request_timeout: float | None = 30.0,
        on_notification: NotificationCallback | None = None,
        request_handlers: Mapping[str, RequestHandler] | None = None,
        log_level: str | None = None,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
        extensions: Mapping[str, dict[str, Any]] | None = None,
        telemetry: bool | None = None,
        raw_tools: bool = False,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(map(repr, MODES))}; got {mode!r}")
        self.mode = mode
        self.client_info = client_info or {"name": "jsonrpc-mcp", "version": __version__}
        self.capabilities = capabilities if capabilities is not None else {}
        if extensions:  # SEP-2133: declared in capabilities.extensions (initialize, or every envelope)
            declared = self.capabilities.get("extensions")
            merged = {**(declared if isinstance(declared, dict) else {}), **extensions}
            self.capabilities = {**self.capabilities, "extensions": merged}
        self.requested_version = protocol_version
        self.log_level = log_level
        self.probe_timeout = probe_timeout
        self.max_input_rounds = max_input_rounds
        self._dispatcher = ClientDispatcher(request_handlers or {}, on_notification, self._route)
        self.endpoint = Endpoint(
            stream,
            self._dispatcher,
            request_timeout=request_timeout,
            cancel=CancelSpec(wire.CANCELLED, wire.CANCEL_ID_KEY),
        )
        self._stream = stream
        self._tg: TaskGroup | None = None
        self._exit: contextlib.AsyncExitStack | None = None
        self.initialize_result: dict[str, Any] = {}
        self.discover_result: dict[str, Any] = {}
        self.revision: Revision | None = None
        self._subscriptions: dict[RequestId, Subscription] = {}
        # OpenTelemetry (jsonrpc_mcp.telemetry): None switches it on if the application configured it
        self._telemetry_wanted, self._opened = telemetry, 0.0
        self.telemetry: ClientTelemetry | None = None
        self.transport: str | None = None  # "stdio" or "http" (set by stdio() and http())
        self.raw_tools = raw_tools
        self._screen = ToolScreen()  # the tools the last list_tools left out
        if mode not in ("auto", "legacy"):  # a stateless revision: nothing to negotiate
            self.revision = get_revision(mode)

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
        self.telemetry, self._opened = client_telemetry(self._telemetry_wanted), time.perf_counter()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._exit is not None and self._tg is not None
        if self.telemetry is not None and self.revision is not None:
            self.telemetry.session_ended(self, time.perf_counter() - self._opened)
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
        """The negotiated protocol version (the revision's), or None before connecting."""
        return self.revision.version if self.revision else None

    @property
    def is_modern(self) -> bool:
        """Whether requests go out in a stateless revision (each carrying its envelope)."""
        return self.revision is not None and not self.revision.has_handshake

    @property
    def _opening(self) -> dict[str, Any]:
        return self.discover_result if self.is_modern else self.initialize_result

    @property
    def server_info(self) -> dict[str, Any]:
        """The server's ``Implementation``: from ``initialize``, or the ``server/discover`` result's
        ``_meta`` (``{}`` when it named none)."""
        if self.is_modern:
            meta = self.discover_result.get("_meta")
            info = meta.get(wire.SERVER_INFO) if isinstance(meta, dict) else None
            return info if isinstance(info, dict) else {}
        info = self.initialize_result.get("serverInfo", {})
        return info if isinstance(info, dict) else {}

    @property
    def server_capabilities(self) -> dict[str, Any]:
        """The capabilities the server declared (``initialize`` or ``server/discover``); empty before."""
        caps = self._opening.get("capabilities", {})
        return caps if isinstance(caps, dict) else {}

    @property
    def server_extensions(self) -> dict[str, dict[str, Any]]:
        """The extensions the server declared (id -> settings) in ``initialize`` or ``server/discover``."""
        declared = self.server_capabilities.get("extensions")
        return declared if isinstance(declared, dict) else {}

    @property
    def extensions(self) -> dict[str, dict[str, Any]]:
        """The extensions this client declares (id -> settings)."""
        declared = self.capabilities.get("extensions")
        return declared if isinstance(declared, dict) else {}

    @property
    def instructions(self) -> str | None:
        """The server's ``instructions`` for the model, if it sent any."""
        return self._opening.get("instructions")

    async def connect(self) -> dict[str, Any]:
        """Open the connection as ``mode`` says: ``initialize`` (legacy), ``server/discover`` (a
        stateless revision), or the probe and its fallback (auto). Returns the server's
        ``InitializeResult`` or ``DiscoverResult``."""
        if self.mode == "legacy":
            return await self.initialize()
        if self.mode == "auto":
            return await self._auto()
        return await self.discover()

    async def initialize(self) -> dict[str, Any]:
        """The handshake: ``initialize``, check the revision, then ``notifications/initialized``."""
        result = await self.request(
            wire.INITIALIZE,
            {
                "protocolVersion": self.requested_version,
                "capabilities": self.capabilities,
                "clientInfo": self.client_info,
            },
            envelope=False,
        )
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        revision = get_revision(version) if isinstance(version, str) else None
        if revision is None or revision not in HANDSHAKE_REVISIONS:
            raise NoCommonVersion(f"the server chose protocol revision {version!r}, which we do not speak")
        self.revision = revision
        self.initialize_result = result
        await self.notify(wire.INITIALIZED)
        return self.initialize_result

    async def discover(self, *, timeout: float | None = _DEFAULT) -> dict[str, Any]:
        """``server/discover`` at our stateless revision (once more at another the server names in a
        -32022 error); adopts the result: from then on every request carries the envelope."""
        version = self.revision.version if self.is_modern and self.revision else LATEST_MODERN.version
        asked, result = await self._discover_at(version, timeout)
        if not self._adopt(asked, result):
            raise NoCommonVersion(f"server/discover named no protocol revision we speak: {result!r}")
        return self.discover_result

    async def _discover_at(self, version: str, timeout: float | None) -> tuple[str, Any]:
        try:
            return version, await self._send_discover(version, timeout)
        except JsonRpcError as exc:
            named = modern_versions_named(exc)
            if not named:
                raise
            logger.debug("server/discover at %s refused (%s); asking at %s", version, exc, named[-1])
            return named[-1], await self._send_discover(named[-1], timeout)

    async def _send_discover(self, version: str, timeout: float | None) -> Any:
        params = {"_meta": self.envelope(version)}
        return await self.request(wire.DISCOVER, params, timeout=timeout, envelope=False)

    def _adopt(self, asked: str, result: Any) -> bool:
        """Take a DiscoverResult: False when it is not one, or names no revision we speak."""
        revision = discovered_revision(asked, result)
        if revision is not None:
            self.revision, self.discover_result = revision, result
        return revision is not None

    async def _auto(self) -> dict[str, Any]:
        """Era detection: a usable DiscoverResult, or -32022 naming our revision, means modern;
        anything else (any other error, a timeout) falls back to ``initialize``."""
        try:
            asked, result = await self._discover_at(LATEST_MODERN.version, self.probe_timeout)
        except (JsonRpcError, RequestTimeout) as exc:
            logger.debug("server/discover probe failed (%r): falling back to initialize", exc)
        else:
            if self._adopt(asked, result):
                return self.discover_result
            logger.debug("server/discover gave no usable DiscoverResult: falling back to initialize")
        try:
            return await self.initialize()
        except JsonRpcError as exc:
            # -32022 to initialize is modern evidence too (a dual-era server that a late answer to a
            # timed-out probe locked into the modern era): ask once more at a revision it names.
            named = modern_versions_named(exc)
            if not named:
                raise
            asked, result = await self._discover_at(named[-1], self.probe_timeout)
            if not self._adopt(asked, result):
                raise
            return self.discover_result

    # -- raw JSON-RPC -----------------------------------------------------------------------------
    def envelope(self, version: str | None = None) -> dict[str, Any]:
        """The ``params._meta`` entries a stateless request carries (at ``version``, default ours)."""
        if version is None:
            version = self.protocol_version or LATEST_MODERN.version
        meta: dict[str, Any] = {
            wire.PROTOCOL_VERSION: version,
            wire.CLIENT_CAPABILITIES: self.capabilities,
            wire.CLIENT_INFO: self.client_info,
        }
        if self.log_level is not None:
            meta[wire.LOG_LEVEL] = self.log_level
        return meta

    def _stamped(self, params: Any) -> Any:
        if params is None:
            params = {}
        elif type(params) is not dict:
            return params  # not MCP's shape: sent as it is
        meta = params.get("_meta")
        merged = dict(meta) if type(meta) is dict else {}
        for key, value in self.envelope().items():
            merged.setdefault(key, value)  # what the caller put in _meta wins
        return {**params, "_meta": merged}

    async def request(
        self, method: str, params: Any = None, *, timeout: float | None = _DEFAULT, envelope: bool = True
    ) -> Any:
        """Send any request; returns the raw result or raises JsonRpcError / RequestTimeout.

        In the modern era the envelope is merged into ``params._meta`` (keys already there win);
        ``envelope=False`` sends ``params`` exactly as given."""
        if envelope and self.is_modern:
            params = self._stamped(params)
        if self.telemetry is not None:  # a CLIENT span, its context in params._meta
            return await self.telemetry.request(
                self, method, params, lambda p: self._send(method, p, timeout)
            )
        return await self._send(method, params, timeout)

    async def _send(self, method: str, params: Any, timeout: float | None) -> Any:
        try:
            if timeout is _DEFAULT:
                return await self.endpoint.request(method, params)
            return await self.endpoint.request(method, params, timeout=timeout)
        except JsonRpcError as exc:
            # a request the HTTP transport could not get authorized: its own exception, not -32600
            failure = claim_auth_failure(self._stream, exc.data) if exc.data is not None else None
            if failure is None:
                raise
            raise failure from None

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a JSON-RPC notification (no answer is awaited)."""
        await self.endpoint.notify(method, params)

    # -- MCP methods ------------------------------------------------------------------------------
    async def ping(self) -> None:
        """``ping`` (the handshake era; stateless revisions removed it)."""
        await self.request(wire.PING)

    async def _list_all(self, method: str, key: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            params = {"cursor": cursor} if cursor is not None else None
            result = await self.request(method, params)
            items.extend(result.get(key, []))
            cursor = result.get("nextCursor")
            if cursor is None:
                return items
            if cursor in seen:
                raise RuntimeError(f"{method}: the server repeated cursor {cursor!r}")
            seen.add(cursor)

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool (following ``nextCursor`` to the end).

        In a stateless revision (2026-07-28) over HTTP, where a call mirrors arguments into
        ``Mcp-Param-*`` headers, a tool whose ``x-mcp-header`` declarations are invalid (an empty or
        non-token name, a name declared twice in any letter case, one on a property that is not a
        string, integer or boolean, or not reached through ``properties``) is left out, as the
        revision requires, with one warning naming it and its reasons; :meth:`call_tool` then
        refuses it. Over stdio, in the handshake era, or with ``raw_tools``, the list is the
        server's as it was."""
        tools = await self._list_all(wire.TOOLS_LIST, "tools")
        if self.raw_tools or not mirrors_headers(self.is_modern, self.transport, self._stream):
            return tools
        return self._screen.screen(tools)

    def _refuse_rejected(self, name: str) -> None:
        if not self.raw_tools:
            self._screen.refuse(name)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = _DEFAULT,
        task: bool = False,
        progress: ProgressCallback | None = None,
    ) -> dict[str, Any]:
        """The raw ``CallToolResult`` (check ``isError``); protocol errors raise JsonRpcError.
        ``progress(progress, total, message)`` hears the call's progress notifications.

        Modern era: input requests are answered as the module docs say (an ``InputRequiredResult``
        comes back as it is when the application cannot answer it). ``task=True`` declares the
        Tasks extension on the request and, if the server runs the call as a task, waits for its
        result (see :meth:`start_tool_task`; a failed task raises its error).

        A tool :meth:`list_tools` left out (invalid ``x-mcp-header`` declarations) raises
        :class:`RejectedToolError` without sending anything."""
        self._refuse_rejected(name)
        if task:
            return await (await self.start_tool_task(name, arguments, timeout=timeout)).result()
        params = named(name, arguments)
        with self._dispatcher.progress(params, progress) as params:
            return await self._with_input(wire.TOOLS_CALL, params, timeout)

    async def start_tool_task(
        self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = _DEFAULT
    ) -> ToolTask:
        """Call a tool declaring the Tasks extension (``io.modelcontextprotocol/tasks``, 2026-07-28)
        on the request: the :class:`ToolTask` handle of the task the server created (``get``,
        ``update``, ``cancel``, ``wait``, ``result``; input requests are answered with the
        ``request_handlers``), or holding the result when the server answered at once. A tool
        :meth:`list_tools` left out raises :class:`RejectedToolError` (see :meth:`call_tool`)."""
        self._refuse_rejected(name)
        params = named(name, arguments)
        if self.is_modern:
            params = with_tasks_declared(params, self.capabilities, wire.CLIENT_CAPABILITIES)
        created = await self._with_input(wire.TOOLS_CALL, params, timeout)

        async def request(method: str, params: dict[str, Any]) -> Any:
            return await self.request(
                method, with_tasks_declared(params, self.capabilities, wire.CLIENT_CAPABILITIES)
            )

        return ToolTask(request, self._dispatcher.handlers, created)

    async def list_resources(self) -> list[dict[str, Any]]:
        """Every resource the server lists (``resources/list``), all pages followed."""
        return await self._list_all(wire.RESOURCES_LIST, "resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        """Every resource template the server lists (``resources/templates/list``), all pages followed."""
        return await self._list_all(wire.RESOURCES_TEMPLATES_LIST, "resourceTemplates")

    async def read_resource(self, uri: str, *, timeout: float | None = _DEFAULT) -> dict[str, Any]:
        """``resources/read`` of ``uri``: the ReadResourceResult (input the server asks for is answered
        by this client's handlers, and the request retried)."""
        return await self._with_input(wire.RESOURCES_READ, {"uri": uri}, timeout)

    async def list_prompts(self) -> list[dict[str, Any]]:
        """Every prompt the server lists (``prompts/list``), all pages followed."""
        return await self._list_all(wire.PROMPTS_LIST, "prompts")

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None, *, timeout: float | None = _DEFAULT
    ) -> dict[str, Any]:
        """``prompts/get``: the prompt ``name`` rendered with ``arguments`` (a GetPromptResult)."""
        params = named(name, arguments)
        return await self._with_input(wire.PROMPTS_GET, params, timeout)

    async def _with_input(self, method: str, params: dict[str, Any], timeout: float | None) -> dict[str, Any]:
        """Send the request; answer input requests and retry while the server asks for input we can give."""

        async def send(method: str, params: dict[str, Any]) -> Any:
            return await self.request(method, params, timeout=timeout)

        return await with_input(send, method, params, self._dispatcher.handlers, self.max_input_rounds)

    async def set_logging_level(self, level: str) -> None:
        """The server sends ``notifications/message`` of ``level`` and above.

        Handshake era: ``logging/setLevel``. Modern era (no such method): sets :attr:`log_level`,
        which every later request carries in its envelope; nothing is sent now."""
        if self.is_modern:
            self.log_level = level
            return
        await self.request(wire.SET_LEVEL, {"level": level})

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
        filled (sent as ``context.arguments``, which servers read from 2025-06-18 on)."""
        params: dict[str, Any] = {"ref": dict(ref), "argument": dict(argument)}
        if context_arguments is not None:
            params["context"] = {"arguments": dict(context_arguments)}
        result: dict[str, Any] = await self.request(wire.COMPLETE, params)
        return result

    async def subscribe_resource(self, uri: str) -> None:
        """``resources/subscribe`` (handshake era): the server then sends ``notifications/resources/updated``.

        Stateless revisions removed it: use :meth:`listen` with ``resourceSubscriptions``."""
        await self.request(wire.RESOURCES_SUBSCRIBE, {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        """``resources/unsubscribe``: stop the updates of ``uri`` (handshake revisions)."""
        await self.request(wire.RESOURCES_UNSUBSCRIBE, {"uri": uri})

    # -- subscriptions (modern era) -----------------------------------------------------------------
    def _route(self, notification: Notification) -> None:
        """Hand a notification tagged with a live subscription's id to that subscription."""
        if self._subscriptions:
            route(self._subscriptions, notification)

    def listen(
        self, notifications: Mapping[str, Any], *, timeout: float | None = _DEFAULT
    ) -> contextlib.AbstractAsyncContextManager[Subscription]:
        """``subscriptions/listen`` with the filter ``notifications`` (e.g. ``{"toolsListChanged":
        True, "resourceSubscriptions": ["file:///a"]}``); yields the :class:`Subscription` once the
        server acknowledged it (waiting at most ``timeout``, default the request timeout).

        Leaving the block ends the subscription: the request is cancelled (``notifications/cancelled``
        on stdio; over HTTP its response stream is closed). If the server refuses the request, or ends
        it before acknowledging, its error (JsonRpcError) or a RuntimeError is raised."""
        assert self._tg is not None, "use the client as an async context manager"
        params = {"notifications": dict(notifications)}
        params = self._stamped(params) if self.is_modern else params
        wait = self.endpoint.request_timeout if timeout is _DEFAULT else timeout
        return listen(self.endpoint, self._stream, self._tg, self._subscriptions, params, wait)

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
        """Spawn ``command`` as a stdio server, connect (:meth:`connect`, unless ``initialize`` is
        off), and shut it down on exit. ``options`` go to :class:`Client` (``mode=``, ...).

        Shutdown: close the server's stdin, wait ``grace`` s, SIGTERM, wait ``term_grace`` s, SIGKILL."""
        from ..transports.stdio import spawn_stdio

        spawn = spawn_stdio(
            command, env=env, cwd=cwd, stderr=stderr, max_line=max_line, grace=grace, term_grace=term_grace
        )
        async with (
            spawn as stream,
            cls(stream, **options) as client,
        ):
            client.transport = "stdio"
            if initialize:
                await client.connect()
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
        auth: HttpAuth | None = None,
        **options: Any,
    ) -> AsyncIterator[Client]:
        """Connect to an MCP server over HTTP (:meth:`connect`, unless ``initialize`` is off); the
        session, if one was opened, is ended on exit. ``options`` go to :class:`Client` (``mode=``, ...).

        Streamable HTTP, falling back to the legacy HTTP+SSE transport when the server refuses the
        initialize POST with 400/404/405 (``fallback``); ``legacy=True`` speaks HTTP+SSE from the start
        (``url`` is then the event stream's URL). Modern-era requests carry the headers the stateless
        revisions require (see :mod:`jsonrpc_mcp.transports.http`). ``headers`` go on every HTTP
        request; ``timeout`` bounds connecting and short exchanges, ``read_timeout`` the wait for an
        answer. More transport settings: ``transport_options`` (see
        :func:`jsonrpc_mcp.transports.http.connect_http`).

        ``auth`` authorizes the requests: an :class:`~jsonrpc_mcp.client.auth.OAuth` runs the
        MCP authorization flow when the server asks for it. A request the server refuses for want
        of authorization raises :class:`~jsonrpc_mcp.client.auth.AuthorizationError`."""
        from ..transports.http._connect import connect_http

        connect = connect_http(
            url,
            headers=headers,
            timeout=timeout,
            read_timeout=read_timeout,
            fallback=fallback,
            legacy=legacy,
            auth=auth,
            **(transport_options or {}),
        )
        async with connect as stream, cls(stream, **options) as client:
            client.transport = "http"
            if initialize:
                await client.connect()
            yield client
