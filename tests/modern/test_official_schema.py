"""A 2026-07-28 session with examples/everything validates against the official schema.

Our client, in modern mode, drives the reference server (in memory, and as a real subprocess over
stdio) through every method the server answers in 2026-07-28: server/discover, the lists, tool calls
(every content kind, tool errors, argument errors, unknown tools, logging and progress, multi
round-trip requests answered and left unanswered, a missing capability), reads (text, blob,
template, not found), prompts (with and without arguments, unknown, missing arguments), completion,
subscriptions/listen (acknowledgement, list changes, resource updates, the server's final result
in memory), and the envelope errors (unsupported version, missing envelope, removed and unknown
methods, a bad log level). Every frame the server wrote is then checked against the definition in
../shared/spec/schema/2026-07-28/schema.json for what it is (skipped when that checkout is absent):
results by the method they answer (``InputRequiredResult`` when they ask for input), errors by code,
notifications by method; a request from the server fails the test (servers send none in 2026-07-28).
Every request our client sent is checked as well.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from jsonrpc_mcp import Client, Server
from jsonrpc_mcp.jsonrpc import JsonRpcError
from jsonrpc_mcp.testing import WireRecorder, connect
from jsonrpc_mcp.transports.stdio import spawn_stdio
from tests import timeouts

from ..examples.support import load_module
from .support import (
    CLIENT_CAPABILITIES,
    LOG_LEVEL,
    MODERN,
    PROTOCOL_VERSION,
    SCHEMA,
    schema_errors,
)

REPO = Path(__file__).resolve().parents[2]
everything: Any = load_module(
    REPO / "examples" / "everything" / "server.py", "_everything_for_the_2026_schema"
)

# examples/everything/tasks.py: task-supporting fixtures of the official suite's tasks-* scenarios
TASK_TOOLS = {"slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "multi_input"}
TASK_TOOLS |= {"test_tool_with_task"}
pytestmark = pytest.mark.skipif(not SCHEMA.is_file(), reason=f"official schema not available: {SCHEMA}")

TIMEOUT = timeouts.STARTUP
RESULTS = {
    "server/discover": "DiscoverResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    "subscriptions/listen": "SubscriptionsListenResult",
}
REQUESTS = {
    "server/discover": "DiscoverRequest",
    "tools/list": "ListToolsRequest",
    "tools/call": "CallToolRequest",
    "resources/list": "ListResourcesRequest",
    "resources/templates/list": "ListResourceTemplatesRequest",
    "resources/read": "ReadResourceRequest",
    "prompts/list": "ListPromptsRequest",
    "prompts/get": "GetPromptRequest",
    "completion/complete": "CompleteRequest",
    "subscriptions/listen": "SubscriptionsListenRequest",
}
NOTIFICATIONS = {
    "notifications/message": "LoggingMessageNotification",
    "notifications/progress": "ProgressNotification",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
    "notifications/cancelled": "CancelledNotification",
}
# error code -> (definition, whether it describes the whole response or only the error object)
ERRORS = {
    -32602: ("InvalidParamsError", False),
    -32601: ("MethodNotFoundError", False),
    -32603: ("InternalError", False),
    -32600: ("InvalidRequestError", False),
    -32700: ("ParseError", False),
    -32020: ("HeaderMismatchError", True),
    -32021: ("MissingRequiredClientCapabilityError", True),
    -32022: ("UnsupportedProtocolVersionError", True),
}
ANSWERS = {
    "elicitation/create": {"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}},
    "sampling/createMessage": {
        "role": "assistant",
        "content": {"type": "text", "text": "Paris"},
        "model": "m",
    },
    "roots/list": {"roots": [{"uri": "file:///work", "name": "work"}]},
}
CAPABILITIES: dict[str, Any] = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}


def _handler(method: str) -> Any:
    async def answer(params: Any) -> Any:
        return ANSWERS[method]

    return answer


async def _expect_error(client: Client, method: str, params: Any, **options: Any) -> int:
    try:
        await client.request(method, params, **options)
    except JsonRpcError as exc:
        return exc.code
    raise AssertionError(f"{method} {params!r} did not fail")


async def exercise(client: Client, server: Server | None) -> None:
    """Every method, and the errors; ``server`` (in memory) also lets the subscription see changes."""
    await client.discover()
    tools = await client.list_tools()
    for tool in tools:
        name = tool["name"]
        if name.startswith(("test_sampling", "test_elicitation")) or name in TASK_TOOLS:
            continue  # (the Tasks extension's fixtures are exercised by tests/tasks)
        if name == "test_tool_with_logging":
            await client.request("tools/call", {"name": name, "_meta": {LOG_LEVEL: "debug"}})
        elif name == "test_tool_with_progress":
            await client.request("tools/call", {"name": name, "_meta": {"progressToken": "progress-1"}})
        elif name == "json_schema_2020_12_tool":
            await client.call_tool(name, {"name": "n", "address": {"street": "s", "city": "c"}})
        else:
            await client.call_tool(name, {})
    # multi round-trip requests: answered by the handlers, then left to the caller, then impossible
    sampled = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
    assert sampled["content"] == [{"type": "text", "text": "LLM response: Paris"}]
    for name in ("test_elicitation", "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums"):
        elicited = await client.call_tool(name, {"message": "Who are you?"})
        assert elicited["resultType"] == "complete" and not elicited.get("isError"), elicited
    interim = await client.request("tools/call", {"name": "test_elicitation", "arguments": {"message": "?"}})
    assert interim["resultType"] == "input_required"
    no_caps = {"name": "test_elicitation", "arguments": {"message": "?"}, "_meta": {CLIENT_CAPABILITIES: {}}}
    try:
        await client.request("tools/call", no_caps)
    except JsonRpcError as exc:
        assert exc.code == -32021
    await client.call_tool("test_simple_text", {"unexpected": 1})  # invalid arguments: a tool error
    assert await _expect_error(client, "tools/call", {"name": "no_such_tool"}) == -32602
    # resources
    await client.list_resources()
    await client.list_resource_templates()
    for uri in (
        "test://static-text",
        "test://static-binary",
        "test://template/42/data",
        everything.WATCHED_URI,
    ):
        await client.read_resource(uri)
    assert await _expect_error(client, "resources/read", {"uri": "test://nowhere"}) == -32602
    # prompts
    await client.list_prompts()
    await client.get_prompt("test_simple_prompt")
    await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
    await client.get_prompt("test_prompt_with_embedded_resource", {"resourceUri": "test://static-text"})
    await client.get_prompt("test_prompt_with_image")
    assert await _expect_error(client, "prompts/get", {"name": "no_such_prompt"}) == -32602
    assert await _expect_error(client, "prompts/get", {"name": "test_prompt_with_arguments"}) == -32602
    # completion
    await client.complete(
        {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, {"name": "arg1", "value": "pa"}
    )
    await client.complete(
        {"type": "ref/resource", "uri": "test://template/{id}/data"}, {"name": "id", "value": "1"}
    )
    # subscriptions/listen
    wanted = {
        "toolsListChanged": True,
        "promptsListChanged": True,
        "resourcesListChanged": True,
        "resourceSubscriptions": [everything.WATCHED_URI],
    }
    async with client.listen(wanted) as subscription:
        if server is not None:
            server.add_tool("added_later", lambda: "late")
            await server.notify_resource_updated(everything.WATCHED_URI)
            seen = {(await subscription.receive())[0] for _ in range(2)}
            assert seen == {"notifications/tools/list_changed", "notifications/resources/updated"}
            server.subscriptions.end_all()
            assert [item async for item in subscription] == []
            assert subscription.result is not None
    # the envelope's errors
    assert await _expect_error(client, "tools/list", {"_meta": {PROTOCOL_VERSION: "1900-01-01"}}) == -32022
    assert await _expect_error(client, "server/discover", {}, envelope=False) == -32602
    assert await _expect_error(client, "tools/list", {"_meta": {LOG_LEVEL: "verbose"}}) == -32602
    for removed in ("ping", "logging/setLevel", "resources/subscribe", "no/such/method"):
        assert (
            await _expect_error(client, removed, {"uri": everything.WATCHED_URI, "level": "info"}) == -32601
        )


@dataclass
class Wire:
    kind: str
    sent: list[dict[str, Any]] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, kind: str, recorder: WireRecorder) -> Wire:
        decode = orjson.loads
        return cls(kind, [decode(f) for f in recorder.sent], [decode(f) for f in recorder.received])

    def method_of(self, rid: Any) -> str:
        method: str = next(f["method"] for f in self.sent if f.get("id") == rid and "method" in f)
        return method


def _client_options() -> dict[str, Any]:
    handlers = {method: _handler(method) for method in ANSWERS}
    return {"mode": MODERN, "capabilities": CAPABILITIES, "request_handlers": handlers}


async def _in_memory() -> Wire:
    server = everything.create_server()
    async with connect(
        server, timeout=TIMEOUT, recorder=True, initialize=False, **_client_options()
    ) as client:
        with anyio.fail_after(timeouts.RUN):
            await exercise(client, server)
        recorder: WireRecorder = client.wire  # type: ignore[attr-defined]
    return Wire.of("memory", recorder)


async def _over_stdio() -> Wire:
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", "examples/everything/server.py"]
    with anyio.fail_after(timeouts.RUN):
        async with spawn_stdio(command, cwd=REPO) as stream:
            recorder = WireRecorder(stream)
            async with Client(recorder, request_timeout=TIMEOUT, **_client_options()) as client:
                await exercise(client, None)
    return Wire.of("stdio", recorder)


@pytest.fixture(scope="module", params=["memory", "stdio"])
def wire(request: pytest.FixtureRequest) -> Iterator[Wire]:
    run = _in_memory if request.param == "memory" else _over_stdio
    yield anyio.run(run)


def _results(wire: Wire) -> Iterator[tuple[str, dict[str, Any]]]:
    for frame in wire.received:
        if "result" in frame:
            yield wire.method_of(frame["id"]), frame


def test_every_result_validates_against_its_definition(wire: Wire) -> None:
    failures = []
    for method, frame in _results(wire):
        result = frame["result"]
        name = "InputRequiredResult" if result.get("resultType") == "input_required" else RESULTS[method]
        failures += [f"{method} {name} {error}" for error in schema_errors(name, result)]
        failures += [f"{method} response {error}" for error in schema_errors("JSONRPCResultResponse", frame)]
    assert failures == []


def test_every_error_validates_against_its_definition(wire: Wire) -> None:
    failures = []
    errors = [frame for frame in wire.received if "error" in frame]
    for frame in errors:
        name, whole = ERRORS[frame["error"]["code"]]
        failures += [f"{name} {error}" for error in schema_errors(name, frame if whole else frame["error"])]
        failures += [f"error response {error}" for error in schema_errors("JSONRPCErrorResponse", frame)]
    assert failures == []
    assert {frame["error"]["code"] for frame in errors} >= {-32602, -32601, -32022}


def test_every_notification_validates_against_its_definition(wire: Wire) -> None:
    notifications = [frame for frame in wire.received if "method" in frame and "id" not in frame]
    failures = []
    for frame in notifications:
        name = NOTIFICATIONS[frame["method"]]
        failures += [f"{name} {error}" for error in schema_errors(name, frame)]
    assert failures == []
    assert {frame["method"] for frame in notifications} >= {
        "notifications/message",
        "notifications/progress",
        "notifications/subscriptions/acknowledged",
    }


def test_the_server_sends_no_requests(wire: Wire) -> None:
    assert [frame for frame in wire.received if "method" in frame and "id" in frame] == []


def test_every_request_the_server_answered_with_a_result_validates(wire: Wire) -> None:
    """Our client's side of the session (the requests made invalid on purpose were refused)."""
    answered = {frame["id"] for frame in wire.received if "result" in frame}
    failures = []
    for frame in wire.sent:
        if frame.get("id") in answered and "method" in frame:
            name = REQUESTS[frame["method"]]
            failures += [f"{name} {error}" for error in schema_errors(name, frame)]
    assert failures == []


def test_the_session_answered_every_method_including_input_requests(wire: Wire) -> None:
    # the listen result comes only when the server ends the subscription (in memory); over stdio
    # the client ends it
    expected = set(RESULTS) if wire.kind == "memory" else set(RESULTS) - {"subscriptions/listen"}
    assert {method for method, _ in _results(wire)} == expected
    kinds = {frame["result"].get("resultType") for _, frame in _results(wire)}
    assert kinds == {"complete", "input_required"}
