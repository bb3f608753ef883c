"""Tools from an OpenAPI 3.0 or 3.1 document: each operation of an HTTP API becomes a tool that
calls it (the ``openapi`` extra: httpx)::

    from jsonrpc_mcp.openapi import RouteMap, from_openapi

    server = from_openapi(
        document,  # the document as a dict (json.load / yaml.safe_load it)
        base_url="https://api.example.com",
        route_maps=[RouteMap(pattern=r"^/admin/", exclude=True)],
    )
    server.run()

A tool is named after the operation's ``operationId`` (else ``{method}_{path}``), described by
its summary and description, and takes the operation's path, query and header parameters and its
request body as arguments (see :mod:`._document`); its ``outputSchema`` is the JSON schema of the
first 2xx response. A call sends the request and answers with the API's response; a status that is
not 2xx, or a network failure, is the tool's error in one line (see :mod:`._calling`). ``$ref``
references are resolved inside the document only: nothing is fetched.

``route_maps`` decide which operations become tools and what they are called: the first
:class:`RouteMap` matching an operation (by method, path pattern and tags) applies; an operation no
map matches becomes a tool. ``names`` maps an ``operationId`` (or ``"GET /path"``) to a tool name.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import RegistrationError
from ..server import Server, Tool
from ._calling import Caller, call_operation
from ._document import Argument, OpenAPIError, Operation, operations

if TYPE_CHECKING:
    import httpx

__all__ = ["Argument", "OpenAPIError", "Operation", "RouteMap", "from_openapi", "tools_from_openapi"]

DEFAULT_TIMEOUT = 30.0
_NOT_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class RouteMap:
    """A rule for the operations it matches: every condition given must hold (``methods``: any of
    these, e.g. ``{"GET"}``; ``pattern``: a regular expression searched in the path template;
    ``tags``: all of these among the operation's). ``exclude`` leaves them out; ``name`` (a str,
    or ``fn(operation) -> str``) renames them; ``annotations`` are added to their tools'."""

    methods: Collection[str] | None = None
    pattern: str | None = None
    tags: Collection[str] = ()
    exclude: bool = False
    name: str | Callable[[Operation], str] | None = None
    annotations: Mapping[str, Any] | None = None

    def matches(self, op: Operation) -> bool:
        """Whether every condition given holds for the operation."""
        if self.methods is not None and op.method not in {m.upper() for m in self.methods}:
            return False
        if self.pattern is not None and re.search(self.pattern, op.path) is None:
            return False
        return set(self.tags) <= set(op.tags)


def _default_name(op: Operation) -> str:
    raw = op.operation_id or f"{op.method.lower()}_{op.path.strip('/')}"
    name = _NOT_NAME.sub("_", raw).strip("_") or op.method.lower()
    return name[:128]


def _description(op: Operation) -> str | None:
    parts = [p for p in (op.summary, op.description) if p]
    if len(parts) == 2 and parts[1].startswith(parts[0]):
        parts = parts[1:]
    text = "\n\n".join(parts)
    if op.deprecated:
        text = f"(deprecated) {text}".strip()
    return text or None


def _annotations(op: Operation) -> dict[str, Any]:
    if op.method in ("GET", "HEAD", "OPTIONS"):
        return {"readOnlyHint": True, "openWorldHint": True}
    return {
        "readOnlyHint": False,
        "destructiveHint": op.method == "DELETE",
        "idempotentHint": op.method in ("PUT", "DELETE"),
        "openWorldHint": True,
    }


def _base_url(document: dict[str, Any], given: str | None, client: httpx.AsyncClient | None) -> str:
    if given is not None:
        return given
    servers = document.get("servers")
    first = servers[0] if isinstance(servers, list) and servers and isinstance(servers[0], dict) else None
    url = first.get("url") if first is not None else None
    if isinstance(url, str) and url:
        for name, variable in (first or {}).get("variables", {}).items():
            if isinstance(variable, dict) and "default" in variable:
                url = url.replace("{" + name + "}", str(variable["default"]))
        if url.startswith(("http://", "https://")) or (client is not None and str(client.base_url)):
            return url
    if client is not None and str(client.base_url):
        return ""
    raise OpenAPIError("no base URL: give base_url= (or a client with a base_url, or servers[0].url)")


