"""Tests for the ``everything`` example server (examples/everything/server.py).

Each conformance fixture's behaviour is tested in memory (``jsonrpc_mcp.testing.connect``), with
client-side handlers answering ``sampling/createMessage`` and ``elicitation/create``; the transports
are smoke-tested with real subprocesses (``jsonrpc-mcp serve`` over stdio, and with ``--http``).
The official suite itself runs from ``make conformance-official``.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import subprocess
import sys
import wave
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import cache
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft7Validator, Draft202012Validator

from jsonrpc_mcp import Client
from jsonrpc_mcp.revisions import HANDSHAKE_REVISIONS
from jsonrpc_mcp.testing import connect
from tests import timeouts
from tests.announced import SERVE_LINE, Output
from tests.http.support import stop

from .support import load_module

pytestmark = pytest.mark.anyio

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVER_PATH = REPO_ROOT / "examples" / "everything" / "server.py"
README_PATH = REPO_ROOT / "examples" / "everything" / "README.md"
SCHEMAS = REPO_ROOT.parent / "shared" / "spec" / "schema"
TIMEOUT = timeouts.STEP
PROCESS_TIMEOUT = timeouts.STARTUP

everything: Any = load_module(SERVER_PATH, "_everything_server_under_test")

TOOLS = {
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_error_handling",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "test_structured_output",
    "test_tool_list_changed",
    "json_schema_2020_12_tool",
    "test_reconnection",
    "test_header_parameters",
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
    "test_missing_capability",
    "test_streaming_elicitation",
    "test_logging_tool",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_tampered_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_capabilities",
}
# the Tasks extension's fixtures (examples/everything/tasks.py; tested in tests/tasks)
TASK_TOOLS = {"greet", "slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "multi_input"}
TASK_TOOLS |= {"test_tool_with_task"}
RESOURCES = {"test://static-text", "test://static-binary", "test://watched-resource"}
TEMPLATE = "test://template/{id}/data"
PROMPTS = {
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
    "test_input_required_result_prompt",
}
SAMPLED = {
    "role": "assistant",
    "content": {"type": "text", "text": "This is a test response from the client"},
    "model": "test-model",
    "stopReason": "endTurn",
}

Handler = Callable[[Any], Awaitable[Any]]


class Recorder:
    """Answers the server's requests with canned results and keeps what it was asked, and every
    notification the server sent."""

    def __init__(self, elicit_content: dict[str, Any] | None = None) -> None:
        self.sampling: list[dict[str, Any]] = []
        self.elicitations: list[dict[str, Any]] = []
        self.notifications: list[tuple[str, Any]] = []
        self.elicit_content = elicit_content or {"username": "testuser", "email": "test@example.com"}

    async def sample(self, params: Any) -> dict[str, Any]:
        self.sampling.append(params)
        return SAMPLED

    async def elicit(self, params: Any) -> dict[str, Any]:
        self.elicitations.append(params)
        return {"action": "accept", "content": self.elicit_content}

    def notify(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))

    def of(self, method: str) -> list[Any]:
        return [params for name, params in self.notifications if name == method]

    @property
    def handlers(self) -> dict[str, Handler]:
        return {"sampling/createMessage": self.sample, "elicitation/create": self.elicit}


@contextlib.asynccontextmanager
async def session(
    recorder: Recorder | None = None, *, capabilities: dict[str, Any] | None = None, **options: Any
) -> AsyncIterator[Client]:
    """A fresh server and a client that can sample and elicit (unless ``capabilities`` says not)."""
    recorder = recorder or Recorder()
    caps = {"sampling": {}, "elicitation": {}} if capabilities is None else capabilities
    with anyio.fail_after(TIMEOUT):
        async with connect(
            everything.create_server(),
            timeout=TIMEOUT,
            capabilities=caps,
            request_handlers=recorder.handlers,
            on_notification=recorder.notify,
            **options,
        ) as client:
            yield client


def only(result: dict[str, Any]) -> dict[str, Any]:
    assert result.get("isError") is not True, result
    blocks: list[dict[str, Any]] = result["content"]
    assert len(blocks) == 1, blocks
    return blocks[0]


def text_of(result: dict[str, Any]) -> str:
    block = only(result)
    assert block["type"] == "text"
    text: str = block["text"]
    return text


@cache
def _schema_document(version: str) -> dict[str, Any]:
    path = SCHEMAS / version / "schema.json"
    if not path.is_file():
        pytest.skip(f"official schema not available: {path}")
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def schema_errors(definition: str, instance: Any, version: str = "2025-11-25") -> list[str]:
    """Why ``instance`` is not a valid ``definition`` of that revision's official schema."""
    document = _schema_document(version)
    if "$defs" in document:
        validator: Any = Draft202012Validator({**document, "$ref": f"#/$defs/{definition}"})
    else:  # draft-07: a $ref replaces its siblings, so the root document acts as the definition
        validator = Draft7Validator({**document, "$ref": f"#/definitions/{definition}"})
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(instance)]


