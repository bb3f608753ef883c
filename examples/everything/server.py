"""``everything``: a reference server with the fixture names MCP conformance suites expect.

Every tool, resource, prompt and utility that the official conformance suite
(npm ``@modelcontextprotocol/conformance``, its server scenarios) calls is here, under the name
and with the behaviour that suite checks. Serve it with::

    jsonrpc-mcp serve examples/everything/server.py                     # stdio
    jsonrpc-mcp serve examples/everything/server.py --http --port 8000  # http://127.0.0.1:8000/mcp

``make conformance-official`` runs the official suite against it over HTTP. The README beside this
file lists the fixtures and what each one does.
"""

from __future__ import annotations

import io
import json
import struct
import wave
import zlib
from collections.abc import Callable
from typing import Annotated, Any

import anyio

from jsonrpc_mcp import Arg, CapabilityError, Context, Server, ToolError, content
from jsonrpc_mcp.errors import MissingClientCapability
from jsonrpc_mcp.server import InputRequest

__all__ = [
    "ELICITATION_SCHEMA",
    "ENUMS_SCHEMA",
    "HEADER_PARAMETERS_SCHEMA",
    "DEFAULTS_SCHEMA",
    "JSON_SCHEMA_2020_12",
    "STRUCTURED_OUTPUT_SCHEMA",
    "TEST_AUDIO",
    "TEST_IMAGE",
    "WATCHED_URI",
    "create_server",
    "server",
]

NAME = "jsonrpc-mcp-everything"
VERSION = "1.0.0"
STEP_DELAY = 0.05  # seconds between the log messages and progress steps (the suite asks for ~50 ms)
WATCHED_URI = "test://watched-resource"


# -- media, made here rather than pasted as base64 ------------------------------------------------
def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _red_pixel_png() -> bytes:
    """A 1x1 opaque red PNG (8-bit RGB)."""
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")  # filter byte 0, then R G B
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", pixels)
        + _png_chunk(b"IEND", b"")
    )


