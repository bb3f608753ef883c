"""More scenario servers: MRTR ``requestState``, SSE retry, JSON Schema 2020-12 preservation and the
standard headers (scenarios of the official suite's client mode, same names, same tools).

``servers.py`` adds :data:`SERVERS` and :data:`HTTP_WRAPPERS` to its own tables. As there, each server
asks only for what its scenario needs, and the client is judged from the recorded traffic
(``scenario_checks.py``), never from inside these handlers.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from jsonrpc_mcp import Server
from jsonrpc_mcp.server import Call, CallNext
from jsonrpc_mcp.server._context import Context

from . import discover_servers, more_servers
from .buffered import read_body

__all__ = [
    "HTTP_WRAPPERS",
    "JSON_SCHEMA_2020_12",
    "MRTR_TOOLS",
    "SERVERS",
    "SSE_RETRY_EVENT_ID",
    "SSE_RETRY_MS",
    "SseRetry",
]

ASGIApp = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]
NAME, VERSION = "conformance-client-scenario", "1.0.0"


def _tool(server: Server, name: str, description: str, schema: dict[str, Any] | None = None) -> None:
    def handler(**arguments: Any) -> str:
        return f"{name} called"

    server.add_tool(
        name,
        handler,
        description=description,
        input_schema=schema or {"type": "object", "properties": {}},
    )


# -- sep-2322-client-request-state (2026-07-28, MRTR) ------------------------------------------------
MRTR_TOOLS = {
    "test_mrtr_echo_state": "asks for a confirmation, with a requestState to echo exactly",
    "test_mrtr_no_state": "asks for a confirmation, with no requestState",
    "test_mrtr_unrelated": "answers at once (called while another tool's round is open)",
    "test_mrtr_no_result_type": "answers with a result that has no resultType (complete)",
}
CONFIRM = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Please confirm to continue",
        "requestedSchema": {"type": "object", "properties": {"confirmed": {"type": "boolean"}}},
    },
}


def _mrtr(base: str) -> Server:
    """The multi round-trip tools: answered by a middleware (the library's own rounds seal their
    state and always send one; these send exactly what the scenario needs)."""
    server = Server(NAME, version=VERSION)
    for name, description in MRTR_TOOLS.items():
        _tool(server, name, description)
    # odd spacing and a nonce: a client that re-serialises or makes up the state is seen
    nonce = uuid.uuid4().hex
    state = '{"nonce": "' + nonce + '",  "round":1, "note": "opaque \\u00e9"}'

    @server.middleware
    async def rounds(call: Call, call_next: CallNext) -> Any:
        if call.method != "tools/call" or call.params.get("name") not in MRTR_TOOLS:
            return await call_next(call)
        name, retry = call.params["name"], "inputResponses" in call.params
        text = {"type": "text", "text": f"{name}: done"}
        if name == "test_mrtr_echo_state" and not retry:
            return {
                "resultType": "input_required",
                "inputRequests": {"confirm": CONFIRM},
                "requestState": state,
            }
        if name == "test_mrtr_no_state" and not retry:
            return {"resultType": "input_required", "inputRequests": {"confirm": CONFIRM}}
        if name == "test_mrtr_no_result_type":
            return {"content": [text]}  # (no resultType: complete by default)
        return {"resultType": "complete", "content": [text]}

    return server


# -- sse-retry (2025-11-25, HTTP) ----------------------------------------------------------------------
SSE_RETRY_MS = 500
SSE_RETRY_EVENT_ID = "sse-retry-1"


def _sse_retry(base: str) -> Server:
    server = Server(NAME, version=VERSION)
    _tool(
        server, "test_reconnection", "Its response stream is closed early: the answer comes on reconnection"
    )
    return server


class SseRetry:
    """HTTP only: a ``tools/call`` POST is answered with an SSE stream holding one priming event (an
    id, ``retry: SSE_RETRY_MS``, empty data) and then closed without the response; the next GET
    (the client resuming, with ``Last-Event-ID`` when it follows the spec) gets the response on its
    stream. Everything else goes to ``app``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.pending: Any = None  # the id of the tools/call waiting for its answer
        self.waiting = False

    @staticmethod
    def _headers(scope: Any) -> dict[bytes, bytes]:
        return {k.lower(): v for k, v in scope.get("headers", [])}

    async def _stream(self, send: Any, scope: Any, body: bytes) -> None:
        headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
        session = self._headers(scope).get(b"mcp-session-id")
        if session:
            headers.append((b"mcp-session-id", session))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("method") == "GET" and self.waiting:
            self.waiting = False
            answer = {"jsonrpc": "2.0", "id": self.pending, "result": {"content": [_RECONNECTED]}}
            await self._stream(send, scope, f"id: sse-retry-2\ndata: {json.dumps(answer)}\n\n".encode())
            return
        if scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body, replayed = await read_body(receive)
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if isinstance(request, dict) and request.get("method") == "tools/call" and "id" in request:
            self.pending, self.waiting = request["id"], True
            priming = f"id: {SSE_RETRY_EVENT_ID}\nretry: {SSE_RETRY_MS}\ndata: \n\n".encode()
            await self._stream(send, scope, priming)  # ... and closed: no response on this stream
            return
        await self.app(scope, replayed, send)


