"""The MCP :class:`Server`: registries of tools, resources and prompts, shared by all connections."""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, TypeVar, overload

from .. import wire
from ..errors import RegistrationError, ResourceNotFound
from ..jsonrpc.errors import InternalError, InvalidParams, JsonRpcError
from ..revisions import ALL_REVISIONS, Revision
from ._boundary import to_wire
from ._clientlog import LEVELS
from ._context import Context
from ._extensions import TASKS_ID, Extension, ExtensionHandler, register_extension
from ._handshake import State
from ._lifespan import Lifespan, LifespanScope
from ._mrtr import DEFAULT_STATE_TTL, RequestStateSealer
from ._pipeline import Middleware
from ._registry import TOOL_NAME, Completer, Prompt, Registry, Resource, ResourceTemplate, Tool
from ._router import Router
from ._serving import Serving
from ._session import ServerSession
from ._subscriptions import SubscriptionHub

if TYPE_CHECKING:
    from ..apps._extension import Apps
    from ._mount import Composition, Mount

__all__ = ["Server"]

logger = logging.getLogger("jsonrpc_mcp.server")

F = TypeVar("F", bound=Callable[..., Any])


class Server(Serving):
    """An MCP server. Register tools, resources and prompts, then serve it over any transport.

    ``page_size`` bounds every list result (clients follow ``nextCursor``); ``request_timeout`` bounds
    requests the server sends to the client (``ctx.sample``, ``ctx.elicit``, ``ctx.list_roots``...).

    Logging: ``logging_enabled`` advertises the ``logging`` capability (``True``), hides it and
    silences ``ctx.log`` (``False``), or (``None``) advertises it when a handler takes a
    :class:`Context`; until ``logging/setLevel``, ``default_log_level`` and above are sent.

    Tool names breaking the 2025-11-25 rules (1-128 characters of ``A-Z a-z 0-9 _ - .``) are logged
    as a warning at registration, or refused with ``RegistrationError`` if ``strict_tool_names``.

    Multi round-trip requests (2026-07-28): the ``requestState`` a client echoes is sealed with
    HMAC-SHA256 under ``state_key`` (at least 16 bytes, or a list: the first seals, all open), else
    ``$JSONRPC_MCP_STATE_KEY``, else a per-user key file (``$JSONRPC_MCP_STATE_FILE``, made on first
    use); it expires after ``state_ttl`` seconds. Machines sharing retries need the same key.

    ``lifespan``: ``fn(server)`` returning an async context manager (``contextlib.asynccontextmanager``),
    entered once before the first request is served (over stdio, in-process, and in each HTTP worker)
    and exited at shutdown; what it yields reaches handlers as ``ctx.lifespan`` (see :meth:`running`).

    ``mask_errors`` (default True): an unexpected exception escaping a handler is answered "failed:
    an internal error (reference ...)", logged with the reference; False shows its text.
    ``extensions``: MCP extensions (SEP-2133) the server offers (see :meth:`add_extension`).

    ``telemetry``: OpenTelemetry spans and metrics (:mod:`jsonrpc_mcp.telemetry`): ``None`` when the
    application configured OpenTelemetry, ``True`` always (the ``otel`` extra), ``False`` never.
    """

    _registered = True  # it serves what its registries hold (a Proxy serves what it relays)

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        page_size: int = 1000,
        request_timeout: float | None = 60.0,
        revisions: tuple[Revision, ...] = ALL_REVISIONS,
        cache_ttl_ms: int = 0,
        cache_scope: str = "public",
        logging_enabled: bool | None = None,
        default_log_level: str = "debug",
        strict_tool_names: bool = False,
        state_key: bytes | str | Sequence[bytes | str] | None = None,
        state_ttl: float = DEFAULT_STATE_TTL,
        lifespan: Lifespan | None = None,
        mask_errors: bool = True,
        extensions: Sequence[Extension] = (),
        telemetry: bool | None = None,
    ) -> None:
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        if default_log_level not in LEVELS:
            raise ValueError(f"default_log_level must be one of {', '.join(LEVELS)}")
        self.name = name
        self.version = version
        self.title = title
        self.description = description
        self.instructions = instructions
        self.website_url = website_url
        self.icons = icons
        self.page_size = page_size
        self.request_timeout = request_timeout
        if not any(r.has_handshake for r in revisions):
            raise ValueError("revisions must include at least one handshake revision")
        if cache_ttl_ms < 0 or cache_scope not in ("public", "private"):
            raise ValueError('cache_ttl_ms must be >= 0 and cache_scope "public" or "private"')
        self.revisions = revisions
        self._modern_by_version: tuple[tuple[Revision, ...], dict[str, Revision]] | None = None
        # without a stateless revision, modern requests are just unknown traffic before initialize,
        # which is what tells a dual-era client to fall back to the handshake
        self.speaks_modern = any(not r.has_handshake for r in revisions)
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope = cache_scope
        self.tools: Registry[Tool] = Registry("tool", self._changed)
        self.resources: Registry[Resource] = Registry("resource", self._changed)
        self.templates: Registry[ResourceTemplate] = Registry("resource template", self._changed)
        self.prompts: Registry[Prompt] = Registry("prompt", self._changed)
        self.completers: dict[tuple[str, str, str], Completer] = {}
        # the tools whose handler is a plain def (each call waits for a worker thread): the endpoint's
        # fast path starts their calls in a task of their own rather than inline (see _fastpath.py)
        self.threaded_tools: set[str] = set()
        self.logging_enabled = logging_enabled
        self.default_log_level = default_log_level
        self.strict_tool_names = strict_tool_names
        # seals the requestState of multi round-trip requests (2026-07-28; see .mrtr)
        self.request_state = RequestStateSealer.create(state_key, ttl=state_ttl)
        self.lifespan = lifespan
        self._lifespan = LifespanScope(self, lifespan)
        self._sessions: weakref.WeakSet[ServerSession] = weakref.WeakSet()
        # the open subscriptions/listen requests (2026-07-28): where list changes and resource
        # updates reach the stateless clients (handshake sessions get theirs through _sessions)
        self.subscriptions = SubscriptionHub()
        self._wire_cache: dict[tuple[str, str], tuple[int, list[dict[str, Any]]]] = {}
        self._capabilities_cache: dict[tuple[Any, ...], dict[str, Any]] = {}
        # every request of every transport and era passes through it (and its middleware)
        self.router = Router(self)
        # an unexpected exception's text stays in the log; the client gets a reference (_boundary)
        self.mask_errors = mask_errors
        self._telemetry_wanted = telemetry
        self.telemetry = None
        # SEP-2133 extensions: id -> extension, and the methods they add (method -> its handler)
        self.extensions: dict[str, Extension] = {}
        self.extension_methods: dict[str, tuple[Extension, ExtensionHandler]] = {}
        self._composition: Composition | None = None  # the servers mounted into this one (._mount)
        self._mounted_in: list[Mount] = []  # where this one is mounted
        for extension in extensions:  # (last: an extension may register resources and tools at once)
            self.add_extension(extension)

    # -- composition ------------------------------------------------------------------------------
    def mount(self, server: Server, namespace: str | None = None) -> None:
        """Serve ``server``'s tools, resources, templates, prompts and completions as this server's,
        under ``namespace`` (tools and prompts ``{namespace}_{name}``, URIs ``scheme://{namespace}/path``),
        live, its middleware and lifespan running inside this server's. Mount before serving; a
        :class:`jsonrpc_mcp.proxy.Proxy` mounts a remote server. See :mod:`._mount`."""
        from ._mount import mount

        mount(self, server, namespace)

    def import_server(self, server: Server, namespace: str | None = None) -> None:
        """Copy ``server``'s definitions in once, renamed as :meth:`mount` does (no later changes)."""
        from ._mount import import_server

        import_server(self, server, namespace)

    # -- lifespan ---------------------------------------------------------------------------------
    def running(self) -> AbstractAsyncContextManager[Any]:
        """Run the server's ``lifespan`` around a body (yields what it yielded; None without one).

        Every way of serving enters it: :meth:`serve` (stdio, the in-memory pair) and the HTTP app's
        ASGI lifespan (in each worker process). The first to enter runs the lifespan and exits it
        when its body ends; whoever enters while it runs shares it. A server mounted in another
        ASGI application, which forwards no lifespan events, enters it from that application's own
        lifespan (``async with server.running(): yield`` in Starlette's or FastAPI's).
        """
        self._start_telemetry()
        if self._composition is not None:  # the mounted servers' run inside this one's
            return self._composition.running(self._lifespan.running())
        return self._lifespan.running()

    @property
    def lifespan_state(self) -> Any:
        """What the running lifespan yielded (None without a lifespan); RuntimeError when the
        server has a lifespan that is not running (serve it, or enter :meth:`running`)."""
        return self._lifespan.state

    # -- middleware -------------------------------------------------------------------------------
    def add_middleware(self, middleware: Middleware) -> None:
        """Run ``middleware`` around every request this server serves, over any transport, in
        either era: an async ``(call, call_next) -> result`` (see :class:`Call`). The first one
        added is the outermost."""
        self.router.add(middleware)

    def middleware(self, fn: Middleware) -> Middleware:
        """Decorator form of :meth:`add_middleware`."""
        self.add_middleware(fn)
        return fn

    # -- extensions -------------------------------------------------------------------------------
    def add_extension(self, extension: Extension) -> None:
        """Offer an MCP extension (SEP-2133): declared in ``capabilities.extensions``, its methods
        routable, its middleware (if any) run around every request (see :class:`Extension`)."""
        register_extension(self, extension)

    @property
    def apps(self) -> Apps:
        """MCP Apps (``io.modelcontextprotocol/ui``): views and the tools linked to them (the
        extension is added on first use; see :class:`jsonrpc_mcp.apps.Apps`)."""
        found = self.extensions.get("io.modelcontextprotocol/ui")
        if found is None:
            from ..apps._extension import Apps

            found = Apps()
            self.add_extension(found)
        return found  # type: ignore[return-value]

    # -- registration -----------------------------------------------------------------------------
    def add_tool(
        self,
        name: str,
        fn: Callable[..., Any],
        *,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        title: str | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        replace: bool = False,
        task: str | None = None,
        defer_task: bool = False,
    ) -> Tool:
        """Register a tool. Without ``input_schema`` the schema is built from ``fn``'s signature.

        ``fn`` receives the validated arguments as keyword arguments (and the :class:`Context` in a
        parameter annotated with it). Raises :class:`RegistrationError` for an invalid schema (and,
        with ``strict_tool_names``, for a name breaking the tool-name rules).

        ``task`` ("optional" or "required") runs the tool's calls as tasks of the Tasks extension
        (SEP-2663; added with its defaults if the server has none): "optional" when the request
        declares the extension (an ordinary call otherwise), "required" always (-32021 for a client
        without it). ``defer_task``: the call becomes a task only when the tool calls
        ``await jsonrpc_mcp.server.tasks.start_task()`` (after asking for input, say).
        """
        ruled = [r for r in self.revisions if r.tool_name_rules]
        if ruled and isinstance(name, str) and not TOOL_NAME.match(name):
            problem = (
                f"tool name {name!r} breaks the tool-name rules of protocol revision {ruled[0].version}: "
                "1-128 characters of A-Z a-z 0-9 _ - . (no spaces or commas)"
            )
            if self.strict_tool_names:
                raise RegistrationError(problem)
            logger.warning("%s", problem)
        tool = Tool(
            name,
            fn,
            description=description,
            input_schema=input_schema,
            output_schema=output_schema,
            title=title,
            annotations=annotations,
            icons=icons,
            meta=meta,
        )
        if task is not None or TASKS_ID in self.extensions:
            _mark_task_tool(self, name, task, defer_task)
        self.tools.add(name, tool, replace=replace)
        return tool

    @overload
    def tool(self, name: F, /) -> F: ...

    @overload
    def tool(
        self,
        name: str | None = None,
        *,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        title: str | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        task: str | None = None,
        defer_task: bool = False,
    ) -> Callable[[F], F]: ...

    def tool(self, name: str | Callable[..., Any] | None = None, **options: Any) -> Any:
        """Decorator: register the function as a tool named after it (see :meth:`add_tool` for the
        options); ``@server.tool`` and ``@server.tool()`` alike."""
        if callable(name):  # @server.tool, without parentheses: the function itself
            return self.tool()(name)

        def register(fn: F) -> F:
            self.add_tool(name or fn.__name__, fn, **options)
            return fn

        return register

    def remove_tool(self, name: str) -> bool:
        """Unregister the tool ``name``; whether there was one (clients are told the list changed)."""
        return self.tools.remove(name)

    def add_resource(
        self, uri: str, fn: Callable[..., Any], *, replace: bool = False, **options: Any
    ) -> Resource:
        """Register a resource; a URI containing ``{...}`` registers a resource template.

        Options: ``name``, ``title``, ``description``, ``mime_type``, ``size`` (not templates),
        ``annotations``, ``icons``, ``meta``. The handler returns str (text), bytes (blob), a
        ``ResourceContent`` (or a list of them), or any JSON value (sent as JSON text).
        """
        if "{" in uri:
            template = ResourceTemplate(uri, fn, **options)
            self.templates.add(uri, template, replace=replace)
            return template
        resource = Resource(uri, fn, **options)
        self.resources.add(uri, resource, replace=replace)
        return resource

    def resource(self, uri: str, **options: Any) -> Callable[[F], F]:
        """Decorator form of :meth:`add_resource`."""
        if not isinstance(uri, str):  # @server.resource without its URI
            raise RegistrationError('server.resource needs a URI: @server.resource("notes://all")')

        def register(fn: F) -> F:
            self.add_resource(uri, fn, **options)
            return fn

        return register

    def remove_resource(self, uri: str) -> bool:
        """Unregister the resource or template ``uri``; whether there was one."""
        return self.resources.remove(uri) or self.templates.remove(uri)

    def add_prompt(
        self, name: str, fn: Callable[..., Any], *, replace: bool = False, **options: Any
    ) -> Prompt:
        """Register a prompt; its arguments are the handler's parameters (strings).

        Options: ``title``, ``description``, ``arguments`` (explicit list), ``icons``, ``meta``. The
        handler returns a str (one user message), a list of messages/strs, or ``{"messages": ...}``.
        """
        prompt = Prompt(name, fn, **options)
        self.prompts.add(name, prompt, replace=replace)
        return prompt

    @overload
    def prompt(self, name: F, /) -> F: ...

    @overload
    def prompt(self, name: str | None = None, **options: Any) -> Callable[[F], F]: ...

    def prompt(self, name: str | Callable[..., Any] | None = None, **options: Any) -> Any:
        """Decorator form of :meth:`add_prompt`; ``@server.prompt`` and ``@server.prompt()`` alike."""
        if callable(name):  # without parentheses: the function itself
            return self.prompt()(name)

        def register(fn: F) -> F:
            self.add_prompt(name or fn.__name__, fn, **options)
            return fn

        return register

    def remove_prompt(self, name: str) -> bool:
        """Unregister the prompt ``name``; whether there was one."""
        return self.prompts.remove(name)

    def add_completion(
        self,
        fn: Callable[..., Any],
        *,
        argument: str,
        prompt: str | None = None,
        resource: str | None = None,
        replace: bool = False,
    ) -> Completer:
        """Register completions (``completion/complete``) for a prompt's argument or a resource
        template's variable (``resource`` is the template, e.g. ``"file:///{path}"``).

        ``fn(value, context)`` gets the partial value and the other arguments already filled
        (``context.arguments``; empty before 2025-06-18) and returns the candidate values, or
        ``{"values": [...], "total": N, "hasMore": bool}``; more than 100 values are cut to 100.
        """
        if (prompt is None) == (resource is None):
            raise RegistrationError("a completion is for a prompt or for a resource template: give one")
        if not isinstance(argument, str) or not argument:
            raise RegistrationError("a completion needs the argument's name")
        key = ("ref/prompt", prompt, argument) if prompt is not None else ("ref/resource", resource, argument)
        what = f"completion of {argument!r} for {'prompt' if prompt is not None else 'resource'} {key[1]!r}"
        if key in self.completers and not replace:
            raise RegistrationError(f"a {what} is already registered")
        completer = Completer(fn, what)
        self.completers[key] = completer  # type: ignore[index]
        return completer

    def completion(
        self, *, argument: str, prompt: str | None = None, resource: str | None = None
    ) -> Callable[[F], F]:
        """Decorator form of :meth:`add_completion`::

        @server.completion(prompt="greet", argument="name")
        def names(value: str, context: dict[str, str]) -> list[str]: ...
        """

        def register(fn: F) -> F:
            self.add_completion(fn, argument=argument, prompt=prompt, resource=resource)
            return fn

        return register

    @property
    def has_completions(self) -> bool:
        """Whether any completion handler is registered (the ``completions`` capability)."""
        return bool(self.completers) or (
            self._composition is not None and self._composition.has_completions()
        )

    # -- what the sessions ask ------------------------------------------------------------------------
    def modern_revision(self, version: str) -> Revision | None:
        """The stateless revision named ``version``, if this server serves it."""
        revisions = self.revisions
        by_version = self._modern_by_version
        if by_version is None or by_version[0] is not revisions:  # (re)built when revisions is replaced
            table = {r.version: r for r in reversed(revisions) if not r.has_handshake}  # the first wins
            by_version = self._modern_by_version = (revisions, table)
        return by_version[1].get(version)

    def capabilities(self, revision: Revision) -> dict[str, Any]:
        """Server capabilities, derived from what is registered (remembered until that changes:
        every stateless request asks). Treat the result as read-only."""
        key = (
            revision.version,
            self.tools.generation,
            self.resources.generation,
            self.templates.generation,
            self.prompts.generation,
            len(self.completers),
            self.logging_enabled,
        )
        cached = self._capabilities_cache.get(key)
        if cached is None:
            if len(self._capabilities_cache) > 64:
                self._capabilities_cache.clear()
            cached = self._capabilities_cache[key] = self._derive_capabilities(revision)
        if self._composition is not None:
            return self._composition.capabilities(cached, revision)
        return cached

    def _derive_capabilities(self, revision: Revision) -> dict[str, Any]:
        caps: dict[str, Any] = {}
        # list changes and resource updates are pushed on a handshake session's own channel, or
        # (stateless revisions) on a subscriptions/listen request's
        if self.uses_logging():
            caps["logging"] = {}
        if self.completers and revision.has_completions_capability:
            caps["completions"] = {}
        if len(self.tools):
            caps["tools"] = {"listChanged": True}
        if len(self.resources) or len(self.templates):
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if len(self.prompts):
            caps["prompts"] = {"listChanged": True}
        declared = {k: e.settings() for k, e in self.extensions.items() if e.serves(revision)}
        if declared:
            caps["extensions"] = declared
        return caps

    def uses_logging(self) -> bool:
        """Whether the ``logging`` capability is advertised (see ``logging_enabled``)."""
        if self.logging_enabled is not None:
            return self.logging_enabled
        handlers: list[Any] = [
            *(t.handler for t in self.tools),
            *(r.handler for r in self.resources),
            *(r.handler for r in self.templates),
            *(p.handler for p in self.prompts),
        ]
        return any(h.context_param is not None for h in handlers) or any(
            c.context_param is not None for c in self.completers.values()
        )

    def server_info(self, revision: Revision) -> dict[str, Any]:
        """The ``serverInfo`` sent to clients, with the fields ``revision`` knows."""
        info: dict[str, Any] = {"name": self.name, "version": self.version}
        if self.title and revision.has_titles:
            info["title"] = self.title
        if revision.has_icons:
            if self.icons:
                info["icons"] = self.icons
            if self.description:
                info["description"] = self.description
            if self.website_url:
                info["websiteUrl"] = self.website_url
        return info

    def wire_list(self, kind: str, revision: Revision) -> list[dict[str, Any]]:
        """The wire form of a registry for a revision, cached until the registry changes."""
        registries: dict[str, Registry[Any]] = {
            "tools": self.tools,
            "resources": self.resources,
            "resource templates": self.templates,
            "prompts": self.prompts,
        }
        registry = registries[kind]
        key = (kind, revision.version)
        cached = self._wire_cache.get(key)
        if cached is not None and cached[0] == registry.generation:
            return cached[1]
        items = [item.to_wire(revision) for item in registry]
        self._wire_cache[key] = (registry.generation, items)
        return items

    async def call_tool(
        self, tool: Tool, arguments: dict[str, Any], ctx: Context | None, revision: Revision
    ) -> Any:
        """Run a tool whose arguments were validated; execution errors become ``isError`` results.
        ``ctx`` may be None only for a tool that takes no Context."""
        handler = tool.handler
        try:
            if handler.plain and (handler.var_kwargs or handler.params.issuperset(arguments)):
                # _Handler.__call__'s fast path, one await fewer: the arguments as they come, to an
                # async function on the loop or a plain one in a worker thread
                value = await (handler.fn(**arguments) if handler.is_async else handler.in_thread(arguments))
            else:
                value = await handler(arguments, ctx)
        except Exception as exc:  # an isError result, or the JSON-RPC error the revision says
            outcome = to_wire(exc, revision, wire.TOOLS_CALL, tool=tool.name, mask=self.mask_errors)
            if outcome is exc:
                raise
            if isinstance(outcome, JsonRpcError):
                raise outcome from None
            return outcome
        try:
            return tool.to_result(value, revision)
        except TypeError:  # orjson could not encode what the handler returned
            logger.error("tool %r returned a %s, which is not JSON", tool.name, type(value).__name__)
            raise InternalError(
                f"Internal error: tool {tool.name!r} returned a {type(value).__name__}, which is not JSON"
            ) from None

    async def read_resource(self, uri: str, ctx: Context) -> list[dict[str, Any]]:
        """The ``contents`` of ``uri``: a resource's, or the first template's that matches it; raises
        :class:`ResourceNotFound`."""
        resource = self.resources.get(uri)
        if resource is not None:
            return await resource.read(uri, {}, ctx)
        for template in self.templates:
            variables = template.match(uri)
            if variables is not None:
                return await template.read(uri, variables, ctx)
        raise ResourceNotFound(uri)

    async def complete(self, params: dict[str, Any], ctx: Context, revision: Revision) -> dict[str, Any]:
        """Serve ``completion/complete``: -32602 for an unknown prompt, template or argument; no
        completer registered for a known argument answers with no values."""
        ref = params.get("ref")
        argument = params.get("argument")
        if not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
            raise InvalidParams("Invalid params: completion/complete needs 'argument': {name, value}")
        name: str = argument["name"]
        value = argument.get("value", "")
        if not isinstance(value, str):
            raise InvalidParams("Invalid params: the argument's 'value' must be a string")
        context: dict[str, str] = {}
        raw_context = params.get("context")
        if revision.has_completion_context and raw_context is not None:
            given = raw_context.get("arguments") if isinstance(raw_context, dict) else None
            if given is not None and (
                not isinstance(given, dict) or not all(isinstance(v, str) for v in given.values())
            ):
                raise InvalidParams("Invalid params: 'context.arguments' must map names to strings")
            context = dict(given or {})
        kind = ref.get("type") if isinstance(ref, dict) else None
        if kind == "ref/prompt" and isinstance(ref, dict) and isinstance(ref.get("name"), str):
            target: str = ref["name"]
            prompt = self.prompts.get(target)
            if prompt is None:
                raise InvalidParams(f"Invalid params: unknown prompt {target!r}", {"name": target})
            if name not in {a.get("name") for a in prompt.arguments}:
                raise InvalidParams(f"Invalid params: prompt {target!r} has no argument {name!r}")
        elif kind == "ref/resource" and isinstance(ref, dict) and isinstance(ref.get("uri"), str):
            target = ref["uri"]
            template = self.templates.get(target)
            if template is None:
                if target in self.resources:
                    raise InvalidParams(f"Invalid params: resource {target!r} is not a template")
                raise InvalidParams(f"Invalid params: unknown resource template {target!r}", {"uri": target})
            if name not in template.template.variables:
                raise InvalidParams(f"Invalid params: resource template {target!r} has no variable {name!r}")
        else:
            raise InvalidParams(
                "Invalid params: 'ref' must be {type: 'ref/prompt', name} or {type: 'ref/resource', uri}"
            )
        completer = self.completers.get((kind, target, name))
        if completer is None:
            return {"completion": {"values": []}}
        return {"completion": await completer(value, context, ctx)}

    async def notify_resource_updated(self, uri: str) -> int:
        """Send ``notifications/resources/updated`` to every session subscribed to ``uri`` (or to a
        URI it is below, e.g. ``file:///dir`` for ``file:///dir/a``) and to every
        ``subscriptions/listen`` request watching it; returns how many were told.

        Call it on the event loop; from a worker thread, ``anyio.from_thread.run(...)`` it.
        """
        told = self.subscriptions.resource_updated(uri)
        for mount in self._mounted_in:  # the servers this one is mounted into tell theirs
            told += await mount.parent.notify_resource_updated(mount.uri(uri))
        for session in list(self._sessions):
            if session.state is not State.READY or not session.is_subscribed(uri):
                continue
            try:
                await session.notify(wire.RESOURCE_UPDATED, {"uri": uri})
            except Exception as exc:
                logger.debug("could not tell a session that %s changed: %s", uri, exc)
            else:
                told += 1
        return told

    def _changed(self, kind: str) -> None:
        if kind == self.tools.kind:  # (updated in place: the endpoints hold this very set)
            threaded = {t.name for t in self.tools if not t.handler.is_async}
            self.threaded_tools.intersection_update(threaded)
            self.threaded_tools.update(threaded)
        self.subscriptions.list_changed(kind)  # first: a Redis hub names the change for the notices
        for session in list(self._sessions):
            session.list_changed(kind)
        for mount in self._mounted_in:
            mount.parent._changed(kind)


def _mark_task_tool(server: Server, name: str, task: str | None, deferred: bool) -> None:
    """``add_tool(task=...)``: tell the server's Tasks extension (added with its defaults if the
    server has none) how the tool runs."""
    tasks = server.extensions.get(TASKS_ID)
    if tasks is None:
        from .tasks import TasksExtension  # (loaded by the first tool that runs as a task)

        tasks = TasksExtension()
        server.add_extension(tasks)
    tasks.mark(name, task, deferred=deferred)  # type: ignore[attr-defined]