def assert_valid(definition: str, instance: Any) -> None:
    """``instance`` is a valid ``definition`` of the official 2025-11-25 schema."""
    errors = schema_errors(definition, instance)
    assert not errors, errors


# -- listing ----------------------------------------------------------------------------------------
async def test_lists_every_fixture_tool_with_a_description_and_an_input_schema() -> None:
    async with session() as client:
        tools = await client.list_tools()
    assert {tool["name"] for tool in tools} == TOOLS | TASK_TOOLS
    for tool in tools:
        assert tool["description"], tool["name"]
        assert tool["inputSchema"]["type"] == "object", tool["name"]


async def test_json_schema_2020_12_tool_is_listed_with_its_schema_as_written() -> None:
    async with session() as client:
        tools = {tool["name"]: tool for tool in await client.list_tools()}
    schema = tools["json_schema_2020_12_tool"]["inputSchema"]
    assert schema == everything.JSON_SCHEMA_2020_12
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "address" in schema["$defs"]
    assert schema["additionalProperties"] is False


async def test_sampling_and_elicitation_tools_take_a_required_string() -> None:
    async with session() as client:
        tools = {tool["name"]: tool for tool in await client.list_tools()}
    for name, argument in (("test_sampling", "prompt"), ("test_elicitation", "message")):
        schema = tools[name]["inputSchema"]
        assert schema["properties"][argument]["type"] == "string", name
        assert schema["properties"][argument]["description"], name
        assert schema["required"] == [argument], name


async def test_capabilities_include_logging_completions_and_resource_subscriptions() -> None:
    async with session() as client:
        capabilities = client.server_capabilities
    assert "logging" in capabilities
    assert "completions" in capabilities
    assert capabilities["resources"]["subscribe"] is True
    assert {"tools", "prompts"} <= capabilities.keys()


# -- content tools ----------------------------------------------------------------------------------
async def test_simple_text_returns_the_fixture_text() -> None:
    async with session() as client:
        result = await client.call_tool("test_simple_text", {})
    assert text_of(result) == "This is a simple text response for testing."


