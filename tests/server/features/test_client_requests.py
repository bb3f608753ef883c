"""Server-to-client requests from the Context: sampling, elicitation (form and URL), roots."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from jsonrpc_mcp import CapabilityError, Client, Context, McpError, Server, UrlElicitationRequired
from jsonrpc_mcp.jsonrpc import JsonRpcError
from jsonrpc_mcp.revisions import REVISIONS
from jsonrpc_mcp.testing import connect

from .feature_server import FORM, build_server
from .support import (
    ACCEPTED,
    ROOTS,
    SAMPLED,
    SERVE,
    TIMEOUT,
    VERSIONS,
    Inbox,
    answers,
    check_schema,
    frames,
    text_of,
)

pytestmark = pytest.mark.anyio

ALL_CAPS = {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}}
ELICITING = [v for v in VERSIONS if REVISIONS[v].has_elicitation]
NOT_ELICITING = [v for v in VERSIONS if not REVISIONS[v].has_elicitation]


def _everything(seen: list[tuple[str, Any]] | None = None) -> dict[str, Any]:
    return answers(sampling=SAMPLED, elicitation=ACCEPTED, roots=ROOTS, seen=seen)


# -- sampling -------------------------------------------------------------------------------------
async def test_sample_sends_create_message_and_returns_the_clients_result() -> None:
    seen: list[tuple[str, Any]] = []
    async with connect(build_server(), capabilities=ALL_CAPS, request_handlers=_everything(seen)) as client:
        result = await client.call_tool("ask_model", {"question": "2+2?"})
    assert text_of(result) == "test-model says 4"
    assert seen == [
        (
            "sampling/createMessage",
            {
                "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
                "systemPrompt": "Answer briefly.",
                "temperature": 0.1,
                "maxTokens": 50,
            },
        )
    ]


async def test_sample_without_the_sampling_capability_is_a_capability_error() -> None:
    seen: list[tuple[str, Any]] = []
    async with connect(build_server(), capabilities={}, request_handlers=_everything(seen)) as client:
        result = await client.call_tool("ask_model", {"question": "2+2?"})
    assert result["isError"] is True
    assert "did not declare the 'sampling' capability" in text_of(result)
    assert seen == []


async def test_a_handler_can_catch_the_capability_error_and_fall_back() -> None:
    server = Server("fallback")

    @server.tool()
    async def maybe_sample(ctx: Context) -> str:
        try:
            await ctx.sample(["hi"])
        except CapabilityError as exc:
            assert isinstance(exc, McpError)
            return f"fallback: {exc.data}"
        return "sampled"

    async with connect(server) as client:
        result = await client.call_tool("maybe_sample")
    assert text_of(result) == "fallback: {'requiredCapabilities': {'sampling': {}}}"


@pytest.mark.parametrize("version", [v for v in VERSIONS if not REVISIONS[v].has_sampling_tools])
async def test_sampling_with_tools_before_2025_11_25_is_a_capability_error(version: str) -> None:
    server = Server("tools-in-sampling")

    @server.tool()
    async def with_tools(ctx: Context) -> str:
        await ctx.sample(["hi"], tools=[{"name": "t", "inputSchema": {"type": "object"}}])
        return "sent"

    caps: dict[str, Any] = {"sampling": {"tools": {}}}
    async with connect(
        server, protocol_version=version, capabilities=caps, request_handlers=_everything()
    ) as c:
        result = await c.call_tool("with_tools")
    assert result["isError"] is True
    assert "has no tool use in sampling" in text_of(result)


@pytest.mark.parametrize(("declared", "sent"), [({}, False), ({"tools": {}}, True)])
async def test_sampling_with_tools_needs_the_sampling_tools_capability(
    declared: dict[str, Any], sent: bool
) -> None:
    server = Server("tools-in-sampling")
    seen: list[tuple[str, Any]] = []

    @server.tool()
    async def with_tools(ctx: Context) -> str:
        tools = [{"name": "lookup", "inputSchema": {"type": "object"}}]
        await ctx.sample(["hi"], tools=tools, tool_choice={"mode": "auto"})
        return "sent"

    caps: dict[str, Any] = {"sampling": declared}
    async with connect(server, capabilities=caps, request_handlers=_everything(seen)) as client:
        result = await client.call_tool("with_tools")
    assert (text_of(result) == "sent") is sent
    if sent:
        assert seen[0][1]["toolChoice"] == {"mode": "auto"}
    else:
        assert "sampling.tools" in text_of(result)


async def test_an_error_from_the_client_becomes_a_tool_error_result() -> None:
    async def refuse(params: Any) -> Any:
        raise JsonRpcError("User rejected sampling", code=-1)

    async with connect(
        build_server(), capabilities=ALL_CAPS, request_handlers={"sampling/createMessage": refuse}
    ) as client:
        result = await client.call_tool("ask_model", {"question": "2+2?"})
    assert result["isError"] is True
    assert "answered sampling/createMessage with error -1: User rejected sampling" in text_of(result)


async def test_a_sampling_result_without_a_model_is_a_client_error() -> None:
    handlers = answers(sampling={"role": "assistant", "content": {"type": "text", "text": "4"}})
    async with connect(build_server(), capabilities=ALL_CAPS, request_handlers=handlers) as client:
        result = await client.call_tool("ask_model", {"question": "2+2?"})
    assert result["isError"] is True
    assert "lacks 'role', 'content' or 'model'" in text_of(result)


async def test_a_prompt_whose_client_cannot_sample_is_an_internal_error() -> None:
    server = Server("prompt-sampling")

    @server.prompt()
    async def summarize(ctx: Context) -> str:
        result = await ctx.sample(["summarize"])
        return str(result["content"])

    async with connect(server) as client:
        with pytest.raises(JsonRpcError) as raised:
            await client.get_prompt("summarize")
    assert raised.value.code == -32603
    assert "'sampling' capability" in raised.value.message


# -- elicitation ----------------------------------------------------------------------------------
@pytest.mark.parametrize("version", ELICITING)
async def test_elicit_sends_the_form_and_returns_the_users_answer(version: str) -> None:
    seen: list[tuple[str, Any]] = []
    caps: dict[str, Any] = {"elicitation": {}}
    async with connect(
        build_server(), protocol_version=version, capabilities=caps, request_handlers=_everything(seen)
    ) as client:
        result = await client.call_tool("ask_user")
    assert json.loads(text_of(result)) == ACCEPTED
    ((method, params),) = seen
    assert method == "elicitation/create"
    assert params["message"] == "Who are you?"
    assert params["requestedSchema"]["properties"]["name"] == FORM["properties"]["name"]
    # "mode" exists only where URL mode does
    assert ("mode" in params) is REVISIONS[version].has_url_elicitation


@pytest.mark.parametrize("version", NOT_ELICITING)
async def test_elicit_in_a_revision_without_elicitation_is_a_capability_error(version: str) -> None:
    async with connect(
        build_server(), protocol_version=version, capabilities=ALL_CAPS, request_handlers=_everything()
    ) as client:
        result = await client.call_tool("ask_user")
    assert result["isError"] is True
    assert f"protocol revision {version} has no elicitation" in text_of(result)


async def test_elicit_without_the_capability_is_a_capability_error() -> None:
    async with connect(
        build_server(), capabilities={"sampling": {}}, request_handlers=_everything()
    ) as client:
        result = await client.call_tool("ask_user")
    assert "did not declare the 'elicitation' capability" in text_of(result)


async def test_a_form_is_not_sent_to_a_client_that_declared_only_url_mode() -> None:
    caps: dict[str, Any] = {"elicitation": {"url": {}}}
    async with connect(build_server(), capabilities=caps, request_handlers=_everything()) as client:
        result = await client.call_tool("ask_user")
    assert "only URL-mode elicitation" in text_of(result)


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        ({"type": "array"}, "must be {'type': 'object'"),
        ({"type": "object"}, "needs 'properties'"),
        ({"type": "object", "properties": {"a": {"type": "object", "properties": {}}}}, "not 'object'"),
        ({"type": "object", "properties": {"a": {"type": "string", "format": "phone"}}}, "format 'phone'"),
        ({"type": "object", "properties": {"a": {"type": "string", "items": {}}}}, "forms are flat"),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]},
            "'required' must list",
        ),
        ({"type": "object", "properties": {"a": {"type": "string", "enum": [1]}}}, "list of strings"),
    ],
)
async def test_a_schema_that_is_not_a_flat_form_is_a_developer_error(
    schema: dict[str, Any], fragment: str
) -> None:
    server = Server("forms", mask_errors=False)
    seen: list[tuple[str, Any]] = []

    @server.tool()
    async def ask(ctx: Context) -> str:
        await ctx.elicit("?", schema)
        return "sent"

    async with connect(
        server, capabilities={"elicitation": {}}, request_handlers=_everything(seen)
    ) as client:
        result = await client.call_tool("ask")
    assert result["isError"] is True
    assert fragment in text_of(result)
    assert seen == []


EXTENDED_FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "Ada"},
        "count": {"type": "integer", "default": 3},
        "ok": {"type": "boolean", "default": True},
        "color": {
            "type": "string",
            "enum": ["red", "green"],
            "enumNames": ["Red", "Green"],
            "default": "red",
        },
    },
}
ENUM_FORM = {
    "type": "object",
    "properties": {
        "size": {
            "type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
        },
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 1},
        "labels": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}},
    },
}


async def _sent_schema(version: str, schema: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    server = Server("forms", mask_errors=False)  # the developer error is the point: show it
    seen: list[tuple[str, Any]] = []

    @server.tool()
    async def ask(ctx: Context) -> str:
        await ctx.elicit("?", schema)
        return "sent"

    async with connect(
        server, protocol_version=version, capabilities={"elicitation": {}}, request_handlers=_everything(seen)
    ) as client:
        result = await client.call_tool("ask")
    return result, seen


async def test_defaults_other_than_booleans_are_left_out_before_2025_11_25() -> None:
    result, seen = await _sent_schema("2025-06-18", EXTENDED_FORM)
    assert text_of(result) == "sent"
    properties = seen[0][1]["requestedSchema"]["properties"]
    assert [name for name, p in properties.items() if "default" in p] == ["ok"]


async def test_defaults_are_sent_in_2025_11_25() -> None:
    _, seen = await _sent_schema("2025-11-25", EXTENDED_FORM)
    assert seen[0][1]["requestedSchema"] == EXTENDED_FORM


async def test_titled_and_multi_select_enums_are_sent_in_2025_11_25() -> None:
    result, seen = await _sent_schema("2025-11-25", ENUM_FORM)
    assert text_of(result) == "sent"
    assert seen[0][1]["requestedSchema"] == ENUM_FORM


async def test_titled_and_multi_select_enums_are_refused_before_2025_11_25() -> None:
    result, seen = await _sent_schema("2025-06-18", ENUM_FORM)
    assert result["isError"] is True
    assert "do not exist in protocol revision 2025-06-18" in text_of(result)
    assert seen == []


async def test_an_elicitation_answer_with_an_unknown_action_is_a_client_error() -> None:
    handlers = answers(elicitation={"action": "maybe"})
    async with connect(build_server(), capabilities={"elicitation": {}}, request_handlers=handlers) as client:
        result = await client.call_tool("ask_user")
    assert result["isError"] is True
    assert "action 'maybe'" in text_of(result)


async def test_elicit_url_sends_url_mode_in_2025_11_25() -> None:
    seen: list[tuple[str, Any]] = []
    handlers = answers(elicitation={"action": "accept"}, seen=seen)
    async with connect(
        build_server(), capabilities={"elicitation": {"url": {}}}, request_handlers=handlers
    ) as c:
        result = await c.call_tool("send_to_url")
    assert json.loads(text_of(result)) == {"action": "accept"}
    assert seen == [
        (
            "elicitation/create",
            {
                "mode": "url",
                "message": "Authorize",
                "url": "https://example.com/auth",
                "elicitationId": "e-1",
            },
        )
    ]


@pytest.mark.parametrize(
    ("version", "caps", "fragment"),
    [
        ("2025-11-25", {"elicitation": {}}, "did not declare URL-mode elicitation"),
        ("2025-11-25", {"elicitation": {"form": {}}}, "did not declare URL-mode elicitation"),
        ("2025-06-18", {"elicitation": {"url": {}}}, "2025-06-18 has no URL-mode elicitation"),
    ],
)
async def test_elicit_url_needs_the_revision_and_the_capability(
    version: str, caps: dict[str, Any], fragment: str
) -> None:
    async with connect(
        build_server(), protocol_version=version, capabilities=caps, request_handlers=_everything()
    ) as client:
        result = await client.call_tool("send_to_url")
    assert result["isError"] is True
    assert fragment in text_of(result)


async def test_the_session_announces_a_finished_url_elicitation() -> None:
    server = Server("url")

    @server.tool()
    async def finish(ctx: Context) -> str:
        await ctx.session.notify_elicitation_complete("e-1")
        return "announced"

    inbox = Inbox()
    async with connect(server, on_notification=inbox, recorder=True) as client:
        await client.call_tool("finish")
        _, received = frames(client)
    assert inbox.of("notifications/elicitation/complete") == [{"elicitationId": "e-1"}]
    frame = next(f for f in received if f.get("method") == "notifications/elicitation/complete")
    check_schema("2025-11-25", "ElicitationCompleteNotification", frame)


@pytest.mark.parametrize(("version", "wire_error"), [("2025-11-25", True), ("2025-06-18", False)])
async def test_url_elicitation_required_is_error_32042_where_it_exists(
    version: str, wire_error: bool
) -> None:
    server = Server("needs-url")
    needed = {"mode": "url", "elicitationId": "e-2", "url": "https://example.com/x", "message": "Log in"}

    @server.tool()
    def protected() -> str:
        raise UrlElicitationRequired([needed])

    async with connect(server, protocol_version=version, recorder=True) as client:
        if wire_error:
            with pytest.raises(JsonRpcError) as raised:
                await client.call_tool("protected")
            assert raised.value.code == -32042
            assert raised.value.data == {"elicitations": [needed]}
            _, received = frames(client)
            check_schema(version, "URLElicitationRequiredError", received[-1])
        else:
            result = await client.call_tool("protected")
            assert result["isError"] is True


# -- roots ----------------------------------------------------------------------------------------
async def test_list_roots_returns_the_clients_roots() -> None:
    async with connect(build_server(), capabilities=ALL_CAPS, request_handlers=_everything()) as client:
        result = await client.call_tool("show_roots")
    assert json.loads(text_of(result)) == ROOTS


async def test_list_roots_without_the_capability_is_a_capability_error() -> None:
    async with connect(
        build_server(), capabilities={"sampling": {}}, request_handlers=_everything()
    ) as client:
        result = await client.call_tool("show_roots")
    assert "did not declare the 'roots' capability" in text_of(result)


async def test_a_roots_answer_without_roots_is_a_client_error() -> None:
    async def bad(params: Any) -> Any:
        return {"folders": []}

    async with connect(build_server(), capabilities=ALL_CAPS, request_handlers={"roots/list": bad}) as client:
        result = await client.call_tool("show_roots")
    assert result["isError"] is True
    assert "no valid 'roots' list" in text_of(result)


async def test_roots_list_changed_from_the_client_is_accepted() -> None:
    async with connect(build_server(), capabilities=ALL_CAPS, request_handlers=_everything()) as client:
        await client.notify("notifications/roots/list_changed")
        result = await client.call_tool("show_roots")
    assert json.loads(text_of(result)) == ROOTS


# -- ordering, schemas, transports ----------------------------------------------------------------
async def test_log_messages_before_a_request_to_the_client_are_sent_before_it() -> None:
    server = Server("ordered")

    @server.tool()
    async def log_then_ask(ctx: Context) -> str:
        ctx.logger.info("about to ask")  # queued synchronously on the loop
        await ctx.list_roots()
        return "asked"

    async with connect(
        server, capabilities=ALL_CAPS, request_handlers=_everything(), recorder=True
    ) as client:
        await client.call_tool("log_then_ask")
        _, received = frames(client)
    methods = [f.get("method") for f in received if "method" in f]
    assert methods == ["notifications/message", "roots/list"]


@pytest.mark.parametrize("version", VERSIONS)
async def test_requests_to_the_client_validate_against_the_official_schema(version: str) -> None:
    caps: dict[str, Any] = dict(ALL_CAPS)
    tools: dict[str, Any] = {"ask_model": {"question": "?"}, "show_roots": {}}
    if REVISIONS[version].has_elicitation:
        tools["ask_user"] = {}
    async with connect(
        build_server(),
        protocol_version=version,
        capabilities=caps,
        request_handlers=_everything(),
        recorder=True,
    ) as client:
        for tool, arguments in tools.items():
            assert not (await client.call_tool(tool, arguments)).get("isError")
        _, received = frames(client)
    requests = {f["method"]: f for f in received if "method" in f and "id" in f}
    assert set(requests) == {
        "sampling/createMessage",
        "roots/list",
        *(["elicitation/create"] if "ask_user" in tools else []),
    }
    check_schema(version, "CreateMessageRequest", requests["sampling/createMessage"])
    check_schema(version, "ListRootsRequest", requests["roots/list"])
    if "elicitation/create" in requests:
        check_schema(version, "ElicitRequest", requests["elicitation/create"])


async def test_url_elicitation_validates_against_the_official_schema() -> None:
    handlers = answers(elicitation={"action": "accept"})
    caps: dict[str, Any] = {"elicitation": {"url": {}, "form": {}}}
    async with connect(build_server(), capabilities=caps, request_handlers=handlers, recorder=True) as client:
        await client.call_tool("send_to_url")
        _, received = frames(client)
    request = next(f for f in received if f.get("method") == "elicitation/create")
    check_schema("2025-11-25", "ElicitRequest", request)


async def test_extended_forms_validate_against_the_2025_11_25_schema() -> None:
    handlers = answers(elicitation={"action": "decline"})
    server = Server("forms")

    @server.tool()
    async def ask(ctx: Context) -> str:
        await ctx.elicit("?", EXTENDED_FORM)
        await ctx.elicit("?", ENUM_FORM)
        return "sent"

    async with connect(
        server, capabilities={"elicitation": {}}, request_handlers=handlers, recorder=True
    ) as client:
        await client.call_tool("ask")
        _, received = frames(client)
    requests = [f for f in received if f.get("method") == "elicitation/create"]
    assert len(requests) == 2
    for frame in requests:
        check_schema("2025-11-25", "ElicitRequest", frame)


async def test_client_requests_over_stdio_with_a_subprocess() -> None:
    with anyio.fail_after(TIMEOUT * 2):
        async with Client.stdio(SERVE, capabilities=ALL_CAPS, request_handlers=_everything()) as client:
            sampled = await client.call_tool("ask_model", {"question": "2+2?"})
            elicited = await client.call_tool("ask_user")
            roots = await client.call_tool("show_roots")
    assert text_of(sampled) == "test-model says 4"
    assert json.loads(text_of(elicited)) == ACCEPTED
    assert json.loads(text_of(roots)) == ROOTS