def tools_from_openapi(
    server: Server,
    document: dict[str, Any],
    *,
    base_url: str | None = None,
    client: httpx.AsyncClient | None = None,
    route_maps: Sequence[RouteMap] = (),
    names: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> list[Tool]:
    """Register a tool on ``server`` for each operation of ``document`` the route maps keep; returns
    them. ``base_url`` (default: the document's first server) is where the paths are; ``client``
    an ``httpx.AsyncClient`` to send the requests with (its lifetime is yours; without one, a
    client is made on first use); ``headers`` go with every request (an API key: they never
    appear in a result or a log line)."""
    if not isinstance(document, dict):
        raise OpenAPIError("the OpenAPI document must be a dict (json.load or yaml.safe_load it)")
    caller = Caller(_base_url(document, base_url, client), client, dict(headers or {}), timeout)
    return _register(server, document, caller, route_maps, names or {})


def _register(
    server: Server,
    document: dict[str, Any],
    caller: Caller,
    route_maps: Sequence[RouteMap],
    names: Mapping[str, str],
) -> list[Tool]:
    made: list[Tool] = []
    for op in operations(document):
        rule = next((m for m in route_maps if m.matches(op)), None)
        if rule is not None and rule.exclude:
            continue
        name = names.get(op.operation_id or "") or names.get(op.key)
        if name is None and rule is not None and rule.name is not None:
            name = rule.name if isinstance(rule.name, str) else rule.name(op)
        name = name or _default_name(op)
        taken = {t.name for t in server.tools}
        if name in taken:
            suffix = 2
            while f"{name}_{suffix}" in taken:
                suffix += 1
            name = f"{name}_{suffix}"
        annotations = {**_annotations(op), **dict(rule.annotations or {} if rule is not None else {})}
        try:
            made.append(
                server.add_tool(
                    name,
                    _handler(caller, op),
                    description=_description(op),
                    input_schema=op.input_schema,
                    output_schema=op.output_schema,
                    annotations=annotations,
                )
            )
        except RegistrationError as exc:
            raise OpenAPIError(f"{op.key}: {exc}") from None
    return made


def _handler(caller: Caller, op: Operation) -> Callable[..., Any]:
    async def call(**arguments: Any) -> Any:
        return await call_operation(caller, op, arguments)

    call.__name__ = _default_name(op)
    return call


def from_openapi(
    document: dict[str, Any],
    *,
    base_url: str | None = None,
    client: httpx.AsyncClient | None = None,
    route_maps: Sequence[RouteMap] = (),
    names: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    name: str | None = None,
    **server_options: Any,
) -> Server:
    """A :class:`Server` whose tools are the document's operations (see :func:`tools_from_openapi`),
    named ``name`` (default: the document's ``info.title``) and versioned as the document's
    ``info.version``; a client it makes is closed when serving ends. ``server_options`` go to
    :class:`Server`."""
    if not isinstance(document, dict):
        raise OpenAPIError("the OpenAPI document must be a dict (json.load or yaml.safe_load it)")
    found = document.get("info")
    info: dict[str, Any] = found if isinstance(found, dict) else {}
    callers: list[Caller] = []

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[None]:
        try:
            yield
        finally:
            for caller in callers:
                await caller.aclose()

    options: dict[str, Any] = {"lifespan": lifespan, **server_options}
    if isinstance(info.get("description"), str) and "instructions" not in options:
        options["instructions"] = info["description"]
    server = Server(
        name or str(info.get("title") or "openapi"), str(info.get("version") or "0.1.0"), **options
    )
    caller = Caller(_base_url(document, base_url, client), client, dict(headers or {}), timeout)
    callers.append(caller)
    _register(server, document, caller, route_maps, names or {})
    return server