async def test_image_content_is_a_one_pixel_png() -> None:
    async with session() as client:
        block = only(await client.call_tool("test_image_content", {}))
    assert block["type"] == "image"
    assert block["mimeType"] == "image/png"
    data = base64.b64decode(block["data"], validate=True)
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert data[12:16] == b"IHDR"
    assert (int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")) == (1, 1)


async def test_audio_content_is_a_wav_file() -> None:
    async with session() as client:
        block = only(await client.call_tool("test_audio_content", {}))
    assert block["type"] == "audio"
    assert block["mimeType"] == "audio/wav"
    with wave.open(io.BytesIO(base64.b64decode(block["data"], validate=True))) as audio:
        assert audio.getnframes() > 0


async def test_embedded_resource_carries_uri_mime_type_and_text() -> None:
    async with session() as client:
        block = only(await client.call_tool("test_embedded_resource", {}))
    assert block == {
        "type": "resource",
        "resource": {
            "uri": "test://embedded-resource",
            "mimeType": "text/plain",
            "text": "This is an embedded resource content.",
        },
    }


async def test_multiple_content_types_are_text_image_and_resource_in_order() -> None:
    async with session() as client:
        result = await client.call_tool("test_multiple_content_types", {})
    text, image, resource = result["content"]
    assert text == {"type": "text", "text": "Multiple content types test:"}
    assert (image["type"], image["mimeType"]) == ("image", "image/png")
    assert base64.b64decode(image["data"]) == everything.TEST_IMAGE
    assert resource["type"] == "resource"
    assert resource["resource"]["uri"] == "test://mixed-content-resource"
    assert resource["resource"]["mimeType"] == "application/json"
    assert json.loads(resource["resource"]["text"]) == {"test": "data", "value": 123}


async def test_error_handling_returns_an_error_result_with_its_message() -> None:
    async with session() as client:
        result = await client.call_tool("test_error_handling", {})
    assert result["isError"] is True
    assert result["content"] == [
        {"type": "text", "text": "This tool intentionally returns an error for testing"}
    ]


async def test_json_schema_2020_12_tool_reports_its_arguments() -> None:
    arguments = {
        "name": "Ada",
        "address": {"street": "1 Main St", "city": "Springfield"},
        "contactMethod": "phone",
        "phone": "555-0100",
    }
    async with session() as client:
        result = await client.call_tool("json_schema_2020_12_tool", arguments)
        by_phone_without_one = await client.call_tool(
            "json_schema_2020_12_tool", {"contactMethod": "phone", "email": "ada@example.com"}
        )
    assert text_of(result).startswith("JSON Schema 2020-12 tool called with: ")
    assert json.loads(text_of(result).split(": ", 1)[1]) == arguments
    assert by_phone_without_one["isError"] is True  # if/then: a phone contact needs a phone
    assert "'phone' is a required property" in by_phone_without_one["content"][0]["text"]


async def test_json_schema_2020_12_tool_refuses_a_property_its_schema_forbids() -> None:
    async with session() as client:
        result = await client.call_tool("json_schema_2020_12_tool", {"name": "Ada", "extra": 1})
    assert result["isError"] is True
    assert "extra" in result["content"][0]["text"]


async def test_reconnection_returns_its_completion_text() -> None:
    async with session() as client:
        result = await client.call_tool("test_reconnection", {})
    assert text_of(result).startswith("Reconnection test completed successfully.")


# -- logging and progress ---------------------------------------------------------------------------
async def test_set_level_answers_an_empty_result() -> None:
    async with session() as client:
        assert await client.request("logging/setLevel", {"level": "info"}) == {}


async def test_tool_with_logging_sends_three_info_messages_before_its_result() -> None:
    recorder = Recorder()
    async with session(recorder) as client:
        await client.request("logging/setLevel", {"level": "debug"})
        result = await client.call_tool("test_tool_with_logging", {})
    assert text_of(result) == "Tool with logging executed successfully"
    messages = recorder.of("notifications/message")
    assert [(m["level"], m["data"]) for m in messages] == [
        ("info", "Tool execution started"),
        ("info", "Tool processing data"),
        ("info", "Tool execution completed"),
    ]


async def test_tool_with_logging_sends_nothing_below_the_clients_level() -> None:
    recorder = Recorder()
    async with session(recorder) as client:
        await client.request("logging/setLevel", {"level": "warning"})
        await client.call_tool("test_tool_with_logging", {})
    assert recorder.of("notifications/message") == []


async def test_tool_with_progress_reports_0_50_100_of_100() -> None:
    recorder = Recorder()
    async with session(recorder) as client:
        params = {
            "name": "test_tool_with_progress",
            "arguments": {},
            "_meta": {"progressToken": "progress-1"},
        }
        result = await client.request("tools/call", params)
    assert "progress-1" in text_of(result)
    progress = recorder.of("notifications/progress")
    assert [(p["progressToken"], p["progress"], p["total"]) for p in progress] == [
        ("progress-1", 0, 100),
        ("progress-1", 50, 100),
        ("progress-1", 100, 100),
    ]
    assert progress[1]["message"] == "Completed step 50 of 100"


async def test_tool_with_progress_sends_no_progress_without_a_token() -> None:
    recorder = Recorder()
    async with session(recorder) as client:
        await client.call_tool("test_tool_with_progress", {})
    assert recorder.of("notifications/progress") == []


# -- sampling and elicitation -----------------------------------------------------------------------
async def test_sampling_sends_the_prompt_and_returns_the_models_text() -> None:
    recorder = Recorder()
    async with session(recorder) as client:
        result = await client.call_tool("test_sampling", {"prompt": "Test prompt for sampling"})
    assert text_of(result) == "LLM response: This is a test response from the client"
    (params,) = recorder.sampling
    assert params["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Test prompt for sampling"}}
    ]
    assert params["maxTokens"] == 100
    assert_valid("CreateMessageRequestParams", params)


