"""Every official 2026-07-28 example message goes through our codec unchanged.

The examples (../shared/spec/examples/2026-07-28/<Type>/*.json, read in place; skipped when that
checkout is absent) are either whole JSON-RPC messages, or bare objects of one type: params,
results, errors, content blocks, capabilities... A bare object is first put where that type lives
in a message (a result in a response, params in their request, a content block in a tool result,
client capabilities in a request envelope, an input response in a retried request, ...); then the
message is decoded with ``codec.decode`` and encoded again with ``codec.encode``, and the two must be
the same JSON value. That the wrapping is where the type belongs is checked against the official
schema: each message must satisfy the definition of that message (``CallToolResultResponse``,
``DiscoverRequest``, ``ProgressNotification``...; a whole message, the definition it is filed under).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from jsonrpc_mcp.jsonrpc import codec
from jsonrpc_mcp.jsonrpc.messages import ErrorResponse, Invalid, Notification, Request, Response

from .support import CLIENT_CAPABILITIES, EXAMPLES, MODERN, PROTOCOL_VERSION, schema_errors

RID = "example-1"
ENVELOPE = {"_meta": {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}}}
Wrapper = Callable[[Any], dict[str, Any]]


# -- where each bare type lives in a message ------------------------------------------------------
def response(value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": RID, "result": value}


def error_response(value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": RID, "error": value}


def request(method: str) -> Wrapper:
    return lambda params: {"jsonrpc": "2.0", "id": RID, "method": method, "params": params}


def notification(method: str) -> Wrapper:
    return lambda params: {"jsonrpc": "2.0", "method": method, "params": params}


def tool_result(**fields: Any) -> dict[str, Any]:
    return response({"resultType": "complete", "content": [], **fields})


def input_required(requests: Any) -> dict[str, Any]:
    return response({"resultType": "input_required", "inputRequests": requests})


def sampling(**params: Any) -> dict[str, Any]:
    ask = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 10, **params}}
    return input_required({"ask": ask})


def retried_call(input_responses: Any) -> dict[str, Any]:
    params = {**ENVELOPE, "name": "example", "inputResponses": input_responses, "requestState": "s"}
    return request("tools/call")(params)


def elicitation(properties: Any) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties}
    ask = {"method": "elicitation/create", "params": {"message": "?", "requestedSchema": schema}}
    return input_required({"ask": ask})


RESULT_RESPONSES = {
    "CallToolResult": "CallToolResultResponse",
    "CompleteResult": "CompleteResultResponse",
    "DiscoverResult": "DiscoverResultResponse",
    "GetPromptResult": "GetPromptResultResponse",
    "InputRequiredResult": "CallToolResultResponse",
    "ListPromptsResult": "ListPromptsResultResponse",
    "ListResourceTemplatesResult": "ListResourceTemplatesResultResponse",
    "ListResourcesResult": "ListResourcesResultResponse",
    "ListToolsResult": "ListToolsResultResponse",
    "ReadResourceResult": "ReadResourceResultResponse",
    "SubscriptionsListenResult": "SubscriptionsListenResultResponse",
}
CACHE = {"ttlMs": 0, "cacheScope": "public"}

# bare type -> (where it goes in a message, the official definition of that message)
WRAPPERS: dict[str, tuple[Wrapper, str]] = {
    **{kind: (response, message) for kind, message in RESULT_RESPONSES.items()},
    **dict.fromkeys(
        ("InternalError", "InvalidParamsError", "MethodNotFoundError", "ParseError"),
        (error_response, "JSONRPCErrorResponse"),
    ),
    # requests' and notifications' params
    "CallToolRequestParams": (request("tools/call"), "CallToolRequest"),
    "CompleteRequestParams": (request("completion/complete"), "CompleteRequest"),
    "GetPromptRequestParams": (request("prompts/get"), "GetPromptRequest"),
    "PaginatedRequestParams": (request("tools/list"), "ListToolsRequest"),
    "CancelledNotificationParams": (notification("notifications/cancelled"), "CancelledNotification"),
    "LoggingMessageNotificationParams": (notification("notifications/message"), "LoggingMessageNotification"),
    "ProgressNotificationParams": (notification("notifications/progress"), "ProgressNotification"),
    "ResourceUpdatedNotificationParams": (
        notification("notifications/resources/updated"),
        "ResourceUpdatedNotification",
    ),
    "ClientCapabilities": (
        lambda caps: request("server/discover")(
            {"_meta": {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: caps}}
        ),
        "DiscoverRequest",
    ),
    # what the server's results carry
    **dict.fromkeys(
        ("AudioContent", "EmbeddedResource", "ImageContent", "ResourceLink", "TextContent"),
        (lambda block: tool_result(content=[block]), "CallToolResultResponse"),
    ),
    **dict.fromkeys(
        ("BlobResourceContents", "TextResourceContents"),
        (
            lambda contents: response({"resultType": "complete", "contents": [contents], **CACHE}),
            "ReadResourceResultResponse",
        ),
    ),
    "Resource": (
        lambda resource: response({"resultType": "complete", "resources": [resource], **CACHE}),
        "ListResourcesResultResponse",
    ),
    "Tool": (
        lambda tool: response({"resultType": "complete", "tools": [tool], **CACHE}),
        "ListToolsResultResponse",
    ),
    "ServerCapabilities": (
        lambda caps: response(
            {"resultType": "complete", "supportedVersions": [MODERN], "capabilities": caps, **CACHE}
        ),
        "DiscoverResultResponse",
    ),
    # input requests (in an InputRequiredResult) and what they are made of
    "InputRequests": (input_required, "CallToolResultResponse"),
    **dict.fromkeys(
        ("CreateMessageRequest", "ElicitRequest", "ListRootsRequest"),
        (lambda ask: input_required({"ask": ask}), "CallToolResultResponse"),
    ),
    "CreateMessageRequestParams": (
        lambda params: input_required({"ask": {"method": "sampling/createMessage", "params": params}}),
        "CallToolResultResponse",
    ),
    **dict.fromkeys(
        ("ElicitRequestFormParams", "ElicitRequestURLParams"),
        (
            lambda params: input_required({"ask": {"method": "elicitation/create", "params": params}}),
            "CallToolResultResponse",
        ),
    ),
    "SamplingMessage": (lambda message: sampling(messages=[message]), "CallToolResultResponse"),
    "ModelPreferences": (
        lambda preferences: sampling(modelPreferences=preferences),
        "CallToolResultResponse",
    ),
    "ToolUseContent": (
        lambda block: sampling(messages=[{"role": "assistant", "content": [block]}]),
        "CallToolResultResponse",
    ),
    "ToolResultContent": (
        lambda block: sampling(messages=[{"role": "user", "content": [block]}]),
        "CallToolResultResponse",
    ),
    **dict.fromkeys(
        (
            "BooleanSchema",
            "NumberSchema",
            "StringSchema",
            "TitledMultiSelectEnumSchema",
            "TitledSingleSelectEnumSchema",
            "UntitledMultiSelectEnumSchema",
            "UntitledSingleSelectEnumSchema",
        ),
        (lambda schema: elicitation({"field": schema}), "CallToolResultResponse"),
    ),
    # input responses (in the retried request)
    "InputResponses": (retried_call, "CallToolRequest"),
    **dict.fromkeys(
        ("CreateMessageResult", "ElicitResult", "ListRootsResult"),
        (lambda answer: retried_call({"ask": answer}), "CallToolRequest"),
    ),
    "Root": (lambda root: retried_call({"ask": {"roots": [root]}}), "CallToolRequest"),
}


def _example_files() -> list[Path]:
    if not EXAMPLES.is_dir():
        return []
    return sorted(EXAMPLES.glob("*/*.json"))


FILES = _example_files()
pytestmark = pytest.mark.skipif(not FILES, reason=f"official examples not available: {EXAMPLES}")


def _wrapped(path: Path) -> tuple[dict[str, Any], str]:
    """The example as a whole JSON-RPC message (wrapped where its type lives when it is bare), and
    the official definition of that message."""
    value = orjson.loads(path.read_bytes())
    kind = path.parent.name
    if isinstance(value, dict) and "jsonrpc" in value:
        return value, kind
    assert kind in WRAPPERS, f"no wrapping known for the bare type {kind} ({path.name})"
    wrap, definition = WRAPPERS[kind]
    return wrap(value), definition


def _message(path: Path) -> dict[str, Any]:
    return _wrapped(path)[0]


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_the_example_decodes_and_encodes_unchanged(path: Path) -> None:
    message = _message(path)
    data = orjson.dumps(message)
    decoded = codec.decode(data)
    assert not isinstance(decoded, (Invalid, list)), decoded
    assert orjson.loads(codec.encode(decoded)) == message


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_the_example_decodes_to_the_kind_of_message_it_is(path: Path) -> None:
    message = _message(path)
    decoded = codec.decode(orjson.dumps(message))
    if "method" in message:
        expected: type = Request if "id" in message else Notification
    else:
        expected = Response if "result" in message else ErrorResponse
    assert type(decoded) is expected


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_the_message_is_valid_against_its_official_definition(path: Path) -> None:
    """The wrapping put the example where its type belongs (whole messages are checked as they are)."""
    message, definition = _wrapped(path)
    assert schema_errors(definition, message) == []


def test_every_example_type_is_covered() -> None:
    bare = {
        path.parent.name
        for path in FILES
        if not (isinstance(value := orjson.loads(path.read_bytes()), dict) and "jsonrpc" in value)
    }
    assert bare <= set(WRAPPERS)
    assert len(FILES) >= 100