_RECONNECTED = {"type": "text", "text": "Reconnection test completed successfully"}


# -- json-schema-2020-12-preservation (2025-11-25+) ---------------------------------------------------
# The official suite's fixture: SEP-1613's keywords ($schema, $defs, additionalProperties) and
# SEP-2106's ($anchor in $defs, allOf of anyOf, if/then/else)
JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def _schema_preservation(base: str) -> Server:
    server = Server(NAME, version=VERSION)
    _tool(server, "json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", JSON_SCHEMA_2020_12)
    echo = {
        "type": "object",
        "properties": {
            "schema": {"type": "object", "description": "the focal tool's inputSchema, as listed"}
        },
        "required": ["schema"],
    }
    _tool(server, "json_schema_echo", "Echoes the schema it is given", echo)
    return server


# -- http-standard-headers (2026-07-28, HTTP) ---------------------------------------------------------
STANDARD_HEADERS_RESOURCES = ("file:///path/to/file%20name.txt", "https://example.com/resource?id=123")


def _standard_headers(base: str) -> Server:
    server = Server(NAME, version=VERSION)
    _tool(server, "test_headers", "A tool whose calls carry Mcp-Method and Mcp-Name")
    _tool(server, "my-hyphenated-tool", "A tool with a hyphen in its name")
    for uri in STANDARD_HEADERS_RESOURCES:

        def read(uri: str = uri) -> str:
            return f"the resource {uri}"

        server.add_resource(uri, read, name=uri.rsplit("/", 1)[-1], mime_type="text/plain")

    @server.prompt()
    def test_prompt() -> str:
        """A prompt whose prompts/get carries Mcp-Name."""
        return "Say hello"

    return server


# -- progress (ours: every revision, both transports) --------------------------------------------------
def _progress(base: str) -> Server:
    server = Server(NAME, version=VERSION)

    @server.tool()
    async def test_progress(ctx: Context) -> str:
        """Reports its progress (three steps) to a client that asked for it."""
        for step in (1, 2, 3):
            await ctx.report_progress(step, 3, f"step {step} of 3")
        return "done in three steps"

    return server


SERVERS: dict[str, Callable[[str], Server]] = {
    "sep-2322-client-request-state": _mrtr,
    "sse-retry": _sse_retry,
    "json-schema-2020-12-preservation": _schema_preservation,
    "http-standard-headers": _standard_headers,
    "progress": _progress,
}
HTTP_WRAPPERS: dict[str, Callable[[ASGIApp], ASGIApp]] = {"sse-retry": SseRetry}
SERVERS.update(more_servers.SERVERS)  # (cancellation, URL elicitation, the skills scenarios)
SERVERS.update(discover_servers.SERVERS)  # (era detection: the legacy servers of discover-fallback*)
HTTP_WRAPPERS.update(discover_servers.HTTP_WRAPPERS)