async def test_sampling_without_the_client_capability_is_a_tool_error() -> None:
    recorder = Recorder()
    async with session(recorder, capabilities={"elicitation": {}}) as client:
        result = await client.call_tool("test_sampling", {"prompt": "hello"})
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("Sampling not supported or error: ")
    assert recorder.sampling == []


async def test_elicitation_asks_for_username_and_email_and_reports_the_answer() -> None:
    recorder = Recorder()
    async with session(recorder) as client:
        result = await client.call_tool("test_elicitation", {"message": "Please provide your information"})
    assert text_of(result) == (
        'User response: action=accept, content={"username":"testuser","email":"test@example.com"}'
    )
    (params,) = recorder.elicitations
    assert params["message"] == "Please provide your information"
    schema = params["requestedSchema"]
    assert set(schema["properties"]) == {"username", "email"}
    assert sorted(schema["required"]) == ["email", "username"]
    assert_valid("ElicitRequestFormParams", params)


async def test_elicitation_without_the_client_capability_is_a_tool_error() -> None:
    recorder = Recorder()
    async with session(recorder, capabilities={"sampling": {}}) as client:
        result = await client.call_tool("test_elicitation", {"message": "hi"})
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("Elicitation not supported or error: ")
    assert recorder.elicitations == []


async def test_sep1034_defaults_sends_a_default_for_every_primitive_type() -> None:
    answer = {"name": "Jane Smith", "age": 25, "score": 88, "status": "inactive", "verified": False}
    recorder = Recorder(elicit_content=answer)
    async with session(recorder) as client:
        result = await client.call_tool("test_elicitation_sep1034_defaults", {})
    assert (
        text_of(result)
        == f"Elicitation completed: action=accept, content={json.dumps(answer, separators=(',', ':'))}"
    )
    (params,) = recorder.elicitations
    properties = params["requestedSchema"]["properties"]
    assert {name: (p["type"], p["default"]) for name, p in properties.items()} == {
        "name": ("string", "John Doe"),
        "age": ("integer", 30),
        "score": ("number", 95.5),
        "status": ("string", "active"),
        "verified": ("boolean", True),
    }
    assert properties["status"]["enum"] == ["active", "inactive", "pending"]
    assert_valid("ElicitRequestFormParams", params)


