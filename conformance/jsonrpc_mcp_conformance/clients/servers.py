"""The scenario servers: what the client under test talks to, one per scenario.

Each is an ordinary :class:`jsonrpc_mcp.Server` (both eras: the handshake revisions and
2026-07-28; in the handshake era the sampling, roots and elicitation scenarios ask the client
whatever it declared, so that a client answering without having declared the capability is seen),
served over HTTP in the harness's process or over stdio by ``python -m
jsonrpc_mcp_conformance.clients.servers NAME``. A scenario's server asks for nothing the scenario's
requirements do not need; what the client sends is judged from the recorded traffic, never from
inside these handlers.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from jsonrpc_mcp import Server
from jsonrpc_mcp.server._context import Context

from . import scenario_servers
from .buffered import read_body

__all__ = [
    "CANARY_PATH",
    "ELICITATION_DEFAULTS",
    "HTTP_WRAPPERS",
    "INVALID_HEADER_TOOLS",
    "SERVERS",
    "RejectFirstVersion",
    "build_server",
    "main",
]

# The form the elicitation scenario sends: one field of each primitive type, each with a default
# (the official scenario ``elicitation-sep1034-client-defaults`` asks for the same kinds).
ELICITATION_DEFAULTS: dict[str, Any] = {
    "name": "John Doe",
    "age": 30,
    "score": 95.5,
    "status": "active",
    "verified": True,
}
ELICITATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
}

# Tools whose x-mcp-header declarations are invalid (2026-07-28): the client must leave them out.
INVALID_HEADER_TOOLS: dict[str, dict[str, Any]] = {
    "invalid_empty_header": {"value": {"type": "string", "x-mcp-header": ""}},
    "invalid_object_header": {"data": {"type": "object", "x-mcp-header": "Data"}},
    "invalid_array_header": {"items": {"type": "array", "x-mcp-header": "Items"}},
    "invalid_null_header": {"value": {"type": "null", "x-mcp-header": "Value"}},
    "invalid_number_header": {"score": {"type": "number", "x-mcp-header": "Score"}},
    "invalid_non_string_header": {"value": {"type": "string", "x-mcp-header": 42}},
    "invalid_duplicate_same_case": {
        "a": {"type": "string", "x-mcp-header": "Region"},
        "b": {"type": "string", "x-mcp-header": "Region"},
    },
    "invalid_duplicate_diff_case": {
        "a": {"type": "string", "x-mcp-header": "Region"},
        "b": {"type": "string", "x-mcp-header": "REGION"},
    },
    "invalid_space_in_name": {"value": {"type": "string", "x-mcp-header": "My Region"}},
    "invalid_colon_in_name": {"value": {"type": "string", "x-mcp-header": "My:Region"}},
    "invalid_non_ascii_name": {"value": {"type": "string", "x-mcp-header": "R\u00e9gion"}},
    "invalid_control_char_name": {"value": {"type": "string", "x-mcp-header": "My\u0001Region"}},
}


def _add_numbers(server: Server) -> None:
    @server.tool()
    def add_numbers(a: float, b: float) -> str:
        """Add two numbers."""
        return f"The sum of {a} and {b} is {a + b}"


def _initialize() -> Server:
    server = Server("conformance-client-scenario", version="1.0.0")
    _add_numbers(server)
    return server


def _elicitation() -> Server:
    server = Server("conformance-client-scenario", version="1.0.0")

    @server.tool()
    async def test_client_elicitation_defaults(ctx: Context) -> str:
        """Ask the user to fill a form whose every field has a default."""
        message = "Confirm your details (every field has a default)"
        if ctx.revision.has_handshake:  # asked whatever the client declared: its answer is judged
            schema = ELICITATION_SCHEMA
            params: dict[str, Any] = {"mode": "form", "message": message, "requestedSchema": schema}
            if (
                ctx.revision.version < "2025-11-25"
            ):  # no mode; defaults on booleans only (SEP-1034 came later)
                properties = {
                    name: field
                    if field.get("type") == "boolean"
                    else {k: v for k, v in field.items() if k != "default"}
                    for name, field in schema["properties"].items()
                }
                params = {"message": message, "requestedSchema": {**schema, "properties": properties}}
            answer = await ctx.send_request("elicitation/create", params)
        else:
            answer = await ctx.elicit(message, ELICITATION_SCHEMA)
        return f"elicitation answered: {answer.get('action')}"

    return server


def _sampling() -> Server:
    server = Server("conformance-client-scenario", version="1.0.0")

    @server.tool()
    async def test_sampling(ctx: Context) -> str:
        """Ask the client's model a question."""
        question = "What is the capital of France?"
        if ctx.revision.has_handshake:  # asked whatever the client declared: its answer is judged
            text = {"type": "text", "text": question}
            params = {"messages": [{"role": "user", "content": text}], "maxTokens": 50}
            result = await ctx.send_request("sampling/createMessage", params)
        else:
            result = await ctx.sample([question], max_tokens=50)
        return f"the model answered: {result.get('content')!r}"

    return server