def _silence_wav(frames: int = 8) -> bytes:
    """A few frames of 8 kHz, 16-bit mono silence."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x00" * frames)
    return buffer.getvalue()


TEST_IMAGE = _red_pixel_png()
TEST_AUDIO = _silence_wav()


# -- schemas the elicitation and JSON Schema fixtures send -----------------------------------------
ELICITATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}

# SEP-1034: a default for every primitive type
DEFAULTS_SCHEMA: dict[str, Any] = {
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
    "required": [],
}

# SEP-1330: the five enum shapes
ENUMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {
            "type": "string",
            "description": "Select one option",
            "enum": ["option1", "option2", "option3"],
        },
        "titledSingle": {
            "type": "string",
            "description": "Select one option with titles",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "description": "Select one option (legacy)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Select multiple options",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Select multiple options with titles",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
    "required": [],
}

# SEP-1613: listed exactly as written ($schema, $defs and additionalProperties kept)
# SEP-2106: also an $anchor in $defs, composition (allOf of anyOf) and if/then/else, kept as written
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

# 2026-07-28 Streamable HTTP: each argument travels in an Mcp-Param-{Name} header too, which the
# server checks against the body (missing or different: HTTP 400, -32020)
HEADER_PARAMETERS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "description": "Sent as Mcp-Param-Region", "x-mcp-header": "Region"},
        "count": {"type": "integer", "description": "Sent as Mcp-Param-Count", "x-mcp-header": "Count"},
    },
    "additionalProperties": False,
}

# test_structured_output's outputSchema (2025-06-18+: structuredContent, plus its JSON as a text block)
STRUCTURED_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "temperature": {"type": "number"},
        "conditions": {"type": "string"},
        "humidity": {"type": "integer", "minimum": 0, "maximum": 100},
    },
    "required": ["temperature", "conditions", "humidity"],
    "additionalProperties": False,
}
# test_tool_list_changed registers this tool and removes it again (conformance: NOTES §10 D28, F06)
TEMPORARY_TOOL = "test_temporary_tool"
TEMPORARY_PROMPT = "test_temporary_prompt"


def _form(**fields: str) -> dict[str, Any]:
    """An elicitation form of required fields: name -> JSON type."""
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in fields.items()},
        "required": list(fields),
    }


# the 2026-07-28 multi round-trip fixtures (input-required-result-* scenarios, SEP-2322)
NAME_FORM = _form(name="string")
CONFIRM_FORM = _form(ok="boolean")
COLOR_FORM = _form(color="string")
CONTEXT_FORM = _form(context="string")

# what completion/complete offers for test_prompt_with_arguments and the template's {id}
ARG1_CHOICES = ("paris", "park", "party", "test", "testing")
ID_CHOICES = ("1", "2", "3", "123")


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _elicit_summary(result: dict[str, Any]) -> str:
    return f"action={result.get('action')}, content={_compact(result.get('content') or {})}"


def _sampled_text(result: dict[str, Any]) -> str:
    """The text of a CreateMessageResult (content is one block, or a list of them from 2025-11-25)."""
    blocks = result.get("content")
    if isinstance(blocks, dict):
        blocks = [blocks]
    texts = [b.get("text", "") for b in blocks or [] if isinstance(b, dict) and b.get("type") == "text"]
    return "".join(texts) or "No response"


def _field(result: dict[str, Any], name: str) -> Any:
    """A field of an accepted elicitation, else ``<action>``."""
    if result.get("action") != "accept":
        return f"<{result.get('action')}>"
    return (result.get("content") or {}).get(name)


def create_server() -> Server:
    """A fresh server with every fixture registered (tests get one each)."""
    server = Server(
        NAME, VERSION, title="jsonrpc-mcp everything (conformance fixtures)", logging_enabled=True
    )

    # -- tools: content ---------------------------------------------------------------------------
    @server.tool()
    def test_simple_text() -> str:
        """Tests simple text content response."""
        return "This is a simple text response for testing."

    @server.tool()
    def test_image_content() -> dict[str, Any]:
        """Tests image content response (a 1x1 red PNG)."""
        return content.image(TEST_IMAGE, mime_type="image/png")

    @server.tool()
    def test_audio_content() -> dict[str, Any]:
        """Tests audio content response (a short silent WAV)."""
        return content.audio(TEST_AUDIO, mime_type="audio/wav")

    @server.tool()
    def test_embedded_resource() -> dict[str, Any]:
        """Tests embedded resource content response."""
        return content.embedded_resource(
            "test://embedded-resource", text="This is an embedded resource content.", mime_type="text/plain"
        )

    @server.tool()
    def test_multiple_content_types() -> list[dict[str, Any]]:
        """Tests response with multiple content types (text, image, resource)."""
        return [
            content.text("Multiple content types test:"),
            content.image(TEST_IMAGE, mime_type="image/png"),
            content.embedded_resource(
                "test://mixed-content-resource",
                text=_compact({"test": "data", "value": 123}),
                mime_type="application/json",
            ),
        ]

    # -- tools: utilities -------------------------------------------------------------------------
    @server.tool()
    async def test_tool_with_logging(ctx: Context) -> str:
        """Tests tool that emits log messages during execution."""
        await ctx.log("info", "Tool execution started")
        await anyio.sleep(STEP_DELAY)
        await ctx.log("info", "Tool processing data")
        await anyio.sleep(STEP_DELAY)
        await ctx.log("info", "Tool execution completed")
        return "Tool with logging executed successfully"

    @server.tool()
    async def test_tool_with_progress(ctx: Context) -> str:
        """Tests tool that reports progress notifications (0, 50, 100 of 100)."""
        for step in (0, 50, 100):
            if step:
                await anyio.sleep(STEP_DELAY)
            await ctx.report_progress(step, total=100, message=f"Completed step {step} of 100")
        token = ctx.meta.get("progressToken")
        return f"Tool with progress executed successfully (progress token: {token})"

    @server.tool()
    def test_error_handling() -> str:
        """Tests error response handling: always fails with isError set."""
        raise ToolError("This tool intentionally returns an error for testing")

    @server.tool()
    async def test_reconnection(ctx: Context) -> str:
        """Tests SSE stream disconnection and client reconnection (SEP-1699).

        Over HTTP the server closes the request's SSE stream mid-call; the client reconnects with
        Last-Event-ID and receives the result on the resumed stream.
        """
        # ends the POST's SSE response but not its stream (SEP-1699 polling); nothing off HTTP
        await ctx.close_sse_stream()
        await anyio.sleep(2 * STEP_DELAY)
        return (
            "Reconnection test completed successfully. If you received this, the client properly "
            "reconnected after stream closure."
        )

    # -- tools: requests to the client ------------------------------------------------------------
    @server.tool()
    async def test_sampling(
        prompt: Annotated[str, Arg("The prompt to send to the LLM")], ctx: Context
    ) -> str:
        """Tests server-initiated sampling (LLM completion request)."""
        try:
            result = await ctx.sample(
                messages=[{"role": "user", "content": {"type": "text", "text": prompt}}], max_tokens=100
            )
        except Exception as exc:  # the client cannot sample, or refused: report it as the tool's error
            raise ToolError(f"Sampling not supported or error: {exc}") from exc
        return f"LLM response: {_sampled_text(result)}"

    @server.tool()
    async def test_elicitation(
        message: Annotated[str, Arg("The message to show the user")], ctx: Context
    ) -> str:
        """Tests server-initiated elicitation (user input request)."""
        try:
            result = await ctx.elicit(message, ELICITATION_SCHEMA)
        except MissingClientCapability:
            raise  # 2026-07-28: the request is refused with -32021 (HTTP 400), naming the capability
        except Exception as exc:
            raise ToolError(f"Elicitation not supported or error: {exc}") from exc
        return f"User response: {_elicit_summary(result)}"

    @server.tool()
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        """Tests elicitation with default values for every primitive type (SEP-1034)."""
        try:
            result = await ctx.elicit(
                "Please review and update the form fields with defaults", DEFAULTS_SCHEMA
            )
        except Exception as exc:
            raise ToolError(f"Elicitation not supported or error: {exc}") from exc
        return f"Elicitation completed: {_elicit_summary(result)}"

    @server.tool()
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        """Tests elicitation with the enum schema variants of SEP-1330."""
        try:
            result = await ctx.elicit("Please select options from the enum fields", ENUMS_SCHEMA)
        except Exception as exc:
            raise ToolError(f"Elicitation not supported or error: {exc}") from exc
        return f"Elicitation completed: {_elicit_summary(result)}"

    def json_schema_2020_12_tool(**arguments: Any) -> str:
        return f"JSON Schema 2020-12 tool called with: {_compact(arguments)}"

    server.add_tool(
        "json_schema_2020_12_tool",
        json_schema_2020_12_tool,
        description="Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
        input_schema=JSON_SCHEMA_2020_12,
    )

    def test_header_parameters(**arguments: Any) -> str:
        return f"Header parameters: {_compact(arguments)}"

    server.add_tool(
        "test_header_parameters",
        test_header_parameters,
        description="Tool whose arguments are mirrored in Mcp-Param-* headers (x-mcp-header, 2026-07-28)",
        input_schema=HEADER_PARAMETERS_SCHEMA,
    )

    # -- tools: structured output and list changes -------------------------------------------------
    def test_structured_output() -> dict[str, Any]:
        return {"temperature": 22.5, "conditions": "sunny", "humidity": 65}

    server.add_tool(
        "test_structured_output",
        test_structured_output,
        description="Tests structured content: returns an object matching its outputSchema",
        input_schema={"type": "object", "properties": {}},
        output_schema=STRUCTURED_OUTPUT_SCHEMA,
        annotations={"readOnlyHint": True},
    )

    @server.tool()
    def test_tool_list_changed() -> str:
        """Tests list-changed notifications: registers a temporary tool and removes it again (two
        tools/list_changed notifications; the list ends as it was)."""
        server.add_tool(
            TEMPORARY_TOOL, test_simple_text, description="Exists only during a call", replace=True
        )
        server.remove_tool(TEMPORARY_TOOL)
        return "The tool list changed (a tool was added and removed)"

    @server.tool()
    def test_trigger_tool_change() -> str:
        """Changes the tool list (adds and removes a temporary tool): subscriptions/listen streams
        that asked for toolsListChanged get notifications/tools/list_changed (2026-07-28)."""
        return test_tool_list_changed()

    @server.tool()
    def test_trigger_prompt_change() -> str:
        """Changes the prompt list (adds and removes a temporary prompt): listen streams that asked
        for promptsListChanged get notifications/prompts/list_changed (2026-07-28)."""
        server.add_prompt(TEMPORARY_PROMPT, test_simple_prompt, description="Exists only during a call")
        server.remove_prompt(TEMPORARY_PROMPT)
        return "The prompt list changed (a prompt was added and removed)"

    # -- tools: 2026-07-28 diagnostics (server-stateless) -----------------------------------------
    @server.tool()
    async def test_missing_capability(ctx: Context) -> str:
        """Needs sampling: a client that did not declare it gets -32021 naming 'sampling' (2026-07-28;
        a handshake session gets an isError result)."""
        result = await ctx.sample(["Say hello"], max_tokens=20)
        return f"LLM response: {_sampled_text(result)}"

    @server.tool()
    async def test_streaming_elicitation(ctx: Context) -> str:
        """Reports progress, then asks for a name: the response stream carries notifications and the
        InputRequiredResult, never a request from the server (2026-07-28)."""
        await ctx.report_progress(0, total=1, message="asking for a name")
        result = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
        return f"Hello, {(result.get('content') or {}).get('name', 'stranger')}!"

    @server.tool()
    async def test_logging_tool(ctx: Context) -> str:
        """Logs three messages: sent only to a request that set a log level (2026-07-28
        ``_meta.logLevel``; handshake sessions: ``logging/setLevel``)."""
        for step in ("started", "working", "done"):
            await ctx.info(f"test_logging_tool {step}")
        return "Logged three messages"

    # -- tools: multi round-trip requests (2026-07-28 InputRequiredResult; handshake: requests) -----
    @server.tool()
    async def test_input_required_result_elicitation(ctx: Context) -> str:
        """Asks the user's name under the key ``user_name``."""
        result = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
        return f"Hello, {_field(result, 'name')}!"

    @server.tool()
    async def test_input_required_result_sampling(ctx: Context) -> str:
        """Asks the client's model a question under the key ``capital_question``."""
        result = await ctx.sample(["What is the capital of France?"], max_tokens=100, key="capital_question")
        return f"LLM response: {_sampled_text(result)}"

    @server.tool()
    async def test_input_required_result_list_roots(ctx: Context) -> str:
        """Asks for the client's roots under the key ``client_roots``."""
        roots = await ctx.list_roots(key="client_roots")
        return f"Client roots: {', '.join(root['uri'] for root in roots) or 'none'}"

    @server.tool()
    async def test_input_required_result_request_state(ctx: Context) -> str:
        """Asks for a confirmation (key ``confirm``); the answer comes back with the sealed
        requestState, verified before the handler runs again."""
        result = await ctx.elicit("Please confirm", CONFIRM_FORM, key="confirm")
        return f"state-ok: confirmed={_field(result, 'ok')}"

    @server.tool()
    async def test_input_required_result_tampered_state(ctx: Context) -> str:
        """Asks for a confirmation; a retry whose requestState was altered is refused with -32602."""
        result = await ctx.elicit("Please confirm", CONFIRM_FORM, key="confirm")
        return f"Confirmed: {_field(result, 'ok')}"

    @server.tool()
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        """Asks three things in one round: a name, a greeting from the model, and the roots."""
        answers = await ctx.ask(
            {
                "user_name": ctx.elicitation("What is your name?", NAME_FORM),
                "greeting": ctx.sampling(["Generate a greeting"], max_tokens=50),
                "client_roots": ctx.roots(),
            }
        )
        roots = ", ".join(root["uri"] for root in answers["client_roots"]) or "none"
        return (
            f"name={_field(answers['user_name'], 'name')}, "
            f"greeting={_sampled_text(answers['greeting'])}, roots={roots}"
        )

    @server.tool()
    async def test_input_required_result_multi_round(ctx: Context) -> str:
        """Asks a name (``step1``), then, once answered, a favourite colour (``step2``)."""
        name = await ctx.elicit("Step 1: What is your name?", NAME_FORM, key="step1")
        color = await ctx.elicit("Step 2: What is your favorite color?", COLOR_FORM, key="step2")
        return f"{_field(name, 'name')} likes {_field(color, 'color')}"

    @server.tool()
    async def test_input_required_result_capabilities(ctx: Context) -> str:
        """Asks only what the client declared it can answer (elicitation, sampling, roots)."""
        builders: dict[str, Callable[[], InputRequest[Any]]] = {
            "user_name": lambda: ctx.elicitation("What is your name?", NAME_FORM),
            "greeting": lambda: ctx.sampling(["Generate a greeting"], max_tokens=50),
            "client_roots": ctx.roots,
        }
        wanted: dict[str, InputRequest[Any]] = {}
        for key, build in builders.items():
            try:
                wanted[key] = build()
            except CapabilityError:  # not declared: not asked
                continue
        answers = await ctx.ask(wanted)
        return f"Answered: {', '.join(sorted(answers)) or 'nothing (no capability declared)'}"

    # -- resources --------------------------------------------------------------------------------
    @server.resource(
        "test://static-text",
        name="static-text",
        title="Static Text Resource",
        description="A static text resource for testing",
        mime_type="text/plain",
    )
    def static_text() -> str:
        return "This is the content of the static text resource."

    @server.resource(
        "test://static-binary",
        name="static-binary",
        title="Static Binary Resource",
        description="A static binary resource (image) for testing",
        mime_type="image/png",
    )
    def static_binary() -> bytes:
        return TEST_IMAGE

    @server.resource(
        "test://template/{id}/data",
        name="template",
        title="Resource Template",
        description="A resource template with parameter substitution",
        mime_type="application/json",
    )
    def template_data(id: str) -> str:
        return _compact({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})

    @server.resource(
        WATCHED_URI,
        name="watched-resource",
        title="Watched Resource",
        description="A resource clients can subscribe to (resources/subscribe)",
        mime_type="text/plain",
    )
    def watched_resource() -> str:
        return "Watched resource content"

    # -- prompts ----------------------------------------------------------------------------------
    @server.prompt(
        "test_simple_prompt", title="Simple Test Prompt", description="A simple prompt without arguments"
    )
    def test_simple_prompt() -> str:
        return "This is a simple prompt for testing."

    @server.prompt(
        "test_prompt_with_arguments",
        title="Prompt With Arguments",
        description="A prompt with required arguments",
    )
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        """A prompt with two arguments.

        Args:
            arg1: First test argument
            arg2: Second test argument
        """
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @server.prompt(
        "test_prompt_with_embedded_resource",
        title="Prompt With Embedded Resource",
        description="A prompt that includes an embedded resource",
    )
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[dict[str, Any]]:
        """A prompt embedding a resource.

        Args:
            resourceUri: URI of the resource to embed
        """
        return [
            {
                "role": "user",
                "content": content.embedded_resource(
                    resourceUri, text="Embedded resource content for testing.", mime_type="text/plain"
                ),
            },
            {"role": "user", "content": content.text("Please process the embedded resource above.")},
        ]

    @server.prompt(
        "test_prompt_with_image",
        title="Prompt With Image",
        description="A prompt that includes image content",
    )
    def test_prompt_with_image() -> list[dict[str, Any]]:
        return [
            {"role": "user", "content": content.image(TEST_IMAGE, mime_type="image/png")},
            {"role": "user", "content": content.text("Please analyze the image above.")},
        ]

    @server.prompt(
        "test_input_required_result_prompt",
        title="Prompt Needing Input",
        description="Asks the user for the context to use (an elicitation) before it is built",
    )
    async def test_input_required_result_prompt(ctx: Context) -> str:
        try:
            result = await ctx.elicit("What context should the prompt use?", CONTEXT_FORM, key="user_context")
        except CapabilityError:  # the client cannot be asked (no elicitation): a prompt without it
            return "Use no particular context."
        return f"Use this context: {_field(result, 'context')}"

    # -- completion -------------------------------------------------------------------------------
    @server.completion(prompt="test_prompt_with_arguments", argument="arg1")
    def complete_arg1(value: str, context: dict[str, str]) -> list[str]:
        return [choice for choice in ARG1_CHOICES if choice.startswith(value)]

    @server.completion(resource="test://template/{id}/data", argument="id")
    def complete_template_id(value: str, context: dict[str, str]) -> list[str]:
        return [choice for choice in ID_CHOICES if choice.startswith(value)]

    # -- extension fixtures (tasks, skills, apps) --
    # (each extension's fixtures live in a module of their own: one import and one call per line here)
    __import__("tasks").add_task_fixtures(server)  # the Tasks extension's (examples/everything/tasks.py)
    __import__("skills").add_skill_fixtures(server)  # the Skills extension's (examples/everything/skills.py)
    __import__("views").add_app_fixtures(server)  # MCP Apps' (examples/everything/views.py)

    return server


server = create_server()

if __name__ == "__main__":
    server.run()