async def test_sep1330_enums_sends_the_five_enum_shapes() -> None:
    answer = {
        "untitledSingle": "option1",
        "titledSingle": "value1",
        "legacyEnum": "opt1",
        "untitledMulti": ["option1", "option2"],
        "titledMulti": ["value1", "value2"],
    }
    recorder = Recorder(elicit_content=answer)
    async with session(recorder) as client:
        result = await client.call_tool("test_elicitation_sep1330_enums", {})
    assert text_of(result).startswith("Elicitation completed: action=accept, content=")
    (params,) = recorder.elicitations
    p = params["requestedSchema"]["properties"]
    assert p["untitledSingle"]["enum"] == ["option1", "option2", "option3"]
    assert "oneOf" not in p["untitledSingle"] and "enumNames" not in p["untitledSingle"]
    assert all(
        isinstance(o["const"], str) and isinstance(o["title"], str) for o in p["titledSingle"]["oneOf"]
    )
    assert "enum" not in p["titledSingle"]
    assert len(p["legacyEnum"]["enumNames"]) == len(p["legacyEnum"]["enum"]) == 3
    assert (p["untitledMulti"]["type"], p["untitledMulti"]["items"]["type"]) == ("array", "string")
    assert p["untitledMulti"]["items"]["enum"] == ["option1", "option2", "option3"]
    assert p["titledMulti"]["type"] == "array"
    assert all(
        isinstance(o["const"], str) and isinstance(o["title"], str)
        for o in p["titledMulti"]["items"]["anyOf"]
    )
    assert "enum" not in p["titledMulti"]["items"]
    assert_valid("ElicitRequestFormParams", params)


# -- resources --------------------------------------------------------------------------------------
async def test_lists_the_static_resources_with_names_and_mime_types() -> None:
    async with session() as client:
        listed = await client.list_resources()
    fixtures = [r for r in listed if not r["uri"].startswith(("skill://", "ui://"))]  # (tests/skills, apps)
    resources = {r["uri"]: r for r in fixtures}
    assert set(resources) == RESOURCES
    assert {uri: r["mimeType"] for uri, r in resources.items()} == {
        "test://static-text": "text/plain",
        "test://static-binary": "image/png",
        "test://watched-resource": "text/plain",
    }
    assert all(r["name"] and r["description"] for r in resources.values())


async def test_lists_the_data_template() -> None:
    async with session() as client:
        templates = await client.list_resource_templates()
    assert [(t["uriTemplate"], t["mimeType"]) for t in templates] == [(TEMPLATE, "application/json")]


async def test_static_text_reads_as_text() -> None:
    async with session() as client:
        result = await client.read_resource("test://static-text")
    assert result["contents"] == [
        {
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }
    ]


async def test_static_binary_reads_as_a_png_blob() -> None:
    async with session() as client:
        (content,) = (await client.read_resource("test://static-binary"))["contents"]
    assert (content["uri"], content["mimeType"]) == ("test://static-binary", "image/png")
    assert base64.b64decode(content["blob"]) == everything.TEST_IMAGE


async def test_template_substitutes_the_id() -> None:
    async with session() as client:
        (content,) = (await client.read_resource("test://template/123/data"))["contents"]
    assert (content["uri"], content["mimeType"]) == ("test://template/123/data", "application/json")
    assert json.loads(content["text"]) == {"id": "123", "templateTest": True, "data": "Data for ID: 123"}


async def test_subscribers_of_the_watched_resource_hear_of_its_updates() -> None:
    recorder = Recorder()
    server = everything.create_server()
    with anyio.fail_after(TIMEOUT):
        async with connect(server, timeout=TIMEOUT, on_notification=recorder.notify) as client:
            assert await client.request("resources/subscribe", {"uri": everything.WATCHED_URI}) == {}
            assert await server.notify_resource_updated(everything.WATCHED_URI) == 1
            await client.ping()  # answered after the notification, which was sent first
            assert recorder.of("notifications/resources/updated") == [{"uri": everything.WATCHED_URI}]


async def test_unsubscribed_clients_hear_of_no_updates() -> None:
    recorder = Recorder()
    server = everything.create_server()
    with anyio.fail_after(TIMEOUT):
        async with connect(server, timeout=TIMEOUT, on_notification=recorder.notify) as client:
            await client.request("resources/subscribe", {"uri": everything.WATCHED_URI})
            assert await client.request("resources/unsubscribe", {"uri": everything.WATCHED_URI}) == {}
            assert await server.notify_resource_updated(everything.WATCHED_URI) == 0
            await client.ping()
            assert recorder.of("notifications/resources/updated") == []