def _roots() -> Server:
    server = Server("conformance-client-scenario", version="1.0.0")

    @server.tool()
    async def test_roots(ctx: Context) -> str:
        """List the client's roots."""
        if ctx.revision.has_handshake:  # asked whatever the client declared: its answer is judged
            roots = (await ctx.send_request("roots/list")).get("roots") or []
        else:
            roots = await ctx.list_roots()
        return f"the client has {len(roots)} roots"

    return server


def _invalid_tool_headers() -> Server:
    server = Server("conformance-client-scenario", version="1.0.0")
    valid = {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}

    @server.tool(input_schema={**valid, "required": ["region"]})
    def valid_tool(region: str) -> str:
        """A tool whose x-mcp-header declaration is valid."""
        return f"region {region}"

    for name, properties in INVALID_HEADER_TOOLS.items():
        schema = {"type": "object", "properties": properties, "required": sorted(properties)}

        def invalid(**arguments: Any) -> str:
            return "this tool should not have been called"

        server.tool(name, input_schema=schema, description="an invalid x-mcp-header: exclude me")(invalid)
    return server


# The tool of http-custom-headers: each parameter mirrored into an Mcp-Param-* header
PARAM_HEADERS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "tenant": {"type": "string", "x-mcp-header": "Tenant"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
    },
    "required": ["region"],
}


def _custom_headers() -> Server:
    server = Server("conformance-client-scenario", version="1.0.0")

    @server.tool(input_schema=PARAM_HEADERS_SCHEMA)
    def test_custom_headers(
        region: str, tenant: str | None = None, count: int | None = None, verbose: bool | None = None
    ) -> str:
        """A tool whose parameters are mirrored into Mcp-Param-* headers."""
        return f"region {region}"

    return server


def _request_metadata() -> Server:
    server = Server("conformance-client-scenario", version="1.0.0")
    _add_numbers(server)
    return server


def _ref_no_deref(base: str) -> Server:
    server = Server("conformance-client-scenario", version="1.0.0")
    # registered with a local $ref (the library refuses remote ones); CanaryRef turns it into the
    # network URL in the tools/list answers
    schema = {
        "type": "object",
        "properties": {"profile": {"$ref": CANARY_MARK}},
        "$defs": {"canary": {"type": "object", "properties": {"displayName": {"type": "string"}}}},
    }

    @server.tool(input_schema=schema)
    def update_profile(profile: Any = None) -> str:
        """A tool whose input schema refers to a schema on the network (the canary URL)."""
        return "updated"

    return server


CANARY_MARK = "#/$defs/canary"


