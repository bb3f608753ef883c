"""Helpers for the 2026-07-28 HTTP tests: the server they steer, modern requests with their headers,
and the official-schema check of everything the server answers."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import orjson

from jsonrpc_mcp import Context, Server
from jsonrpc_mcp.errors import MissingClientCapability

from ...server.features.support import check_schema
from ..servers.toolbox import Controls, build_server
from ..support import ACCEPT_BOTH, TIMEOUT

MODERN = "2026-07-28"
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
TOOLS_CHANGED = "notifications/tools/list_changed"
UPDATED = "notifications/resources/updated"

FORECAST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "hourly": {"type": "boolean", "x-mcp-header": "Hourly"},
        "note": {"type": ["string", "null"]},
    },
}
UNICODE_URI = "res://notes/caf\u00e9"


def build_modern_server(controls: Controls | None = None, name: str = "modern-toolbox") -> Server:
    """The HTTP toolbox, plus what the 2026-07-28 tests need: a tool with ``x-mcp-header``
    parameters, resources and a prompt, tools that change the registry or a resource, a tool that
    needs a client capability, and one that streams and then holds until cancelled."""
    controls = controls if controls is not None else Controls()
    server = build_server(controls, name=name)

    def forecast(**arguments: Any) -> Any:
        return {"arguments": arguments}

    server.add_tool("forecast", forecast, description="Echo the arguments.", input_schema=FORECAST_SCHEMA)

    @server.resource("res://doc", mime_type="text/plain")
    def doc() -> str:
        return "the document"

    @server.resource(UNICODE_URI)
    def cafe() -> str:
        return "coffee"

    @server.prompt("greet")
    def greet(who: str) -> str:
        return f"Hello {who}"

    @server.tool()
    async def touch(uri: str) -> str:
        """Tell the subscribers that ``uri`` changed."""
        return f"told {await server.notify_resource_updated(uri)}"

    @server.tool()
    def grow(name: str) -> str:
        """Register a tool named ``name`` (from a worker thread: this tool is sync)."""
        server.add_tool(name, lambda: name, description="grown", replace=True)
        return f"grew {name}"

    @server.tool()
    def needs_roots() -> str:
        """Fail as a tool that needs the client's roots capability does in a modern request."""
        raise MissingClientCapability("this tool needs the client's roots", {"roots": {}})

    @server.tool()
    async def hold(name: str, ctx: Context) -> str:
        """Report progress, then run until cancelled."""
        await ctx.report_progress(1, 2, "holding")
        controls.started[name].set()
        try:
            await anyio.sleep_forever()
        finally:
            controls.cancelled[name].set()
        return "unreachable"

    return server


# -- requests ---------------------------------------------------------------------------------------
def meta(version: str = MODERN, **extra: Any) -> dict[str, Any]:
    return {PROTOCOL_VERSION: version, CLIENT_CAPABILITIES: {}, **extra}


def modern_request(
    rid: int | str, method: str, params: dict[str, Any] | None = None, **meta_extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    body["params"] = {**(params or {}), "_meta": meta(**meta_extra)}
    return body


def headers_for(body: dict[str, Any], **overrides: str | None) -> dict[str, str]:
    """The headers a conforming client sends with ``body``; ``overrides`` replace (or, as None,
    drop) single ones, named with ``_`` for ``-`` (``mcp_name="x"``)."""
    params = body.get("params") or {}
    headers = {
        "content-type": "application/json",
        "accept": ACCEPT_BOTH,
        "mcp-protocol-version": params.get("_meta", {}).get(PROTOCOL_VERSION, MODERN),
        "mcp-method": body["method"],
    }
    key = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(body["method"])
    if key is not None and isinstance(params.get(key), str):
        headers["mcp-name"] = params[key]
    for name, value in overrides.items():
        name = name.replace("_", "-")
        if value is None:
            headers.pop(name, None)
        else:
            headers[name] = value
    return headers


async def send(
    client: httpx.AsyncClient, url: str, body: Any, headers: dict[str, str] | None = None
) -> httpx.Response:
    """POST ``body`` (with the conforming headers unless given) and read the whole answer (bounded)."""
    if headers is None:
        headers = headers_for(body)
    with anyio.fail_after(TIMEOUT):
        return await client.post(url, content=orjson.dumps(body), headers=headers)


async def wait_until(predicate: Any, timeout: float = TIMEOUT) -> None:
    """Wait (bounded) for a condition on the in-process server, yielding to its tasks meanwhile."""
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.lowlevel.checkpoint()


# -- the official 2026-07-28 schema ------------------------------------------------------------------
_RESULTS = {
    "server/discover": "DiscoverResultResponse",
    "tools/list": "ListToolsResultResponse",
    "tools/call": "CallToolResultResponse",
    "resources/list": "ListResourcesResultResponse",
    "resources/templates/list": "ListResourceTemplatesResultResponse",
    "resources/read": "ReadResourceResultResponse",
    "prompts/list": "ListPromptsResultResponse",
    "prompts/get": "GetPromptResultResponse",
    "completion/complete": "CompleteResultResponse",
    "subscriptions/listen": "SubscriptionsListenResultResponse",
}
_NOTIFICATIONS = {
    ACKNOWLEDGED: "SubscriptionsAcknowledgedNotification",
    TOOLS_CHANGED: "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    UPDATED: "ResourceUpdatedNotification",
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
}
_ERRORS = {-32020: "HeaderMismatchError", -32022: "UnsupportedProtocolVersionError"}


def valid(message: dict[str, Any], method: str | None = None) -> dict[str, Any]:
    """Assert ``message`` (from the server) is valid 2026-07-28; ``method``: the request it answers."""
    check_schema(MODERN, "JSONRPCMessage", message)
    if "error" in message:
        check_schema(MODERN, "JSONRPCErrorResponse", message)
        specific = _ERRORS.get(message["error"]["code"])
        if specific is not None:
            check_schema(MODERN, specific, message)
    elif "method" in message:
        assert "id" not in message, f"the server sent a request: {message}"
        check_schema(MODERN, "ServerNotification", message)
        check_schema(MODERN, _NOTIFICATIONS[message["method"]], message)
    else:
        assert method is not None, "which request does this result answer?"
        check_schema(MODERN, _RESULTS[method], message)
    return message