# -- prompts ----------------------------------------------------------------------------------------
async def test_lists_every_prompt_with_its_arguments() -> None:
    async with session() as client:
        prompts = {p["name"]: p for p in await client.list_prompts()}
    assert set(prompts) == PROMPTS
    assert all(p["description"] for p in prompts.values())
    arguments = {
        name: [(a["name"], a.get("required")) for a in p.get("arguments", [])] for name, p in prompts.items()
    }
    assert arguments == {
        "test_simple_prompt": [],
        "test_prompt_with_arguments": [("arg1", True), ("arg2", True)],
        "test_prompt_with_embedded_resource": [("resourceUri", True)],
        "test_prompt_with_image": [],
        "test_input_required_result_prompt": [],
    }
    assert [a["description"] for a in prompts["test_prompt_with_arguments"]["arguments"]] == [
        "First test argument",
        "Second test argument",
    ]


async def test_simple_prompt_is_one_user_message() -> None:
    async with session() as client:
        result = await client.get_prompt("test_simple_prompt")
    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}
    ]


async def test_prompt_with_arguments_substitutes_both() -> None:
    async with session() as client:
        result = await client.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
    assert result["messages"] == [
        {
            "role": "user",
            "content": {"type": "text", "text": "Prompt with arguments: arg1='hello', arg2='world'"},
        }
    ]


async def test_prompt_with_embedded_resource_embeds_the_given_uri() -> None:
    async with session() as client:
        result = await client.get_prompt(
            "test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"}
        )
    assert result["messages"] == [
        {
            "role": "user",
            "content": {
                "type": "resource",
                "resource": {
                    "uri": "test://example-resource",
                    "mimeType": "text/plain",
                    "text": "Embedded resource content for testing.",
                },
            },
        },
        {"role": "user", "content": {"type": "text", "text": "Please process the embedded resource above."}},
    ]


async def test_prompt_with_image_shows_the_png_then_asks() -> None:
    async with session() as client:
        image, ask = (await client.get_prompt("test_prompt_with_image"))["messages"]
    assert (image["role"], image["content"]["type"], image["content"]["mimeType"]) == (
        "user",
        "image",
        "image/png",
    )
    assert base64.b64decode(image["content"]["data"]) == everything.TEST_IMAGE
    assert ask == {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}}


# -- completion -------------------------------------------------------------------------------------
async def test_completes_arg1_by_prefix() -> None:
    async with session() as client:
        result = await client.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                "argument": {"name": "arg1", "value": "par"},
            },
        )
    assert result["completion"]["values"] == ["paris", "park", "party"]


async def test_completes_the_template_id_by_prefix() -> None:
    async with session() as client:
        result = await client.request(
            "completion/complete",
            {"ref": {"type": "ref/resource", "uri": TEMPLATE}, "argument": {"name": "id", "value": "12"}},
        )
    assert result["completion"]["values"] == ["123"]


async def test_completion_of_an_argument_without_suggestions_is_an_empty_list() -> None:
    async with session() as client:
        result = await client.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                "argument": {"name": "arg2", "value": "x"},
            },
        )
    assert result["completion"]["values"] == []


# -- every revision --------------------------------------------------------------------------------
ARGUMENTS: dict[str, dict[str, Any]] = {
    "test_sampling": {"prompt": "p"},
    "test_elicitation": {"message": "m"},
    "json_schema_2020_12_tool": {"email": "ada@example.com"},
}
PROMPT_ARGUMENTS: dict[str, dict[str, str]] = {
    "test_prompt_with_arguments": {"arg1": "a", "arg2": "b"},
    "test_prompt_with_embedded_resource": {"resourceUri": "test://example-resource"},
}