class CanaryRef:
    """HTTP only: in every JSON answer, the local ``$ref`` of the json-schema-ref-no-deref tool
    becomes a network URI on this very server (``CANARY_PATH``), which a client must not fetch; the
    recorder sees a fetch as a request for that path."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        host, port = scope.get("server") or ("127.0.0.1", 0)
        canary = f"http://{host}:{port}{CANARY_PATH}".encode()
        start: dict[str, Any] = {}
        body = b""

        async def rewriting_send(message: Any) -> None:
            nonlocal body
            if message["type"] == "http.response.start":
                start.update(message)
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            body += message.get("body", b"")
            if message.get("more_body", False) and b"text/event-stream" not in _content_type(start):
                return
            chunk = body.replace(CANARY_MARK.encode(), canary)
            body = b""
            if start:
                headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
                if not message.get("more_body", False):
                    headers.append((b"content-length", str(len(chunk)).encode()))
                await send({**start, "headers": headers})
                start.clear()
            await send(
                {"type": "http.response.body", "body": chunk, "more_body": message.get("more_body", False)}
            )

        await self.app(scope, receive, rewriting_send)


def _content_type(start: dict[str, Any]) -> bytes:
    return b"".join(v for k, v in start.get("headers", []) if k.lower() == b"content-type")


# Where the json-schema-ref-no-deref scenario's $ref points (on the scenario server itself over HTTP:
# a client fetching it is seen by the recorder; nothing is served there)
CANARY_PATH = "/schemas/canary-profile.json"


def _any(make: Callable[[], Server]) -> Callable[[str], Server]:
    return lambda base: make()


SERVERS: dict[str, Callable[[str], Server]] = {
    "json-schema-ref-no-deref": _ref_no_deref,
    "initialize": _any(_initialize),
    "tools_call": _any(_initialize),
    "elicitation-sep1034-client-defaults": _any(_elicitation),
    "sampling": _any(_sampling),
    "roots": _any(_roots),
    "http-invalid-tool-headers": _any(_invalid_tool_headers),
    "request-metadata": _any(_request_metadata),
    "http-custom-headers": _any(_custom_headers),
}


ASGIApp = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]


class RejectFirstVersion:
    """HTTP only: the first POST holding a request is refused as the stateless era refuses a protocol
    version it does not support (400, -32022, ``data.supported``), whatever it asked for; the client
    is to retry with a version from that list (the official ``request-metadata`` scenario does the
    same). Everything else goes to ``app``."""

    SUPPORTED = ("2026-07-28",)

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.rejected = False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self.rejected or scope.get("type") != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body, replayed = await read_body(receive)
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if not isinstance(request, dict) or "method" not in request or "id" not in request:
            await self.app(scope, replayed, send)
            return
        self.rejected = True
        meta = (request.get("params") or {}).get("_meta") if isinstance(request.get("params"), dict) else None
        requested = (meta or {}).get("io.modelcontextprotocol/protocolVersion", "")
        error = {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": list(self.SUPPORTED), "requested": str(requested)},
        }
        answer = json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(answer)).encode())]
        await send({"type": "http.response.start", "status": 400, "headers": headers})
        await send({"type": "http.response.body", "body": answer})


# scenario -> the ASGI wrapper its HTTP server goes behind (what the scenario does to the client)
HTTP_WRAPPERS: dict[str, Callable[[ASGIApp], ASGIApp]] = {
    "request-metadata": RejectFirstVersion,
    "json-schema-ref-no-deref": CanaryRef,
}
SERVERS.update(scenario_servers.SERVERS)  # (MRTR requestState, SSE retry, JSON Schema, standard headers)
HTTP_WRAPPERS.update(scenario_servers.HTTP_WRAPPERS)


def build_server(kind: str, base: str = "http://127.0.0.1") -> Server:
    """The scenario server named ``kind`` (a key of :data:`SERVERS`); ``base``: its own URL (the
    scheme, host and port it is served at)."""
    try:
        return SERVERS[kind](base)
    except KeyError:
        raise ValueError(f"no scenario server {kind!r}") from None


def main(argv: list[str] | None = None) -> int:
    """``python -m jsonrpc_mcp_conformance.clients.servers KIND``: serve one over stdio."""
    import anyio

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] not in SERVERS:
        print(f"usage: servers KIND (one of {', '.join(SERVERS)})", file=sys.stderr)
        return 2
    anyio.run(build_server(args[0]).serve_stdio)
    return 0


if __name__ == "__main__":
    sys.exit(main())