@pytest.mark.parametrize("version", [r.version for r in HANDSHAKE_REVISIONS])
async def test_every_fixture_answers_within_the_negotiated_revisions_schema(version: str) -> None:
    results: list[tuple[str, str, Any]] = []
    async with session(protocol_version=version) as client:
        assert client.protocol_version == version
        for tool in TOOLS:
            result = await client.call_tool(tool, ARGUMENTS.get(tool, {}))
            results.append(("CallToolResult", tool, result))
        for prompt in PROMPTS:
            results.append(
                ("GetPromptResult", prompt, await client.get_prompt(prompt, PROMPT_ARGUMENTS.get(prompt)))
            )
        for uri in (*RESOURCES, "test://template/7/data"):
            results.append(("ReadResourceResult", uri, await client.read_resource(uri)))
    invalid = {
        name: errors for kind, name, result in results if (errors := schema_errors(kind, result, version))
    }
    assert invalid == {}


# -- the README -------------------------------------------------------------------------------------
def test_readme_names_every_fixture() -> None:
    readme = README_PATH.read_text(encoding="utf-8")
    missing = [name for name in (*TOOLS, *RESOURCES, TEMPLATE, *PROMPTS) if f"`{name}`" not in readme]
    assert missing == []


# -- transports -------------------------------------------------------------------------------------
async def test_serves_the_fixtures_over_stdio() -> None:
    recorder = Recorder()
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(SERVER_PATH)]
    with anyio.fail_after(PROCESS_TIMEOUT):
        async with Client.stdio(
            command,
            cwd=REPO_ROOT,
            stderr=subprocess.DEVNULL,
            capabilities={"elicitation": {}},
            request_handlers=recorder.handlers,
            request_timeout=TIMEOUT,
        ) as client:
            assert {tool["name"] for tool in await client.list_tools()} == TOOLS | TASK_TOOLS
            result = await client.call_tool("test_elicitation", {"message": "over stdio"})
    assert text_of(result).startswith("User response: action=accept")
    assert [params["message"] for params in recorder.elicitations] == ["over stdio"]


@contextlib.asynccontextmanager
async def served_over_http() -> AsyncIterator[str]:
    """``jsonrpc-mcp serve examples/everything/server.py --http --port 0``; yields the MCP URL it
    announces once it listens."""
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(SERVER_PATH), "--http", "--port", "0"]

    def start() -> subprocess.Popen[bytes]:
        null, pipe = subprocess.DEVNULL, subprocess.PIPE
        return subprocess.Popen(command, cwd=REPO_ROOT, stdin=null, stdout=null, stderr=pipe)

    process = await anyio.to_thread.run_sync(start)
    output = Output(process.stderr)
    try:
        found = await anyio.to_thread.run_sync(output.wait_for, SERVE_LINE, process, PROCESS_TIMEOUT)
        yield found.group("url").decode()
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(stop, process)
            output.close()


async def test_serves_the_fixtures_over_http_with_requests_to_the_client_on_the_post_stream() -> None:
    recorder = Recorder()
    async with served_over_http() as url:
        with anyio.fail_after(PROCESS_TIMEOUT):
            async with Client.http(
                url,
                timeout=TIMEOUT,
                capabilities={"sampling": {}},
                request_handlers=recorder.handlers,
                request_timeout=TIMEOUT,
            ) as client:
                result = await client.call_tool("test_sampling", {"prompt": "over http"})
    assert text_of(result) == "LLM response: This is a test response from the client"
    assert [params["messages"][0]["content"]["text"] for params in recorder.sampling] == ["over http"]


async def test_reconnection_result_reaches_an_http_client() -> None:
    async with served_over_http() as url:
        with anyio.fail_after(PROCESS_TIMEOUT):
            async with Client.http(url, timeout=TIMEOUT, request_timeout=TIMEOUT) as client:
                result = await client.call_tool("test_reconnection", {})
    assert text_of(result).startswith("Reconnection test completed successfully.")
